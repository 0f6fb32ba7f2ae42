"""Failed dashboard logins, shared by every dashboard worker (login throttling).

Revision ID: 0006
Revises: 0005
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
        "login_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("key", sa.String(length=100), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind IN ('user', 'ip')", name=op.f("ck_login_failures_kind")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
    )
    op.create_index(op.f("ix_login_failures_at"), "login_failures", ["at"], unique=False)
    op.create_index(
        "ix_login_failures_kind_key_at", "login_failures", ["kind", "key", "at"], unique=False
    )


def downgrade() -> None:
    op.drop_index("ix_login_failures_kind_key_at", table_name="login_failures")
    op.drop_index(op.f("ix_login_failures_at"), table_name="login_failures")
    op.drop_table("login_failures")
