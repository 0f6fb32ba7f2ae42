"""Reading a county parcel file: formats, coordinate systems, mailing addresses, rejects."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import shapely

from sidewalk.registry.county import (
    ParcelFile,
    ParcelFileError,
    RawFile,
    fits_envelope,
    owner_id,
    parse_records,
    read_parcel_file,
    split_mailing_address,
)
from tests.registry.parcels import (
    LANDLORD,
    County,
    write_csv,
    write_geojson,
    write_shapefile,
    write_zip,
)

WRITERS = {
    "geojson-3071": (write_geojson, ".geojson", 3071, None),
    "geojson-wgs84": (write_geojson, ".geojson", 4326, None),
    "shapefile-3071": (write_shapefile, ".shp", 3071, None),
    "zip-wgs84": (write_zip, ".zip", 4326, None),
    "csv-3071": (write_csv, ".csv", 3071, "3071"),
    "csv-wgs84": (write_csv, ".csv", 4326, "EPSG:4326"),
}


@pytest.fixture(scope="module")
def read_all(county: County, tmp_path_factory: pytest.TempPathFactory) -> dict[str, ParcelFile]:
    folder = tmp_path_factory.mktemp("files")
    out = {}
    for name, (write, suffix, epsg, crs) in WRITERS.items():
        path = write(county, folder / f"{name}{suffix}", epsg)
        out[name] = parse_records(read_parcel_file(path, crs=crs))
    return out


def test_each_format_and_coordinate_system_reads_the_same_parcels(
    read_all: dict[str, ParcelFile], county: County
) -> None:
    reference = {p.parcel_id: p for p in read_all["geojson-3071"].parcels}
    assert len(reference) == len(county.expected)
    assert {p.parcel_id for p in reference.values()} == set(county.expected)
    for name, parsed in read_all.items():
        assert {p.parcel_id for p in parsed.parcels} == set(reference), name
        assert sorted((r.record, r.parcel_id) for r in parsed.rejects) == sorted(
            (r.record, r.parcel_id) for r in read_all["geojson-3071"].rejects
        ), name
        for parcel in parsed.parcels:
            same = reference[parcel.parcel_id]
            assert (parcel.owner_name, parcel.mailing_lines, parcel.site_address) == (
                same.owner_name, same.mailing_lines, same.site_address,
            ), name  # fmt: skip
            assert shapely.equals_exact(
                shapely.normalize(parcel.geometry), shapely.normalize(same.geometry), 1e-7
            ), (name, parcel.parcel_id)


def test_the_outlines_land_in_clyman(read_all: dict[str, ParcelFile]) -> None:
    for parcel in read_all["shapefile-3071"].parcels:
        c = parcel.geometry.centroid
        assert -88.75 < c.x < -88.68, parcel.parcel_id
        assert 43.30 < c.y < 43.34, parcel.parcel_id


def test_records_that_cannot_be_imported_say_why(
    read_all: dict[str, ParcelFile], county: County
) -> None:
    rejects = read_all["zip-wgs84"].rejects
    for key, words in county.expected_rejects.items():
        reasons = [r.reason for r in rejects if key in {r.parcel_id, r.site_address}]
        assert reasons, key
        assert all(words in reason for reason in reasons), (key, reasons)
    # Both copies of a duplicated parcel number are refused, neither imported.
    assert len(rejects) == len(county.expected_rejects) + 1
    # In the importer's words: no field names, no internal states.
    for r in rejects:
        assert "SITEADRESS" not in r.reason
        assert "PSTLADRESS" not in r.reason


def test_owners_po_boxes_second_owners_and_condominium_units(
    read_all: dict[str, ParcelFile],
) -> None:
    parcels = read_all["csv-3071"].parcels
    boxes = [p for p in parcels if p.mailing_lines[0].startswith("PO BOX")]
    assert boxes
    assert all(p.mailing_lines[-1].endswith("WI 53016") for p in boxes)
    two = [p for p in parcels if p.second_owner]
    assert two
    assert all(p.owner_address_lines[0] == p.second_owner for p in two)
    units = [p for p in parcels if p.unit]
    assert len(units) == 8
    assert all(p.site_address.endswith(f"UNIT {p.unit}") for p in units)
    # One owner of several parcels is one owner.
    landlord = {p.owner_id for p in parcels if p.owner_name == LANDLORD}
    assert len(landlord) == 1
    assert sum(p.owner_name == LANDLORD for p in parcels) > 10
    # Zone: residential unless a class of property says commercial.
    assert {p.zone for p in parcels} == {"residential"}


def test_a_class_of_property_makes_walks_commercial(county: County, tmp_path: Path) -> None:
    path = write_geojson(county, tmp_path / "p.geojson")
    parsed = parse_records(read_parcel_file(path), commercial_classes=["2"])
    commercial = {p.parcel_id for p in parsed.parcels if p.zone == "commercial"}
    expected = {
        r.attributes["PARCELID"] for r in county.records if r.attributes["PROPCLASS"] == "2"
    } & {p.parcel_id for p in parsed.parcels}
    assert commercial == expected
    assert commercial


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("PO BOX 12 CLYMAN WI 53016", ("PO BOX 12", "CLYMAN WI 53016")),
        ("P.O. BOX 12 CLYMAN WI 53016", ("P.O. BOX 12", "CLYMAN WI 53016")),
        ("123 N MAIN ST CLYMAN WI 53016", ("123 N MAIN ST", "CLYMAN WI 53016")),
        ("123 MAIN ST APT 4 FORT ATKINSON WI 535381234",
         ("123 MAIN ST APT 4", "FORT ATKINSON WI 53538-1234")),
        ("N8765 COUNTY ROAD WW JUNEAU WI 53039", ("N8765 COUNTY ROAD WW", "JUNEAU WI 53039")),
        ("W1234 STATE HWY 60, HUSTISFORD, WI 53034", ("W1234 STATE HWY 60", "HUSTISFORD WI 53034")),
        ("450 ELM AVE E PO BOX 9 WATERTOWN WI 53094",
         ("450 ELM AVE E", "PO BOX 9", "WATERTOWN WI 53094")),
        ("1200 RIVER DR WATERTOWN WI 53094", ("1200 RIVER DR", "WATERTOWN WI 53094")),
        ("SOMEWHERE ON THE FARM", None),
        ("12 MAIN CLYMAN WI 53016", None),  # no street type: street and city run together
        ("14 AVENUE DES CHAMPS 75008 PARIS FRANCE", None),
    ],
)  # fmt: skip
def test_splitting_the_one_field_mailing_address(text: str, lines: tuple[str, ...] | None) -> None:
    assert split_mailing_address(text) == lines


def test_the_window_envelope() -> None:
    assert fits_envelope(["SCHMIDT JOHN", "PO BOX 12", "CLYMAN WI 53016"]) is None
    assert fits_envelope(["A", "B", "C", "D", "E"]) is None
    assert "6 lines" in (fits_envelope(["A", "B", "C", "D", "E", "F"]) or "")
    # 3.75 in at 10.5 pt: about 41 capitals of average width, fewer wide ones.
    assert fits_envelope(["JOHNSON FAMILY REVOCABLE TRUST"]) is None
    assert "wider" in (fits_envelope(["W" * 30]) or "")


def test_owner_ids_follow_name_and_address_not_spacing_or_case() -> None:
    a = owner_id("Schmidt  John", ["PO Box 12", "Clyman WI 53016"])
    assert a == owner_id("SCHMIDT JOHN", ["PO BOX 12", "CLYMAN WI 53016"])
    assert a != owner_id("SCHMIDT JOHN", ["PO BOX 13", "CLYMAN WI 53016"])


def test_a_missing_required_column_is_named(tmp_path: Path) -> None:
    path = tmp_path / "p.geojson"
    feature = {"type": "Feature", "geometry": None,
               "properties": {"PARCELID": "1", "OWNERNME1": "A", "SITEADRESS": "1 MAIN ST",
                              "STREETNAME": "MAIN"}}  # fmt: skip
    path.write_text(json.dumps({"type": "FeatureCollection", "features": [feature]}))
    with pytest.raises(ParcelFileError, match="the column PSTLADRESS is missing"):
        parse_records(read_parcel_file(path))


def test_an_unknown_coordinate_system(county: County, tmp_path: Path) -> None:
    path = write_csv(county, tmp_path / "p.csv")
    with pytest.raises(ParcelFileError, match="unknown coordinate system 'EPSG:999999'"):
        read_parcel_file(path, crs="999999")
    shp = write_shapefile(county, tmp_path / "p.shp")
    shp.with_suffix(".prj").write_text('PROJCS["made up",NOTHING[]]')
    with pytest.raises(ParcelFileError, match="unknown coordinate system"):
        read_parcel_file(shp)


def test_feet_read_as_degrees_are_caught(county: County, tmp_path: Path) -> None:
    # A CSV in EPSG:3071 imported without --crs would be read as longitude/latitude.
    raw = read_parcel_file(write_csv(county, tmp_path / "p.csv"))
    with pytest.raises(ParcelFileError, match="do not fit the coordinate system"):
        parse_records(raw)


@pytest.mark.parametrize(
    ("name", "content", "words"),
    [
        ("p.geojson", "{not json", "is not GeoJSON"),
        ("p.geojson", '{"type": "Feature"}', "not a GeoJSON FeatureCollection"),
        ("p.zip", "not a zip", "cannot be read"),
        ("p.csv", "PARCELID,OWNERNME1\n1,A\n", "no geometry column"),
        ("p.xlsx", "", "not a parcel file this reads"),
    ],
)
def test_an_unreadable_file_is_one_line(
    tmp_path: Path, name: str, content: str, words: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(ParcelFileError, match=words) as caught:
        read_parcel_file(path)
    assert "\n" not in str(caught.value)


def test_a_zip_with_several_layers_needs_one_chosen(county: County, tmp_path: Path) -> None:
    import zipfile

    path = write_zip(county, tmp_path / "p.zip")
    with zipfile.ZipFile(path, "a") as archive:
        archive.writestr("Roads.shp", b"")
    with pytest.raises(ParcelFileError, match=r"several layers \(Roads, V11_Parcels_Dodge\)"):
        read_parcel_file(path)
    raw = read_parcel_file(path, layer="V11_Parcels_Dodge")
    assert isinstance(raw, RawFile)
    assert len(raw.records) == len(county.records)
