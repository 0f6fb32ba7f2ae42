"""People's actions are parsed once, into typed models; a bad one names its field."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any, get_args
from zoneinfo import ZoneInfo

import pytest

from sidewalk.analytics.clocks.actions import (
    ACTION_TYPES,
    STREET_ACTIONS,
    ActionError,
    ConfirmHazard,
    PaidInFull,
    RecordObstruction,
    RecordPermit,
    RecordPour,
    RecordStreetPrivilege,
    action_detail,
    parse_action,
)
from sidewalk.analytics.clocks.events import ActionKind
from sidewalk.core.units import length_to_mm

CHICAGO = ZoneInfo("America/Chicago")
AT = datetime(2026, 12, 11, 9, 30, tzinfo=CHICAGO)
WHO = "Officer Quinn"

# Details as the writers store them (the CLI, the dashboard, the delivery and billing code).
STORED: list[tuple[str, dict[str, Any]]] = [
    ("confirm_hazard", {}),
    ("confirm_hazard", {"notice": "2026-0007", "note": "glare ice by the hydrant"}),
    ("record_delivery", {"notice": "2026-0007", "channel": "hand"}),
    ("record_delivery", {"notice": "2026-0007", "method": "certified_mail"}),
    ("owner_unavailable", {"notice": "2026-0007"}),
    ("record_treated", {"notice": "2026-0007"}),
    ("inspected_clear", {"notice": "2026-0007", "note": "4 ft along the whole walk"}),
    ("abatement_done", {}),
    ("bill_received", {"bill": 4}),
    ("paid_in_full", {"bill": 4}),
    ("record_pour", {"kind": "sidewalk", "site": "pole-1", "at": "2026-11-20T09:30:00-06:00",
                     "location": "110 Main St", "frontage": "main-st-101"}),
    ("record_pour", {"kind": "street", "at": "2026-11-20T15:30:00+00:00",
                     "forecast": [{"at": "2026-11-20T15:00:00+00:00", "temp_f": 41}]}),
    ("record_permit", {"street": "Main St 100 block", "opened_at": "2026-11-20T09:30:00-06:00",
                       "emergency": True, "renewals": 0, "frontage": "main-st-101"}),
    ("record_permit", {"street": "Main St", "opened_at": "2026-11-20T09:30:00-06:00",
                       "approved_at": "2026-11-19T08:00:00-06:00", "emergency": False,
                       "renewals": 1}),
    ("record_obstruction", {"frontage": "main-st-101", "description": "sandwich board",
                            "kind": "fixture", "area": "sidewalk", "clear_width_mm": 800.0}),
    ("record_obstruction", {"frontage": "main-st-101", "description": "", "area": "sidewalk",
                            "kind": "fixture", "clear_width_ft": 2, "clear_width_in": 6.0,
                            "location": "Main"}),
    ("record_obstruction", {"frontage": "main-st-101", "description": "dumpster",
                            "kind": "other", "area": "street"}),
    ("obstruction_notice_delivered", {}),
    ("obstruction_removed", {}),
    ("record_sweeping_incident", {"frontage": "main-st-101", "description": "mud",
                                  "location": "Main St"}),
    ("sweeping_done", {}),
    ("record_street_privilege", {"frontage": "main-st-101", "issued_on": "2026-11-30",
                                 "holder": "Acme", "placed": "a dumpster", "area": "street",
                                 "earlier_termination_on": "2027-01-15",
                                 "street_width_mm": 9000.0, "street_occupied_mm": 2500.0}),
    ("street_privilege_inspected", {"present": True, "temporary_walk_width_mm": 1000.0}),
    ("street_privilege_inspected", {"present": False}),
    # § 370-8 B: the references an inspector writes down, checked against the records.
    ("record_obstruction", {"frontage": "main-st-101", "kind": "building_materials",
                            "area": "sidewalk", "materials_authorization": "BI-7",
                            "sidewalk_width_mm": 1219.2, "clear_width_mm": 700.0,
                            "gutters_clear": True}),
    ("record_obstruction", {"frontage": "main-st-101", "kind": "excavation", "area": "street",
                            "opening_permit": "SO-1"}),
    ("record_obstruction", {"frontage": "main-st-101", "kind": "other", "area": "sidewalk",
                            "privilege_permit": "SP-1"}),
    ("record_materials_authorization", {"frontage": "main-st-101",
                                        "authorized_from": "2026-11-20",
                                        "authorized_until": "2026-12-20", "by": "B. Inspector"}),
    # § 370-10 A: an inspector saw untreated ice on the walk (target: the frontage).
    ("record_ice", {"note": "glaze ice across the walk"}),
    # Rules no sensor sees.
    ("record_inspection_finding", {"frontage": "main-st-101", "rule": "snow_on_street",
                                   "onto": "street", "from_own_walk": True}),
    ("record_inspection_finding", {"frontage": "main-st-101", "rule": "excavation_fence",
                                   "fence_height_ft": 3, "fence_height_in": 6.0}),
    ("record_demolition_completed", {"frontage": "main-st-101",
                                     "at": "2026-11-20T15:30:00+00:00"}),
    ("record_excavation_opened", {"frontage": "main-st-101", "at": "2026-11-20T15:30:00+00:00",
                                  "description": "foundation"}),
    ("inspection_notice_delivered", {}),
    ("inspection_corrected", {}),
    ("record_sweeping_incident", {"frontage": "main-st-101", "contractor": "Acme Builders",
                                  "contractor_address": ["400 Industrial Dr",
                                                         "Watertown, WI 53094"]}),
    # A person decides a deadline waiting in review (target: the frontage).
    ("decide_review", {"decision": "cleared", "reason": "walk seen clear at 4:50 PM"}),
    ("decide_review", {"decision": "not_cleared", "reason": "photo: snow across the walk",
                       "deadline": "2026-12-11T17:00:00-06:00"}),
    # A wrong service corrected (target: the violation), with the reason.
    ("correct_entry", {"entry": 3, "step": "record_delivery", "reason": "served at 1 PM",
                       "method": "posted", "notice": "2026-0007", "undo": False}),
]  # fmt: skip


def test_every_action_kind_has_its_model() -> None:
    assert set(ACTION_TYPES) == set(get_args(ActionKind))
    stored_kinds = {kind for kind, _ in STORED}
    assert set(get_args(ActionKind)) == stored_kinds
    assert STREET_ACTIONS.issubset(ACTION_TYPES)


@pytest.mark.parametrize(("kind", "detail"), STORED, ids=[k for k, _ in STORED])
def test_a_stored_action_parses_and_its_detail_stores_the_same(
    kind: str, detail: dict[str, Any]
) -> None:
    action = parse_action(kind, "T-1", detail, at=AT, who=WHO)
    assert isinstance(action, ACTION_TYPES[kind])
    assert (action.kind, action.target, action.who) == (kind, "T-1", WHO)
    assert action.at == AT
    assert action.at.tzinfo is UTC
    assert (action.cause.kind, action.cause.who) == ("person", WHO)
    stored = action_detail(action)
    assert parse_action(kind, "T-1", stored, at=AT, who=WHO) == action
    instants = {"record_pour", "record_permit", "record_demolition_completed",
                "record_excavation_opened", "decide_review"}  # fmt: skip
    if kind not in instants:  # instants come back in UTC
        assert stored == detail


def test_details_are_typed() -> None:
    pour = parse_action("record_pour", "WO-1", STORED[11][1], at=AT, who=WHO)
    assert isinstance(pour, RecordPour)
    assert pour.detail.kind == "street"
    assert pour.detail.at == datetime(2026, 11, 20, 15, 30, tzinfo=UTC)
    assert [(p.at.hour, p.temp_f) for p in pour.detail.forecast] == [(15, 41.0)]
    permit = parse_action("record_permit", "SO-1", STORED[13][1], at=AT, who=WHO)
    assert isinstance(permit, RecordPermit)
    assert permit.detail.approved_at == datetime(2026, 11, 19, 14, 0, tzinfo=UTC)
    assert (permit.detail.emergency, permit.detail.renewals) == (False, 1)
    feet = parse_action("record_obstruction", "OB-1", STORED[15][1], at=AT, who=WHO)
    assert isinstance(feet, RecordObstruction)
    assert feet.detail.clear_width == length_to_mm(2, "feet") + length_to_mm(6, "inches")
    street = parse_action("record_obstruction", "OB-2", STORED[16][1], at=AT, who=WHO)
    assert isinstance(street, RecordObstruction)
    assert street.detail.clear_width is None
    privilege = parse_action("record_street_privilege", "SP-1", STORED[21][1], at=AT, who=WHO)
    assert isinstance(privilege, RecordStreetPrivilege)
    assert privilege.detail.issued_on == date(2026, 11, 30)
    assert privilege.detail.earlier_termination_on == date(2027, 1, 15)
    paid = parse_action("paid_in_full", "k", {"bill": 4}, at=AT, who=WHO)
    assert isinstance(paid, PaidInFull)
    assert paid.detail.bill == 4
    # What a case step carries into its clock's history: the fields given, as given.
    hazard = parse_action("confirm_hazard", "k", STORED[1][1], at=AT, who=WHO)
    assert isinstance(hazard, ConfirmHazard)
    assert hazard.detail.carried() == STORED[1][1]
    assert ConfirmHazard(target="k", at=AT, who=WHO).detail.carried() == {}


@pytest.mark.parametrize(
    ("kind", "detail", "field", "words"),
    [
        ("record_pour", {"kind": "asphalt", "at": "2026-11-20T09:30-06:00"}, "kind",
         "pour kind must be sidewalk or street"),
        ("record_pour", {"kind": "sidewalk", "site": "pole-1"}, "at", "at is required"),
        ("record_pour", {"kind": "sidewalk", "at": "2026-11-20T09:30"}, "at",
         "needs a UTC offset"),
        ("record_pour", {"kind": "sidewalk", "at": "2026-11-20T09:30Z",
                         "forecast": [{"temp_f": 9}]},
         "forecast.0.at", "forecast.0.at is required"),
        ("record_permit", {"opened_at": "2026-11-20T09:30-06:00"}, "street", "street"),
        ("record_permit", {"street": " ", "opened_at": "2026-11-20T09:30-06:00"}, "street",
         "needs the street"),
        ("record_permit", {"street": "Main", "opened_at": "2026-11-20T09:30-06:00",
                           "renewals": -1}, "renewals", "whole number"),
        ("record_permit", {"street": "Main", "opened_at": "2026-11-20T09:30-06:00",
                           "emergency": "yes"}, "emergency", "true or false"),
        ("record_obstruction", {"frontage": "main-st-101", "kind": "fixture"}, "",
         "clear width is required"),
        ("record_obstruction", {"frontage": "main-st-101", "clear_width_mm": 500}, "kind",
         "kind is required"),
        ("record_obstruction", {"frontage": "main-st-101", "kind": "sign"}, "kind",
         "kind must be fixture or building_materials or excavation or other"),
        ("record_obstruction", {"frontage": "main-st-101", "kind": "building_materials",
                                "materials_authorization": "BI-7", "gutters_clear": True},
         "", "sidewalk_width_mm and the clear width are required"),
        ("record_obstruction", {"frontage": "main-st-101", "kind": "fixture",
                                "clear_width_mm": "wide"},
         "clear_width_mm", "must be a number"),
        ("record_obstruction", {"frontage": "main-st-101", "kind": "other", "area": "alley"},
         "area",
         "area must be sidewalk or street"),
        ("record_sweeping_incident", {}, "frontage", "frontage is required"),
        ("record_inspection_finding", {"frontage": "f", "rule": "snow_on_street",
                                       "onto": "lake"}, "onto", "onto must be street"),
        ("record_demolition_completed", {"frontage": "f"}, "at", "at is required"),
        ("record_street_privilege", {"frontage": "f", "issued_on": "30/11/2026"}, "issued_on",
         "not an ISO date"),
        ("street_privilege_inspected", {}, "present", "present is required"),
        ("street_privilege_inspected", {"present": True, "street_width_mm": -3},
         "street_width_mm", "must be a number ≥ 0"),
        ("abatement_done", {"crew_hours": 3}, "crew_hours", "not a field of abatement_done"),
        ("sweeping_done", {"by": "Acme"}, "by", "not a field"),
        ("record_trash", {}, "kind", "unknown action 'record_trash'"),
    ],
)  # fmt: skip
def test_a_bad_detail_names_its_field(
    kind: str, detail: dict[str, Any], field: str, words: str
) -> None:
    with pytest.raises(ActionError) as caught:
        parse_action(kind, "T-9", detail, at=AT, who=WHO)
    assert words in str(caught.value)
    assert str(caught.value).startswith(f"{kind} T-9: ")
    assert caught.value.fields == ([field] if field else [])
    assert isinstance(caught.value, ValueError)  # the runner keeps it as a refused action


def test_the_time_and_author_are_checked_too() -> None:
    with pytest.raises(ActionError, match="must carry a zone"):
        parse_action("sweeping_done", "SW-1", {}, at=AT.replace(tzinfo=None), who=WHO)
    with pytest.raises(ActionError, match="must name who"):
        parse_action("sweeping_done", "SW-1", {}, at=AT, who="  ")
    late = parse_action("sweeping_done", "SW-1", None, at=AT + timedelta(hours=2), who=WHO)
    assert late.at == datetime(2026, 12, 11, 17, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("detail", "field"),
    [
        ({"reason": "seen"}, "decision"),
        ({"decision": "maybe", "reason": "seen"}, "decision"),
        ({"decision": "cleared"}, "reason"),
        ({"decision": "cleared", "reason": "  "}, "reason"),
        ({"decision": "cleared", "reason": "seen", "deadline": "2026-12-11T17:00"}, "deadline"),
    ],
)
def test_a_review_decision_needs_a_decision_and_a_reason(
    detail: dict[str, Any], field: str
) -> None:
    with pytest.raises(ActionError) as refused:
        parse_action("decide_review", "main-st-101", detail, at=AT, who=WHO)
    assert refused.value.fields == [field]
