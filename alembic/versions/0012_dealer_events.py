"""Who deals at each table: the dealers' sign-ins and sign-outs, append-only

Every table's hits are held against their odds per dealer too, so who dealt at a table when is
a record like the meter history: a dealer signed in at a table or out of it, when, and who
recorded it (``controller.core.dealers`` reads who dealt when from these). Never edited: the
database refuses UPDATE and TRUNCATE, and DELETE of anything younger than the meter history's
retention period, as it does for the audit log (0001). PostgreSQL's guards are 0001's
functions; SQLite's are triggers of the table's own.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-20 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from controller.rules.meter_records import METER_RETENTION_YEARS, RETENTION_CLAUSE

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "dealer_events"
EDIT_MSG = f"{TABLE} is append-only: history is never edited, only corrected by a new entry"
YOUNG_MSG = (
    f"{TABLE}: only entries older than {METER_RETENTION_YEARS} years may be purged "
    f"({RETENTION_CLAUSE})"
)


def _sqlite_guards() -> list[str]:
    cutoff = f"(CAST(strftime('%s', 'now', '-{METER_RETENTION_YEARS} years') AS INTEGER) * 1000000)"
    return [
        f"CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE ON {TABLE} "
        f"BEGIN SELECT RAISE(ABORT, '{EDIT_MSG}'); END",
        f"CREATE TRIGGER {TABLE}_retention BEFORE DELETE ON {TABLE} WHEN OLD.at_us > {cutoff} "
        f"BEGIN SELECT RAISE(ABORT, '{YOUNG_MSG}'); END",
    ]


def _pg_guards() -> list[str]:
    # progressive_append_only() and progressive_retention_only() are 0001's.
    return [
        f"CREATE TRIGGER {TABLE}_append_only BEFORE UPDATE ON {TABLE} "
        "FOR EACH ROW EXECUTE FUNCTION progressive_append_only()",
        f"CREATE TRIGGER {TABLE}_retention BEFORE DELETE ON {TABLE} "
        "FOR EACH ROW EXECUTE FUNCTION progressive_retention_only()",
        f"CREATE TRIGGER {TABLE}_no_truncate BEFORE TRUNCATE ON {TABLE} "
        "FOR EACH STATEMENT EXECUTE FUNCTION progressive_append_only()",
    ]


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column(
            "event_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("dealer", sa.String(length=100), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("recorded_by", sa.String(length=100), nullable=False),
        sa.CheckConstraint("kind IN ('sign_in', 'sign_out')", name=op.f("ck_dealer_events_kind")),
        sa.ForeignKeyConstraint(
            ["table_id"], ["tables.table_id"], name=op.f("fk_dealer_events_table_id_tables")
        ),
        sa.PrimaryKeyConstraint("event_id", name=op.f("pk_dealer_events")),
    )
    op.create_index("ix_dealer_events_table_event", TABLE, ["table_id", "event_id"])
    op.create_index("ix_dealer_events_table_at", TABLE, ["table_id", "at_us"])
    dialect = op.get_context().dialect.name
    for statement in _pg_guards() if dialect == "postgresql" else _sqlite_guards():
        op.execute(statement)


def downgrade() -> None:
    # The table's guards go with it, on both.
    op.drop_index("ix_dealer_events_table_at", table_name=TABLE)
    op.drop_index("ix_dealer_events_table_event", table_name=TABLE)
    op.drop_table(TABLE)
