"""The registry: parcels, owners of record, occupants, cameras, events.

Streets, parcels, owners of record with effective dates, occupants, cameras,
pole locations and calibration, and registry events.

Frontages gain their parcel, street side, walk width and corner flag; a running
analytics picks registry changes up from ``registry_events`` in id order.

Revision ID: 0009_registry
Revises: 0008_login_throttle_pairs
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009_registry"
down_revision: str | None = "0008_login_throttle_pairs"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "parcels",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("tax_parcel_id", sa.String(length=64), nullable=True),
        sa.Column("site_address", sa.String(length=200), nullable=True),
        sa.Column("place", sa.String(length=100), nullable=True),
        sa.Column("zip_code", sa.String(length=16), nullable=True),
        sa.Column("geometry", sa.JSON(), nullable=True),
        sa.Column("source", sa.String(length=300), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_parcels")),
    )
    with op.batch_alter_table("parcels", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_parcels_tax_parcel_id"), ["tax_parcel_id"], unique=False
        )

    op.create_table(
        "registry_events",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("effective_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("recorded_by", sa.String(length=100), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_registry_events")),
    )
    with op.batch_alter_table("registry_events", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_registry_events_subject"), ["subject"], unique=False)

    op.create_table(
        "streets",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_streets")),
        sa.UniqueConstraint("name", name=op.f("uq_streets_name")),
    )
    op.create_table(
        "occupants",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("parcel_id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("role", sa.String(length=20), nullable=False),
        sa.Column("phone", sa.String(length=40), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("address_lines", sa.JSON(), nullable=False),
        sa.Column("effective_from", sa.DateTime(timezone=True), nullable=False),
        sa.Column("effective_to", sa.DateTime(timezone=True), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "role IN ('occupant', 'person in charge')", name=op.f("ck_occupants_role")
        ),
        sa.ForeignKeyConstraint(
            ["parcel_id"], ["parcels.id"], name=op.f("fk_occupants_parcel_id_parcels")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_occupants")),
    )
    with op.batch_alter_table("occupants", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_occupants_parcel_id"), ["parcel_id"], unique=False)

    op.create_table(
        "ownerships",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("parcel_id", sa.String(length=64), nullable=False),
        sa.Column("owner_id", sa.String(length=64), nullable=False),
        sa.Column("effective_from", sa.DateTime(timezone=True), nullable=False),
        sa.Column("effective_to", sa.DateTime(timezone=True), nullable=True),
        sa.Column("source", sa.String(length=300), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["owners.id"], name=op.f("fk_ownerships_owner_id_owners")
        ),
        sa.ForeignKeyConstraint(
            ["parcel_id"], ["parcels.id"], name=op.f("fk_ownerships_parcel_id_parcels")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ownerships")),
    )
    with op.batch_alter_table("ownerships", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_ownerships_owner_id"), ["owner_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_ownerships_parcel_id"), ["parcel_id"], unique=False)

    op.create_table(
        "cameras",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("device_id", sa.String(length=64), nullable=False),
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("region", sa.JSON(), nullable=False),
        sa.Column("homography", sa.JSON(), nullable=False),
        sa.Column("calibrated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("calibrated_by", sa.String(length=100), nullable=False),
        sa.Column("calibration_hash", sa.String(length=64), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_cameras_device_id_devices")
        ),
        sa.ForeignKeyConstraint(
            ["frontage_id"], ["frontages.id"], name=op.f("fk_cameras_frontage_id_frontages")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cameras")),
        sa.UniqueConstraint(
            "device_id", "frontage_id", name=op.f("uq_cameras_device_id_frontage_id")
        ),
    )
    with op.batch_alter_table("cameras", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_cameras_device_id"), ["device_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_cameras_frontage_id"), ["frontage_id"], unique=False)

    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.add_column(sa.Column("label", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("latitude", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("longitude", sa.Float(), nullable=True))
        batch_op.add_column(sa.Column("reported_calibration", sa.String(length=64), nullable=True))
        batch_op.add_column(
            sa.Column("reported_calibration_at", sa.DateTime(timezone=True), nullable=True)
        )
        batch_op.add_column(sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))

    with op.batch_alter_table("frontages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("parcel_id", sa.String(length=64), nullable=True))
        batch_op.add_column(sa.Column("street", sa.String(length=200), nullable=True))
        batch_op.add_column(sa.Column("side", sa.String(length=16), nullable=True))
        batch_op.add_column(sa.Column("walk_width_ft", sa.Float(), nullable=True))
        batch_op.add_column(
            sa.Column("corner", sa.Boolean(), nullable=False, server_default=sa.false())
        )
        batch_op.add_column(sa.Column("retired_at", sa.DateTime(timezone=True), nullable=True))
        batch_op.create_index(batch_op.f("ix_frontages_parcel_id"), ["parcel_id"], unique=False)
        batch_op.create_foreign_key(
            batch_op.f("fk_frontages_parcel_id_parcels"), "parcels", ["parcel_id"], ["id"]
        )


def downgrade() -> None:
    with op.batch_alter_table("frontages", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("fk_frontages_parcel_id_parcels"), type_="foreignkey")
        batch_op.drop_index(batch_op.f("ix_frontages_parcel_id"))
        batch_op.drop_column("retired_at")
        batch_op.drop_column("corner")
        batch_op.drop_column("walk_width_ft")
        batch_op.drop_column("side")
        batch_op.drop_column("street")
        batch_op.drop_column("parcel_id")

    with op.batch_alter_table("devices", schema=None) as batch_op:
        batch_op.drop_column("retired_at")
        batch_op.drop_column("reported_calibration_at")
        batch_op.drop_column("reported_calibration")
        batch_op.drop_column("longitude")
        batch_op.drop_column("latitude")
        batch_op.drop_column("label")

    with op.batch_alter_table("cameras", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_cameras_frontage_id"))
        batch_op.drop_index(batch_op.f("ix_cameras_device_id"))

    op.drop_table("cameras")
    with op.batch_alter_table("ownerships", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_ownerships_parcel_id"))
        batch_op.drop_index(batch_op.f("ix_ownerships_owner_id"))

    op.drop_table("ownerships")
    with op.batch_alter_table("occupants", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_occupants_parcel_id"))

    op.drop_table("occupants")
    op.drop_table("streets")
    with op.batch_alter_table("registry_events", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_registry_events_subject"))

    op.drop_table("registry_events")
    with op.batch_alter_table("parcels", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_parcels_tax_parcel_id"))

    op.drop_table("parcels")
