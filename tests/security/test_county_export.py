"""``sidewalk registry export`` keeps the county's text as text: an owner of record or a
mailing address that a spreadsheet would run as a formula gets the leading quote
(OWASP "CSV injection"), as every other CSV export does."""

from __future__ import annotations

import csv
from dataclasses import replace
from pathlib import Path

from typer.testing import CliRunner

from sidewalk.cli import app
from tests.registry.parcels import generate, write_geojson

FORMULAS = {
    "OWNERNME1": '=HYPERLINK("http://evil.example","x")',
    "PSTLADRESS": "@SUM(1+1) BOX 5 CLYMAN WI 53016",
}


def test_the_registry_export_keeps_formulas_from_the_county_file_as_text(
    tmp_path: Path,
) -> None:
    county = generate(blocks_x=2, blocks_y=1, lots=3)
    # A mid-block lot (a corner or end lot of so small a grid may find no street axis).
    pid = next(p for p, fronts in county.expected.items() if [f[0] for f in fronts] == ["MAIN ST"])
    records = [
        replace(r, attributes={**r.attributes, **FORMULAS})
        if r.attributes["PARCELID"] == pid
        else r
        for r in county.records
    ]
    path = write_geojson(replace(county, records=records), tmp_path / "dodge.geojson")
    config = tmp_path / "sidewalk.toml"
    url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    config.write_text(f'data_dir = "{tmp_path / "var"}"\n[cases]\ndatabase_url = "{url}"\n')
    runner = CliRunner()
    done = runner.invoke(app, ["registry", "import", str(path), "--config", str(config)])
    assert done.exit_code == 0, done.output
    imported = done.output
    out = tmp_path / "frontages.csv"
    done = runner.invoke(app, ["registry", "export", str(out), "--config", str(config)])
    assert done.exit_code == 0, done.output
    with out.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    number = county.by_id(pid).attributes["TAXPARCELID"]
    hostile = [r for r in rows if r["parcel"] == number]
    assert hostile, imported
    for row in hostile:
        assert row["owner_of_record"] == "'" + FORMULAS["OWNERNME1"]
        assert row["mailing_address"].startswith("'@SUM(1+1), BOX 5")
    # No other cell of the file starts a formula; numbers stay numbers.
    for row in rows:
        for value in row.values():
            assert not value.startswith(("=", "+", "@", "\t", "\r")), row
        float(row["length_ft"])
