"""Initial schema, and the guards that make history append-only in the database itself

Revision ID: 0001
Revises:
Create Date: 2026-11-21 20:46:18.844024
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from controller.rules.meter_records import METER_RETENTION_YEARS, RETENTION_CLAUSE

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "anomalies",
        sa.Column("anomaly_id", sa.String(length=64), nullable=False),
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("credits", sa.BigInteger(), nullable=False),
        sa.Column("units", sa.BigInteger(), nullable=False),
        sa.Column("counter_before", sa.BigInteger(), nullable=False),
        sa.Column("counter_after", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reviewer", sa.String(length=100), nullable=True),
        sa.Column("review_reason", sa.Text(), nullable=True),
        sa.Column("reviewed_at_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("anomaly_id", name=op.f("pk_anomalies")),
    )
    with op.batch_alter_table("anomalies", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_anomalies_link_id"), ["link_id"], unique=False)

    op.create_table(
        "audit_log",
        sa.Column(
            "audit_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=64), nullable=False),
        sa.Column("target", sa.String(length=200), nullable=False),
        sa.Column("before", sa.Text(), nullable=True),
        sa.Column("after", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("audit_id", name=op.f("pk_audit_log")),
    )
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_audit_log_at_us"), ["at_us"], unique=False)

    op.create_table(
        "documents",
        sa.Column("sha256", sa.String(length=64), nullable=False),
        sa.Column("filename", sa.String(length=255), nullable=False),
        sa.Column("content_type", sa.String(length=100), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("content", sa.LargeBinary(), nullable=False),
        sa.Column("uploaded_by", sa.String(length=100), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("sha256", name=op.f("pk_documents")),
    )
    op.create_table(
        "hits",
        sa.Column("hit_id", sa.String(length=64), nullable=False),
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("table_seq", sa.BigInteger(), nullable=True),
        sa.Column("seat", sa.Integer(), nullable=False),
        sa.Column("hand", sa.String(length=32), nullable=False),
        sa.Column("round", sa.BigInteger(), nullable=False),
        sa.Column("cards", sa.String(length=64), nullable=True),
        sa.Column("source", sa.String(length=16), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("award_cents", sa.BigInteger(), nullable=False),
        sa.Column("paid_from", sa.String(length=8), nullable=True),
        sa.Column("settlement_group", sa.String(length=100), nullable=False),
        sa.Column("settlement_order", sa.Integer(), nullable=False),
        sa.Column("policy", sa.String(length=16), nullable=False),
        sa.Column("refusal", sa.Text(), nullable=True),
        sa.Column("entered_by", sa.String(length=100), nullable=True),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("verified_by", sa.String(length=100), nullable=True),
        sa.Column("verified_at_us", sa.BigInteger(), nullable=True),
        sa.Column("verified_cards", sa.String(length=64), nullable=True),
        sa.Column("released_by", sa.String(length=100), nullable=True),
        sa.Column("released_at_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("hit_id", name=op.f("pk_hits")),
    )
    with op.batch_alter_table("hits", schema=None) as batch_op:
        batch_op.create_index("ix_hits_link_at", ["link_id", "at_us"], unique=False)
        batch_op.create_index(batch_op.f("ix_hits_link_id"), ["link_id"], unique=False)

    op.create_table(
        "ledger_anchors",
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.Column("meter_units", sa.BigInteger(), nullable=False),
        sa.Column("purged_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("link_id", name=op.f("pk_ledger_anchors")),
    )
    op.create_table(
        "ledger_meta",
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_ledger_meta")),
    )
    op.create_table(
        "meter_entries",
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("meter_before_units", sa.BigInteger(), nullable=False),
        sa.Column("delta_units", sa.BigInteger(), nullable=False),
        sa.Column("meter_after_units", sa.BigInteger(), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=True),
        sa.Column("hit_id", sa.String(length=64), nullable=True),
        sa.Column("anomaly_id", sa.String(length=64), nullable=True),
        sa.Column("correction_id", sa.String(length=64), nullable=True),
        sa.Column("explanation", sa.Text(), nullable=False),
        sa.Column("details", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.CheckConstraint(
            "delta_units >= 0 OR (length(explanation) > 0 AND ((kind = 'award' AND hit_id IS NOT NULL) OR (kind = 'correction' AND correction_id IS NOT NULL)))",
            name=op.f("ck_meter_entries_reduction_has_reason"),
        ),
        sa.CheckConstraint(
            "meter_after_units = meter_before_units + delta_units",
            name=op.f("ck_meter_entries_adds_up"),
        ),
        sa.CheckConstraint("meter_after_units >= 0", name=op.f("ck_meter_entries_not_negative")),
        sa.PrimaryKeyConstraint("link_id", "seq", name=op.f("pk_meter_entries")),
        sqlite_with_rowid=False,
    )
    with op.batch_alter_table("meter_entries", schema=None) as batch_op:
        batch_op.create_index("ix_meter_entries_link_at", ["link_id", "at_us"], unique=False)

    op.create_table(
        "paytables",
        sa.Column(
            "paytable_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("lines", sa.Text(), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("paytable_id", name=op.f("pk_paytables")),
    )
    with op.batch_alter_table("paytables", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_paytables_link_id"), ["link_id"], unique=False)

    op.create_table(
        "corrections",
        sa.Column("correction_id", sa.String(length=64), nullable=False),
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("delta_units", sa.BigInteger(), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("document_sha256", sa.String(length=64), nullable=True),
        sa.Column("requested_by", sa.String(length=100), nullable=False),
        sa.Column("approved_by", sa.String(length=100), nullable=True),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.CheckConstraint(
            "delta_units >= 0 OR document_sha256 IS NOT NULL",
            name=op.f("ck_corrections_reduction_documented"),
        ),
        sa.ForeignKeyConstraint(
            ["document_sha256"],
            ["documents.sha256"],
            name=op.f("fk_corrections_document_sha256_documents"),
        ),
        sa.PrimaryKeyConstraint("correction_id", name=op.f("pk_corrections")),
    )
    with op.batch_alter_table("corrections", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_corrections_link_id"), ["link_id"], unique=False)

    op.create_table(
        "links",
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("game", sa.String(length=32), nullable=False),
        sa.Column("rate_bp", sa.Integer(), nullable=False),
        sa.Column("reset_cents", sa.BigInteger(), nullable=False),
        sa.Column("meter_units", sa.BigInteger(), nullable=False),
        sa.Column("hit_policy", sa.String(length=16), nullable=False),
        sa.Column("jackpot_won_since_rate_set", sa.Boolean(), nullable=False),
        sa.Column(
            "paytable_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False
        ),
        sa.Column("last_win", sa.Text(), nullable=True),
        sa.Column("last_seq", sa.BigInteger(), nullable=False),
        sa.Column("last_hash", sa.String(length=64), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("meter_units >= 0", name=op.f("ck_links_meter_units")),
        sa.CheckConstraint("rate_bp BETWEEN 6000 AND 10000", name=op.f("ck_links_rate_bp")),
        sa.CheckConstraint("reset_cents >= 0", name=op.f("ck_links_reset_cents")),
        sa.ForeignKeyConstraint(
            ["paytable_id"], ["paytables.paytable_id"], name=op.f("fk_links_paytable_id_paytables")
        ),
        sa.PrimaryKeyConstraint("link_id", name=op.f("pk_links")),
    )
    op.create_table(
        "tables",
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("location", sa.String(length=200), nullable=False),
        sa.Column("denomination_cents", sa.Integer(), nullable=False),
        sa.Column("seats", sa.Integer(), nullable=False),
        sa.Column("max_credits_per_seat_round", sa.Integer(), nullable=False),
        sa.Column("min_round_us", sa.BigInteger(), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.CheckConstraint("denomination_cents > 0", name=op.f("ck_tables_denomination")),
        sa.CheckConstraint("seats BETWEEN 1 AND 7", name=op.f("ck_tables_seats")),
        sa.ForeignKeyConstraint(
            ["link_id"], ["links.link_id"], name=op.f("fk_tables_link_id_links")
        ),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_tables")),
    )
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_tables_link_id"), ["link_id"], unique=False)

    op.create_table(
        "table_counters",
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("poll_seq", sa.BigInteger(), nullable=False),
        sa.Column("credits", sa.BigInteger(), nullable=True),
        sa.Column("rounds", sa.BigInteger(), nullable=True),
        sa.Column("at_us", sa.BigInteger(), nullable=True),
        sa.Column("last_hit_seq", sa.BigInteger(), nullable=False),
        sa.Column("last_hit_round", sa.BigInteger(), nullable=True),
        sa.Column("hit_epoch", sa.Integer(), nullable=False),
        sa.Column("open_claims", sa.Text(), nullable=False),
        sa.Column("hit_pending", sa.Boolean(), nullable=False),
        sa.Column("online", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"], ["tables.table_id"], name=op.f("fk_table_counters_table_id_tables")
        ),
        sa.PrimaryKeyConstraint("table_id", name=op.f("pk_table_counters")),
    )

    install_guards(op.get_bind().dialect.name)


def downgrade() -> None:
    remove_guards(op.get_bind().dialect.name)
    op.drop_table("table_counters")
    with op.batch_alter_table("tables", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_tables_link_id"))

    op.drop_table("tables")
    op.drop_table("links")
    with op.batch_alter_table("corrections", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_corrections_link_id"))

    op.drop_table("corrections")
    with op.batch_alter_table("paytables", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_paytables_link_id"))

    op.drop_table("paytables")
    with op.batch_alter_table("meter_entries", schema=None) as batch_op:
        batch_op.drop_index("ix_meter_entries_link_at")

    op.drop_table("meter_entries")
    op.drop_table("ledger_meta")
    op.drop_table("ledger_anchors")
    with op.batch_alter_table("hits", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_hits_link_id"))
        batch_op.drop_index("ix_hits_link_at")

    op.drop_table("hits")
    op.drop_table("documents")
    with op.batch_alter_table("audit_log", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_audit_log_at_us"))

    op.drop_table("audit_log")
    with op.batch_alter_table("anomalies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_anomalies_link_id"))

    op.drop_table("anomalies")


# --------------------------------------------------------------------------------------------
# Guards. History is append-only (68 IAC 10-6-5(b), 10-8-5(b)); the only delete is the
# retention purge of what is older than the retention period (68 IAC 10-6-5(d)).

APPEND_ONLY = ("meter_entries", "corrections", "documents", "audit_log", "paytables")
PURGEABLE = ("meter_entries", "corrections", "documents", "audit_log", "hits", "anomalies")
UNDELETABLE = ("paytables",)
HIT_FACTS = (
    "hit_id",
    "link_id",
    "table_id",
    "table_seq",
    "seat",
    "hand",
    "round",
    "cards",
    "source",
    "status",
    "award_cents",
    "paid_from",
    "settlement_group",
    "settlement_order",
    "policy",
    "refusal",
    "entered_by",
    "at_us",
)
ANOMALY_FACTS = (
    "anomaly_id",
    "link_id",
    "table_id",
    "at_us",
    "credits",
    "units",
    "counter_before",
    "counter_after",
    "reason",
)
EDIT_MSG = "is append-only: history is never edited, only corrected by a new entry"
YOUNG_MSG = (
    f"only entries older than {METER_RETENTION_YEARS} years may be purged ({RETENTION_CLAUSE})"
)


def _sqlite_guards() -> list[str]:
    cutoff = f"(CAST(strftime('%s', 'now', '-{METER_RETENTION_YEARS} years') AS INTEGER) * 1000000)"
    sql = []
    for t in APPEND_ONLY:
        sql.append(
            f"CREATE TRIGGER {t}_append_only BEFORE UPDATE ON {t} "
            f"BEGIN SELECT RAISE(ABORT, '{t} {EDIT_MSG}'); END"
        )
    for t in PURGEABLE:
        sql.append(
            f"CREATE TRIGGER {t}_retention BEFORE DELETE ON {t} WHEN OLD.at_us > {cutoff} "
            f"BEGIN SELECT RAISE(ABORT, '{t}: {YOUNG_MSG}'); END"
        )
    for t in UNDELETABLE:
        sql.append(
            f"CREATE TRIGGER {t}_no_delete BEFORE DELETE ON {t} "
            f"BEGIN SELECT RAISE(ABORT, '{t} {EDIT_MSG}'); END"
        )
    sql.append(
        f"CREATE TRIGGER hits_facts BEFORE UPDATE OF {', '.join(HIT_FACTS)} ON hits "
        f"BEGIN SELECT RAISE(ABORT, 'a hit''s facts are never edited; only its verification is added'); END"
    )
    sql.append(
        f"CREATE TRIGGER anomalies_facts BEFORE UPDATE OF {', '.join(ANOMALY_FACTS)} ON anomalies "
        "BEGIN SELECT RAISE(ABORT, 'an anomaly''s facts are never edited'); END"
    )
    sql.append(
        "CREATE TRIGGER anomalies_reviewed_once BEFORE UPDATE ON anomalies WHEN OLD.status <> 'held' "
        "BEGIN SELECT RAISE(ABORT, 'an anomaly is reviewed once'); END"
    )
    return sql


def _pg_guards() -> list[str]:
    cutoff = f"(EXTRACT(EPOCH FROM (now() - interval '{METER_RETENTION_YEARS} years')) * 1000000)::bigint"
    sql = [
        f"""CREATE OR REPLACE FUNCTION progressive_append_only() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          RAISE EXCEPTION '% {EDIT_MSG}', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
        END $$""",
        f"""CREATE OR REPLACE FUNCTION progressive_retention_only() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          IF OLD.at_us > {cutoff} THEN
            RAISE EXCEPTION '%: {YOUNG_MSG}', TG_TABLE_NAME USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN OLD;
        END $$""",
        """CREATE OR REPLACE FUNCTION progressive_facts_fixed() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          IF (to_jsonb(OLD) - TG_ARGV) IS DISTINCT FROM (to_jsonb(NEW) - TG_ARGV) THEN
            RAISE EXCEPTION '%: only % may be filled in; the facts are never edited',
              TG_TABLE_NAME, array_to_string(TG_ARGV, ', ')
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          IF TG_TABLE_NAME = 'anomalies' AND OLD.status <> 'held' THEN
            RAISE EXCEPTION 'an anomaly is reviewed once' USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN NEW;
        END $$""",
    ]
    for t in APPEND_ONLY:
        sql.append(
            f"CREATE TRIGGER {t}_append_only BEFORE UPDATE ON {t} "
            "FOR EACH ROW EXECUTE FUNCTION progressive_append_only()"
        )
    for t in (*APPEND_ONLY, "hits", "anomalies"):
        sql.append(
            f"CREATE TRIGGER {t}_no_truncate BEFORE TRUNCATE ON {t} "
            "FOR EACH STATEMENT EXECUTE FUNCTION progressive_append_only()"
        )
    for t in PURGEABLE:
        sql.append(
            f"CREATE TRIGGER {t}_retention BEFORE DELETE ON {t} "
            "FOR EACH ROW EXECUTE FUNCTION progressive_retention_only()"
        )
    for t in UNDELETABLE:
        sql.append(
            f"CREATE TRIGGER {t}_no_delete BEFORE DELETE ON {t} "
            "FOR EACH ROW EXECUTE FUNCTION progressive_append_only()"
        )
    hit_mutable = (
        "'verified_by', 'verified_at_us', 'verified_cards', 'released_by', 'released_at_us'"
    )
    anomaly_mutable = "'status', 'reviewer', 'review_reason', 'reviewed_at_us'"
    sql.append(
        "CREATE TRIGGER hits_facts BEFORE UPDATE ON hits FOR EACH ROW "
        f"EXECUTE FUNCTION progressive_facts_fixed({hit_mutable})"
    )
    sql.append(
        "CREATE TRIGGER anomalies_facts BEFORE UPDATE ON anomalies FOR EACH ROW "
        f"EXECUTE FUNCTION progressive_facts_fixed({anomaly_mutable})"
    )
    return sql


def install_guards(dialect: str) -> None:
    for statement in _pg_guards() if dialect == "postgresql" else _sqlite_guards():
        op.execute(statement)
    if dialect == "postgresql":
        # Rewritten at every poll: room on each page lets PostgreSQL update them in place.
        for t in ("table_counters", "links"):
            op.execute(f"ALTER TABLE {t} SET (fillfactor = 50)")


def remove_guards(dialect: str) -> None:
    if dialect == "postgresql":
        for fn in (
            "progressive_append_only",
            "progressive_retention_only",
            "progressive_facts_fixed",
        ):
            op.execute(f"DROP FUNCTION IF EXISTS {fn}() CASCADE")
        return
    names = [f"{t}_append_only" for t in APPEND_ONLY] + [f"{t}_retention" for t in PURGEABLE]
    names += [f"{t}_no_delete" for t in UNDELETABLE]
    names += ["hits_facts", "anomalies_facts", "anomalies_reviewed_once"]
    for name in names:
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
