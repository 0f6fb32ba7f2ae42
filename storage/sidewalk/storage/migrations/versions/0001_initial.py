"""Initial case-record schema.

Written by autogenerate from sidewalk.storage.models, then reviewed: custom
column types spelled as their storage types (DateTime(timezone=True) for
UTCDateTime, BigInteger cents for Money) so this file never changes when the
models do.

Revision ID: 0001
Revises:
Create Date: 2026-11-30 00:11:15.286395
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "audit_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(length=100), nullable=False),
        sa.Column("action", sa.String(length=100), nullable=False),
        sa.Column("subject", sa.String(length=200), nullable=False),
        sa.Column("detail_json", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(length=64), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
        sa.UniqueConstraint("hash", name=op.f("uq_audit_log_hash")),
        sa.UniqueConstraint("prev_hash", name=op.f("uq_audit_log_prev_hash")),
    )
    op.create_index(op.f("ix_audit_log_subject"), "audit_log", ["subject"], unique=False)

    op.create_table(
        "devices",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("site", sa.String(length=64), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=True),
        sa.Column("availability", sa.String(length=16), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_devices")),
    )
    op.create_index(op.f("ix_devices_site"), "devices", ["site"], unique=False)

    op.create_table(
        "notice_counters",
        sa.Column("year", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("last_number", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("year", name=op.f("pk_notice_counters")),
    )
    op.create_table(
        "owners",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("name", sa.String(length=200), nullable=False),
        sa.Column("address_lines", sa.JSON(), nullable=False),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_owners")),
    )
    op.create_table(
        "frontages",
        sa.Column("id", sa.String(length=64), nullable=False),
        sa.Column("site", sa.String(length=64), nullable=False),
        sa.Column("parcel_number", sa.String(length=64), nullable=False),
        sa.Column("street_address", sa.String(length=200), nullable=False),
        sa.Column("length_ft", sa.Float(), nullable=False),
        sa.Column("zone", sa.String(length=16), nullable=False),
        sa.Column("owner_id", sa.String(length=64), nullable=False),
        sa.Column("device_id", sa.String(length=64), nullable=True),
        sa.Column("may_deposit_on_street", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["device_id"], ["devices.id"], name=op.f("fk_frontages_device_id_devices")
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["owners.id"], name=op.f("fk_frontages_owner_id_owners")
        ),
        sa.CheckConstraint("zone IN ('residential', 'commercial')", name=op.f("ck_frontages_zone")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_frontages")),
    )
    op.create_index(op.f("ix_frontages_device_id"), "frontages", ["device_id"], unique=False)
    op.create_index(op.f("ix_frontages_owner_id"), "frontages", ["owner_id"], unique=False)
    op.create_index(
        op.f("ix_frontages_parcel_number"), "frontages", ["parcel_number"], unique=False
    )
    op.create_index(op.f("ix_frontages_site"), "frontages", ["site"], unique=False)

    op.create_table(
        "clocks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("kind", sa.String(length=32), nullable=False),
        sa.Column("state", sa.String(length=32), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=True),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("cause", sa.JSON(), nullable=False),
        sa.Column("citation", sa.String(length=200), nullable=True),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("unconfirmed", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["frontage_id"], ["frontages.id"], name=op.f("fk_clocks_frontage_id_frontages")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clocks")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_clocks_idempotency_key")),
    )
    op.create_index("ix_clocks_frontage_open", "clocks", ["frontage_id", "closed_at"], unique=False)

    op.create_table(
        "clock_transitions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("clock_id", sa.Integer(), nullable=False),
        sa.Column("from_state", sa.String(length=32), nullable=False),
        sa.Column("to_state", sa.String(length=32), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("cause", sa.JSON(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["clock_id"], ["clocks.id"], name=op.f("fk_clock_transitions_clock_id_clocks")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_clock_transitions")),
        sa.UniqueConstraint(
            "clock_id", "at", "to_state", name=op.f("uq_clock_transitions_clock_id_at_to_state")
        ),
    )
    op.create_index(
        op.f("ix_clock_transitions_clock_id"), "clock_transitions", ["clock_id"], unique=False
    )

    op.create_table(
        "violations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("clock_id", sa.Integer(), nullable=True),
        sa.Column("rule", sa.String(length=100), nullable=False),
        sa.Column("citation", sa.String(length=200), nullable=True),
        sa.Column("detected_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("evidence", sa.JSON(), nullable=False),
        sa.Column("offense_count", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["clock_id"], ["clocks.id"], name=op.f("fk_violations_clock_id_clocks")
        ),
        sa.ForeignKeyConstraint(
            ["frontage_id"], ["frontages.id"], name=op.f("fk_violations_frontage_id_frontages")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_violations")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_violations_idempotency_key")),
    )
    op.create_index(op.f("ix_violations_clock_id"), "violations", ["clock_id"], unique=False)
    op.create_index(op.f("ix_violations_frontage_id"), "violations", ["frontage_id"], unique=False)

    op.create_table(
        "notices",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("number", sa.String(length=32), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("violation_id", sa.Integer(), nullable=True),
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("owner_id", sa.String(length=64), nullable=False),
        sa.Column("owner_name", sa.String(length=200), nullable=False),
        sa.Column("owner_address_lines", sa.JSON(), nullable=False),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("deadline", sa.DateTime(timezone=True), nullable=True),
        sa.Column("citation", sa.String(length=200), nullable=True),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.Column("body_text", sa.Text(), nullable=True),
        sa.Column("body_html", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("rendered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("delivered_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["frontage_id"], ["frontages.id"], name=op.f("fk_notices_frontage_id_frontages")
        ),
        sa.ForeignKeyConstraint(
            ["owner_id"], ["owners.id"], name=op.f("fk_notices_owner_id_owners")
        ),
        sa.ForeignKeyConstraint(
            ["violation_id"], ["violations.id"], name=op.f("fk_notices_violation_id_violations")
        ),
        sa.CheckConstraint(
            "status IN ('pending', 'rendered', 'delivered')", name=op.f("ck_notices_status")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notices")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_notices_idempotency_key")),
        sa.UniqueConstraint("number", name=op.f("uq_notices_number")),
    )
    op.create_index(op.f("ix_notices_frontage_id"), "notices", ["frontage_id"], unique=False)
    op.create_index(op.f("ix_notices_kind"), "notices", ["kind"], unique=False)
    op.create_index(op.f("ix_notices_status"), "notices", ["status"], unique=False)
    op.create_index(op.f("ix_notices_violation_id"), "notices", ["violation_id"], unique=False)

    op.create_table(
        "abatements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("violation_id", sa.Integer(), nullable=True),
        sa.Column("notice_id", sa.Integer(), nullable=True),
        sa.Column("reason", sa.String(length=40), nullable=False),
        sa.Column("ordered_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("completed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["frontage_id"], ["frontages.id"], name=op.f("fk_abatements_frontage_id_frontages")
        ),
        sa.ForeignKeyConstraint(
            ["notice_id"], ["notices.id"], name=op.f("fk_abatements_notice_id_notices")
        ),
        sa.ForeignKeyConstraint(
            ["violation_id"], ["violations.id"], name=op.f("fk_abatements_violation_id_violations")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_abatements")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_abatements_idempotency_key")),
    )
    op.create_index(op.f("ix_abatements_frontage_id"), "abatements", ["frontage_id"], unique=False)

    op.create_table(
        "bills",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("abatement_id", sa.Integer(), nullable=False),
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("owner_name", sa.String(length=200), nullable=False),
        sa.Column("owner_address_lines", sa.JSON(), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("costs_incurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("issued_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("due_date", sa.Date(), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.ForeignKeyConstraint(
            ["abatement_id"], ["abatements.id"], name=op.f("fk_bills_abatement_id_abatements")
        ),
        sa.ForeignKeyConstraint(
            ["frontage_id"], ["frontages.id"], name=op.f("fk_bills_frontage_id_frontages")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_bills")),
        sa.UniqueConstraint("abatement_id", name=op.f("uq_bills_abatement_id")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_bills_idempotency_key")),
    )
    op.create_index(op.f("ix_bills_frontage_id"), "bills", ["frontage_id"], unique=False)

    op.create_table(
        "expenses",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("abatement_id", sa.Integer(), nullable=False),
        sa.Column("incurred_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("description", sa.String(length=400), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.ForeignKeyConstraint(
            ["abatement_id"], ["abatements.id"], name=op.f("fk_expenses_abatement_id_abatements")
        ),
        sa.CheckConstraint("amount_cents > 0", name=op.f("ck_expenses_positive")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_expenses")),
    )
    op.create_index(op.f("ix_expenses_abatement_id"), "expenses", ["abatement_id"], unique=False)

    op.create_table(
        "deliveries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("notice_id", sa.Integer(), nullable=True),
        sa.Column("bill_id", sa.Integer(), nullable=True),
        sa.Column("channel", sa.String(length=16), nullable=False),
        sa.Column("target", sa.String(length=400), nullable=False),
        sa.Column("attempted_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("detail", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["bill_id"], ["bills.id"], name=op.f("fk_deliveries_bill_id_bills")
        ),
        sa.ForeignKeyConstraint(
            ["notice_id"], ["notices.id"], name=op.f("fk_deliveries_notice_id_notices")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_deliveries")),
    )
    op.create_index(op.f("ix_deliveries_bill_id"), "deliveries", ["bill_id"], unique=False)
    op.create_index(op.f("ix_deliveries_notice_id"), "deliveries", ["notice_id"], unique=False)

    op.create_table(
        "payments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("idempotency_key", sa.String(length=200), nullable=False),
        sa.Column("bill_id", sa.Integer(), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("paid_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("method", sa.String(length=32), nullable=False),
        sa.Column("reference", sa.String(length=100), nullable=True),
        sa.ForeignKeyConstraint(["bill_id"], ["bills.id"], name=op.f("fk_payments_bill_id_bills")),
        sa.CheckConstraint("amount_cents > 0", name=op.f("ck_payments_positive")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_payments")),
        sa.UniqueConstraint("idempotency_key", name=op.f("uq_payments_idempotency_key")),
    )
    op.create_index(op.f("ix_payments_bill_id"), "payments", ["bill_id"], unique=False)

    op.create_table(
        "tax_roll_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("bill_id", sa.Integer(), nullable=False),
        sa.Column("frontage_id", sa.String(length=64), nullable=False),
        sa.Column("parcel_number", sa.String(length=64), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("tax_year", sa.Integer(), nullable=False),
        sa.Column("certified_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("citation", sa.String(length=200), nullable=True),
        sa.ForeignKeyConstraint(
            ["bill_id"], ["bills.id"], name=op.f("fk_tax_roll_entries_bill_id_bills")
        ),
        sa.ForeignKeyConstraint(
            ["frontage_id"],
            ["frontages.id"],
            name=op.f("fk_tax_roll_entries_frontage_id_frontages"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tax_roll_entries")),
        sa.UniqueConstraint("bill_id", name=op.f("uq_tax_roll_entries_bill_id")),
    )


def downgrade() -> None:
    op.drop_table("tax_roll_entries")
    op.drop_table("payments")
    op.drop_table("deliveries")
    op.drop_table("expenses")
    op.drop_table("bills")
    op.drop_table("abatements")
    op.drop_table("notices")
    op.drop_table("violations")
    op.drop_table("clock_transitions")
    op.drop_table("clocks")
    op.drop_table("frontages")
    op.drop_table("owners")
    op.drop_table("notice_counters")
    op.drop_table("devices")
    op.drop_table("audit_log")
