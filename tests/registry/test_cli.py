"""``sidewalk registry import``: the summary in the importer's words, the dry run,
one-line errors with exit status 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.storage.cases import CaseStore
from tests.registry.parcels import County, generate, write_csv, write_geojson


@pytest.fixture
def config(tmp_path: Path, migrated_db: Path) -> Path:
    import shutil

    db = tmp_path / "cases.db"
    shutil.copy(migrated_db, db)
    path = tmp_path / "sidewalk.toml"
    path.write_text(
        f'data_dir = "{tmp_path / "var"}"\n[cases]\ndatabase_url = "sqlite:///{db}"\n', "utf-8"
    )
    return path


@pytest.fixture(scope="module")
def tiny() -> County:
    """One block of six lots, and the bad records."""
    return generate(blocks_x=1, blocks_y=1, lots=3)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, ["registry", "import", *args])
    return result.exit_code, result.stdout, result.stderr


def test_a_dry_run_shows_what_it_read_and_the_difference(
    config: Path, tiny: County, tmp_path: Path
) -> None:
    path = write_geojson(tiny, tmp_path / "dodge.geojson")
    code, out, err = _run(str(path), "--dry-run", "--config", str(config))
    assert code == 0, err
    parcels = len(tiny.expected)
    assert f"{parcels} parcels read, 6 not imported" in out
    assert "Wisconsin Transverse Mercator" in out
    assert "no site address" in out
    assert "window envelope" in out
    assert f"difference (dry run: nothing written): {parcels} new" in out
    db = CaseStore(_url(config))
    assert not db.registry.list_parcels()
    db.close()


def _url(config: Path) -> str:
    return config.read_text().split('database_url = "')[1].split('"')[0]


def test_an_import_applies_from_the_effective_date_then_finds_nothing_new(
    config: Path, tiny: County, tmp_path: Path
) -> None:
    path = write_csv(tiny, tmp_path / "dodge.csv", 4326)
    code, out, err = _run(str(path), "--crs", "4326", "--effective", "2026-01-05",
                          "--config", str(config))  # fmt: skip
    assert code == 0, err
    assert "applied from 2026-01-05" in out
    db = CaseStore(_url(config))
    assert len(db.registry.list_parcels()) == len(tiny.expected)
    db.close()
    code, out, _ = _run(str(path), "--crs", "4326", "--config", str(config))
    assert code == 0
    assert f"no difference with the registry: {len(tiny.expected)} parcels as they are" in out


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--crs", "999999"], "unknown coordinate system 'EPSG:999999'"),
        (["--effective", "next week"], "--effective 'next week': write an ISO 8601 date"),
    ],
)
def test_bad_options_are_one_line(
    config: Path, tiny: County, tmp_path: Path, args: list[str], words: str
) -> None:
    path = write_csv(tiny, tmp_path / "dodge.csv")
    code, _out, err = _run(str(path), *args, "--config", str(config))
    assert code == 2
    assert words in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_a_missing_column_and_an_unreadable_file_are_one_line(config: Path, tmp_path: Path) -> None:
    path = tmp_path / "p.geojson"
    feature = {"type": "Feature", "geometry": None, "properties": {"PARCELID": "1"}}
    path.write_text(json.dumps({"type": "FeatureCollection", "features": [feature]}))
    code, _, err = _run(str(path), "--config", str(config))
    assert code == 2
    assert "the column OWNERNME1 is missing" in err
    assert len(err.strip().splitlines()) == 1
    broken = tmp_path / "broken.zip"
    broken.write_bytes(b"PK\x03\x04 not really")
    code, _, err = _run(str(broken), "--config", str(config))
    assert code == 2
    assert "broken.zip cannot be read" in err
    code, _, err = _run(str(tmp_path / "absent.shp"), "--config", str(config))
    assert code == 2
    assert "no such file" in err


def test_help_loads_no_geometry_library() -> None:
    # `sidewalk --help` must stay fast: pyproj, shapely and pyshp load inside the command.
    import subprocess
    import sys

    probe = (
        "import json, sys\n"
        "from typer.testing import CliRunner\n"
        "from sidewalk.cli import app\n"
        "for args in ([], ['registry'], ['registry', 'import']):\n"
        "    assert CliRunner().invoke(app, [*args, '--help']).exit_code == 0\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = json.loads(done.stdout)
    heavy = ("pyproj", "shapely", "shapefile", "sidewalk.registry")
    assert [m for m in loaded if m.split(".")[0] in heavy or m.startswith(heavy[-1])] == []
    assert "sidewalk.cli.registry_import" in loaded


def test_records_refused_alike_are_one_line_with_a_count(
    config: Path, tiny: County, tmp_path: Path
) -> None:
    import copy

    county = copy.deepcopy(tiny)
    for record in county.records:
        record.attributes["SITEADRESS"] = ""
    path = write_geojson(county, tmp_path / "no-addresses.geojson")
    code, out, err = _run(str(path), "--dry-run", "--config", str(config))
    assert code == 0, err
    listed = [line for line in out.splitlines() if "no site address" in line]
    assert len(listed) == 1, out + err
    count, _, said = listed[0].strip().partition(" records: ")
    assert int(count) >= len(county.records) - 6  # the six bad records fail otherwise first
    assert said.startswith("no site address")
    assert "(e.g. record 1" in said
