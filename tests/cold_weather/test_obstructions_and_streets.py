"""§ 370-8 obstructions, § 370-9 street-privilege permits, § 144-17 street sweeping."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

from sidewalk.analytics.clocks.obstructions import (
    Obstruction,
    OnRecord,
    StreetPrivilegePermit,
    SweepingIncident,
    building_materials_check,
    clear_width_finding,
    obstruction_finding,
    obstruction_state,
    removal_deadline,
    street_privilege_check,
    street_privilege_expiry,
    sweeping_check,
    sweeping_deadline,
    sweeping_payment_deadline,
)
from sidewalk.core.profile import load_profile

CHICAGO = ZoneInfo("America/Chicago")
CLYMAN = load_profile()
EXAMPLE = load_profile(Path(__file__).resolve().parents[1] / "data" / "example_village.toml")
THREE_FT_MM = 3 * 304.8
SEEN = datetime(2026, 10, 31, 9, tzinfo=CHICAGO)


def sidewalk(width_mm: float | None, **changes: object) -> Obstruction:
    fields: dict[str, object] = {
        "id": "o1",
        "location": "101 Main St",
        "area": "sidewalk",
        "observed_at": SEEN,
        "clear_width_mm": width_mm,
        "kind": "fixture",
    }
    fields.update(changes)
    # Ignored: a dict of mixed values cannot be typed per field.
    return Obstruction(**fields)  # type: ignore[arg-type]


COMMERCIAL = OnRecord(commercial=True)
FIVE_FT_MM = 5 * 304.8


# -- § 370-8 A, B and C: what is prohibited, and the exceptions on record ---------------


def test_370_8_A_obstruction_leaving_3ft_is_a_violation() -> None:
    # Not a fixture: § 370-8 A prohibits it whatever width remains, 3 ft or 5 ft.
    for width in (THREE_FT_MM, FIVE_FT_MM):
        for on_record in (OnRecord(), COMMERCIAL):
            other = sidewalk(width, kind="other")
            finding = obstruction_finding(other, CLYMAN, on_record)
            assert finding is not None
            assert (finding.rule, finding.severity) == (
                "obstructions.sidewalk_removal_after_notice", "violation",
            )  # fmt: skip
            assert finding.citation == "§ 370-8 D (inferred)"
            assert "whatever width remains" in finding.message
            assert obstruction_state(other, CLYMAN, SEEN, on_record) == "obstructed"


def test_370_8_C_commercial_fixture_leaving_3ft_is_allowed_and_less_is_not() -> None:
    assert obstruction_finding(sidewalk(THREE_FT_MM), CLYMAN, COMMERCIAL) is None
    assert obstruction_state(sidewalk(THREE_FT_MM), CLYMAN, SEEN, COMMERCIAL) == "compliant"
    narrow = obstruction_finding(sidewalk(THREE_FT_MM - 1), CLYMAN, COMMERCIAL)
    assert narrow is not None
    assert (narrow.rule, narrow.citation) == (
        "obstructions.fixture_min_clear_width", "§ 370-8 C(3) (inferred)",
    )  # fmt: skip


def test_370_8_C_fixture_outside_a_commercial_area_is_a_violation_whatever_width() -> None:
    finding = obstruction_finding(sidewalk(FIVE_FT_MM), CLYMAN, OnRecord(commercial=False))
    assert finding is not None
    assert finding.rule == "obstructions.sidewalk_removal_after_notice"
    assert "commercial" in finding.message
    # On a street § 370-8 C gives no exception at all.
    street = sidewalk(None, area="street")
    assert obstruction_finding(street, CLYMAN, COMMERCIAL) is not None


def test_370_8_B1_a_street_privilege_permit_on_record_is_an_exception() -> None:
    other = sidewalk(100.0, kind="other", privilege_permit="SP-1")
    assert obstruction_finding(other, CLYMAN, OnRecord(privilege_permit=True)) is None
    problem = OnRecord(problems=("street privilege permit SP-1 is not on record",))
    finding = obstruction_finding(other, CLYMAN, problem)
    assert finding is not None
    assert "SP-1 is not on record" in finding.message


def test_370_8_B2_authorized_building_materials_take_at_most_half_the_walk() -> None:
    def materials(clear_mm: float, **changes: object) -> Obstruction:
        fields: dict[str, object] = {
            "kind": "building_materials", "sidewalk_width_mm": 1200.0, "gutters_clear": True,
            "materials_authorization": "BI-7",
        }  # fmt: skip
        fields.update(changes)
        return sidewalk(clear_mm, **fields)

    authorized = OnRecord(materials_authorization=True)
    assert obstruction_finding(materials(600.0), CLYMAN, authorized) is None  # exactly half
    over = obstruction_finding(materials(590.0), CLYMAN, authorized)
    assert over is not None
    assert (over.rule, over.severity, over.citation) == (
        "obstructions.building_materials_max_sidewalk", "violation", "§ 370-8 B(2) (inferred)",
    )  # fmt: skip
    blocked = obstruction_finding(materials(900.0, gutters_clear=False), CLYMAN, authorized)
    assert blocked is not None
    assert "gutters" in blocked.message
    # Without the Building Inspector's authorization on record: prohibited, whatever width.
    assert obstruction_finding(materials(1100.0), CLYMAN, OnRecord()) is not None
    # The example village allows only a third of the walk.
    assert obstruction_finding(materials(600.0), EXAMPLE, authorized) is not None
    street = materials(0.0, area="street", street_width_mm=9000.0, street_occupied_mm=3000.0)
    assert obstruction_finding(street, CLYMAN, authorized) is None
    wide = materials(0.0, area="street", street_width_mm=9000.0, street_occupied_mm=3100.0)
    assert obstruction_finding(wide, CLYMAN, authorized) is not None


def test_370_8_B3_an_excavation_needs_its_opening_permit_on_record() -> None:
    dug = sidewalk(None, kind="excavation", opening_permit="SO-1")
    assert obstruction_finding(dug, CLYMAN, OnRecord(opening_permit=True)) is None
    finding = obstruction_finding(dug, CLYMAN, OnRecord())
    assert finding is not None
    assert "street-opening permit" in finding.message


def test_370_8_C3_exactly_three_feet_clear_is_allowed_and_less_is_not() -> None:
    assert clear_width_finding(sidewalk(THREE_FT_MM), CLYMAN) is None
    finding = clear_width_finding(sidewalk(THREE_FT_MM - 1), CLYMAN)
    assert finding is not None
    assert (finding.rule, finding.severity) == ("obstructions.fixture_min_clear_width", "violation")
    assert finding.citation == "§ 370-8 C(3) (inferred)"
    assert finding.at == SEEN
    assert clear_width_finding(sidewalk(None), CLYMAN) is None


def test_example_village_wants_five_feet_clear() -> None:
    four_ft = sidewalk(4 * 304.8)
    assert clear_width_finding(four_ft, CLYMAN) is None
    assert clear_width_finding(four_ft, EXAMPLE) is not None


def test_removal_runs_24_real_hours_from_delivery_across_the_fall_change() -> None:
    delivered = datetime(2026, 10, 31, 18, tzinfo=CHICAGO)  # Saturday evening, CDT
    deadline = removal_deadline(sidewalk(500.0, notice_delivered_at=delivered), CLYMAN)
    assert deadline is not None
    assert deadline.start == delivered
    assert deadline.due - delivered == timedelta(hours=24)
    assert deadline.due.astimezone(CHICAGO).hour == 17  # Sunday 5 PM CST
    assert deadline.rule == "obstructions.sidewalk_removal_after_notice"
    assert removal_deadline(sidewalk(500.0), CLYMAN) is None


def test_street_and_example_removal_periods_differ() -> None:
    delivered = datetime(2026, 7, 1, 9, tzinfo=CHICAGO)
    street = Obstruction("o2", "Main St", "street", SEEN, notice_delivered_at=delivered)
    clyman = removal_deadline(street, CLYMAN)
    example = removal_deadline(street, EXAMPLE)
    assert clyman is not None
    assert example is not None
    assert clyman.due - delivered == timedelta(hours=24)
    assert example.due - delivered == timedelta(hours=12)
    assert clyman.citation == "§ 370-8 E (inferred)"


def test_the_obstruction_sequence_from_sighting_to_overdue_or_removed() -> None:
    delivered = SEEN + timedelta(hours=2)
    noticed = sidewalk(500.0, notice_delivered_at=delivered)
    assert obstruction_state(sidewalk(THREE_FT_MM), CLYMAN, SEEN, COMMERCIAL) == "compliant"
    assert obstruction_state(sidewalk(THREE_FT_MM), CLYMAN, SEEN) == "obstructed"
    assert obstruction_state(noticed, CLYMAN, SEEN) == "obstructed"
    assert obstruction_state(noticed, CLYMAN, delivered) == "removal_period"
    due = delivered.astimezone(UTC) + timedelta(hours=24)
    assert obstruction_state(noticed, CLYMAN, due - timedelta(seconds=1)) == "removal_period"
    assert obstruction_state(noticed, CLYMAN, due) == "overdue"
    removed = sidewalk(500.0, notice_delivered_at=delivered, removed_at=due - timedelta(hours=1))
    assert obstruction_state(removed, CLYMAN, due + timedelta(hours=5)) == "removed"


# -- § 370-8 B(2) building materials ---------------------------------------------------


def test_building_materials_may_take_half_the_sidewalk_and_a_third_of_the_street() -> None:
    ok = building_materials_check(
        SEEN,
        CLYMAN,
        sidewalk_width_mm=1200.0,
        sidewalk_occupied_mm=600.0,
        street_width_mm=9000.0,
        street_occupied_mm=3000.0,
    )
    assert ok == []
    over = building_materials_check(
        SEEN,
        CLYMAN,
        sidewalk_width_mm=1200.0,
        sidewalk_occupied_mm=610.0,
        street_width_mm=9000.0,
        street_occupied_mm=3010.0,
    )
    assert [(f.rule, f.severity) for f in over] == [
        ("obstructions.building_materials_max_sidewalk", "advisory"),
        ("obstructions.building_materials_max_street", "advisory"),
    ]
    assert "1/2 fraction" in over[0].message
    example = building_materials_check(
        SEEN, EXAMPLE, sidewalk_width_mm=1200.0, sidewalk_occupied_mm=600.0
    )
    assert [f.rule for f in example] == ["obstructions.building_materials_max_sidewalk"]


# -- § 370-9 street-privilege permits ---------------------------------------------------


def test_a_privilege_permit_ends_three_calendar_months_on_clamped_to_leap_day() -> None:
    leap = street_privilege_expiry(StreetPrivilegePermit("sp1", date(2027, 11, 30)), CLYMAN)
    assert leap.due == datetime(2028, 3, 1, 6, tzinfo=UTC)  # after all of Feb 29, 2028
    common = street_privilege_expiry(StreetPrivilegePermit("sp1", date(2026, 11, 30)), CLYMAN)
    assert common.due == datetime(2027, 3, 1, 6, tzinfo=UTC)  # after all of Feb 28, 2027
    assert common.citation == "§ 370-9 E (inferred)"
    earlier = StreetPrivilegePermit(
        "sp1", date(2026, 11, 30), earlier_termination_on=date(2026, 12, 31)
    )
    assert street_privilege_expiry(earlier, CLYMAN).due == datetime(2027, 1, 1, 6, tzinfo=UTC)
    example = street_privilege_expiry(StreetPrivilegePermit("sp1", date(2026, 11, 30)), EXAMPLE)
    assert example.due == datetime(2027, 5, 31, 5, tzinfo=UTC)  # after all of May 30, CDT


def test_a_temporary_walk_must_be_four_feet_and_the_street_two_thirds_open() -> None:
    good = StreetPrivilegePermit(
        "sp1",
        date(2026, 6, 1),
        temporary_walk_width_mm=4 * 304.8,
        street_width_mm=9000.0,
        street_occupied_mm=3000.0,
    )
    assert street_privilege_check(good, CLYMAN, SEEN) == []
    bad = StreetPrivilegePermit(
        "sp1",
        date(2026, 6, 1),
        temporary_walk_width_mm=1219.0,
        street_width_mm=9000.0,
        street_occupied_mm=3100.0,
    )
    assert [f.rule for f in street_privilege_check(bad, CLYMAN, SEEN)] == [
        "obstructions.temporary_walk_min_width",
        "obstructions.privilege_max_street",
    ]
    assert [f.rule for f in street_privilege_check(good, EXAMPLE, SEEN)] == [
        "obstructions.temporary_walk_min_width",
        "obstructions.privilege_max_street",
    ]


# -- § 144-17 sweeping --------------------------------------------------------------------


def test_sweeping_is_due_24_hours_after_the_incident() -> None:
    incident = SweepingIncident("s1", "Elm St", datetime(2026, 3, 7, 15, tzinfo=CHICAGO))
    deadline = sweeping_deadline(incident, CLYMAN)
    assert deadline.due - incident.occurred_at == timedelta(hours=24)
    assert deadline.due.astimezone(CHICAGO).hour == 16  # spring change: 4 PM CDT on Sunday
    assert sweeping_check(incident, CLYMAN, deadline.due - timedelta(seconds=1)) == []
    [late] = sweeping_check(incident, CLYMAN, deadline.due)
    assert (late.rule, late.severity, late.at) == (
        "streets.sweeping_deadline",
        "advisory",
        deadline.due,
    )
    swept = SweepingIncident(
        "s1", "Elm St", incident.occurred_at, swept_at=deadline.due - timedelta(hours=1)
    )
    assert sweeping_check(swept, CLYMAN, deadline.due + timedelta(days=3)) == []
    assert sweeping_deadline(incident, EXAMPLE).due - incident.occurred_at == timedelta(hours=12)


def test_unpaid_sweeping_costs_become_a_violation_after_30_days_across_the_year_end() -> None:
    occurred = datetime(2026, 11, 20, 10, tzinfo=CHICAGO)
    billed = SweepingIncident(
        "s1", "Elm St", occurred, swept_at=occurred, bill_received_on=date(2026, 12, 1)
    )
    payment = sweeping_payment_deadline(billed, CLYMAN)
    assert payment is not None
    assert payment.due == datetime(2027, 1, 1, 6, tzinfo=UTC)  # after all of Dec 31
    assert sweeping_check(billed, CLYMAN, datetime(2026, 12, 31, 23, 59, tzinfo=CHICAGO)) == []
    [unpaid] = sweeping_check(billed, CLYMAN, datetime(2027, 1, 1, 0, 0, tzinfo=CHICAGO))
    assert (unpaid.rule, unpaid.severity) == ("streets.sweeping_costs_payable", "violation")
    paid_last_day = SweepingIncident(
        "s1",
        "Elm St",
        occurred,
        swept_at=occurred,
        bill_received_on=date(2026, 12, 1),
        paid_on=date(2026, 12, 31),
    )
    assert sweeping_check(paid_last_day, CLYMAN, datetime(2027, 2, 1, tzinfo=CHICAGO)) == []
    paid_late = SweepingIncident(
        "s1",
        "Elm St",
        occurred,
        swept_at=occurred,
        bill_received_on=date(2026, 12, 1),
        paid_on=date(2027, 1, 1),
    )
    assert len(sweeping_check(paid_late, CLYMAN, datetime(2027, 2, 1, tzinfo=CHICAGO))) == 1
    example = sweeping_payment_deadline(billed, EXAMPLE)
    assert example is not None
    assert example.due == datetime(2026, 12, 16, 6, tzinfo=UTC)
