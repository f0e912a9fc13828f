"""A levels change may be filed: the submissions' kind takes ``levels_change``

0007 gave links their levels and the filing desk the kind ``levels_change`` (a link of
levels' levels as a whole, 68 IAC 10-1-1.1(e)), but the submissions' CHECK still named only
the four kinds of 0003, so filing one was refused by the database. The CHECK is widened in
place on SQLite (as 0007 widened the links' rate: every row that passed the old one passes
the new one, nothing is copied); PostgreSQL drops and remakes it.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_KINDS = "kind IN ('new_link', 'rate_change', 'reset_change', 'paytable_change')"
NEW_KINDS = (
    "kind IN ('new_link', 'rate_change', 'reset_change', 'paytable_change', 'levels_change')"
)


def _sqlite_check(old: str, new: str) -> None:
    """Rewrite the CHECK in the stored CREATE TABLE of ``submissions`` (no row changes)."""
    conn = op.get_bind()
    sql = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'submissions'"
    ).scalar_one()
    if sql.count(old) != 1:
        raise RuntimeError(f"submissions: expected the CHECK ({old}) once in {sql!r}")
    version = conn.exec_driver_sql("PRAGMA schema_version").scalar_one()
    conn.exec_driver_sql("PRAGMA writable_schema = ON")
    conn.exec_driver_sql(
        "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'submissions'",
        (sql.replace(old, new),),
    )
    conn.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    conn.exec_driver_sql("PRAGMA writable_schema = OFF")
    problem = conn.exec_driver_sql("PRAGMA integrity_check").scalar_one()
    if problem != "ok":
        raise RuntimeError(f"submissions: the schema check after widening the kind says {problem}")


def _pg_check(expression: str) -> None:
    op.drop_constraint(op.f("ck_submissions_kind"), "submissions", type_="check")
    op.create_check_constraint(op.f("ck_submissions_kind"), "submissions", expression)


def upgrade() -> None:
    if op.get_context().dialect.name == "postgresql":
        _pg_check(NEW_KINDS)
    else:
        _sqlite_check(OLD_KINDS, NEW_KINDS)


def downgrade() -> None:
    conn = op.get_bind()
    filed = conn.exec_driver_sql(
        "SELECT count(*) FROM submissions WHERE kind = 'levels_change'"
    ).scalar_one()
    if filed:
        raise RuntimeError("a levels change is on file: the kinds' old CHECK cannot hold")
    if op.get_context().dialect.name == "postgresql":
        _pg_check(OLD_KINDS)
    else:
        _sqlite_check(NEW_KINDS, OLD_KINDS)
