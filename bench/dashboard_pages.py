"""A property page and the search box with a village of N frontages: server time.

Seeds N frontages (default 2,000) in a SQLite case store with
``tests/dashboard/test_today.py``'s village (each frontage with something in
turn: a notice to serve, a running deadline, a review, a work order, an overdue
bill), then puts every frontage on a parcel of the registry with a boundary,
an owner of record since 400 days and a stored line for the map. It times,
through the app in process (routing, auth, the queries, JSON; no network):

* ``GET /api/properties/f-0004`` (a frontage with a violation, a work order, a
  bill; target 300 ms server time),
* ``GET /api/search?q=…`` for an address (a quarter of the village matches),
  an owner and a notice number,
* the floor: the same property route in a village of that one frontage, with
  the same records, measured in the same run; and the SQL SELECTs one page
  takes in each (a load-independent figure: the same count means no query
  per frontage of the village).

Each figure is ``--runs`` requests per run, three runs; the machine is shared,
so every run is printed, with the CPU seconds per request (``getrusage``: the app
runs in this process) and the load average. The heap is settled as ``serve``
does (``settle_heap``). Seeding takes minutes: ``--store DIR`` keeps both seeded
villages in ``DIR`` and reuses them.

    .venv/bin/python bench/dashboard_pages.py [--frontages 2000] [--runs 5] [--store DIR]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app, settle_heap
from sidewalk.dashboard.auth import add_user
from sidewalk.storage.cases import CaseStore
from tests.dashboard.test_today import NOW, add_block

PASSWORD = "bench password"
PROPERTY = "f-0004"
LON0, LAT0, DEG_PER_FT = -88.7240, 43.3125, 1 / 364_000


def village(path: Path, start: int, count: int) -> CaseStore:
    if path.exists():
        cases = CaseStore(f"sqlite:///{path}")
        cases.create_schema()  # kept from before a migration: brought up to date
        have = len(cases.registry.list_frontages())
        if have != count:
            sys.exit(f"{path} holds {have} frontages, not {count}")
        print(f"reusing the village of {have} frontages in {path}")
        return cases
    cases = CaseStore(f"sqlite:///{path}")
    cases.create_schema()

    # Seeding only: no fsync per row (the timed reads are unaffected).
    @event.listens_for(cases.unit_of_work.engine, "connect")
    def _fast(connection: object, _record: object) -> None:
        # Ignored: the listener gets the DBAPI connection, typed ``object`` here.
        connection.execute("PRAGMA synchronous=OFF")  # type: ignore[attr-defined]

    cases.unit_of_work.engine.dispose()
    cases.registry.upsert_device("pole-1", "clyman")
    add_block(cases, start, count)
    with cases.registry.batch() as reg:
        for f in reg.list_frontages():
            i = int(f.id[2:])
            x0, y0 = (i % 40) * 70 * DEG_PER_FT, -(i // 40) * 400 * DEG_PER_FT
            lot = [[LON0 + x0, LAT0 + y0], [LON0 + x0 + 66 * DEG_PER_FT, LAT0 + y0],
                   [LON0 + x0 + 66 * DEG_PER_FT, LAT0 + y0 + 120 * DEG_PER_FT],
                   [LON0 + x0, LAT0 + y0 + 120 * DEG_PER_FT], [LON0 + x0, LAT0 + y0]]  # fmt: skip
            reg.upsert_parcel(
                f"P-{i:04d}", tax_parcel_id=f.parcel_number, site_address=f.street_address,
                geometry={"type": "Polygon", "coordinates": [lot]}, source="bench", who="bench",
            )  # fmt: skip
            reg.set_owner_of_record(
                f"P-{i:04d}", f.owner_id, NOW - timedelta(days=400), source="bench", who="bench"
            )
            reg.upsert_frontage(
                f.id, site=f.site, parcel_number=f.parcel_number, street_address=f.street_address,
                length_ft=f.length_ft, zone="residential", owner_id=f.owner_id,
                device_id=f.device_id, parcel_id=f"P-{i:04d}", walk_width_ft=5,
            )  # fmt: skip
            reg.set_frontage_geometry(f.id, {"type": "LineString", "coordinates": [lot[0], lot[1]]})
    add_user(cases, "bench", PASSWORD, "clerk")
    return cases


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def runs(client: TestClient, path: str, n: int) -> tuple[list[float], list[float]]:
    """Three runs of ``n`` requests; each run's median wall and CPU time in ms."""
    wall, cpu = [], []
    for _ in range(3):
        times, cpus = [], []
        for _ in range(n):
            start, start_cpu = time.perf_counter(), cpu_s()
            client.get(path).raise_for_status()
            times.append(time.perf_counter() - start)
            cpus.append(cpu_s() - start_cpu)
        wall.append(statistics.median(times) * 1000)
        cpu.append(statistics.median(cpus) * 1000)
    return wall, cpu


def show(label: str, medians: tuple[list[float], list[float]]) -> None:
    wall, cpu = medians
    load = os.getloadavg()[0]
    print(
        f"{label:44} " + "  ".join(f"{m:6.1f}" for m in wall) + "  ms wall;  CPU "
        + "  ".join(f"{m:5.1f}" for m in cpu) + f"  ms (median per run; load {load:.1f})"
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frontages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--store", type=Path, help="keep the seeded villages here; reuse them")
    args = parser.parse_args()
    profile = load_profile()
    with tempfile.TemporaryDirectory(prefix="pages-bench-") as tmp:
        where = args.store or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        big = village(where / f"big-{args.frontages}.sqlite3", 0, args.frontages)
        print(f"village of {args.frontages} frontages ready in {time.perf_counter() - start:.0f} s")
        small = village(where / "small.sqlite3", int(PROPERTY[2:]), 1)
        settle_heap()
        for name, cases in (("one-frontage village (floor)", small), (f"{args.frontages}", big)):
            app = create_app(cases, None, profile, secret_key="bench-secret-0123456789",
                             now=lambda: NOW, poll_s=3600)  # fmt: skip
            with TestClient(app) as client:
                client.post("/api/session", json={"username": "bench", "password": PASSWORD})
                page = client.get(f"/api/properties/{PROPERTY}").json()  # warm
                assert page["bills"], "the bench property has no bill"
                assert page["map"]["features"], "the bench property has no map"
                selects: list[str] = []

                def count(*a: object, into: list[str] = selects) -> None:
                    if str(a[2]).lstrip().upper().startswith("SELECT"):
                        into.append(str(a[2]))

                engine = cases.unit_of_work.engine
                event.listen(engine, "before_cursor_execute", count)
                client.get(f"/api/properties/{PROPERTY}").raise_for_status()
                event.remove(engine, "before_cursor_execute", count)
                print(f"one property page, {name}: {len(selects)} SELECTs (auth included)")
                show(
                    f"property page, {name}", runs(client, f"/api/properties/{PROPERTY}", args.runs)
                )
                if cases is big:
                    for q in ("Main St", "Owner 1234", "000123"):
                        show(f"search {q!r}, {name}", runs(client, f"/api/search?q={q}", args.runs))
        big.close()
        small.close()


if __name__ == "__main__":
    main()
