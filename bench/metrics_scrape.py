"""How long ingest's /metrics scrape takes with N registered poles (< 100 ms at 5,000).

Known devices only bounds the per-device series to the registry's poles: this
seeds a time-series store with one reading from each of N devices and times
the store collector's scrape, beside the same scrape with one device in the
same run (the floor: the fixed series and the exposition itself), and beside
prometheus_client's own encoder of the same registry (the reference: every
sample built and formatted, as before rendered lines, after every row changed). Before
known devices, 50,000 made-up ids gave a 9 MB, 2.9 s scrape.

The collector keeps each device's exposition lines from one scrape to the next
while its row is unchanged, so each N is scraped twice over: with nothing
changed since the last scrape, and after every device's row changed (each pole
heard from since: the worst case, every line rendered again).

Two measures: ``render`` is the server's own work, the body built in process
(``sidewalk.core.observability.exposition``, as the HTTP handler calls it;
wall and this thread's CPU time); ``http`` is a whole scrape through
``ObservabilityServer`` on loopback with Prometheus's Accept header, plain and
with ``Accept-Encoding: gzip`` (what Prometheus and vmagent send; wall, the
process's CPU time, server and client, and the bytes that crossed the
socket). Loopback hides the transfer: 0.9 MB plain is ~75 ms on a 100 Mbit/s
link, its 44 KB gzip ~4 ms.

``--callgrind`` counts instructions per scrape instead (load-independent):
the store is built outside valgrind, and a child under callgrind counts only
the render of one scrape (``--toggle-collect=starmap_next``, called through
``itertools.starmap``; nothing in a scrape calls starmap), with
``PYTHONHASHSEED=0``. In a tree without ``exposition`` it counts
prometheus_client's ``generate_latest``, so it can measure an older tree.

    .venv/bin/python -m bench.metrics_scrape --devices 5000 --runs 3
    .venv/bin/python -m bench.metrics_scrape --devices 5000 --callgrind
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import choose_encoder

from sidewalk.core.contract import WeatherReading
from sidewalk.ingest.metrics import StoreCollector
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

T0 = 1_764_460_800_000
# What Prometheus 3 sends: OpenMetrics first (vmagent asks for text/plain 0.0.4).
PROMETHEUS_ACCEPT = (
    "application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
    "application/openmetrics-text;version=0.0.1;q=0.5,"
    "text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2"
)


def _renderer() -> Callable[[CollectorRegistry], bytes]:
    """The body the server builds for Prometheus; in an older tree, ``generate_latest``."""
    try:
        # Ignored: absent in an older tree the bench may be run against.
        from sidewalk.core.observability import exposition  # type: ignore[attr-defined,unused-ignore]
    except ImportError:
        return generate_latest

    def render(registry: CollectorRegistry) -> bytes:
        body: bytes = exposition(registry, PROMETHEUS_ACCEPT)[0]
        return body

    return render


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


def _registry(path: Path) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(StoreCollector(path))
    return registry


def _render_runs(
    path: Path, runs: int, *, changed: bool, reference: bool = False
) -> tuple[list[float], list[float], int]:
    """Wall ms, CPU ms (this thread) and bytes of each in-process render (``reference``:
    prometheus_client's encoder for the same Accept, every sample built)."""
    render = choose_encoder(PROMETHEUS_ACCEPT)[0] if reference else _renderer()
    registry = _registry(path)
    render(registry)  # the first opens the read-only connection and renders every device
    walls, cpus, size = [], [], 0
    for _ in range(runs):
        if changed:
            _touch_every_device(path)
        started, cpu = time.perf_counter(), time.thread_time()
        size = len(render(registry))
        walls.append((time.perf_counter() - started) * 1000)
        cpus.append((time.thread_time() - cpu) * 1000)
    return walls, cpus, size


def _http_runs(
    path: Path, runs: int, *, changed: bool, gzip: bool
) -> tuple[list[float], list[float], int]:
    """Wall ms, CPU ms (the process: server and client) and bytes on the wire of each
    scrape over HTTP on loopback."""
    from sidewalk.core.observability import ObservabilityServer

    server = ObservabilityServer(_registry(path), live={}, ready={})
    server.start()
    headers = {"Accept": PROMETHEUS_ACCEPT}
    if gzip:
        headers["Accept-Encoding"] = "gzip"

    def get() -> int:
        request = urllib.request.Request(f"{server.url}/metrics", headers=headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            return len(response.read())

    try:
        get()
        walls, cpus, size = [], [], 0
        for _ in range(runs):
            if changed:
                _touch_every_device(path)
            started, cpu = time.perf_counter(), time.process_time()
            size = get()
            walls.append((time.perf_counter() - started) * 1000)
            cpus.append((time.process_time() - cpu) * 1000)
        return walls, cpus, size
    finally:
        server.stop()


def _row(n: int, times: list[float], extra: str, note: str) -> str:
    each = " ".join(f"{t:7.1f}" for t in times)
    return f"{n:>7} {each:>24} {statistics.median(times):7.1f} {extra}   ({note})"


def _inner(path: Path, changed: bool) -> None:
    """Under callgrind: one uncounted scrape, then one counted (after every row changed)."""
    render = _renderer()
    registry = _registry(path)
    render(registry)
    if changed:
        _touch_every_device(path)
    [size] = itertools.starmap(lambda: len(render(registry)), [()])
    print(f"bytes {size}")


def _instructions(path: Path, changed: bool) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        cmd += ["--collect-atstart=no", "--toggle-collect=starmap_next"]
        cmd += [sys.executable, "-m", "bench.metrics_scrape", "--inner", str(path)]
        cmd += ["--changed"] if changed else []
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        subprocess.run(cmd, env=env, capture_output=True, text=True, check=True)
        match = re.search(r"^(?:summary|totals): (\d+)", out.read_text(), re.MULTILINE)
    if not match or int(match.group(1)) == 0:
        sys.exit("callgrind counted nothing: this Python has no starmap_next symbol")
    return int(match.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[5000])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--callgrind", action="store_true", help="instructions per scrape")
    parser.add_argument("--inner", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--changed", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        _inner(args.inner, args.changed)
        return
    with tempfile.TemporaryDirectory() as tmp:
        paths = {}
        for n in [1, *args.devices]:
            paths[n] = Path(tmp) / f"ts-{n}.db"
            _store(paths[n], n)
        if args.callgrind:
            print(f"{'devices':>7} {'instructions per scrape (callgrind, render only)':>52}")
            for n, path in paths.items():
                for changed in (False, True) if n > 1 else (False,):
                    count = _instructions(path, changed)
                    note = "floor" if n == 1 else "every device changed" if changed else "unchanged"
                    print(f"{n:>7} {count:>52,}   ({note})")
            return
        print(f"render: the body built in process ({args.runs} scrapes each)")
        head = f"{'devices':>7} {'wall ms (each)':>24} {'median':>7}"
        print(f"{head} {'CPU ms median':>14} {'bytes':>9}")
        for n, path in paths.items():
            for changed in (False, True) if n > 1 else (False,):
                walls, cpus, size = _render_runs(path, args.runs, changed=changed)
                note = "floor" if n == 1 else "every device changed" if changed else "unchanged"
                extra = f"{statistics.median(cpus):14.1f} {size:>9}"
                print(_row(n, walls, extra, note))
            if n > 1:  # the reference, in the same run: no rendered lines, as before
                walls, cpus, size = _render_runs(path, args.runs, changed=True, reference=True)
                extra = f"{statistics.median(cpus):14.1f} {size:>9}"
                print(_row(n, walls, extra, "reference: prometheus_client's encoder"))
        print("http: a whole scrape through ObservabilityServer on loopback")
        print(f"{head} {'CPU ms median':>14} {'wire bytes':>10}")
        for n, path in paths.items():
            for changed in (False, True) if n > 1 else (False,):
                for gzip in (False, True):
                    walls, cpus, size = _http_runs(path, args.runs, changed=changed, gzip=gzip)
                    note = "floor" if n == 1 else "every device changed" if changed else "unchanged"
                    note += ", gzip" if gzip else ""
                    print(_row(n, walls, f"{statistics.median(cpus):14.1f} {size:>10}", note))


if __name__ == "__main__":
    main()
