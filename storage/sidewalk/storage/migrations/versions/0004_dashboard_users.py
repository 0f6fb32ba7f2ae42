"""Dashboard accounts, their sessions, and optional frontage geometry for the map.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "dashboard_users",
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("password_hash", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("disabled", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "role IN ('viewer', 'inspector', 'clerk', 'admin')",
            name=op.f("ck_dashboard_users_role"),
        ),
        sa.PrimaryKeyConstraint("username", name=op.f("pk_dashboard_users")),
    )
    op.create_table(
        "dashboard_sessions",
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("username", sa.String(length=64), nullable=False),
        sa.Column("csrf_token", sa.String(length=64), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["username"],
            ["dashboard_users.username"],
            name=op.f("fk_dashboard_sessions_username_dashboard_users"),
        ),
        sa.PrimaryKeyConstraint("token_hash", name=op.f("pk_dashboard_sessions")),
    )
    op.create_index(
        op.f("ix_dashboard_sessions_username"), "dashboard_sessions", ["username"], unique=False
    )
    op.create_table(
        "frontage_geometries",
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("geometry", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["frontage_id"],
            ["frontages.id"],
            name=op.f("fk_frontage_geometries_frontage_id_frontages"),
        ),
        sa.PrimaryKeyConstraint("frontage_id", name=op.f("pk_frontage_geometries")),
    )


def downgrade() -> None:
    op.drop_table("frontage_geometries")
    op.drop_index(op.f("ix_dashboard_sessions_username"), table_name="dashboard_sessions")
    op.drop_table("dashboard_sessions")
    op.drop_table("dashboard_users")
