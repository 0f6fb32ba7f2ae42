"""The county import's memory on a large generated GeoJSON, phase by phase.

One county file (tests/registry/parcels.py: a grid of blocks at Clyman, EPSG:3071)
is written as GeoJSON, then imported in a fresh process as ``sidewalk registry
import`` does it: read (``read_parcel_file``), checked (``parse_records``), the raw
records dropped, frontages derived, compared with an empty registry and, with
``--apply``, written to a new SQLite registry. After each phase the child prints
its resident set now and its peak so far (``VmHWM``), in MB:

    uv run python -m bench.registry_import_memory [--parcels 50000] [--apply]
    uv run python -m bench.registry_import_memory --file county.geojson  # an existing file
    uv run python -m bench.registry_import_memory --file F --apply --db sqlite postgres

``--apply`` writes the registry into a new case database of each ``--db`` (SQLite
in a temporary folder; PostgreSQL a throwaway cluster started for the bench, as the
tests start one), printing the resident set after every 5,000 parcels written
(read through the import's own memory check, which ``apply`` makes after each
transaction of 250), then, in another fresh process on a new database of the same
kind, a reference: the same file read and checked, and the same parcels' rows
(parcel number, address, outline as JSON) written with ``executemany`` in the same
transactions of 250, with no audit, owners or frontages: the least any writer of
these rows holds and spends. Writing the registry costs 15 to 30 ms a parcel (each
row audited, the audit chain read for each): on 50,000 parcels a quarter of an hour
or more. Every phase checks memory against the default of
``registry.import_memory_mb`` (4 GB), which these files stay far under.
"""

from __future__ import annotations

import argparse
import math
import re
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

EFFECTIVE = datetime(2026, 1, 1, 6, tzinfo=UTC)


def _mb_now() -> float:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * resource.getpagesize() / 2**20


def _mb_peak() -> float:
    # VmHWM, not ru_maxrss: Linux keeps ru_maxrss across exec, so a child's would start at
    # the bench parent's (about 110 MB once it has started PostgreSQL).
    for row in Path("/proc/self/status").read_text().splitlines():
        if row.startswith("VmHWM:"):
            return int(row.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _liner(start: float) -> Callable[[str], None]:
    def line(phase: str) -> None:
        print(
            f"  {phase:<26} now {_mb_now():7,.0f} MB  peak {_mb_peak():7,.0f} MB"
            f"  ({time.perf_counter() - start:6.1f} s)",
            flush=True,
        )

    return line


def measure(path: Path, *, write: bool, url: str | None = None) -> None:
    """The import of ``path`` in this process, one line per phase; with ``write``, into
    the case database at ``url`` (a new SQLite one when None)."""
    import sidewalk.registry.apply as apply_module
    from sidewalk.registry.apply import apply, compare, snapshot
    from sidewalk.registry.county import parse_records, read_parcel_file
    from sidewalk.registry.frontages import derive_frontages
    from sidewalk.storage.cases import CaseStore

    start = time.perf_counter()
    line = _liner(start)

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
        cases = CaseStore(url or f"sqlite:///{Path(tmp) / 'cases.db'}")
        cases.create_schema()
        snap = snapshot(cases)
        diff = compare(parsed, snap, EFFECTIVE)
        line("compared")
        if write:
            # apply's own memory check, made after each transaction, says how far it is.
            names = vars(apply_module)  # its check_memory, imported from county
            checked = names["check_memory"]

            def check(name: str, limit: int, where: str) -> None:
                written = int(re.findall(r"([\d,]+) of", where)[0].replace(",", ""))
                if written and written % 5_000 == 0:
                    line(f"{written:,} parcels written")
                checked(name, limit, where)

            names["check_memory"] = check
            wrote = time.perf_counter()
            done = apply(
                cases, parsed, derived, diff, snap, effective=EFFECTIVE, site="clyman", who="b"
            )
            line("registry written")
            print(
                f"  wrote {done.parcels:,} parcels, {done.owners:,} owners,"
                f" {done.frontages:,} frontages in {time.perf_counter() - wrote:,.1f} s"
                f" ({cases.dialect})",
                flush=True,
            )
        cases.close()
    print(f"  {len(parsed.parcels):,} parcels, {len(parsed.rejects):,} not imported")


def reference(path: Path, url: str) -> None:
    """The same file read and checked, and its parcels' rows written with executemany in
    transactions of ``CHUNK``, into a plain table at ``url``: no audit, owners, frontages."""
    import json

    import sqlalchemy as sa
    from shapely.geometry import mapping

    from sidewalk.registry.apply import CHUNK
    from sidewalk.registry.county import parse_records, read_parcel_file

    start = time.perf_counter()
    line = _liner(start)
    line("libraries imported")
    parsed = parse_records(read_parcel_file(path))
    line("read and checked")
    engine = sa.create_engine(url)
    meta = sa.MetaData()
    table = sa.Table(
        "reference_parcels", meta,
        sa.Column("id", sa.String(40), primary_key=True),
        sa.Column("tax_parcel_id", sa.String(40)),
        sa.Column("site_address", sa.String(100)),
        sa.Column("owner", sa.String(100)),
        sa.Column("geometry", sa.Text),
    )  # fmt: skip
    meta.create_all(engine)
    wrote = time.perf_counter()
    parcels = parsed.parcels
    for first in range(0, len(parcels), CHUNK):
        rows = [
            {"id": p.parcel_id, "tax_parcel_id": p.tax_parcel_id,
             "site_address": p.site_address, "owner": p.owner_name,
             "geometry": json.dumps(mapping(p.geometry))}
            for p in parcels[first : first + CHUNK]
        ]  # fmt: skip
        with engine.begin() as conn:
            conn.execute(table.insert(), rows)
        if first and first % 5_000 == 0:
            line(f"{first:,} rows written")
    line("rows written")
    with engine.connect() as conn:
        count = conn.scalar(sa.select(sa.func.count()).select_from(table))
    print(
        f"  wrote {count:,} rows in {time.perf_counter() - wrote:,.1f} s ({engine.dialect.name})",
        flush=True,
    )
    engine.dispose()


@contextmanager
def databases(kinds: list[str], tmp: Path) -> Iterator[Callable[[str, str], str]]:
    """A function giving a new database's URL of a kind and name; PostgreSQL a
    throwaway cluster (tests/faults/harness.py's, on tests/harness/postgres.py's
    binaries), started only when asked for and removed at the end."""
    server = None
    if "postgres" in kinds:
        from tests.faults.harness import PostgresProcess

        server = PostgresProcess()
        server.start()

    def new(kind: str, name: str) -> str:
        if kind == "sqlite":
            return f"sqlite:///{tmp / (name + '.db')}"
        assert server is not None
        return server.create_database(name)

    try:
        yield new
    finally:
        if server is not None:
            server.remove()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--parcels", type=int, default=50_000)
    ap.add_argument("--file", type=Path, default=None, help="an existing GeoJSON to import")
    ap.add_argument("--apply", action="store_true", help="also write a new SQLite registry")
    ap.add_argument(
        "--db", nargs="+", choices=["sqlite", "postgres"], default=["sqlite"],
        help="with --apply: the databases to write (each in turn, the reference after it)",
    )  # fmt: skip
    ap.add_argument("--measure", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--reference", type=Path, default=None, help=argparse.SUPPRESS)
    ap.add_argument("--url", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure is not None:
        measure(args.measure, write=args.apply, url=args.url)
        return
    if args.reference is not None:
        reference(args.reference, args.url)
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
        # A fresh process each: the generator's memory is not the import's.
        me = [sys.executable, "-m", "bench.registry_import_memory"]
        if not args.apply:
            subprocess.run([*me, "--measure", str(path)], check=True)
            return
        with databases(args.db, Path(tmp)) as new:
            for kind in args.db:
                print(f"{kind}: the import, --apply", flush=True)
                url = new(kind, "bench_apply")
                subprocess.run([*me, "--measure", str(path), "--apply", "--url", url], check=True)
                print(f"{kind}: reference, the same rows by executemany", flush=True)
                url = new(kind, "bench_reference")
                subprocess.run([*me, "--reference", str(path), "--url", url], check=True)


if __name__ == "__main__":
    main()
