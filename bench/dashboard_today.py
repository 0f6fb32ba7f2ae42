"""Today and the notice list with a village of N frontages: server time, beside the overview.

Seeds N frontages (default 2,000) in a SQLite case store, each with something
for Today in turn (a notice to serve, a running deadline, a review, a work order,
an overdue bill; ``tests/dashboard/test_today.py``'s village), then times, through
the app in process (routing, auth, the queries, JSON):

* ``GET /api/today`` (target: usable within 1 s),
* ``GET /api/notices`` (every notice with the steps its case accepts now),
* ``GET /api/overview`` as the reference, measured in the same run.

It also counts the SQL SELECTs of one Today (the same for any N).

    .venv/bin/python bench/dashboard_today.py [--frontages 2000] [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import event

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.dashboard.routes.today import build_today
from sidewalk.storage.cases import CaseStore
from tests.dashboard.test_today import NOW, add_block

PASSWORD = "bench password"


def timed(client: TestClient, path: str, runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        start = time.perf_counter()
        response = client.get(path)
        out.append(time.perf_counter() - start)
        response.raise_for_status()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--frontages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="today-bench-") as tmp:
        cases = CaseStore(f"sqlite:///{Path(tmp) / 'cases.sqlite3'}")
        cases.create_schema()

        # Seeding only: no fsync per row (the timed reads are unaffected).
        @event.listens_for(cases.unit_of_work.engine, "connect")
        def _fast(connection: object, _record: object) -> None:
            connection.execute("PRAGMA synchronous=OFF")  # type: ignore[attr-defined]

        cases.unit_of_work.engine.dispose()
        cases.registry.upsert_device("pole-1", "clyman")
        start = time.perf_counter()
        add_block(cases, 0, args.frontages)
        print(f"seeded {args.frontages} frontages in {time.perf_counter() - start:.0f} s")
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
        add_user(cases, "bench", PASSWORD, "clerk")
        app = create_app(
            cases, None, profile, secret_key="bench-secret-0123456789", now=lambda: NOW
        )
        with TestClient(app) as client:
            client.post("/api/session", json={"username": "bench", "password": PASSWORD})
            for path in ("/api/today", "/api/notices", "/api/overview"):
                client.get(path).raise_for_status()  # warm
            for path in ("/api/today", "/api/notices", "/api/overview"):
                t = timed(client, path, args.runs)
                print(
                    f"{path:15} median {statistics.median(t) * 1000:7.0f} ms"
                    f"  min {min(t) * 1000:7.0f} ms  ({args.runs} runs)"
                )
        cases.close()


if __name__ == "__main__":
    main()
