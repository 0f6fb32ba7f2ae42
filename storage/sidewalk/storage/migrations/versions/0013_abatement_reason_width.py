"""A work order's reason holds 200 characters (was 40).

The reason is a key ("notice_expired", "obstruction_not_removed"); two clocks
wrote sentences of 44 and 55 characters instead, and on PostgreSQL the insert
failed, so analytics retried that batch for ever and recorded nothing more.
The keys are short now; the column is wide enough that a longer one can never
stop the village's analytics again.

Revision ID: 0013_abatement_reason_width
Revises: 0012_frontage_watched
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013_abatement_reason_width"
down_revision: str | None = "0012_frontage_watched"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("abatements", schema=None) as batch_op:
        batch_op.alter_column(
            "reason", existing_type=sa.String(40), type_=sa.String(200), existing_nullable=False
        )


def downgrade() -> None:
    with op.batch_alter_table("abatements", schema=None) as batch_op:
        batch_op.alter_column(
            "reason", existing_type=sa.String(200), type_=sa.String(40), existing_nullable=False
        )
