"""Account changes confirmed by a second admin, one-time reset codes, and token generations

``account_requests`` holds each change to an account that one admin asks for and a different
admin confirms (new accounts, re-enabling, role changes and password resets of the roles that
check each other). ``users`` gains the generation its tokens must name (raised with every
change of password, role or state, so those tokens stop working) and the one-time code that a
reset leaves in place of a password.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-24 09:00:00.000000
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "account_requests",
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("username", sa.String(length=100), nullable=False),
        sa.Column("role", sa.String(length=32), nullable=True),
        sa.Column("requested_by", sa.String(length=100), nullable=False),
        sa.Column("requested_at_us", sa.BigInteger(), nullable=False),
        sa.Column("expires_at_us", sa.BigInteger(), nullable=False),
        sa.Column("first_half_sha256", sa.String(length=64), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("decided_by", sa.String(length=100), nullable=True),
        sa.Column("decided_at_us", sa.BigInteger(), nullable=True),
        sa.Column("decision_reason", sa.Text(), nullable=True),
        sa.PrimaryKeyConstraint("request_id", name=op.f("pk_account_requests")),
    )
    op.create_index(
        op.f("ix_account_requests_username"), "account_requests", ["username"], unique=False
    )
    with op.batch_alter_table("users") as batch:
        batch.add_column(
            sa.Column("token_generation", sa.Integer(), nullable=False, server_default="0")
        )
        batch.add_column(
            sa.Column("must_set_password", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch.add_column(sa.Column("reset_code_sha256", sa.String(length=64), nullable=True))
        batch.add_column(sa.Column("reset_code_expires_at_us", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("users") as batch:
        batch.drop_column("reset_code_expires_at_us")
        batch.drop_column("reset_code_sha256")
        batch.drop_column("must_set_password")
        batch.drop_column("token_generation")
    op.drop_index(op.f("ix_account_requests_username"), table_name="account_requests")
    op.drop_table("account_requests")
