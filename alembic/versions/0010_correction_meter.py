"""The meter a correction moves

A link of levels has several meters (``L1``, ``L1.reserve``, ``L2.overflow``...); a correction
of one names which, from the request to the applied correction. ``meter`` is null for a link
of one meter, and for every correction from before.

Plain ADD COLUMN on both tables. ``corrections`` is append-only already (no UPDATE at all).
On ``correction_requests`` PostgreSQL's guard fixes every column but the decision's, so the
new one is fixed with the others; SQLite's guard names the fixed columns, so it is made again
with ``meter`` among them.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-10 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FACTS_MSG = "the facts of a record are never edited; only its follow-up is filled in, once"
# The fixed columns of 0004, then the one this revision adds.
REQUEST_FACTS_0004 = (
    "request_id", "link_id", "delta_units", "category", "reason", "document_sha256",
    "requested_by", "at_us",
)  # fmt: skip


def _sqlite_facts_trigger(facts: Sequence[str]) -> None:
    op.execute("DROP TRIGGER IF EXISTS correction_requests_facts")
    op.execute(
        f"CREATE TRIGGER correction_requests_facts BEFORE UPDATE OF {', '.join(facts)} "
        f"ON correction_requests BEGIN SELECT RAISE(ABORT, 'correction_requests: {FACTS_MSG}'); "
        "END"
    )


def upgrade() -> None:
    op.add_column("correction_requests", sa.Column("meter", sa.String(length=32), nullable=True))
    op.add_column("corrections", sa.Column("meter", sa.String(length=32), nullable=True))
    if op.get_context().dialect.name == "sqlite":
        _sqlite_facts_trigger((*REQUEST_FACTS_0004, "meter"))


def downgrade() -> None:
    if op.get_context().dialect.name == "sqlite":
        _sqlite_facts_trigger(REQUEST_FACTS_0004)
    op.drop_column("corrections", "meter")
    op.drop_column("correction_requests", "meter")
