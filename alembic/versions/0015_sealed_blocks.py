"""Sealed blocks: a block's stretches of entries and its seal, beside its body

The controller checks a block's entries before packing them, as ``ledger verify`` would, and
keeps what it found (``runs``: each stretch of consecutive entries, where it joins the chain,
its meters) under a seal only the ledger key makes (``seal``), signed with the checkpoint key
when the controller has one (``signature``). ``ledger verify`` checks the
seal and joins the runs to the chain, not each entry again: five years of a floor's history
(68 IAC 10-6-5(d)) checked in minutes, not hours. Blocks packed before this have neither and
are checked entry by entry, as before; nothing is rewritten (blocks are append-only).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-02 14:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("meter_blocks", sa.Column("runs", sa.LargeBinary(), nullable=True))
    op.add_column("meter_blocks", sa.Column("seal", sa.LargeBinary(), nullable=True))
    op.add_column("meter_blocks", sa.Column("signature", sa.LargeBinary(), nullable=True))
    if op.get_context().dialect.name == "postgresql":
        # Compressed already, as the body.
        op.execute("ALTER TABLE meter_blocks ALTER COLUMN runs SET STORAGE EXTERNAL")


def downgrade() -> None:
    # The blocks stay whole without them: verify checks each entry again. Dropped in place
    # (SQLite 3.35 and later): a table copied anew would lose its guards.
    op.execute("ALTER TABLE meter_blocks DROP COLUMN signature")
    op.execute("ALTER TABLE meter_blocks DROP COLUMN seal")
    op.execute("ALTER TABLE meter_blocks DROP COLUMN runs")
