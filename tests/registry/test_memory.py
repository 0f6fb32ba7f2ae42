"""The import's memory while it finds the frontages and writes the registry: checked
against registry.import_memory_mb as reading is, refused in one line; finding the
frontages a chunk of parcels at a time gives what one pass over them all gave."""

from __future__ import annotations

import re
import shutil
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.registry.apply import ImportRefused, apply, compare, snapshot
from sidewalk.registry.county import (
    MEMORY_EVERY,
    ParcelFile,
    parse_records,
    read_parcel_file,
    resident_memory,
)
from sidewalk.registry.frontages import Derived, derive_frontages
from sidewalk.storage.cases import CaseStore
from tests.registry.conftest import FIRST
from tests.registry.parcels import County, generate, raw_file, write_geojson

SCENARIOS = Path(__file__).parents[2] / "scenarios" / "sidewalk" / "scenarios"
FIRST_STORM = SCENARIOS / "first-storm-parcels.geojson"
LIMIT_WORDS = re.compile(
    r"the import holds [\d,]+ MB of memory (?P<where>.+), more than the 64 MB the import may"
    r" use \(registry\.import_memory_mb\)"
)


def _dump(derived: Derived) -> tuple[dict[str, list[dict[str, Any]]], dict[str, str]]:
    return {pid: [asdict(f) for f in fs] for pid, fs in derived.frontages.items()}, derived.notes


def test_a_derive_over_the_memory_limit_is_one_line_and_writes_nothing(
    tmp_path: Path, migrated_db: Path
) -> None:
    # Fewer records than reading and checking count between their looks at memory
    # (MEMORY_EVERY), so the file gets past them and finding its frontages is what
    # meets the limit: the setting at its least, 64 MB, under what the command's own
    # libraries hold. Before, the frontages were found unchecked and the import applied.
    county = generate(blocks_x=2, blocks_y=2, lots=6)
    assert len(county.records) < MEMORY_EVERY
    path = write_geojson(county, tmp_path / "dodge.geojson")
    db = tmp_path / "cases.db"
    shutil.copy(migrated_db, db)
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        f'data_dir = "{tmp_path / "var"}"\n[cases]\ndatabase_url = "sqlite:///{db}"\n'
        "[registry]\nimport_memory_mb = 64\n",
        "utf-8",
    )
    assert resident_memory() > 64 << 20
    result = CliRunner().invoke(app, ["registry", "import", str(path), "--config", str(config)])
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.output
    found = LIMIT_WORDS.fullmatch(lines[0].removeprefix("dodge.geojson: "))
    assert lines[0].startswith("dodge.geojson: "), lines[0]
    assert found is not None, lines[0]
    assert found["where"].startswith("finding the frontages, "), lines[0]
    store = CaseStore(f"sqlite:///{db}")
    try:
        assert store.registry.list_parcels(include_retired=True) == []
        assert store.registry.list_frontages(include_retired=True) == []
        assert store.registry.list_owners() == []
    finally:
        store.close()


def test_writing_the_registry_over_the_memory_limit_is_one_line_and_writes_nothing(
    small_county: County, tmp_path: Path, migrated_db: Path
) -> None:
    parsed = parse_records(raw_file(small_county))
    derived = derive_frontages(parsed.parcels)
    db = tmp_path / "cases.db"
    shutil.copy(migrated_db, db)
    cases = CaseStore(f"sqlite:///{db}")
    try:
        snap = snapshot(cases)
        diff = compare(parsed, snap, FIRST)
        assert diff.new
        with pytest.raises(ImportRefused) as refused:
            apply(cases, parsed, derived, diff, snap, effective=FIRST, site="clyman", who="it",
                  memory_limit=64 << 20)  # fmt: skip
        line = str(refused.value)
        assert "\n" not in line
        found = LIMIT_WORDS.fullmatch(line.removeprefix(f"{parsed.source}: "))
        assert found is not None, line
        written = f"writing the registry, 0 of {len(parsed.parcels):,} parcels written"
        assert found["where"] == written
        assert cases.registry.list_parcels(include_retired=True) == []
        assert cases.registry.list_owners() == []
    finally:
        cases.close()


@pytest.fixture(scope="module")
def first_storm() -> ParcelFile:
    """The demo village's parcel file: a real-shaped street of lots, not the grid."""
    return parse_records(read_parcel_file(FIRST_STORM))


@pytest.mark.parametrize("chunk", [1, 7, 250])
def test_chunked_derive_gives_the_frontages_of_one_pass(
    first_storm: ParcelFile, county: County, chunk: int
) -> None:
    # One chunk as large as the file is the one bulk query and one transform the
    # frontages were found with before; smaller chunks must change nothing (each
    # probe's answer against the tree is its own, each line's transform point by point).
    corners = 0
    for parsed in (first_storm, parse_records(raw_file(county))):
        whole = derive_frontages(
            parsed.parcels, refused_ground=parsed.refused_ground, chunk=len(parsed.parcels)
        )
        assert whole.frontages
        corners += sum(f.corner for f in whole.all())
        chunked = derive_frontages(
            parsed.parcels, refused_ground=parsed.refused_ground, chunk=chunk
        )
        assert _dump(chunked) == _dump(whole)
    assert corners >= 20  # the corner-lot flags are compared too
