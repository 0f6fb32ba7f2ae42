"""Delivery jobs: the outbox that makes notice delivery retry-safe and restart-safe.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "delivery_jobs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=300), nullable=False),
        sa.Column("notice_id", sa.Integer(), nullable=False),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("target", sa.String(length=400), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("next_attempt_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "status IN ('queued', 'sending', 'sent', 'failed', 'uncertain', 'cancelled')",
            name=op.f("ck_delivery_jobs_status"),
        ),
        sa.ForeignKeyConstraint(
            ["notice_id"], ["notices.id"], name=op.f("fk_delivery_jobs_notice_id_notices")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_delivery_jobs")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_delivery_jobs_idempotency_key")),
    )
    with op.batch_alter_table("delivery_jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_delivery_jobs_notice_id"), ["notice_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_delivery_jobs_status"), ["status"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("delivery_jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_delivery_jobs_status"))
        batch_op.drop_index(batch_op.f("ix_delivery_jobs_notice_id"))
    op.drop_table("delivery_jobs")
