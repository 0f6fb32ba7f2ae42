"""A registry the county's file filled, under hostile files after it: ``sidewalk registry
export`` keeps the county's text as text (an owner of record or mailing address a
spreadsheet would run as a formula gets the leading quote, OWASP "CSV injection", as
every other CSV export does), and a re-import whose parcels lie nowhere near the
registry's is refused in one line, nothing changed."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, replace
from pathlib import Path

import pytest
import shapely
from shapely.geometry import mapping, shape
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.storage.cases import CaseStore
from tests.registry.parcels import County, generate, write_geojson

FORMULAS = {
    "OWNERNME1": '=HYPERLINK("http://evil.example","x")',
    "PSTLADRESS": "@SUM(1+1) BOX 5 CLYMAN WI 53016",
}


@dataclass(frozen=True)
class Imported:
    county: County
    parcel_id: str  # the parcel whose owner and address are formulas
    file: Path
    config: Path
    url: str


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> Imported:
    tmp = tmp_path_factory.mktemp("county")
    county = generate(blocks_x=2, blocks_y=1, lots=3)
    # A mid-block lot (a corner or end lot of so small a grid may find no street axis).
    pid = next(p for p, fronts in county.expected.items() if [f[0] for f in fronts] == ["MAIN ST"])
    records = [
        replace(r, attributes={**r.attributes, **FORMULAS})
        if r.attributes["PARCELID"] == pid
        else r
        for r in county.records
    ]
    path = write_geojson(replace(county, records=records), tmp / "dodge.geojson")
    config = tmp / "sidewalk.toml"
    url = f"sqlite:///{tmp / 'cases.sqlite3'}"
    config.write_text(f'data_dir = "{tmp / "var"}"\n[cases]\ndatabase_url = "{url}"\n')
    done = CliRunner().invoke(app, ["registry", "import", str(path), "--config", str(config)])
    assert done.exit_code == 0, done.output
    return Imported(county, pid, path, config, url)


def test_the_registry_export_keeps_formulas_from_the_county_file_as_text(
    imported: Imported, tmp_path: Path
) -> None:
    out = tmp_path / "frontages.csv"
    done = CliRunner().invoke(
        app, ["registry", "export", str(out), "--config", str(imported.config)]
    )
    assert done.exit_code == 0, done.output
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    number = imported.county.by_id(imported.parcel_id).attributes["TAXPARCELID"]
    hostile = [r for r in rows if r["parcel"] == number]
    assert hostile, rows
    for row in hostile:
        assert row["owner_of_record"] == "'" + FORMULAS["OWNERNME1"]
        assert row["mailing_address"].startswith("'@SUM(1+1), BOX 5")
    # No other cell of the file starts a formula; numbers stay numbers.
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "@", "\t", "\r")), row
        float(row["length_ft"])


def test_a_reimport_far_from_the_registry_is_refused(imported: Imported, tmp_path: Path) -> None:
    # 50 km east: still Wisconsin (EPSG:3071's area), so only the registry tells.
    data = json.loads(imported.file.read_text())
    for feature in data["features"]:
        if feature["geometry"]:
            moved = shapely.affinity.translate(shape(feature["geometry"]), 50_000)
            feature["geometry"] = mapping(moved)
    far = tmp_path / "elsewhere.geojson"
    far.write_text(json.dumps(data))
    cases = CaseStore(imported.url)
    try:
        before = cases.registry.list_parcels()
    finally:
        cases.close()
    done = CliRunner().invoke(
        app, ["registry", "import", str(far), "--config", str(imported.config)],
        env={"COLUMNS": "400"},
    )  # fmt: skip
    assert done.exit_code != 0
    lines = [x for x in done.output.splitlines() if x.strip()]
    assert len(lines) == 1, done.output
    assert lines[0].startswith(
        f"elsewhere.geojson: none of its {len(imported.county.expected)} parcels lies within"
        f" about 10 km of the {len(before)} the registry holds (they are about 50 km away)"
    ), lines[0]
    cases = CaseStore(imported.url)
    try:
        assert cases.registry.list_parcels() == before
    finally:
        cases.close()
