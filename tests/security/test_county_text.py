"""Hostile text in the county's parcel file: each bad record refused with its reason,
the rest imported, on SQLite and on PostgreSQL (which cannot store a NUL at all)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.storage.cases import CaseStore
from tests.registry.parcels import County, generate, write_geojson

# parcel → (field, hostile value, words of the refusal)
HOSTILE = {
    0: ("OWNERNME1", "ANDERS, ALICE\x00", "owner name (OWNERNME1) holds a NUL character"),
    1: ("OWNERNME1", "\u202eSREDNA ECILA", "text-direction control (U+202E)"),
    2: ("OWNERNME2", "BOB \u2066BAKER\u2069", "second owner name (OWNERNME2) holds a text-dir"),
    3: ("PLACENAME", "CLYMAN\x1b[2J", "place (PLACENAME) holds a control character (U+001B)"),
    4: ("SITEADRESS", "1" + " MAIN" * 600, "site address (SITEADRESS) is 3,001 characters"),
    5: ("TAXPARCELID", "0" * 200, "tax parcel number (TAXPARCELID) is 200 characters"),
}


def hostile_county() -> tuple[County, dict[str, str], list[str]]:
    county = generate(blocks_x=2, blocks_y=1, lots=3)
    good = list(county.expected)
    assert len(good) > len(HOSTILE), "the county needs more parcels than hostile records"
    words: dict[str, str] = {}
    records = list(county.records)
    for i, (column, value, said) in HOSTILE.items():
        pid = good[i]
        at = next(n for n, r in enumerate(records) if r.attributes["PARCELID"] == pid)
        records[at] = replace(records[at], attributes={**records[at].attributes, column: value})
        words[pid] = said
    return replace(county, records=records), words, good[len(HOSTILE) :]


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    return str(request.getfixturevalue("postgres_fresh_url"))


def test_hostile_text_is_refused_per_record_and_the_rest_imported(
    database_url: str, tmp_path: Path
) -> None:
    county, words, clean = hostile_county()
    path = write_geojson(county, tmp_path / "dodge.geojson")
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "var"}"\n[cases]\ndatabase_url = "{database_url}"\n', "utf-8"
    )
    result = CliRunner().invoke(
        app, ["registry", "import", str(path), "--config", str(config)], env={"COLUMNS": "400"}
    )
    assert result.exit_code == 0, result.output
    assert "Traceback" not in result.output
    refused = [x for x in result.output.splitlines() if "the county's file must be" in x
               or "characters long; at most" in x]  # fmt: skip
    assert len(refused) == len(HOSTILE), refused
    for said in words.values():
        assert sum(said in line for line in refused) == 1, said
    # No hostile value reaches the output either.
    for _, value, _ in HOSTILE.values():
        assert value not in result.output
    cases = CaseStore(database_url)
    try:
        stored = {p.id: p for p in cases.registry.list_parcels()}
        assert set(clean) <= set(stored)
        assert not set(words) & set(stored)
        text = repr([*stored.values(), *cases.registry.list_owners()])
        for bad in ("\x00", "\u202e", "\u2066", "\x1b"):
            assert bad not in text
    finally:
        cases.close()
