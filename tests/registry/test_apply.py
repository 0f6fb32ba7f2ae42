"""The county file against the registry: first import, the yearly re-import's
difference applied with effective dates, open cases left alone, idempotence."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from sidewalk.registry.apply import (
    SOURCE_PREFIX,
    Difference,
    ImportRefused,
    Snapshot,
    apply,
    compare,
    snapshot,
)
from sidewalk.registry.county import ParcelFile, parse_records
from sidewalk.registry.frontages import Derived, derive_frontages
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.cases.records import Cause
from tests.registry.conftest import FIRST
from tests.registry.parcels import LANDLORD, County, next_year, raw_file

SECOND = datetime(2026, 6, 1, 5, 0, tzinfo=UTC)


def _import(
    cases: CaseStore, county: County, at: datetime, *, dry_run: bool = False
) -> tuple[ParcelFile, Derived, Difference, Snapshot]:
    parsed = parse_records(raw_file(county, "dodge.geojson"))
    derived = derive_frontages(parsed.parcels)
    snap = snapshot(cases)
    diff = compare(parsed, snap, at)
    if not dry_run:
        apply(cases, parsed, derived, diff, snap, effective=at, site="clyman", who="it")
    return parsed, derived, diff, snap


def test_the_first_import_fills_the_registry(
    store: CaseStore, imported: CaseStore, small_county: County
) -> None:
    # Into an empty registry every parcel is new (the conftest applied it to ``imported``).
    parsed, derived, diff, _ = _import(store, small_county, FIRST, dry_run=True)
    assert len(diff.new) == len(parsed.parcels) == len(small_county.expected)
    assert not store.registry.list_parcels()
    registry = imported.registry
    parcels = registry.list_parcels()
    assert len(parcels) == len(parsed.parcels)
    assert all(p.source == SOURCE_PREFIX + "dodge.geojson" for p in parcels)
    frontages = registry.list_frontages()
    assert {f.id for f in frontages} == {f.frontage_id for f in derived.all()}
    assert all(f.zone == "residential" and f.site == "clyman" for f in frontages)
    assert {f.street for f in frontages} <= {s.name for s in registry.list_streets()}
    assert set(registry.frontage_geometries()) == {f.id for f in frontages}
    corner = next(f for f in frontages if f.corner)
    assert corner.side in {"N", "S", "E", "W"}
    # The landlord of several parcels is one owner, with its PO box.
    landlord = [o for o in registry.list_owners() if o.name == LANDLORD]
    assert len(landlord) == 1
    assert landlord[0].address_lines == ("PO BOX 13", "CLYMAN WI 53016")
    owned = [f for f in frontages if f.owner_id == landlord[0].id]
    assert len({f.parcel_id for f in owned}) >= 2
    # Every parcel has its owner of record from the effective date.
    for p in parsed.parcels[:10]:
        (ownership,) = registry.ownerships(p.parcel_id)
        assert ownership.owner_id == p.owner_id
        assert ownership.effective_from == FIRST


def test_importing_the_same_file_again_changes_nothing(
    imported: CaseStore, small_county: County
) -> None:
    store = imported
    events, audit = store.registry.last_event_id(), len(store.audit.list())
    _, _, diff, _ = _import(store, small_county, SECOND)
    assert diff.is_empty()
    assert diff.unchanged == len(small_county.expected)
    assert store.registry.last_event_id() == events
    assert len(store.audit.list()) == audit


def test_an_edit_by_hand_survives_a_reimport(imported: CaseStore, small_county: County) -> None:
    store = imported
    f = store.registry.list_frontages()[3]
    store.registry.upsert_device("pole-1", "clyman")
    fields = {k: getattr(f, k) for k in ("site", "parcel_number", "street_address", "owner_id",
                                         "parcel_id", "street", "side", "corner")}  # fmt: skip
    store.registry.upsert_frontage(
        f.id, **fields, length_ft=71.5, zone="commercial", device_id="pole-1", walk_width_ft=5.0
    )
    _import(store, small_county, SECOND)
    after = store.registry.get_frontage(f.id)
    assert (after.length_ft, after.zone, after.device_id, after.walk_width_ft) == (
        71.5, "commercial", "pole-1", 5.0,
    )  # fmt: skip


def test_the_yearly_reimport_shows_and_applies_the_difference(
    imported: CaseStore, small_county: County
) -> None:
    store = imported
    later, what = next_year(small_county)
    registry = store.registry
    sold = what["sold"][0]
    sold_frontage = next(f for f in registry.list_frontages() if f.parcel_id == sold)
    split_frontage = next(f for f in registry.list_frontages() if f.parcel_id == what["split"])
    # Open cases on a parcel that is sold and one that is split.
    for f in (sold_frontage, split_frontage):
        store.clocks.open(
            f.id,
            "clearing",
            "running",
            FIRST,
            Cause(kind="deadline", ts=int(FIRST.timestamp() * 1000)),
        )
    before_sale = store.notices.create("n1", "clearing_violation", sold_frontage.id,
                                       datetime(2026, 3, 1, 15, tzinfo=UTC))  # fmt: skip
    old_owner = registry.get_owner(sold_frontage.owner_id).name

    # The dry run: the difference, nothing written.
    events = registry.last_event_id()
    _, _, diff, snap = _import(store, later, SECOND, dry_run=True)
    assert registry.last_event_id() == events
    assert sorted(p.parcel_id for p, _ in diff.sold) == sorted(what["sold"])
    assert [p.parcel_id for p, _ in diff.moved] == [what["moved"]]
    assert diff.split == [(what["split"], sorted(what["halves"]))]
    assert diff.gone == [what["gone"]]
    assert not diff.merged
    assert sorted(p.parcel_id for p in diff.new) == sorted(what["halves"])
    text = "\n".join(diff.lines(snap))
    assert f"sold: {sold_frontage.street_address} (parcel {sold}) from {old_owner}" in text
    assert "PO BOX 777" in text
    assert "split into" in text
    assert "gone from the county's file" in text
    assert len(diff.open_cases) == 2
    assert any(old_owner in line and "2026-06-01" in line for line in diff.open_cases)
    assert any("retired from 2026-06-01" in line for line in diff.open_cases)

    # Applied from 1 June 2026.
    _import(store, later, SECOND)
    after_sale = store.notices.create("n2", "clearing_violation", sold_frontage.id,
                                      datetime(2026, 7, 1, 15, tzinfo=UTC))  # fmt: skip
    assert store.notices.get(before_sale.id).owner_name == old_owner
    assert after_sale.owner_name.startswith("NEWCOMER")
    assert [o.effective_from for o in registry.ownerships(sold)] == [FIRST, SECOND]
    moved = registry.ownerships(what["moved"])
    assert registry.get_owner(moved[-1].owner_id).address_lines[0] == "PO BOX 777"
    assert moved[0].effective_to == SECOND
    # The split parcel and its frontage retired from that date; the open case stays.
    assert registry.get_parcel(what["split"]).retired_at == SECOND
    assert registry.get_frontage(split_frontage.id).retired_at == SECOND
    assert any(c.frontage_id == split_frontage.id for c in store.clocks.list(active_only=True))
    halves = [f for f in registry.list_frontages() if f.parcel_id in what["halves"]]
    assert len(halves) == 2
    assert all(f.length_ft == pytest.approx(split_frontage.length_ft / 2, abs=0.2) for f in halves)
    assert registry.get_parcel(what["gone"]).retired_at == SECOND
    # And once more: nothing left to do.
    _, _, again, _ = _import(store, later, SECOND, dry_run=True)
    assert again.is_empty()


def test_an_effective_date_before_the_owner_of_record_is_refused(
    imported: CaseStore, small_county: County
) -> None:
    store = imported
    later, _ = next_year(small_county)
    events = store.registry.last_event_id()
    with pytest.raises(ImportRefused, match="before the current owner of record's date"):
        _import(store, later, datetime(2024, 12, 1, 6, tzinfo=UTC))
    assert store.registry.last_event_id() == events


def test_a_merge_is_told_apart_from_a_parcel_gone(
    imported: CaseStore, small_county: County
) -> None:
    from shapely.ops import unary_union

    store = imported
    later, _ = next_year(small_county)
    a, b = small_county.lots[(0, 0, 0, 2)], small_county.lots[(0, 0, 0, 3)]
    ra, rb = later.by_id(a), later.by_id(b)
    merged = type(ra)(dict(ra.attributes, PARCELID="206-1015-9999-000"),
                      unary_union([ra.geometry, rb.geometry]))  # fmt: skip
    later.records = [r for r in later.records if r not in (ra, rb)] + [merged]
    _, _, diff, _ = _import(store, later, SECOND, dry_run=True)
    assert diff.merged == [(sorted([a, b]), "206-1015-9999-000")]
