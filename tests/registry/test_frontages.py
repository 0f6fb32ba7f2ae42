"""Frontages derived from the parcel outlines: the edge facing the street, its length
in feet and side, corner lots with two, rear lots and condominiums."""

from __future__ import annotations

import pytest
from pyproj import Geod, Transformer
from shapely.geometry import box, shape

from sidewalk.registry.county import ParcelFile, RawFile, RawRecord, parse_records
from sidewalk.registry.frontages import Derived, derive_frontages
from tests.registry.parcels import FT, ORIGIN, County, raw_file


@pytest.fixture(scope="module")
def parsed(county: County) -> ParcelFile:
    return parse_records(raw_file(county))


@pytest.fixture(scope="module")
def derived(parsed: ParcelFile) -> Derived:
    return derive_frontages(parsed.parcels)


def test_every_frontage_matches_the_generated_geometry(county: County, derived: Derived) -> None:
    wrong: dict[str, object] = {}
    for pid, expected in county.expected.items():
        got = [(f.street, f.side) for f in derived.frontages.get(pid, [])]
        if got != [(street, side) for street, side, _ in expected]:
            wrong[pid] = (expected, got)
            continue
        for f, (_, _, length) in zip(derived.frontages.get(pid, []), expected, strict=True):
            if abs(f.length_ft - length) > 0.5:
                wrong[pid] = (expected, f.length_ft)
    assert not wrong, wrong


def test_corner_lots_get_two_frontages(county: County, derived: Derived) -> None:
    corners = {pid for pid, exp in county.expected.items() if len(exp) == 2}
    assert len(corners) >= 20
    for pid in corners:
        frontages = derived.frontages[pid]
        assert [f.corner for f in frontages] == [True, True]
        # The second says which side of the lot it is on.
        assert frontages[1].street_address.endswith(f"({frontages[1].street} side)")
    plain = [fs[0] for pid, fs in derived.frontages.items() if pid not in corners]
    assert plain
    assert not any(f.corner for f in plain)


def test_rear_lots_have_no_frontage_and_say_so(county: County, derived: Derived) -> None:
    rear = [pid for pid, exp in county.expected.items() if not exp and pid not in
            {u for units in county.condo_holders.values() for u in units}]  # fmt: skip
    assert len(rear) >= 5
    for pid in rear:
        assert pid not in derived.frontages
        assert derived.notes[pid].startswith("no frontage")


def test_a_condominium_building_has_one_walk(county: County, derived: Derived) -> None:
    assert len(county.condo_holders) == 2
    for holder, units in county.condo_holders.items():
        assert len(derived.frontages[holder]) == 1
        for unit in units:
            assert unit not in derived.frontages
            assert f"parcel {holder}" in derived.notes[unit]
    # Without a common-element record the first unit holds it, with a note to fix.
    assert any("make the association the owner" in derived.notes.get(h, "")
               for h in county.condo_holders)  # fmt: skip


def test_the_map_line_is_in_wgs84_and_as_long_as_the_frontage(derived: Derived) -> None:
    geod = Geod(ellps="WGS84")
    for f in derived.all()[:60]:
        line = shape(f.line)
        assert f.line["type"] == "LineString"
        lon, lat = line.coords[0]
        assert -88.75 < lon < -88.68
        assert 43.30 < lat < 43.34
        metres = geod.geometry_length(line)
        assert metres / FT == pytest.approx(f.length_ft, abs=0.3)


def _parcel(number: int, corner: tuple[float, float], w: float, h: float, street: str) -> RawRecord:
    x0, y0 = corner
    name, kind = street.rsplit(" ", 1)
    return RawRecord(number, {
        "PARCELID": f"P{number}", "OWNERNME1": "SMITH JO", "PSTLADRESS": "PO BOX 1 CLYMAN WI 53016",
        "SITEADRESS": f"{number} {street}", "STREETNAME": name, "STREETTYPE": kind,
    }, box(x0, y0, x0 + w, y0 + h))  # fmt: skip


def test_an_open_side_facing_no_named_street_is_a_corner_to_check() -> None:
    # Two rows of three lots facing each other across MAIN ST, nothing else: the
    # end lots' outer sides are open but face no street the file names.
    x, y, w, d, row = *ORIGIN, 60 * FT, 120 * FT, 66 * FT
    records = [_parcel(i + 1, (x + i * w, y), w, d, "MAIN ST") for i in range(3)]
    records += [_parcel(i + 4, (x + i * w, y + d + row), w, d, "MAIN ST") for i in range(3)]
    from pyproj import CRS

    derived = derive_frontages(parse_records(RawFile(records, CRS.from_epsg(3071), "t")).parcels)
    assert {pid: [(f.side, f.length_ft) for f in fs] for pid, fs in derived.frontages.items()} == {
        "P1": [("S", 60.0)], "P2": [("S", 60.0)], "P3": [("S", 60.0)],
        "P4": [("N", 60.0)], "P5": [("N", 60.0)], "P6": [("N", 60.0)],
    }  # fmt: skip
    assert set(derived.notes) == {"P1", "P3", "P4", "P6"}
    assert all(n.startswith("check corner lot") for n in derived.notes.values())


def test_a_street_at_an_angle() -> None:
    # The same two rows turned 35°: lengths and the street are found all the same.
    from pyproj import CRS
    from shapely import affinity

    x, y, w, d, row = *ORIGIN, 50 * FT, 120 * FT, 66 * FT
    records = [_parcel(i + 1, (x + i * w, y), w, d, "LAKE RD") for i in range(4)]
    records += [_parcel(i + 5, (x + i * w, y + d + row), w, d, "LAKE RD") for i in range(4)]
    turned = [
        RawRecord(r.number, r.attributes, affinity.rotate(r.geometry, 35, origin=ORIGIN))
        for r in records
    ]
    derived = derive_frontages(parse_records(RawFile(turned, CRS.from_epsg(3071), "t")).parcels)
    assert len(derived.frontages) == 8
    assert all(f.length_ft == pytest.approx(50.0, abs=0.2) for f in derived.all())
    # Each frontage lies on the street side of its lot: the two rows' lines are a
    # right-of-way apart.
    to_local = Transformer.from_crs(4326, 3071, always_xy=True)
    first = shape(derived.frontages["P1"][0].line).centroid
    across = shape(derived.frontages["P5"][0].line).centroid
    a, b = to_local.transform(first.x, first.y), to_local.transform(across.x, across.y)
    gap = abs((b[0] - a[0]) * -0.5736 + (b[1] - a[1]) * 0.8192)  # along the turned normal
    assert gap / FT == pytest.approx(66.0, abs=0.5)


def test_a_lot_beside_vacant_land_is_not_a_corner_to_check() -> None:
    # One row of five lots on MAIN ST; the middle one is vacant (no site address),
    # so it is not imported. Its neighbours' sides against it are not open to a
    # street: neither is a corner lot to check (only the row's two ends are).
    from pyproj import CRS

    x, y, w, d = *ORIGIN, 60 * FT, 120 * FT
    records = [_parcel(i + 1, (x + i * w, y), w, d, "MAIN ST") for i in range(5)]
    records += [_parcel(i + 6, (x + i * w, y + d + 66 * FT), w, d, "MAIN ST") for i in range(5)]
    records[2] = RawRecord(3, {**records[2].attributes, "SITEADRESS": ""}, records[2].geometry)
    parsed = parse_records(RawFile(records, CRS.from_epsg(3071), "t"))
    assert [r.parcel_id for r in parsed.rejects] == ["P3"]
    derived = derive_frontages(parsed.parcels, refused_ground=parsed.refused_ground)
    assert set(derived.notes) == {"P1", "P5", "P6", "P10"}
    # Without the vacant lot's outline, its neighbours read as corners to check.
    blind = derive_frontages(parsed.parcels)
    assert {"P2", "P4"} <= set(blind.notes)
