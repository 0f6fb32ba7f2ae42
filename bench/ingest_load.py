"""Ingest under load: sustained rate, 1 vs 2 shared-subscription workers, latency.

Everything runs on this machine: one Mosquitto (persistence on, 1000 in
flight), C publishers (``mosquitto_pub -l``, one per device, QoS 1), the C
client ``mosquitto_sub`` as the reference consumer of the same stream in the
same run, and ingest workers as separate processes on ``$share/<group>/…``
(SQLite, WAL, ``synchronous=FULL``; commit, then ack). Worker layouts: one
worker; two on one shared subscription writing one SQLite file; two each on
its own site (half the devices) and its own file, the per-village layout of
docs/scaling.md.

1. sustained: the publishers send N readings as fast as they can while
   mosquitto_sub and the workers consume them. Rate = N / (last reading
   received or committed − first publish). Checks the stores hold exactly N
   readings and the workers saw 0 duplicates.
2. drain: N readings queued first, then the workers drain them (started
   after their imports, timed from their connect).
3. latency: a paced 1,000 readings/s for ``--latency-s`` seconds, once with
   ingest's default 50 ms batch timer and once with 5 ms; each reading's
   ``ts`` is its publish time (ms), so publish → commit (``on_stored``) per
   reading beside publish → mosquitto_sub receipt (``-F %U``).

    uv run python -m bench.ingest_load [--n 50000] [--latency-s 30]

Every row prints ingest's process CPU per reading (``time.process_time`` in
the worker, both threads and SQLite; inflated by a busy machine's cache and
scheduler contention), and of it the system (kernel) part: socket reads and
writes, fsync, futex waits of the two threads. ``--callgrind DIR`` runs each worker under valgrind's
callgrind, instrumented from "go" to its exit, and prints the instructions
per reading: the figure that does not depend on the machine's load (the
worker then runs ~50 times slower, so use it with ``--parts drain``).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

from sidewalk.core.contract import AnyReading, WeatherReading, topic_for
from sidewalk.core.heap import settle_heap
from sidewalk.core.mqtt import MqttClient, MqttSettings
from sidewalk.ingest.consumer import HEAP_YOUNG_THRESHOLD, IngestConsumer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer

T0 = 1_764_460_800_000
# The reference points (this machine, earlier sessions).
REF_SUB_SUSTAINED = "mosquitto_sub ~24,000/s"
REF_SUB_DRAIN = "mosquitto_sub 75,000+/s"
# Worker layouts: (workers, each on its own site and store).
LAYOUTS = ((1, False), (2, False), (2, True))


def _now_ms() -> float:
    return time.time_ns() / 1e6


def _exe(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise SystemExit(f"{name} not installed (Debian package mosquitto-clients)")
    return path


def _client(exe: str, port: int, client_id: str) -> list[str]:
    """The common arguments of the C clients: local broker, QoS 1, a client id."""
    return [exe, "-h", "127.0.0.1", "-p", str(port), "-q", "1", "-i", client_id]


# --- the worker process -------------------------------------------------------


def _worker(args: argparse.Namespace) -> None:
    """One ingest worker: runs until stdin closes, then prints its figures as JSON."""
    store = SqliteTimeSeriesStore(args.db)
    commits: list[float] = []
    latencies: list[float] = []

    def on_stored(readings: Sequence[AnyReading]) -> None:
        now = _now_ms()
        commits.append(now)
        if args.latency:
            latencies.extend(now - r.ts for r in readings)

    settings = MqttSettings(
        host="127.0.0.1",
        port=args.port,
        client_id=args.worker,
        receive_maximum=1000,
        keepalive_s=args.keepalive,
    )
    consumer = IngestConsumer(
        store,
        settings,
        site=args.site,
        shared_group=args.site,
        batch_size=500,
        batch_wait_s=args.batch_wait,
        on_stored=on_stored,
    )
    # Imports done: the parent starts its clock at "go", not at our start-up.
    print("loaded", flush=True)
    sys.stdin.readline()
    settle_heap(young_threshold=HEAP_YOUNG_THRESHOLD)  # as `sidewalk ingest` does
    cpu0, sys0 = time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_stime
    consumer.start()
    print("ready", flush=True)
    sys.stdin.read()  # the parent closes stdin to stop us
    consumer.stop()
    cpu_s = time.process_time() - cpu0
    sys_s = resource.getrusage(resource.RUSAGE_SELF).ru_stime - sys0
    store.close()
    s = consumer.stats
    out = {
        "stored": s.stored,
        "received": s.received,
        "duplicates": s.duplicates,
        "dead": s.dead_letters,
        "batches": s.batches,
        "cpu_s": cpu_s,
        "sys_s": sys_s,
        "last_commit_ms": max(commits, default=0.0),
        "latencies": latencies,
    }
    print(json.dumps(out), flush=True)


class Workers:
    """Ingest worker processes, one per (site, SQLite file); same site = shared subscription."""

    # Where callgrind writes each worker's counts (None: not under valgrind).
    callgrind: Path | None = None

    def __init__(
        self, port: int, places: list[tuple[str, Path]], latency: bool = False, wait_s: float = 0.05
    ) -> None:
        self.procs: list[subprocess.Popen[str]] = []
        # Workers of one file open it together: its schema is created under
        # the write lock (storage/timeseries/schema.py), so neither fails.
        for i, (site, db) in enumerate(places):
            cmd = [sys.executable, "-m", "bench.ingest_load", "--worker", f"{site}-w{i}"]
            if self.callgrind is not None:
                out = self.callgrind / f"{site}-w{i}.%p.cg"
                cmd = [_exe("valgrind"), "--tool=callgrind", "--instr-atstart=no",
                       f"--callgrind-out-file={out}", f"--log-file={out}.log", *cmd]  # fmt: skip
                # 50 times slower: a commit can outlast the keepalive (a reconnect
                # would re-deliver the batch and count it twice).
                cmd += ["--keepalive", "3600"]
            cmd += ["--port", str(port), "--db", str(db), "--site", site]
            if latency:
                cmd.append("--latency")
            cmd += ["--batch-wait", str(wait_s)]
            proc = subprocess.Popen(
                cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1
            )
            self.procs.append(proc)
        self._expect("loaded")

    def _expect(self, word: str) -> None:
        for proc in self.procs:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != word:
                raise RuntimeError(f"worker did not say {word!r}")

    def go(self) -> None:
        """Connect every worker and wait until all are subscribed."""
        for proc in self.procs:
            assert proc.stdin is not None
            if self.callgrind is not None:
                # Count from here: the imports are not ingest's per-reading cost.
                subprocess.run(
                    [_exe("callgrind_control"), "--instr=on", str(proc.pid)],
                    check=True, capture_output=True, timeout=120,
                )  # fmt: skip
            proc.stdin.write("go\n")
            proc.stdin.flush()
        self._expect("ready")

    def finish(self) -> list[dict[str, Any]]:
        """Stop every worker (each commits what it holds) and collect its figures."""
        results = []
        for proc in self.procs:
            assert proc.stdin is not None
            proc.stdin.close()
        for proc in self.procs:
            assert proc.stdout is not None
            results.append(json.loads(proc.stdout.read().strip().splitlines()[-1]))
            proc.wait(600 if self.callgrind is not None else 30)
            if self.callgrind is not None:
                results[-1]["instructions"] = _instructions(self.callgrind, proc.pid)
        return results


def _instructions(folder: Path, pid: int) -> int:
    """The instructions callgrind counted in a worker (its ``totals:`` / ``summary:`` line)."""
    total = 0
    for path in folder.glob(f"*.{pid}.cg*"):
        for line in path.read_text(errors="replace").splitlines():
            if line.startswith(("totals:", "summary:")):
                total += int(line.split()[1])
                break
    return total


# --- publishers and the reference subscriber ------------------------------------


def _lines(device: str, count: int, ts: int = T0) -> str:
    return "".join(
        WeatherReading(device=device, seq=i + 1, ts=ts + i, air_temp_c=-5.0 + (i % 50) / 10)
        .to_json()
        .decode()
        + "\n"
        for i in range(count)
    )


def _start_publishers(
    port: int, tmp: Path, sites: list[str], n: int, devices: int
) -> list[subprocess.Popen[bytes]]:
    """One ``mosquitto_pub -l`` per device reading its readings from a file."""
    pub = _exe("mosquitto_pub")
    procs = []
    per = n // devices
    for d in range(devices):
        device = f"pole-{d}"
        site = sites[d % len(sites)]
        topic = topic_for(site, device, "weather")
        src = tmp / f"{site}-{device}.jsonl"
        src.write_text(_lines(device, per))
        with src.open("rb") as fh:
            procs.append(
                subprocess.Popen(
                    [*_client(pub, port, f"{site}-pub-{d}"), "-M", "1000", "-l", "-t", topic],
                    stdin=fh,
                )
            )
    return procs


class CSub:
    """mosquitto_sub receiving the same stream, printing receive time and payload."""

    def __init__(self, port: int, n: int, out: Path, sites: list[str]) -> None:
        self.out = out
        self._fh: IO[bytes] = out.open("wb")
        cmd = _csub(port, sites)
        # Create the persistent session first so nothing published is missed.
        subprocess.run([*cmd, "-E"], check=True, timeout=30)
        self.proc = subprocess.Popen([*cmd, "-C", str(n), "-F", "%U %p"], stdout=self._fh)

    def finish(self, timeout_s: float = 300) -> tuple[int, float, list[float]]:
        """(messages, last receive time ms, per-message latency ms from ts)."""
        self.proc.wait(timeout_s)
        self._fh.close()
        last, lat = 0.0, []
        lines = self.out.read_bytes().splitlines()
        for line in lines:
            stamp, payload = line.split(b" ", 1)
            t = float(stamp) * 1000
            last = max(last, t)
            lat.append(t - json.loads(payload)["ts"])
        return len(lines), last, lat


def _csub(port: int, sites: list[str]) -> list[str]:
    """mosquitto_sub with a persistent session on the weather of the given sites."""
    cmd = [*_client(_exe("mosquitto_sub"), port, f"{sites[0]}-csub"), "-c"]
    for site in sites:
        cmd += ["-t", f"sidewalk/v1/{site}/+/weather"]
    return cmd


def _places(tag: str, tmp: Path, w: int, partition: bool) -> list[tuple[str, Path]]:
    """Where each of w workers consumes and stores: one shared site and file, or one each."""
    if partition:
        return [(f"{tag}p{i}", tmp / f"{tag}p{i}.db") for i in range(w)]
    return [(tag, tmp / f"{tag}.db")] * w


def _make_session(port: int, client_id: str, site: str) -> None:
    """A persistent session subscribed on the shared group, left to queue."""
    settings = MqttSettings(host="127.0.0.1", port=port, client_id=client_id)
    client = MqttClient(settings, manual_ack=True)
    client.connect()
    client.subscribe(f"$share/{site}/sidewalk/v1/{site}/+/+", 1)
    client.disconnect()


# --- the three measurements -------------------------------------------------------


def _count(dbs: set[Path]) -> int:
    total = 0
    for db in dbs:
        store = SqliteTimeSeriesStore(db)
        total += store.count()
        store.close()
    return total


def _check(dbs: set[Path], results: list[dict[str, Any]]) -> tuple[int, int]:
    return _count(dbs), sum(r["duplicates"] for r in results)


def sustained(
    server: MosquittoServer, tmp: Path, n: int, devices: int, w: int, *, partition: bool = False
) -> dict[str, Any]:
    places = _places(f"sustained{w}{'p' if partition else ''}", tmp, w, partition)
    sites = sorted({site for site, _ in places})
    dbs = {db for _, db in places}
    csub = CSub(server.port, n, tmp / f"{sites[0]}.txt", sites)
    workers = Workers(server.port, places)
    workers.go()
    start = _now_ms()
    pubs = _start_publishers(server.port, tmp, sites, n, devices)
    for p in pubs:
        p.wait(300)
    pub_end = _now_ms()
    got, sub_last, _ = csub.finish()
    _wait_rows(dbs, n, 3600 if Workers.callgrind else 120)
    results = workers.finish()
    rows, dups = _check(dbs, results)
    ingest_last = max(r["last_commit_ms"] for r in results)
    return {
        "publish": n / (pub_end - start) * 1000,
        "sub": got / (sub_last - start) * 1000,
        "ingest": rows / (ingest_last - start) * 1000,
        "rows": rows,
        "dups": dups,
        "shares": [r["stored"] for r in results],
        "batches": [r["batches"] for r in results],
        "cpu_s": sum(r["cpu_s"] for r in results),
        "sys_s": sum(r["sys_s"] for r in results),
        "instructions": sum(r.get("instructions", 0) for r in results),
    }


def drain(
    server: MosquittoServer, tmp: Path, n: int, devices: int, w: int, *, partition: bool = False
) -> dict[str, Any]:
    places = _places(f"drain{w}{'p' if partition else ''}", tmp, w, partition)
    sites = sorted({site for site, _ in places})
    dbs = {db for _, db in places}
    cmd = _csub(server.port, sites)
    subprocess.run([*cmd, "-E"], check=True, timeout=30)
    for i, (site, _) in enumerate(places):
        _make_session(server.port, f"{site}-w{i}", site)
    for p in _start_publishers(server.port, tmp, sites, n, devices):
        p.wait(300)
    t, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run([*cmd, "-C", str(n)], stdout=subprocess.DEVNULL, check=True, timeout=300)
    sub_s = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    sub_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    workers = Workers(server.port, places)
    start = _now_ms()
    workers.go()
    _wait_rows(dbs, n, 3600 if Workers.callgrind else 300)
    results = workers.finish()
    rows, dups = _check(dbs, results)
    ingest_s = (max(r["last_commit_ms"] for r in results) - start) / 1000
    return {
        "sub": n / sub_s,
        "sub_cpu_us": 1e6 * sub_cpu / n,
        "ingest": rows / ingest_s,
        "rows": rows,
        "dups": dups,
        "shares": [r["stored"] for r in results],
        "batches": [r["batches"] for r in results],
        "cpu_s": sum(r["cpu_s"] for r in results),
        "sys_s": sum(r["sys_s"] for r in results),
        "instructions": sum(r.get("instructions", 0) for r in results),
    }


def latency(
    server: MosquittoServer, tmp: Path, rate: int, seconds: float, wait_s: float
) -> dict[str, Any]:
    n = int(rate * seconds)
    site = f"latency{int(wait_s * 1000)}"
    db = tmp / f"{site}.db"
    csub = CSub(server.port, n, tmp / f"{site}.txt", [site])
    workers = Workers(server.port, [(site, db)], latency=True, wait_s=wait_s)
    workers.go()
    topic = topic_for(site, "pole-lat", "weather")
    pub = subprocess.Popen(
        [*_client(_exe("mosquitto_pub"), server.port, f"{site}-pub"), "-l", "-t", topic],
        stdin=subprocess.PIPE,
    )
    assert pub.stdin is not None
    start = time.monotonic()
    # Lines go out in 1 ms steps; each carries its own publish time as ts.
    for i in range(n):
        delay = start + i / rate - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        line = WeatherReading(
            device="pole-lat", seq=i + 1, ts=time.time_ns() // 1_000_000, air_temp_c=-3.0
        ).to_json()
        pub.stdin.write(line + b"\n")
        pub.stdin.flush()
    pub.stdin.close()
    pub.wait(60)
    achieved = n / (time.monotonic() - start)
    got, _, sub_lat = csub.finish()
    _wait_rows({db}, n, 60)
    results = workers.finish()
    rows, dups = _check({db}, results)
    ing_lat = results[0]["latencies"]
    return {
        "rate": achieved,
        "sub": _percentiles(sub_lat),
        "ingest": _percentiles(ing_lat),
        "rows": rows,
        "dups": dups,
        "got": got,
    }


def _percentiles(xs: list[float]) -> tuple[float, float]:
    q = statistics.quantiles(xs, n=100, method="inclusive")
    return q[49], q[98]


def _wait_rows(dbs: set[Path], n: int, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while _count(dbs) < n and time.monotonic() < deadline:
        time.sleep(0.1)  # polling other processes' commits


def _label(w: int, partition: bool) -> str:
    if w == 1:
        return "1 worker"
    return f"{w} workers, " + ("own site+store each" if partition else "$share, one store")


def _row(label: str, r: dict[str, Any]) -> str:
    line = (
        f"{label:<44} {r['ingest']:>9.0f} {r['sub']:>9.0f} {r['ingest'] / r['sub']:>6.2f}"
        f"  {r['rows']}/{r['dups']} batches {r['batches']}"
        f" cpu {1e6 * r['cpu_s'] / max(1, r['rows']):.0f} µs/reading"
        f" (system {1e6 * r['sys_s'] / max(1, r['rows']):.0f})"
    )
    if r.get("instructions"):
        line += f", {r['instructions'] / max(1, r['rows']):,.0f} instructions/reading"
    return line


def _run(parts: set[str], server: MosquittoServer, tmp: Path, args: argparse.Namespace) -> bool:
    """Run the chosen measurements, print the tables; True when every store was exact."""
    n, ok = args.n, True
    layouts = LAYOUTS[: args.layouts]
    hdr = f"{'measurement':<44} {'ingest':>9} {'C client':>9} {'ratio':>6}  rows/dups"
    if "sustained" in parts:
        print("\n1. sustained, publishing at full speed (readings/s)")
        print(hdr + f"   [issue: {REF_SUB_SUSTAINED}]")
        for w, part in layouts:
            r = sustained(server, tmp, n, args.devices, w, partition=part)
            ok &= r["rows"] == n and r["dups"] == 0
            print(_row(f"{_label(w, part)}, pub {r['publish']:.0f}/s", r))
    if "drain" in parts:
        print("\n2. draining a queue of N (readings/s)")
        print(hdr + f"   [issue: {REF_SUB_DRAIN}]")
        for w, part in layouts:
            r = drain(server, tmp, n, args.devices, w, partition=part)
            ok &= r["rows"] == n and r["dups"] == 0
            print(_row(_label(w, part), r) + f"; C client cpu {r['sub_cpu_us']:.0f} µs")
    if "latency" in parts:
        print(f"\n3. latency at {args.rate} readings/s for {args.latency_s:.0f} s (ms)")
        print(f"{'':<44} {'p50':>7} {'p99':>7}  rows/dups")
        for wait_s in (0.05, 0.005):
            r = latency(server, tmp, args.rate, args.latency_s, wait_s)
            ok &= r["rows"] == int(args.rate * args.latency_s) and r["dups"] == 0
            ing, sub = r["ingest"], r["sub"]
            label = f"publish -> commit, batch_wait {wait_s * 1000:g} ms"
            print(f"{label:<44} {ing[0]:>7.1f} {ing[1]:>7.1f}  {r['rows']}/{r['dups']}")
            label = f"publish -> mosquitto_sub (same run, {r['rate']:.0f}/s)"
            print(f"{label:<44} {sub[0]:>7.1f} {sub[1]:>7.1f}  {r['got']} received")
        print("(ts has 1 ms resolution: every figure reads up to 1 ms high)")
    return ok


def main() -> None:
    """Parse arguments; run as the bench or, with --worker, as one ingest worker."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=50_000, help="readings per run (default 50000)")
    ap.add_argument("--devices", type=int, default=10, help="publishing devices (default 10)")
    ap.add_argument("--rate", type=int, default=1000, help="latency run rate/s (default 1000)")
    ap.add_argument("--latency-s", type=float, default=30, help="latency run length (30)")
    ap.add_argument("--parts", default="sustained,drain,latency", help="which measurements")
    ap.add_argument(
        "--layouts", type=int, default=3, choices=(1, 2, 3),
        help="worker layouts to run: 1 = one worker only (default 3: all)",
    )  # fmt: skip
    ap.add_argument(
        "--callgrind", type=Path, metavar="DIR",
        help="run the workers under callgrind (counts in DIR); prints instructions/reading",
    )  # fmt: skip
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--port", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--db", help=argparse.SUPPRESS)
    ap.add_argument("--site", help=argparse.SUPPRESS)
    ap.add_argument("--latency", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--keepalive", type=int, default=30, help=argparse.SUPPRESS)
    ap.add_argument("--batch-wait", type=float, default=0.05, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args)
        return
    args.n -= args.n % args.devices
    if args.callgrind is not None:
        args.callgrind.mkdir(parents=True, exist_ok=True)
        Workers.callgrind = args.callgrind.resolve()
    print(f"{os.cpu_count()} cores; N = {args.n} QoS 1 readings from {args.devices} C publishers")
    with tempfile.TemporaryDirectory(prefix="sidewalk-load-") as tmp:
        server = MosquittoServer(
            Path(tmp) / "broker", autosave_s=60, extra_config="max_inflight_messages 1000\n"
        )
        server.start()
        try:
            ok = _run(set(args.parts.split(",")), server, Path(tmp), args)
        finally:
            server.stop()
    print("\nstore complete, no duplicates:", "OK" if ok else "FAILED")
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
