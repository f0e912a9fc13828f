"""Users, display device tokens, and the hand pay a technician records on a hit

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-21 23:40:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

HAND_PAY = ("hand_paid_by", "hand_paid_at_us", "hand_paid_cents")
# What a technician fills in after a hit; every other column of a hit is a fact, never edited.
HIT_MUTABLE_0001 = (
    "verified_by",
    "verified_at_us",
    "verified_cards",
    "released_by",
    "released_at_us",
)


def _pg_hits_trigger(mutable: Sequence[str]) -> None:
    args = ", ".join(f"'{c}'" for c in mutable)
    op.execute("DROP TRIGGER IF EXISTS hits_facts ON hits")
    op.execute(
        "CREATE TRIGGER hits_facts BEFORE UPDATE ON hits FOR EACH ROW "
        f"EXECUTE FUNCTION progressive_facts_fixed({args})"
    )


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("username", sa.String(length=100), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("password_hash", sa.Text(), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("username", name=op.f("pk_users")),
    )
    op.create_table(
        "device_tokens",
        sa.Column("token_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=False),
        sa.Column("token_sha256", sa.String(length=64), nullable=False),
        sa.Column("created_at_us", sa.BigInteger(), nullable=False),
        sa.Column("created_by", sa.String(length=100), nullable=False),
        sa.Column("revoked_at_us", sa.BigInteger(), nullable=True),
        sa.PrimaryKeyConstraint("token_id", name=op.f("pk_device_tokens")),
        sa.UniqueConstraint("token_sha256", name=op.f("uq_device_tokens_token_sha256")),
    )
    # Plain ADD COLUMN (no batch copy): SQLite keeps the table and its guard triggers, whose
    # UPDATE OF list names only the facts, so these columns may be filled in.
    op.add_column("hits", sa.Column("hand_paid_by", sa.String(length=100), nullable=True))
    op.add_column("hits", sa.Column("hand_paid_at_us", sa.BigInteger(), nullable=True))
    op.add_column("hits", sa.Column("hand_paid_cents", sa.BigInteger(), nullable=True))
    if op.get_context().dialect.name == "postgresql":
        _pg_hits_trigger((*HIT_MUTABLE_0001, *HAND_PAY))


def downgrade() -> None:
    dialect = op.get_context().dialect.name
    for column in reversed(HAND_PAY):
        op.drop_column("hits", column)
    if dialect == "postgresql":
        _pg_hits_trigger(HIT_MUTABLE_0001)
    op.drop_table("device_tokens")
    op.drop_table("users")
