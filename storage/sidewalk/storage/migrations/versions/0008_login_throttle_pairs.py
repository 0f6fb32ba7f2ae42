"""Login throttling per (account, client address): the ``pair`` kind of failure.

Growing delays per account-and-address, per address and per account replace
the hard lockout: ``login_failures.kind`` may now be ``pair``, whose
key is a hash of the account name and the client address.

Revision ID: 0008_login_throttle_pairs
Revises: 0007_profile_confirmations
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0008_login_throttle_pairs"
down_revision: str | None = "0007_profile_confirmations"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_NEW = "kind IN ('user', 'ip', 'pair')"
_OLD = "kind IN ('user', 'ip')"


def upgrade() -> None:
    with op.batch_alter_table("login_failures", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_login_failures_kind"), type_="check")
        batch_op.create_check_constraint("kind", _NEW)


def downgrade() -> None:
    op.execute("DELETE FROM login_failures WHERE kind = 'pair'")
    with op.batch_alter_table("login_failures", schema=None) as batch_op:
        batch_op.drop_constraint(op.f("ck_login_failures_kind"), type_="check")
        batch_op.create_check_constraint("kind", _OLD)
