"""The history of closed gaming days in blocks

A link's ordinary entries of a closed gaming day (contributions and registered bets) are moved
into one row of ``meter_blocks`` (``controller.storage.blocks``): the same sealed entries at a
fraction of the space, for five years of a floor's history (68 IAC 10-6-5(d)). Blocks are
history: the database refuses UPDATE and TRUNCATE, and DELETE of a block younger than the
retention, as for the entries (0001). An entry row may now also be deleted when it is an
ordinary entry whose link has a block covering it: the move into the block, in the same
transaction. Every other entry stays a row, and ``ledger verify`` reads both.

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-28 22:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from controller.rules.meter_records import METER_RETENTION_YEARS, RETENTION_CLAUSE

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

EDIT_MSG = "is append-only: history is never edited, only corrected by a new entry"
YOUNG_MSG = (
    f"only entries older than {METER_RETENTION_YEARS} years may be purged ({RETENTION_CLAUSE})"
)
BLOCK_KINDS = "('contribution', 'bets_registered')"
IN_A_BLOCK = (
    f"OLD.kind IN {BLOCK_KINDS} AND OLD.hit_id IS NULL AND EXISTS (SELECT 1 FROM meter_blocks b "
    "WHERE b.link_id = OLD.link_id AND b.first_seq <= OLD.seq AND b.last_seq >= OLD.seq)"
)
SQLITE_CUTOFF = (
    f"(CAST(strftime('%s', 'now', '-{METER_RETENTION_YEARS} years') AS INTEGER) * 1000000)"
)
PG_CUTOFF = (
    f"(EXTRACT(EPOCH FROM (now() - interval '{METER_RETENTION_YEARS} years')) * 1000000)::bigint"
)


def upgrade() -> None:
    op.create_table(
        "meter_blocks",
        sa.Column("link_id", sa.String(64), nullable=False),
        sa.Column("first_seq", sa.BigInteger(), nullable=False),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("first_at_us", sa.BigInteger(), nullable=False),
        sa.Column("last_at_us", sa.BigInteger(), nullable=False),
        sa.Column("entries", sa.Integer(), nullable=False),
        sa.Column("form", sa.Integer(), nullable=False),
        sa.Column("body", sa.LargeBinary(), nullable=False),
        sa.CheckConstraint(
            "first_seq <= last_seq AND entries >= 1", name=op.f("ck_meter_blocks_holds_entries")
        ),
        sa.PrimaryKeyConstraint("link_id", "first_seq", name=op.f("pk_meter_blocks")),
    )
    op.create_index("ix_meter_blocks_link_at", "meter_blocks", ["link_id", "first_at_us"])
    if op.get_context().dialect.name == "sqlite":
        op.execute(
            "CREATE TRIGGER meter_blocks_append_only BEFORE UPDATE ON meter_blocks "
            f"BEGIN SELECT RAISE(ABORT, 'meter_blocks {EDIT_MSG}'); END"
        )
        op.execute(
            "CREATE TRIGGER meter_blocks_retention BEFORE DELETE ON meter_blocks "
            f"WHEN OLD.last_at_us > {SQLITE_CUTOFF} "
            f"BEGIN SELECT RAISE(ABORT, 'meter_blocks: {YOUNG_MSG}'); END"
        )
        op.execute("DROP TRIGGER IF EXISTS meter_entries_retention")
        op.execute(
            "CREATE TRIGGER meter_entries_retention BEFORE DELETE ON meter_entries "
            f"WHEN OLD.at_us > {SQLITE_CUTOFF} AND NOT ({IN_A_BLOCK}) "
            f"BEGIN SELECT RAISE(ABORT, 'meter_entries: {YOUNG_MSG}'); END"
        )
        return
    # Compressed already: PostgreSQL would try to compress each body again, for nothing.
    op.execute("ALTER TABLE meter_blocks ALTER COLUMN body SET STORAGE EXTERNAL")
    op.execute(
        f"""CREATE OR REPLACE FUNCTION progressive_block_retention() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          IF OLD.last_at_us > {PG_CUTOFF} THEN
            RAISE EXCEPTION '%: {YOUNG_MSG}', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN OLD;
        END $$"""
    )
    op.execute(
        f"""CREATE OR REPLACE FUNCTION progressive_entry_retention() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          IF OLD.at_us > {PG_CUTOFF} AND NOT ({IN_A_BLOCK}) THEN
            RAISE EXCEPTION '%: {YOUNG_MSG}', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN OLD;
        END $$"""
    )
    op.execute(
        "CREATE TRIGGER meter_blocks_append_only BEFORE UPDATE ON meter_blocks "
        "FOR EACH ROW EXECUTE FUNCTION progressive_append_only()"
    )
    op.execute(
        "CREATE TRIGGER meter_blocks_no_truncate BEFORE TRUNCATE ON meter_blocks "
        "FOR EACH STATEMENT EXECUTE FUNCTION progressive_append_only()"
    )
    op.execute(
        "CREATE TRIGGER meter_blocks_retention BEFORE DELETE ON meter_blocks "
        "FOR EACH ROW EXECUTE FUNCTION progressive_block_retention()"
    )
    op.execute("DROP TRIGGER IF EXISTS meter_entries_retention ON meter_entries")
    op.execute(
        "CREATE TRIGGER meter_entries_retention BEFORE DELETE ON meter_entries "
        "FOR EACH ROW EXECUTE FUNCTION progressive_entry_retention()"
    )


def downgrade() -> None:
    held = op.get_bind().execute(sa.text("SELECT count(*) FROM meter_blocks")).scalar()
    if held:
        # Dropping the table would drop history: the entries it holds go nowhere before 0014.
        raise RuntimeError(f"meter_blocks holds {held} blocks of history: not downgraded")
    postgres = op.get_context().dialect.name == "postgresql"
    if postgres:
        op.execute("DROP TRIGGER IF EXISTS meter_entries_retention ON meter_entries")
        op.execute(
            "CREATE TRIGGER meter_entries_retention BEFORE DELETE ON meter_entries "
            "FOR EACH ROW EXECUTE FUNCTION progressive_retention_only()"
        )
        for trigger in ("append_only", "no_truncate", "retention"):
            op.execute(f"DROP TRIGGER IF EXISTS meter_blocks_{trigger} ON meter_blocks")
        op.execute("DROP FUNCTION IF EXISTS progressive_block_retention()")
        op.execute("DROP FUNCTION IF EXISTS progressive_entry_retention()")
    else:
        op.execute("DROP TRIGGER IF EXISTS meter_entries_retention")
        op.execute(
            "CREATE TRIGGER meter_entries_retention BEFORE DELETE ON meter_entries "
            f"WHEN OLD.at_us > {SQLITE_CUTOFF} "
            f"BEGIN SELECT RAISE(ABORT, 'meter_entries: {YOUNG_MSG}'); END"
        )
        for trigger in ("append_only", "retention"):
            op.execute(f"DROP TRIGGER IF EXISTS meter_blocks_{trigger}")
    op.drop_index("ix_meter_blocks_link_at", table_name="meter_blocks")
    op.drop_table("meter_blocks")
