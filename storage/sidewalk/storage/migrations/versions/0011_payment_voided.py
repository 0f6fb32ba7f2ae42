"""A payment voided by a correction: the row stays, it no longer counts.

A payment entered with the wrong amount or date, or on the wrong bill, is
corrected by voiding it (``voided_at``) and, for a correction, recording the
right one as a new row; balances count the payments not voided.

Revision ID: 0011_payment_voided
Revises: 0010_transition_revision
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011_payment_voided"
down_revision: str | None = "0010_transition_revision"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("payments", schema=None) as batch_op:
        batch_op.add_column(sa.Column("voided_at", sa.DateTime(timezone=True), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("payments", schema=None) as batch_op:
        batch_op.drop_column("voided_at")
