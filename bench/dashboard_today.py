"""Today and the notice list with a village of N frontages: server time, beside the overview.

Seeds N frontages (default 2,000) in a SQLite case store, each with something
for Today in turn (a notice to serve, a running deadline, a review, a work order,
an overdue bill; ``tests/dashboard/test_today.py``'s village), then times, through
the app in process (routing, auth, the queries, JSON):

* ``GET /api/today`` (target: usable within 1 s),
* ``GET /api/notices`` (every notice with the steps its case accepts now),
* ``GET /api/overview/page`` (the Overview page's one read), and ``/api/overview`` and
  ``/api/map`` (the whole records) as the reference, measured in the same run.

Beside each route's wall time: its CPU time (``getrusage``; the app runs in this
process) and the SQL statements one request costs, session check included (the
same for any N when nothing is read per frontage); ``/api/now`` is the floor (the
session check and the framework, no records). The heap is settled as ``serve``
does (``settle_heap``).

Seeding 2,000 frontages through the repositories takes minutes; ``--store PATH``
keeps the seeded village in ``PATH`` and reuses it on the next run.

    .venv/bin/python bench/dashboard_today.py [--frontages 2000] [--runs 7] [--store PATH]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import Engine, event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app, settle_heap
from sidewalk.dashboard.auth import add_user
from sidewalk.dashboard.routes.today import build_today
from sidewalk.storage.cases import CaseStore
from tests.dashboard.test_today import NOW, add_block

PASSWORD = "bench password"
# /api/now: the floor (session check and framework, no records read).
PATHS = (
    "/api/now", "/api/today", "/api/overview/page", "/api/overview", "/api/map", "/api/notices",
)  # fmt: skip


def cpu_s() -> float:
    """This process's CPU seconds (the app runs in it: TestClient calls it in a thread)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(client: TestClient, path: str, runs: int) -> tuple[list[float], list[float]]:
    """Wall seconds and CPU seconds of each of ``runs`` requests."""
    wall, cpu = [], []
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), cpu_s()
        response = client.get(path)
        wall.append(time.perf_counter() - start)
        cpu.append(cpu_s() - start_cpu)
        response.raise_for_status()
    return wall, cpu


def statements(engine: Engine, client: TestClient, path: str) -> int:
    """SQL statements one request costs (auth included): the same for any village size
    when nothing is read once per frontage."""
    seen: list[str] = []

    def count(*a: object) -> None:
        if str(a[2]).lstrip().upper().startswith(("SELECT", "INSERT", "UPDATE", "DELETE")):
            seen.append(str(a[2]))

    event.listen(engine, "before_cursor_execute", count)
    try:
        client.get(path).raise_for_status()
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len(seen)


def _seed(cases: CaseStore, frontages: int) -> None:
    cases.create_schema()

    # Seeding only: no fsync per row (the timed reads are unaffected).
    @event.listens_for(cases.unit_of_work.engine, "connect")
    def _fast(connection: object, _record: object) -> None:
        # Ignored: the listener gets the DBAPI connection, typed ``object`` here.
        connection.execute("PRAGMA synchronous=OFF")  # type: ignore[attr-defined]

    cases.unit_of_work.engine.dispose()
    cases.registry.upsert_device("pole-1", "clyman")
    start = time.perf_counter()
    add_block(cases, 0, frontages)
    add_user(cases, "bench", PASSWORD, "clerk")
    print(f"seeded {frontages} frontages in {time.perf_counter() - start:.0f} s")
    event.remove(cases.unit_of_work.engine, "connect", _fast)
    cases.unit_of_work.engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frontages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--store", type=Path, help="keep the seeded village here; reuse it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="today-bench-") as tmp:
        store = args.store or Path(tmp) / "cases.sqlite3"
        seeded = store.exists()
        cases = CaseStore(f"sqlite:///{store}")
        if seeded:
            have = len(cases.registry.list_frontages())
            if have != args.frontages:
                sys.exit(f"{store} holds {have} frontages, not {args.frontages}")
            print(f"reusing the village of {have} frontages in {store}")
        else:
            _seed(cases, args.frontages)
        profile = load_profile()

        selects: list[str] = []

        def count(*a: object) -> None:
            if str(a[2]).lstrip().upper().startswith("SELECT"):
                selects.append(str(a[2]))

        event.listen(cases.unit_of_work.engine, "before_cursor_execute", count)
        today = build_today(cases, profile, NOW)
        event.remove(cases.unit_of_work.engine, "before_cursor_execute", count)
        lines = {g.key: len(g.items) for g in today.groups}
        print(f"one Today: {len(selects)} SELECTs; lines {lines}")
        app = create_app(
            cases, None, profile, secret_key="bench-secret-0123456789", now=lambda: NOW, poll_s=3600
        )
        print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        with TestClient(app) as client:
            client.post("/api/session", json={"username": "bench", "password": PASSWORD})
            for path in PATHS:
                client.get(path).raise_for_status()  # warm
            settle_heap()  # as ``serve`` does before it serves
            print(f"{'':15} {'wall median':>12} {'wall min':>9} {'CPU median':>11} {'SQL':>4}")
            for path in PATHS:
                sql = statements(cases.unit_of_work.engine, client, path)
                wall, cpu = timed(client, path, args.runs)
                print(
                    f"{path:15} {statistics.median(wall) * 1000:9.0f} ms"
                    f" {min(wall) * 1000:6.0f} ms {statistics.median(cpu) * 1000:8.0f} ms"
                    f" {sql:4}  ({args.runs} requests)"
                )
        print(f"load average at end:   {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        cases.close()


if __name__ == "__main__":
    main()
