"""How long the county import takes for 10,000 parcels, beside reading the same file
with the geometry libraries alone.

One generated county file (tests/registry/parcels.py: a grid of blocks at Clyman,
10,000 lots and the odd records), written as a Shapefile and as GeoJSON in
EPSG:3071. Each run times, in one process (CPU seconds, which the busy shared
machine disturbs less, and wall seconds):

* the reference: pyshp + shapely reading the Shapefile (every record's
  attributes and outline as a shapely polygon), and json + shapely reading
  the GeoJSON — what any program that opens the file pays;
* the import's reading of the same files (``read_parcel_file`` +
  ``parse_records``: fields checked, mailing addresses split, outlines
  repaired and projected to WGS 84);
* deriving every frontage (``derive_frontages``);
* writing the registry from empty (``apply``: parcels, owners, owners of
  record, streets, frontages and their map lines, audited) on SQLite;
* the re-import of the same file (snapshot + compare: nothing to write).

    uv run python -m bench.registry_import [--parcels 10000] [--runs 3]

For a figure the machine's load does not move, ``--phase`` runs one piece once
and prints nothing, to be counted under callgrind; ``--phase none`` (the file
generated and written, the libraries imported) is subtracted from the others:

    valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.%p \
        python -m bench.registry_import --parcels 1000 --phase reference
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

import shapefile
from shapely.geometry import shape

from sidewalk.registry.apply import apply, compare, snapshot
from sidewalk.registry.county import parse_records, read_parcel_file
from sidewalk.registry.frontages import derive_frontages
from sidewalk.storage.cases import CaseStore
from tests.registry.parcels import generate, write_geojson, write_shapefile

T = TypeVar("T")
EFFECTIVE = datetime(2026, 1, 1, 6, tzinfo=UTC)


def _timed(fn: Callable[[], T]) -> tuple[T, float, float]:
    cpu, wall = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.process_time() - cpu, time.perf_counter() - wall


def reference_shapefile(path: Path) -> int:
    """pyshp + shapely alone: every record's attributes and outline."""
    reader = shapefile.Reader(str(path))
    n = 0
    for item in reader.iterShapeRecords():
        if item.shape.shapeType != shapefile.NULL:
            shape(item.shape.__geo_interface__)
        item.record.as_dict()
        n += 1
    reader.close()
    return n


def reference_geojson(path: Path) -> int:
    """json + shapely alone."""
    data = json.loads(path.read_text("utf-8"))
    for feature in data["features"]:
        if feature["geometry"]:
            shape(feature["geometry"])
    return len(data["features"])


def one_run(shp: Path, geojson: Path, folder: Path, number: int) -> dict[str, tuple[float, float]]:
    figures: dict[str, tuple[float, float]] = {}

    def timed(name: str, fn: Callable[[], T]) -> T:
        out, cpu, wall = _timed(fn)
        figures[name] = (cpu, wall)
        return out

    timed("reference: pyshp + shapely, Shapefile", lambda: reference_shapefile(shp))
    timed("reference: json + shapely, GeoJSON", lambda: reference_geojson(geojson))
    timed("import reads the Shapefile", lambda: parse_records(read_parcel_file(shp)))
    parsed = timed("import reads the GeoJSON", lambda: parse_records(read_parcel_file(geojson)))
    derived = timed("frontages derived", lambda: derive_frontages(parsed.parcels))
    cases = CaseStore(f"sqlite:///{folder / f'run{number}.db'}")
    cases.create_schema()

    def write() -> None:
        snap = snapshot(cases)
        diff = compare(parsed, snap, EFFECTIVE)
        apply(cases, parsed, derived, diff, snap, effective=EFFECTIVE, site="clyman", who="b")

    timed("registry written (SQLite, from empty)", write)
    again = timed(
        "re-import compared (nothing to write)",
        lambda: compare(parsed, snapshot(cases), EFFECTIVE),
    )
    assert again.is_empty()
    cases.close()
    whole = ("import reads the Shapefile", "frontages derived",
             "registry written (SQLite, from empty)")  # fmt: skip
    figures["whole import from the Shapefile"] = (
        sum(figures[k][0] for k in whole), sum(figures[k][1] for k in whole),
    )  # fmt: skip
    return figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--parcels", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--phase", choices=["none", "reference", "import-read", "derive"], default=None)
    args = ap.parse_args()
    lots = 10
    blocks = max(1, args.parcels // (2 * lots))
    bx = max(1, round(math.sqrt(blocks * 1.25)))
    by = max(1, math.ceil(blocks / bx))
    county = generate(blocks_x=bx, blocks_y=by, lots=lots)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        shp = write_shapefile(county, folder / "parcels.shp")
        geojson = write_geojson(county, folder / "parcels.geojson")
        if args.phase is not None:
            parsed = parse_records(read_parcel_file(shp)) if args.phase == "derive" else None
            if args.phase == "reference":
                reference_shapefile(shp)
            elif args.phase == "import-read":
                parse_records(read_parcel_file(shp))
            elif parsed is not None:
                derive_frontages(parsed.parcels)
            return
        print(
            f"{len(county.records)} records ({bx} x {by} blocks of {2 * lots} lots);"
            f" Shapefile {sum(p.stat().st_size for p in folder.glob('parcels.*')) >> 20} MiB"
            f" with GeoJSON; CPU s / wall s"
        )
        for number in range(1, args.runs + 1):
            figures = one_run(shp, geojson, folder, number)
            width = max(map(len, figures))
            print(f"run {number}:", flush=True)
            for name, (cpu, wall) in figures.items():
                print(f"  {name:{width}}  {cpu:7.2f} / {wall:7.2f}", flush=True)


if __name__ == "__main__":
    main()
