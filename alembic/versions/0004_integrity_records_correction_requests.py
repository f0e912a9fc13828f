"""Devices removed from play, correction requests, and the out-of-play state of a table

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-23 10:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from controller.rules.integrity import INTEGRITY_RETENTION_CLAUSE, INTEGRITY_RETENTION_YEARS
from controller.rules.meter_records import METER_RETENTION_YEARS, RETENTION_CLAUSE

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RECORD_FACTS = (
    "record_id",
    "link_id",
    "table_id",
    "questioned_at_us",
    "device_type",
    "manufacturer_serial_number",
    "commission_registration_number",
    "removed_at_us",
    "malfunction_reason",
    "complainant_name",
    "complainant_address",
    "complainant_telephone",
    "complaint_nature",
    "notice_sha256",
    "recorded_by",
    "at_us",
)
RECORD_FOLLOW_UP = (
    "verified_by",
    "verified_at_us",
    "verification",
    "returned_by",
    "returned_at_us",
)
REQUEST_FACTS = (
    "request_id",
    "link_id",
    "delta_units",
    "category",
    "reason",
    "document_sha256",
    "requested_by",
    "at_us",
)
REQUEST_DECISION = ("status", "decided_by", "decided_at_us", "decision_reason", "correction_id")

FACTS_MSG = "the facts of a record are never edited; only its follow-up is filled in, once"
YOUNG_INTEGRITY = (
    f"a record of a device removed from play is kept {INTEGRITY_RETENTION_YEARS} year after "
    f"its return to play ({INTEGRITY_RETENTION_CLAUSE})"
)
YOUNG_METER = (
    f"only entries older than {METER_RETENTION_YEARS} years may be purged ({RETENTION_CLAUSE})"
)


def upgrade() -> None:
    op.create_table(
        "integrity_records",
        sa.Column("record_id", sa.String(length=64), nullable=False),
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("table_id", sa.String(length=64), nullable=False),
        sa.Column("questioned_at_us", sa.BigInteger(), nullable=False),
        sa.Column("device_type", sa.String(length=200), nullable=False),
        sa.Column("manufacturer_serial_number", sa.String(length=100), nullable=True),
        sa.Column("commission_registration_number", sa.String(length=100), nullable=False),
        sa.Column("removed_at_us", sa.BigInteger(), nullable=False),
        sa.Column("malfunction_reason", sa.Text(), nullable=False),
        sa.Column("complainant_name", sa.String(length=200), nullable=True),
        sa.Column("complainant_address", sa.Text(), nullable=True),
        sa.Column("complainant_telephone", sa.String(length=50), nullable=True),
        sa.Column("complaint_nature", sa.Text(), nullable=True),
        sa.Column("notice_sha256", sa.String(length=64), nullable=False),
        sa.Column("recorded_by", sa.String(length=100), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("verified_by", sa.String(length=100), nullable=True),
        sa.Column("verified_at_us", sa.BigInteger(), nullable=True),
        sa.Column("verification", sa.Text(), nullable=True),
        sa.Column("returned_by", sa.String(length=100), nullable=True),
        sa.Column("returned_at_us", sa.BigInteger(), nullable=True),
        sa.ForeignKeyConstraint(
            ["notice_sha256"],
            ["documents.sha256"],
            name=op.f("fk_integrity_records_notice_sha256_documents"),
        ),
        sa.PrimaryKeyConstraint("record_id", name=op.f("pk_integrity_records")),
    )
    op.create_index(
        op.f("ix_integrity_records_table_id"), "integrity_records", ["table_id"], unique=False
    )
    op.create_table(
        "integrity_remedial_actions",
        sa.Column(
            "action_id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            autoincrement=True,
            nullable=False,
        ),
        sa.Column("record_id", sa.String(length=64), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("employees", sa.Text(), nullable=False),
        sa.Column("outside_company_name", sa.String(length=200), nullable=True),
        sa.Column("outside_company_address", sa.Text(), nullable=True),
        sa.Column("outside_company_telephone", sa.String(length=50), nullable=True),
        sa.Column("outside_individuals", sa.Text(), nullable=False),
        sa.Column("recorded_by", sa.String(length=100), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["record_id"],
            ["integrity_records.record_id"],
            name=op.f("fk_integrity_remedial_actions_record_id_integrity_records"),
        ),
        sa.PrimaryKeyConstraint("action_id", name=op.f("pk_integrity_remedial_actions")),
    )
    op.create_index(
        op.f("ix_integrity_remedial_actions_record_id"),
        "integrity_remedial_actions",
        ["record_id"],
        unique=False,
    )
    op.create_table(
        "correction_requests",
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("delta_units", sa.BigInteger(), nullable=False),
        sa.Column("category", sa.String(length=32), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("document_sha256", sa.String(length=64), nullable=True),
        sa.Column("requested_by", sa.String(length=100), nullable=False),
        sa.Column("at_us", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("decided_by", sa.String(length=100), nullable=True),
        sa.Column("decided_at_us", sa.BigInteger(), nullable=True),
        sa.Column("decision_reason", sa.Text(), nullable=True),
        sa.Column("correction_id", sa.String(length=64), nullable=True),
        sa.CheckConstraint(
            "delta_units >= 0 OR document_sha256 IS NOT NULL",
            name=op.f("ck_correction_requests_reduction_documented"),
        ),
        sa.ForeignKeyConstraint(
            ["document_sha256"],
            ["documents.sha256"],
            name=op.f("fk_correction_requests_document_sha256_documents"),
        ),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_correction_requests")),
    )
    op.create_index(
        "ix_correction_requests_link_at", "correction_requests", ["link_id", "at_us"], unique=False
    )
    # Plain ADD COLUMN (no batch copy): SQLite keeps table_counters as it is.
    op.add_column(
        "table_counters",
        sa.Column("out_of_play", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    for statement in (
        _pg_guards() if op.get_context().dialect.name == "postgresql" else _sqlite_guards()
    ):
        op.execute(statement)


def downgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS progressive_paperwork_guard() CASCADE")
        op.execute("DROP FUNCTION IF EXISTS progressive_integrity_retention() CASCADE")
    else:
        for name in _SQLITE_TRIGGERS:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    op.drop_column("table_counters", "out_of_play")
    op.drop_index("ix_correction_requests_link_at", table_name="correction_requests")
    op.drop_table("correction_requests")
    op.drop_index(
        op.f("ix_integrity_remedial_actions_record_id"), table_name="integrity_remedial_actions"
    )
    op.drop_table("integrity_remedial_actions")
    op.drop_index(op.f("ix_integrity_records_table_id"), table_name="integrity_records")
    op.drop_table("integrity_records")


# --------------------------------------------------------------------------------------------
# Guards, as for the meter history: facts fixed, follow-up filled in once, and deletes only by
# the retention purge of what is past its period.

_SQLITE_TRIGGERS = (
    "integrity_records_facts",
    "integrity_records_follow_up_once",
    "integrity_records_retention",
    "integrity_remedial_actions_append_only",
    "integrity_remedial_actions_retention",
    "correction_requests_facts",
    "correction_requests_decided_once",
    "correction_requests_retention",
)


def _sqlite_cutoff(years: int) -> str:
    return f"(CAST(strftime('%s', 'now', '-{years} years') AS INTEGER) * 1000000)"


def _sqlite_guards() -> list[str]:
    meter_cutoff = _sqlite_cutoff(METER_RETENTION_YEARS)
    integrity_cutoff = _sqlite_cutoff(INTEGRITY_RETENTION_YEARS)
    return [
        f"CREATE TRIGGER integrity_records_facts BEFORE UPDATE OF {', '.join(RECORD_FACTS)} "
        f"ON integrity_records BEGIN SELECT RAISE(ABORT, 'integrity_records: {FACTS_MSG}'); END",
        "CREATE TRIGGER integrity_records_follow_up_once BEFORE UPDATE ON integrity_records "
        "WHEN OLD.returned_at_us IS NOT NULL OR (OLD.verified_at_us IS NOT NULL AND ("
        "NEW.verified_at_us IS NOT OLD.verified_at_us OR NEW.verified_by IS NOT OLD.verified_by "
        "OR NEW.verification IS NOT OLD.verification)) "
        f"BEGIN SELECT RAISE(ABORT, 'integrity_records: {FACTS_MSG}'); END",
        "CREATE TRIGGER integrity_records_retention BEFORE DELETE ON integrity_records "
        f"WHEN OLD.returned_at_us IS NULL OR OLD.returned_at_us > {integrity_cutoff} "
        f"BEGIN SELECT RAISE(ABORT, 'integrity_records: {YOUNG_INTEGRITY}'); END",
        "CREATE TRIGGER integrity_remedial_actions_append_only BEFORE UPDATE ON "
        "integrity_remedial_actions "
        f"BEGIN SELECT RAISE(ABORT, 'integrity_remedial_actions: {FACTS_MSG}'); END",
        "CREATE TRIGGER integrity_remedial_actions_retention BEFORE DELETE ON "
        f"integrity_remedial_actions WHEN OLD.at_us > {integrity_cutoff} "
        f"BEGIN SELECT RAISE(ABORT, 'integrity_remedial_actions: {YOUNG_INTEGRITY}'); END",
        f"CREATE TRIGGER correction_requests_facts BEFORE UPDATE OF {', '.join(REQUEST_FACTS)} "
        f"ON correction_requests BEGIN SELECT RAISE(ABORT, 'correction_requests: {FACTS_MSG}'); "
        "END",
        "CREATE TRIGGER correction_requests_decided_once BEFORE UPDATE ON correction_requests "
        "WHEN OLD.status <> 'pending' "
        "BEGIN SELECT RAISE(ABORT, 'correction_requests: a request is decided once'); END",
        "CREATE TRIGGER correction_requests_retention BEFORE DELETE ON correction_requests "
        f"WHEN OLD.at_us > {meter_cutoff} "
        f"BEGIN SELECT RAISE(ABORT, 'correction_requests: {YOUNG_METER}'); END",
    ]


def _pg_cutoff(years: int) -> str:
    return f"(EXTRACT(EPOCH FROM (now() - interval '{years} years')) * 1000000)::bigint"


def _pg_guards() -> list[str]:
    record_follow_up = ", ".join(f"'{c}'" for c in RECORD_FOLLOW_UP)
    request_decision = ", ".join(f"'{c}'" for c in REQUEST_DECISION)
    return [
        f"""CREATE OR REPLACE FUNCTION progressive_paperwork_guard() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          IF (to_jsonb(OLD) - TG_ARGV) IS DISTINCT FROM (to_jsonb(NEW) - TG_ARGV) THEN
            RAISE EXCEPTION '%: {FACTS_MSG}', TG_TABLE_NAME
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          IF TG_TABLE_NAME = 'integrity_records' AND ((to_jsonb(OLD) ->> 'returned_at_us') IS NOT NULL
             OR ((to_jsonb(OLD) ->> 'verified_at_us') IS NOT NULL
                 AND (to_jsonb(OLD) - 'returned_by' - 'returned_at_us')
                 IS DISTINCT FROM (to_jsonb(NEW) - 'returned_by' - 'returned_at_us'))) THEN
            RAISE EXCEPTION '%: {FACTS_MSG}', TG_TABLE_NAME
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          IF TG_TABLE_NAME = 'correction_requests' AND (to_jsonb(OLD) ->> 'status') <> 'pending'
          THEN
            RAISE EXCEPTION 'correction_requests: a request is decided once'
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN NEW;
        END $$""",
        f"""CREATE OR REPLACE FUNCTION progressive_integrity_retention() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          IF TG_TABLE_NAME = 'integrity_records' AND ((to_jsonb(OLD) ->> 'returned_at_us') IS NULL
             OR (to_jsonb(OLD) ->> 'returned_at_us')::bigint > {_pg_cutoff(INTEGRITY_RETENTION_YEARS)})
          THEN
            RAISE EXCEPTION '%: {YOUNG_INTEGRITY}', TG_TABLE_NAME
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          IF TG_TABLE_NAME = 'integrity_remedial_actions'
             AND OLD.at_us > {_pg_cutoff(INTEGRITY_RETENTION_YEARS)} THEN
            RAISE EXCEPTION '%: {YOUNG_INTEGRITY}', TG_TABLE_NAME
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN OLD;
        END $$""",
        "CREATE TRIGGER integrity_records_facts BEFORE UPDATE ON integrity_records FOR EACH ROW "
        f"EXECUTE FUNCTION progressive_paperwork_guard({record_follow_up})",
        "CREATE TRIGGER correction_requests_facts BEFORE UPDATE ON correction_requests "
        f"FOR EACH ROW EXECUTE FUNCTION progressive_paperwork_guard({request_decision})",
        "CREATE TRIGGER integrity_remedial_actions_append_only BEFORE UPDATE ON "
        "integrity_remedial_actions FOR EACH ROW EXECUTE FUNCTION progressive_append_only()",
        "CREATE TRIGGER integrity_records_retention BEFORE DELETE ON integrity_records "
        "FOR EACH ROW EXECUTE FUNCTION progressive_integrity_retention()",
        "CREATE TRIGGER integrity_remedial_actions_retention BEFORE DELETE ON "
        "integrity_remedial_actions FOR EACH ROW EXECUTE FUNCTION progressive_integrity_retention()",
        # The five-year purge rule of the meter history (migration 0001) holds for requests too.
        "CREATE TRIGGER correction_requests_retention BEFORE DELETE ON correction_requests "
        "FOR EACH ROW EXECUTE FUNCTION progressive_retention_only()",
        *(
            f"CREATE TRIGGER {t}_no_truncate BEFORE TRUNCATE ON {t} "
            "FOR EACH STATEMENT EXECUTE FUNCTION progressive_append_only()"
            for t in ("integrity_records", "integrity_remedial_actions", "correction_requests")
        ),
    ]
