"""A hit's second signature and its tax form's reference

Two more marks filled in after a hit, like its verification: ``signed_off_by`` and
``signed_off_at_us``, the second person who signs an award at or above the house's amount
before its table may be reset (dual control), and ``tax_form_reference`` with who wrote it
and when, the reference number of the tax form an award at or above the operator's
reporting amount was reported on (never the patron's identity).

Plain ADD COLUMN: SQLite keeps the table and its guard trigger, whose UPDATE OF list names
only the facts, so these may be filled in. PostgreSQL's guard names the marks it lets
change, so it is rebuilt with these added.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-03 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The marks PostgreSQL's guard lets change (0001 and 0002), then the ones this revision adds.
HIT_MARKS_0002 = (
    "verified_by", "verified_at_us", "verified_cards", "released_by", "released_at_us",
    "hand_paid_by", "hand_paid_at_us", "hand_paid_cents",
)  # fmt: skip
NEW_HIT_MARKS = (
    "signed_off_by",
    "signed_off_at_us",
    "tax_form_reference",
    "tax_form_by",
    "tax_form_at_us",
)
_TYPES = {
    "signed_off_by": sa.String(length=100),
    "signed_off_at_us": sa.BigInteger(),
    "tax_form_reference": sa.String(length=100),
    "tax_form_by": sa.String(length=100),
    "tax_form_at_us": sa.BigInteger(),
}


def _pg_hits_trigger(marks: Sequence[str]) -> None:
    args = ", ".join(f"'{c}'" for c in marks)
    op.execute("DROP TRIGGER IF EXISTS hits_facts ON hits")
    op.execute(
        "CREATE TRIGGER hits_facts BEFORE UPDATE ON hits FOR EACH ROW "
        f"EXECUTE FUNCTION progressive_facts_fixed({args})"
    )


def upgrade() -> None:
    for column in NEW_HIT_MARKS:
        op.add_column("hits", sa.Column(column, _TYPES[column], nullable=True))
    if op.get_context().dialect.name == "postgresql":
        _pg_hits_trigger((*HIT_MARKS_0002, *NEW_HIT_MARKS))


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        _pg_hits_trigger(HIT_MARKS_0002)
    for column in reversed(NEW_HIT_MARKS):
        op.drop_column("hits", column)
