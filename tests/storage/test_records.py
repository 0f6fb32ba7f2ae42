"""Each record type is defined once: its fields name the ORM attributes they read."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, fields

import pytest
from sqlalchemy import inspect

from sidewalk.storage import models as m
from sidewalk.storage.cases import (
    AbatementRecord,
    ActionRecord,
    AuditRecord,
    BillRecord,
    CaseStore,
    ClockRecord,
    ConfirmationRecord,
    DashboardSessionRecord,
    DashboardUserRecord,
    DeliveryJobRecord,
    DeliveryRecord,
    DeviceRecord,
    ExpenseRecord,
    FrontageRecord,
    InspectionRecord,
    NoticeRecord,
    OwnerRecord,
    PaymentRecord,
    TaxRollRecord,
    TransitionRecord,
    ViolationRecord,
)
from sidewalk.storage.cases.records import columns_of

RECORD_MODELS: list[tuple[type, type[m.Base]]] = [
    (OwnerRecord, m.Owner),
    (DeviceRecord, m.Device),
    (FrontageRecord, m.Frontage),
    (ClockRecord, m.Clock),
    (TransitionRecord, m.ClockTransition),
    (ViolationRecord, m.Violation),
    (NoticeRecord, m.Notice),
    (DeliveryRecord, m.Delivery),
    (DeliveryJobRecord, m.DeliveryJob),
    (AbatementRecord, m.Abatement),
    (ExpenseRecord, m.Expense),
    (BillRecord, m.Bill),
    (PaymentRecord, m.Payment),
    (TaxRollRecord, m.TaxRollEntry),
    (AuditRecord, m.AuditEntry),
    (ActionRecord, m.PersonAction),
    (InspectionRecord, m.Inspection),
    (DashboardUserRecord, m.DashboardUser),
    (DashboardSessionRecord, m.DashboardSession),
    (ConfirmationRecord, m.ProfileConfirmation),
]


@pytest.mark.parametrize(("record", "model"), RECORD_MODELS, ids=lambda x: x.__name__)
def test_every_stored_field_reads_a_mapped_attribute(record: type, model: type[m.Base]) -> None:
    mapped = set(inspect(model).attrs.keys())
    sources = columns_of(record)
    assert set(sources.values()) <= mapped
    # Only a bill's paid total is computed rather than read from its own row.
    computed = {f.name for f in fields(record)} - set(sources)
    assert computed == ({"paid"} if record is BillRecord else set())


def test_records_stay_frozen(case_store: CaseStore) -> None:
    owner = case_store.registry.get_owner("owner-smith")
    with pytest.raises(FrozenInstanceError):
        # Ignored: assigning to a frozen record on purpose: it must raise.
        owner.name = "changed"  # type: ignore[misc]
    assert owner.address_lines == ("101 Main St", "Clyman, WI 53016")


def test_every_exported_row_record_is_checked() -> None:
    from sidewalk.storage import cases

    exported = {getattr(cases, name) for name in cases.__all__ if name.endswith("Record")} - {
        cases.BlockConditionRecord
    }  # derived from inspections, not a row of its own
    assert exported == {record for record, _model in RECORD_MODELS}
