"""Submissions to the commission (rate, reset amount, paytable, new links) and armed changes

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22 10:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# What was filed is a record (68 IAC 10-1-1.1(e), 10-1-3(c), 10-1-4): never edited, never
# deleted. Only the commission's review is added, once, and the moment the change took effect.
SUBMISSION_FACTS = (
    "submission_id",
    "kind",
    "link_id",
    "proposal",
    "effective_at_us",
    "notice_days",
    "notice_override",
    "packet_json_sha256",
    "packet_pdf_sha256",
    "filed_by",
    "filed_at_us",
)
REVIEW = ("status", "reviewed_by", "reviewed_at_us", "review_reason")
APPLIED = ("applied_at_us",)
FACTS_MSG = "a submission's facts are never edited; only its review is added, once"


def _sqlite_guards() -> list[str]:
    return [
        f"CREATE TRIGGER submissions_facts BEFORE UPDATE OF {', '.join(SUBMISSION_FACTS)} "
        f"ON submissions BEGIN SELECT RAISE(ABORT, '{FACTS_MSG.replace(chr(39), chr(39) * 2)}'); END",
        f"CREATE TRIGGER submissions_reviewed_once BEFORE UPDATE OF {', '.join(REVIEW)} "
        "ON submissions WHEN OLD.status <> 'filed' "
        "BEGIN SELECT RAISE(ABORT, 'a submission is reviewed once'); END",
        "CREATE TRIGGER submissions_applied_once BEFORE UPDATE OF applied_at_us ON submissions "
        "WHEN OLD.applied_at_us IS NOT NULL "
        "BEGIN SELECT RAISE(ABORT, 'a submission takes effect once'); END",
        "CREATE TRIGGER submissions_no_delete BEFORE DELETE ON submissions "
        "BEGIN SELECT RAISE(ABORT, 'submissions are records: never deleted'); END",
    ]


def _pg_guards() -> list[str]:
    mutable = ", ".join(f"'{c}'" for c in (*REVIEW, *APPLIED))
    return [
        f"""CREATE OR REPLACE FUNCTION progressive_submission_guard() RETURNS trigger
        LANGUAGE plpgsql AS $$ BEGIN
          IF (to_jsonb(OLD) - ARRAY[{mutable}]) IS DISTINCT FROM
             (to_jsonb(NEW) - ARRAY[{mutable}]) THEN
            RAISE EXCEPTION '{FACTS_MSG.replace(chr(39), chr(39) * 2)}'
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          IF OLD.status <> 'filed' AND (OLD.status, OLD.reviewed_by, OLD.reviewed_at_us,
              OLD.review_reason) IS DISTINCT FROM (NEW.status, NEW.reviewed_by,
              NEW.reviewed_at_us, NEW.review_reason) THEN
            RAISE EXCEPTION 'a submission is reviewed once'
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          IF OLD.applied_at_us IS NOT NULL AND OLD.applied_at_us IS DISTINCT FROM NEW.applied_at_us
          THEN
            RAISE EXCEPTION 'a submission takes effect once'
              USING ERRCODE = 'integrity_constraint_violation';
          END IF;
          RETURN NEW;
        END $$""",
        "CREATE TRIGGER submissions_facts BEFORE UPDATE ON submissions FOR EACH ROW "
        "EXECUTE FUNCTION progressive_submission_guard()",
        "CREATE TRIGGER submissions_no_delete BEFORE DELETE ON submissions "
        "FOR EACH ROW EXECUTE FUNCTION progressive_append_only()",
        "CREATE TRIGGER submissions_no_truncate BEFORE TRUNCATE ON submissions "
        "FOR EACH STATEMENT EXECUTE FUNCTION progressive_append_only()",
    ]


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("submission_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("link_id", sa.String(length=64), nullable=False),
        sa.Column("proposal", sa.Text(), nullable=False),
        sa.Column("effective_at_us", sa.BigInteger(), nullable=False),
        sa.Column("notice_days", sa.Integer(), nullable=False),
        sa.Column("notice_override", sa.Text(), nullable=True),
        sa.Column("packet_json_sha256", sa.String(length=64), nullable=False),
        sa.Column("packet_pdf_sha256", sa.String(length=64), nullable=False),
        sa.Column("filed_by", sa.String(length=100), nullable=False),
        sa.Column("filed_at_us", sa.BigInteger(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("reviewed_by", sa.String(length=100), nullable=True),
        sa.Column("reviewed_at_us", sa.BigInteger(), nullable=True),
        sa.Column("review_reason", sa.Text(), nullable=True),
        sa.Column("applied_at_us", sa.BigInteger(), nullable=True),
        sa.CheckConstraint(
            "kind IN ('new_link', 'rate_change', 'reset_change', 'paytable_change')",
            name=op.f("ck_submissions_kind"),
        ),
        sa.CheckConstraint(
            "status IN ('filed', 'approved', 'rejected')", name=op.f("ck_submissions_status")
        ),
        sa.CheckConstraint(
            "status = 'filed' OR (reviewed_by IS NOT NULL AND reviewed_at_us IS NOT NULL)",
            name=op.f("ck_submissions_reviewed_by_someone"),
        ),
        sa.CheckConstraint(
            "status <> 'rejected' OR length(review_reason) > 0",
            name=op.f("ck_submissions_rejection_has_reason"),
        ),
        sa.CheckConstraint(
            "applied_at_us IS NULL OR status = 'approved'",
            name=op.f("ck_submissions_applied_when_approved"),
        ),
        sa.ForeignKeyConstraint(
            ["packet_json_sha256"],
            ["documents.sha256"],
            name=op.f("fk_submissions_packet_json_sha256_documents"),
        ),
        sa.ForeignKeyConstraint(
            ["packet_pdf_sha256"],
            ["documents.sha256"],
            name=op.f("fk_submissions_packet_pdf_sha256_documents"),
        ),
        sa.PrimaryKeyConstraint("submission_id", name=op.f("pk_submissions")),
    )
    op.create_index(op.f("ix_submissions_link_id"), "submissions", ["link_id"], unique=False)
    # Plain ADD COLUMN: the change a link applies at its next jackpot reset (JSON), if any.
    op.add_column("links", sa.Column("armed_change", sa.Text(), nullable=True))
    dialect = op.get_context().dialect.name
    for statement in _pg_guards() if dialect == "postgresql" else _sqlite_guards():
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS submissions_facts ON submissions")
        op.execute("DROP TRIGGER IF EXISTS submissions_no_delete ON submissions")
        op.execute("DROP TRIGGER IF EXISTS submissions_no_truncate ON submissions")
        op.execute("DROP FUNCTION IF EXISTS progressive_submission_guard() CASCADE")
    else:
        for name in (
            "submissions_facts",
            "submissions_reviewed_once",
            "submissions_applied_once",
            "submissions_no_delete",
        ):
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
    with op.batch_alter_table("links", schema=None) as batch_op:
        batch_op.drop_column("armed_change")
    op.drop_index(op.f("ix_submissions_link_id"), table_name="submissions")
    op.drop_table("submissions")
