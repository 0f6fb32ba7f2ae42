"""A clock transition's revision: the corrections of the case's facts made before it.

A § 370-10 case corrected back to a state at a time it stood at before (a service
corrected back to its first time, undone then entered again) moves again; the same
``(clock, at, to_state)`` in a later revision is a new transition, not a replay.

Revision ID: 0010_transition_revision
Revises: 0009_registry
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010_transition_revision"
down_revision: str | None = "0009_registry"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("clock_transitions", schema=None) as batch_op:
        batch_op.add_column(sa.Column("revision", sa.Integer(), server_default="0", nullable=False))
        batch_op.drop_constraint(
            batch_op.f("uq_clock_transitions_clock_id_at_to_state"), type_="unique"
        )
        batch_op.create_unique_constraint(
            batch_op.f("uq_clock_transitions_clock_id_at_to_state_revision"),
            ["clock_id", "at", "to_state", "revision"],
        )


def downgrade() -> None:
    # A later revision's rows repeat an earlier (clock, at, to_state): they go first.
    op.execute(
        "DELETE FROM clock_transitions WHERE revision > 0 AND EXISTS (SELECT 1 FROM"
        " clock_transitions AS t WHERE t.clock_id = clock_transitions.clock_id"
        " AND t.at = clock_transitions.at AND t.to_state = clock_transitions.to_state"
        " AND t.revision < clock_transitions.revision)"
    )
    with op.batch_alter_table("clock_transitions", schema=None) as batch_op:
        batch_op.drop_constraint(
            batch_op.f("uq_clock_transitions_clock_id_at_to_state_revision"), type_="unique"
        )
        batch_op.create_unique_constraint(
            batch_op.f("uq_clock_transitions_clock_id_at_to_state"), ["clock_id", "at", "to_state"]
        )
        batch_op.drop_column("revision")
