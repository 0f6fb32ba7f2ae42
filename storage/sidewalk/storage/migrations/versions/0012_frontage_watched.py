"""A frontage can be "not watched yet": no automatic clock, inspected by hand.

A village that starts with one pole registers every parcel but watches only
the frontages its poles see; ``frontages.watched`` is false for the others
(``sidewalk registry unwatched``), and the change is a registry event.

Revision ID: 0012_frontage_watched
Revises: 0011_payment_voided
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012_frontage_watched"
down_revision: str | None = "0011_payment_voided"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("frontages", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("watched", sa.Boolean(), nullable=False, server_default=sa.true())
        )


def downgrade() -> None:
    with op.batch_alter_table("frontages", schema=None) as batch_op:
        batch_op.drop_column("watched")
