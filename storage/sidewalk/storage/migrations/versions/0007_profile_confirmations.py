"""Profile confirmations and the ``held`` notice status.

A value the ordinance text leaves open (``unconfirmed = true`` in the
profile) is confirmed by the Village: who, when, and the board action or
ordinance reference. Until then a notice relying on it is ``held``.

Revision ID: 0007_profile_confirmations
Revises: 0006
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007_profile_confirmations"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_OLD = "status IN ('pending', 'rendered', 'delivered')"
_NEW = "status IN ('pending', 'held', 'rendered', 'delivered')"


def upgrade() -> None:
    op.create_table(
        "profile_confirmations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=120), nullable=False),
        sa.Column("value", sa.String(length=200), nullable=False),
        sa.Column("confirmed_by", sa.String(length=200), nullable=False),
        sa.Column("reference", sa.Text(), nullable=False),
        sa.Column("confirmed_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("recorded_by", sa.String(length=100), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_profile_confirmations")),
    )
    op.create_index(
        op.f("ix_profile_confirmations_name"), "profile_confirmations", ["name"], unique=False
    )
    with op.batch_alter_table("notices", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_notices_status"), type_="check")
        batch_op.create_check_constraint("status", _NEW)


def downgrade() -> None:
    op.execute("UPDATE notices SET status = 'pending' WHERE status = 'held'")
    with op.batch_alter_table("notices", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_notices_status"), type_="check")
        batch_op.create_check_constraint("status", _OLD)
    op.drop_index(op.f("ix_profile_confirmations_name"), table_name="profile_confirmations")
    op.drop_table("profile_confirmations")
