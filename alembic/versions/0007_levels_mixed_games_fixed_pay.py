"""A link's levels, a mixed-game link's other paytables, a table's game, and what a hit is

``links.levels`` holds the pool's levels (JSON, each level's meters, wins and its mystery
draws, which are secret and kept only there): NULL for a classic link, whose one level is
mirrored from its rate, reset amount and meter, and for a fixed-pay link from before levels;
``[]`` for a fixed-pay link made since. ``links.paytables`` holds a mixed-game link's other
games' paytables (JSON), ``tables.game`` the game dealt at a table of such a link (NULL: the
link's game). A hit records the level it was paid from, its kind (hand, mystery, envy) and
whether it waits for a technician. ``links.rate_bp`` may be 0: a fixed-pay link has no meter
(68 IAC 10-7-5(e)).

Every column is a plain ADD COLUMN, so SQLite keeps its tables and the guard triggers on them.
The rate's CHECK is widened in place on SQLite (the documented ``writable_schema`` procedure
for changing a CHECK constraint: every row that passed the old one passes the new one), so
``links`` is not copied (its tables' foreign keys would refuse the copy's DROP). The SQLite
hit guard is rebuilt to name the new facts; PostgreSQL's guards every column but the marks.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OLD_RATE = "rate_bp BETWEEN 6000 AND 10000"
NEW_RATE = "rate_bp = 0 OR rate_bp BETWEEN 6000 AND 10000"
# A hit's facts (never edited; 0001), then the ones this revision adds.
HIT_FACTS_0001 = (
    "hit_id", "link_id", "table_id", "table_seq", "seat", "hand", "round", "cards", "source",
    "status", "award_cents", "paid_from", "settlement_group", "settlement_order", "policy",
    "refusal", "entered_by", "at_us",
)  # fmt: skip
NEW_HIT_FACTS = ("level", "kind", "needs_technician")
HIT_FACTS_MSG = "a hit''s facts are never edited; only its verification is added"


def _sqlite_hits_guard(facts: Sequence[str]) -> None:
    op.execute("DROP TRIGGER IF EXISTS hits_facts")
    op.execute(
        f"CREATE TRIGGER hits_facts BEFORE UPDATE OF {', '.join(facts)} ON hits "
        f"BEGIN SELECT RAISE(ABORT, '{HIT_FACTS_MSG}'); END"
    )


def _sqlite_rate_check(old: str, new: str) -> None:
    """Rewrite the CHECK in the stored CREATE TABLE of ``links`` (no row changes on disk)."""
    conn = op.get_bind()
    sql = conn.exec_driver_sql(
        "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'links'"
    ).scalar_one()
    if sql.count(old) != 1:
        raise RuntimeError(f"links: expected the CHECK ({old}) once in {sql!r}")
    version = conn.exec_driver_sql("PRAGMA schema_version").scalar_one()
    conn.exec_driver_sql("PRAGMA writable_schema = ON")
    conn.exec_driver_sql(
        "UPDATE sqlite_master SET sql = ? WHERE type = 'table' AND name = 'links'",
        (sql.replace(old, new),),
    )
    conn.exec_driver_sql(f"PRAGMA schema_version = {int(version) + 1}")
    conn.exec_driver_sql("PRAGMA writable_schema = OFF")
    problem = conn.exec_driver_sql("PRAGMA integrity_check").scalar_one()
    if problem != "ok":
        raise RuntimeError(f"links: the schema check after widening the rate says {problem}")


def _pg_rate_check(expression: str) -> None:
    op.drop_constraint(op.f("ck_links_rate_bp"), "links", type_="check")
    op.create_check_constraint(op.f("ck_links_rate_bp"), "links", expression)


def upgrade() -> None:
    dialect = op.get_context().dialect.name
    op.add_column("links", sa.Column("levels", sa.Text(), nullable=True))
    op.add_column("links", sa.Column("paytables", sa.Text(), nullable=True))
    op.add_column("tables", sa.Column("game", sa.String(length=32), nullable=True))
    op.add_column("hits", sa.Column("level", sa.Text(), nullable=True))
    op.add_column(
        "hits", sa.Column("kind", sa.Text(), nullable=False, server_default=sa.text("'hand'"))
    )
    op.add_column(
        "hits",
        sa.Column("needs_technician", sa.Boolean(), nullable=False, server_default=sa.true()),
    )
    if dialect == "postgresql":
        _pg_rate_check(NEW_RATE)
    else:
        _sqlite_rate_check(OLD_RATE, NEW_RATE)
        _sqlite_hits_guard((*HIT_FACTS_0001, *NEW_HIT_FACTS))


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    if dialect == "postgresql":
        _pg_rate_check(OLD_RATE)  # refused while a fixed-pay link's row has rate 0
    else:
        _sqlite_hits_guard(HIT_FACTS_0001)
    for column in reversed(NEW_HIT_FACTS):
        op.drop_column("hits", column)
    op.drop_column("tables", "game")
    op.drop_column("links", "paytables")
    op.drop_column("links", "levels")
    if dialect != "postgresql":
        conn = op.get_bind()
        if conn.exec_driver_sql("SELECT count(*) FROM links WHERE rate_bp = 0").scalar_one():
            raise RuntimeError("a fixed-pay link has rate 0: the rate's old CHECK cannot hold")
        _sqlite_rate_check(NEW_RATE, OLD_RATE)
