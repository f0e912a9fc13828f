"""The last hit taken per table by its whole identity, and seals over the resumable state

A table's last hit is now remembered as the whole claim (number, round, seat, hand, cards)
and whether the table has since dropped it from its FIFO, so a first hit numbered 0 and a
table whose numbering restarts are both recognised as new hits (register map v1: a hit number
may be 0, and a table that restarts may number from 0 or 1 again). ``last_hit_seq`` is NULL
until a hit is taken: 0 is a hit number like any other.

``table_counters.seal`` and ``links.state_seal`` hold keyed seals over the state a controller
resumes from (a table's counters and last hit; a link's parameters, meter and chain head), so
a row changed by anyone without the ledger key is found before it steers money.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-23 20:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("table_counters") as batch:
        batch.alter_column("last_hit_seq", existing_type=sa.BigInteger(), nullable=True)
        batch.add_column(sa.Column("last_hit_claim", sa.Text(), nullable=True))
        batch.add_column(
            sa.Column("last_hit_gone", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("seal", sa.String(length=64), nullable=True))
    # Before this revision 0 meant "no hit taken yet" (and a hit numbered 0 was never taken).
    op.execute("UPDATE table_counters SET last_hit_seq = NULL WHERE last_hit_seq = 0")
    with op.batch_alter_table("links") as batch:
        batch.add_column(sa.Column("state_seal", sa.String(length=64), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("links") as batch:
        batch.drop_column("state_seal")
    op.execute("UPDATE table_counters SET last_hit_seq = 0 WHERE last_hit_seq IS NULL")
    with op.batch_alter_table("table_counters") as batch:
        batch.drop_column("seal")
        batch.drop_column("last_hit_gone")
        batch.drop_column("last_hit_claim")
        batch.alter_column("last_hit_seq", existing_type=sa.BigInteger(), nullable=False)
