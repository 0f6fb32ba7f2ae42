"""How long ingest's /metrics scrape takes with N registered poles (issue 17: < 100 ms at 5,000).

Known devices only bounds the per-device series to the registry's poles: this
seeds a time-series store with one reading from each of N devices and times
the store collector's scrape (``generate_latest``), beside the same scrape
with one device in the same run (the floor: the fixed series and the exposition
itself). Before known devices, 50,000 made-up ids gave a 9 MB, 2.9 s scrape.

The collector keeps each device's samples from one scrape to the next while
its row is unchanged, so each N is scraped twice over: with nothing changed
since the last scrape, and after every device's row changed (each pole heard
from since: the worst case, every sample built again).

    .venv/bin/python -m bench.metrics_scrape --devices 5000 50000 --runs 3
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest

from sidewalk.core.contract import WeatherReading
from sidewalk.ingest.metrics import StoreCollector
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

T0 = 1_764_460_800_000


def _store(path: Path, devices: int) -> None:
    store = SqliteTimeSeriesStore(path)
    try:
        batch = [
            WeatherReading(device=f"pole-{i:06d}", seq=1, ts=T0, air_temp_c=-3.0)
            for i in range(devices)
        ]
        for start in range(0, len(batch), 5000):
            part = batch[start : start + 5000]
            store.write_batch(part, sites={r.device: "clyman" for r in part})
    finally:
        store.close()


def _touch_every_device(path: Path) -> None:
    """Every device heard from again: each row changes (the worst case for the cache)."""
    db = sqlite3.connect(path)
    try:
        with db:
            db.execute("UPDATE devices SET last_seen_at = last_seen_at + 1000")
    finally:
        db.close()


def _scrape(path: Path, runs: int, *, changed: bool = False) -> tuple[list[float], int]:
    registry = CollectorRegistry()
    registry.register(StoreCollector(path))
    generate_latest(registry)  # the first opens the read-only connection
    times, size = [], 0
    for _ in range(runs):
        if changed:
            _touch_every_device(path)
        started = time.perf_counter()
        size = len(generate_latest(registry))
        times.append((time.perf_counter() - started) * 1000)
    return times, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[5000])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        floor_path = Path(tmp) / "floor.db"
        _store(floor_path, 1)
        floor, floor_size = _scrape(floor_path, args.runs)
        print(f"{'devices':>8} {'scrape ms (each run)':>34} {'median':>8} {'bytes':>10}")
        print(
            f"{1:>8} {' '.join(f'{t:8.1f}' for t in floor):>34}"
            f" {statistics.median(floor):8.1f} {floor_size:>10}   (floor)"
        )
        for n in args.devices:
            path = Path(tmp) / f"ts-{n}.db"
            _store(path, n)
            for changed in (False, True):
                times, size = _scrape(path, args.runs, changed=changed)
                note = "every device changed" if changed else "unchanged since the last"
                print(
                    f"{n:>8} {' '.join(f'{t:8.1f}' for t in times):>34}"
                    f" {statistics.median(times):8.1f} {size:>10}   ({note})"
                )


if __name__ == "__main__":
    main()
