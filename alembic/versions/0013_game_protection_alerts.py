"""Game protection's alerts: raised and closed, never edited

A table's luck held against the exact odds of its paytable lines (shared/DESIGN.md, "Game
protection"): each alert is a row of ``protection_alerts`` when raised and one of
``protection_alert_closings`` when closed. Both are records surveillance and auditors rely
on: the database refuses UPDATE and TRUNCATE, and DELETE of a row younger than the meter
history's retention (68 IAC 10-6-5(d)), as it does for the meter history (0001).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28 19:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from controller.rules.meter_records import METER_RETENTION_YEARS, RETENTION_CLAUSE

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("protection_alerts", "protection_alert_closings")
EDIT_MSG = "are records: they are never edited or deleted"
YOUNG_MSG = (
    f"only alerts older than {METER_RETENTION_YEARS} years may be purged ({RETENTION_CLAUSE})"
)


def upgrade() -> None:
    op.create_table(
        "protection_alerts",
        sa.Column("alert_id", sa.String(64), primary_key=True),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("subject", sa.Text(), nullable=False),
        sa.Column("link_id", sa.String(64), nullable=True),
        sa.Column("table_id", sa.String(64), nullable=True),
        sa.Column("seat", sa.Integer(), nullable=True),
        sa.Column("dealer", sa.String(100), nullable=True),
        sa.Column("game", sa.String(32), nullable=False),
        sa.Column("line", sa.String(32), nullable=False),
        sa.Column("line_label", sa.Text(), nullable=False),
        sa.Column("window", sa.String(16), nullable=False),
        sa.Column("since_us", sa.BigInteger(), nullable=False),
        sa.Column("observed", sa.BigInteger(), nullable=False),
        sa.Column("trials", sa.BigInteger(), nullable=False),
        sa.Column("expected", sa.Text(), nullable=False),
        sa.Column("direction", sa.String(16), nullable=False),
        sa.Column("p_value", sa.Float(precision=53), nullable=False),
        sa.Column("threshold", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("alert_id", name="pk_protection_alerts"),
    )
    op.create_index("ix_protection_alerts_at", "protection_alerts", ["at_us"])
    op.create_table(
        "protection_alert_closings",
        sa.Column("alert_id", sa.String(64), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("observed", sa.BigInteger(), nullable=False),
        sa.Column("trials", sa.BigInteger(), nullable=False),
        sa.Column("expected", sa.Text(), nullable=False),
        sa.Column("p_value", sa.Float(precision=53), nullable=False),
        sa.PrimaryKeyConstraint("alert_id", name="pk_protection_alert_closings"),
        sa.ForeignKeyConstraint(
            ["alert_id"],
            ["protection_alerts.alert_id"],
            name="fk_protection_alert_closings_alert_id_protection_alerts",
        ),
    )
    if op.get_context().dialect.name == "sqlite":
        cutoff = (
            f"(CAST(strftime('%s', 'now', '-{METER_RETENTION_YEARS} years') AS INTEGER) * 1000000)"
        )
        for t in TABLES:
            op.execute(
                f"CREATE TRIGGER {t}_append_only BEFORE UPDATE ON {t} "
                f"BEGIN SELECT RAISE(ABORT, '{t} {EDIT_MSG}'); END"
            )
            op.execute(
                f"CREATE TRIGGER {t}_retention BEFORE DELETE ON {t} WHEN OLD.at_us > {cutoff} "
                f"BEGIN SELECT RAISE(ABORT, '{t}: {YOUNG_MSG}'); END"
            )
    else:
        # The functions of 0001: an edit refused, a delete refused inside the retention.
        for t in TABLES:
            op.execute(
                f"CREATE TRIGGER {t}_append_only BEFORE UPDATE ON {t} "
                "FOR EACH ROW EXECUTE FUNCTION progressive_append_only()"
            )
            op.execute(
                f"CREATE TRIGGER {t}_no_truncate BEFORE TRUNCATE ON {t} "
                "FOR EACH STATEMENT EXECUTE FUNCTION progressive_append_only()"
            )
            op.execute(
                f"CREATE TRIGGER {t}_retention BEFORE DELETE ON {t} "
                "FOR EACH ROW EXECUTE FUNCTION progressive_retention_only()"
            )


def downgrade() -> None:
    postgres = op.get_context().dialect.name == "postgresql"
    for t in TABLES:
        for trigger in ("append_only", "retention", *(("no_truncate",) if postgres else ())):
            on = f" ON {t}" if postgres else ""
            op.execute(f"DROP TRIGGER IF EXISTS {t}_{trigger}{on}")
    op.drop_table("protection_alert_closings")
    op.drop_index("ix_protection_alerts_at", table_name="protection_alerts")
    op.drop_table("protection_alerts")
