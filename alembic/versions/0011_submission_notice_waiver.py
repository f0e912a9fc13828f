"""An amendment's waiver of its notice period, filed with the submission

68 IAC 10-1-4(1): an amendment is submitted at least 30 days before it is used "unless
otherwise provided by the executive director". The director's written direction for one
amendment is filed with it: who gave it, its reference, the day it is dated and the SHA-256 of
its document. 10-1-3(c)(1) waives nothing of a new game's 60 days, so a new link never has
one. ``notice_override`` (the direction as one line of text, once also settable for a whole
installation) stays for the submissions filed with it; nothing files one any more.

Plain ADD COLUMN. The new columns are facts of the filing, never edited: PostgreSQL's guard
(0003) fixes every column but the review's and the moment of taking effect, so they are fixed
with the others as they are added; SQLite's guard names the fixed columns, so it is made again
with them among them.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-14 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FACTS_MSG = "a submission's facts are never edited; only its review is added, once"
# The fixed columns of 0003, then the ones this revision adds.
SUBMISSION_FACTS_0003 = (
    "submission_id", "kind", "link_id", "proposal", "effective_at_us", "notice_days",
    "notice_override", "packet_json_sha256", "packet_pdf_sha256", "filed_by", "filed_at_us",
)  # fmt: skip
WAIVER = ("waiver_given_by", "waiver_reference", "waiver_given_on", "waiver_document_sha256")


def _sqlite_facts_trigger(facts: Sequence[str]) -> None:
    op.execute("DROP TRIGGER IF EXISTS submissions_facts")
    op.execute(
        f"CREATE TRIGGER submissions_facts BEFORE UPDATE OF {', '.join(facts)} "
        f"ON submissions BEGIN SELECT RAISE(ABORT, '{FACTS_MSG.replace(chr(39), chr(39) * 2)}'); "
        "END"
    )


def upgrade() -> None:
    op.add_column("submissions", sa.Column("waiver_given_by", sa.Text(), nullable=True))
    op.add_column("submissions", sa.Column("waiver_reference", sa.Text(), nullable=True))
    op.add_column("submissions", sa.Column("waiver_given_on", sa.String(length=10), nullable=True))
    op.add_column(
        "submissions", sa.Column("waiver_document_sha256", sa.String(length=64), nullable=True)
    )
    if op.get_context().dialect.name == "sqlite":
        _sqlite_facts_trigger((*SUBMISSION_FACTS_0003, *WAIVER))


def downgrade() -> None:
    if op.get_context().dialect.name == "sqlite":
        _sqlite_facts_trigger(SUBMISSION_FACTS_0003)
    for column in reversed(WAIVER):
        op.drop_column("submissions", column)
