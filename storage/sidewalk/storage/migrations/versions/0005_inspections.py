"""Sidewalk condition inspections (§ 370-5): one row per measured file.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "inspections",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("surveyed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("source_name", sa.String(length=500), nullable=False),
        sa.Column("source_sha256", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("failure", sa.String(length=500), nullable=True),
        sa.Column("result", sa.JSON(), nullable=False),
        sa.Column("blocks", sa.JSON(), nullable=False),
        sa.Column("evidence_sha256", sa.String(length=64), nullable=True),
        sa.CheckConstraint("kind IN ('photo', 'depth', 'laser')", name=op.f("ck_inspections_kind")),
        sa.CheckConstraint("status IN ('ok', 'failed')", name=op.f("ck_inspections_status")),
        sa.ForeignKeyConstraint(
            ["frontage_id"], ["frontages.id"], name=op.f("fk_inspections_frontage_id_frontages")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_inspections")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_inspections_idempotency_key")),
    )
    op.create_index(
        op.f("ix_inspections_frontage_id"), "inspections", ["frontage_id"], unique=False
    )


def downgrade() -> None:
    op.drop_index(op.f("ix_inspections_frontage_id"), table_name="inspections")
    op.drop_table("inspections")
