"""The county import's memory on a large generated GeoJSON, phase by phase.

One county file (tests/registry/parcels.py: a grid of blocks at Clyman, EPSG:3071)
is written as GeoJSON, then imported in a fresh process as ``sidewalk registry
import`` does it: read (``read_parcel_file``), checked (``parse_records``), the raw
records dropped, frontages derived, compared with an empty registry and, with
``--apply``, written to a new SQLite registry. After each phase the child prints
its resident set now and its peak so far (``ru_maxrss``), in MB:

    uv run python -m bench.registry_import_memory [--parcels 50000] [--apply]
    uv run python -m bench.registry_import_memory --file county.geojson  # an existing file

Writing the registry costs about 30 ms a parcel (each row audited): ``--apply`` on
50,000 parcels runs for half an hour, so its memory is measured on a smaller file
(``--parcels 2000``; writing holds no more as it goes). Every phase checks memory
against the default of ``registry.import_memory_mb`` (4 GB), which these files stay
far under.
"""

from __future__ import annotations

import argparse
import math
import resource
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

EFFECTIVE = datetime(2026, 1, 1, 6, tzinfo=UTC)


def _mb_now() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def _mb_peak() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(path: Path, *, write: bool) -> None:
    """The import of ``path`` in this process, one line per phase."""
    from sidewalk.registry.apply import apply, compare, snapshot
    from sidewalk.registry.county import parse_records, read_parcel_file
    from sidewalk.registry.frontages import derive_frontages
    from sidewalk.storage.cases import CaseStore

    start = time.perf_counter()

    def line(phase: str) -> None:
        print(
            f"  {phase:<22} now {_mb_now():7,.0f} MB  peak {_mb_peak():7,.0f} MB"
            f"  ({time.perf_counter() - start:6.1f} s)",
            flush=True,
        )

    line("libraries imported")
    raw = read_parcel_file(path)
    line("read")
    parsed = parse_records(raw)
    line("checked")
    del raw
    line("raw records dropped")
    derived = derive_frontages(parsed.parcels, refused_ground=parsed.refused_ground)
    line("frontages derived")
    with tempfile.TemporaryDirectory() as tmp:
        cases = CaseStore(f"sqlite:///{Path(tmp) / 'cases.db'}")
        cases.create_schema()
        snap = snapshot(cases)
        diff = compare(parsed, snap, EFFECTIVE)
        line("compared")
        if write:
            apply(cases, parsed, derived, diff, snap, effective=EFFECTIVE, site="clyman", who="b")
            line("registry written")
        cases.close()
    print(f"  {len(parsed.parcels):,} parcels, {len(parsed.rejects):,} not imported")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--parcels", type=int, default=50_000)
    ap.add_argument("--file", type=Path, default=None, help="an existing GeoJSON to import")
    ap.add_argument("--apply", action="store_true", help="also write a new SQLite registry")
    ap.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure is not None:
        measure(args.measure, write=args.apply)
        return
    with tempfile.TemporaryDirectory() as tmp:
        path = args.file
        if path is None:
            from tests.registry.parcels import generate, write_geojson

            lots = 10
            blocks = max(1, args.parcels // (2 * lots))
            bx = max(1, round(math.sqrt(blocks * 1.25)))
            by = max(1, math.ceil(blocks / bx))
            county = generate(blocks_x=bx, blocks_y=by, lots=lots)
            path = write_geojson(county, Path(tmp) / "parcels.geojson")
            del county
        print(f"{path.name}: {path.stat().st_size / 2**20:,.0f} MB", flush=True)
        # A fresh process: the generator's memory is not the import's.
        child = [sys.executable, "-m", "bench.registry_import_memory", "--measure", str(path)]
        subprocess.run(child + ["--apply"] * args.apply, check=True)


if __name__ == "__main__":
    main()
