"""One pole's flood against another pole's latency: ingest's per-pole fair share.

One Mosquitto (the tests' harness config), one ingest consumer in this
process (SQLite, ``synchronous=FULL``; commit, then ack), and two poles:

* ``pole-a`` floods: ``--flood`` readings through ``mosquitto_pub -q 1 -l``
  as fast as the broker takes them;
* ``pole-b`` sends one reading every ``--every-ms`` while the flood lasts,
  each stamped with its publish time.

pole-b's latency is publish → commit (ingest's ``on_stored`` hook), per
reading. Each layout runs twice on a fresh broker and store: with the fair
share (``ingest/fair.py``: beside other poles, a pole takes at most one batch
size of a backlog batch) and without it (every backlog batch in arrival order).

    uv run python -m bench.ingest_fairness [--flood 100000] [--every-ms 50]

Two layouts: ``live`` (ingest running, the flood arrives) and ``backlog``
(ingest down while the flood is queued at the broker, pole-b sending from the
moment ingest starts again). Prints p50, p95 and max of pole-b's latency, and
how long the flood took to store.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from sidewalk.core.contract import AnyReading, TimePolicy, WeatherReading, topic_for
from sidewalk.core.mqtt import MqttClient, MqttSettings
from sidewalk.ingest import consumer as consumer_module
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer

SITE = "bench"
T0 = 1_764_460_800_000


def _settings(server: MosquittoServer, client_id: str, **kw: object) -> MqttSettings:
    # Ignored: ``kw`` holds MqttSettings fields of their own types; typed as object to pass any.
    return MqttSettings(host=server.host, port=server.port, client_id=client_id, **kw)  # type: ignore[arg-type]


@contextmanager
def _fair(on: bool) -> Iterator[None]:
    """The consumer's fair share as shipped, or (off) every batch as it arrived."""
    real = getattr(consumer_module, "fair_share")  # noqa: B009 (imported there, patched there)
    if not on:
        setattr(consumer_module, "fair_share", lambda *_: None)  # noqa: B010 (as above)
    try:
        yield
    finally:
        setattr(consumer_module, "fair_share", real)  # noqa: B010 (as above)


class Latency:
    """pole-b's publish times by seq, and its commit latencies."""

    def __init__(self) -> None:
        self.sent: dict[int, float] = {}
        self.ms: list[float] = []
        self.flood_stored = 0
        self.flood_done_at: float | None = None
        self.last_flood_at = 0.0
        self.flood_n = 0

    def on_stored(self, readings: Sequence[AnyReading]) -> None:
        now = time.perf_counter()
        for r in readings:
            if r.device == "pole-b":
                self.ms.append((now - self.sent[r.seq]) * 1000)
            else:
                self.flood_stored += 1
                self.last_flood_at = now
        if self.flood_done_at is None and self.flood_stored >= self.flood_n:
            self.flood_done_at = now


def _flood_lines(n: int) -> list[bytes]:
    return [
        WeatherReading(device="pole-a", seq=s, ts=T0 + s, air_temp_c=-2.0).to_json()
        for s in range(1, n + 1)
    ]


# mosquitto_pub -l may end before it has sent all of a long stdin (100,000 lines:
# about a third arrived); 20,000 at a time it sends every one.
CHUNK = 20_000


def _flood(server: MosquittoServer, lines: list[bytes]) -> threading.Thread:
    pub = shutil.which("mosquitto_pub")
    assert pub is not None, "mosquitto_pub is needed (apt install mosquitto-clients)"

    def send() -> None:
        for start in range(0, len(lines), CHUNK):
            proc = subprocess.Popen(
                [pub, "-h", server.host, "-p", str(server.port), "-q", "1", "-i", "pole-a",
                 "-t", topic_for(SITE, "pole-a", "weather"), "-l"],
                stdin=subprocess.PIPE,
            )  # fmt: skip
            proc.communicate(b"\n".join(lines[start : start + CHUNK]) + b"\n")

    thread = threading.Thread(target=send)
    thread.start()
    return thread


def _until_quiet(lat: Latency, quiet_s: float = 3.0, limit_s: float = 300.0) -> None:
    """Until the flood is stored, or nothing of it was stored for ``quiet_s``
    (mosquitto_pub may end before sending all of a long stdin: counted as stored)."""
    deadline = time.perf_counter() + limit_s
    while lat.flood_done_at is None and time.perf_counter() < deadline:
        if lat.last_flood_at and time.perf_counter() - lat.last_flood_at > quiet_s:
            lat.flood_done_at = lat.last_flood_at
            return
        time.sleep(0.2)  # polling the hook's counters from the bench's thread


def _pole_b(server: MosquittoServer, lat: Latency, every_s: float, until: threading.Event) -> None:
    client = MqttClient(_settings(server, "pole-b", clean_start=True))
    client.connect()
    seq = 0
    try:
        while not until.is_set():
            seq += 1
            r = WeatherReading(device="pole-b", seq=seq, ts=T0 + seq, air_temp_c=-2.0)
            lat.sent[seq] = time.perf_counter()
            client.publish(topic_for(SITE, "pole-b", "weather"), r.to_json(), 1)
            until.wait(every_s)
    finally:
        client.disconnect()


def run(layout: str, fair: bool, flood: int, every_s: float, work: Path) -> Latency:
    server = MosquittoServer(work / "broker")
    server.start()
    lat = Latency()
    lat.flood_n = flood
    store = SqliteTimeSeriesStore(work / "ts.db")
    lines = _flood_lines(flood)
    done = threading.Event()
    ingest = IngestConsumer(
        store, _settings(server, "ingest"), site=SITE, on_stored=lat.on_stored,
        time_policy=TimePolicy(max_ahead_ms=None),
    )  # fmt: skip
    try:
        with _fair(fair):
            if layout == "backlog":
                # A persistent session subscribed, then down while the flood is queued.
                ingest.start()
                ingest.stop()
                _flood(server, lines).join()
                ingest = IngestConsumer(
                    store, _settings(server, "ingest"), site=SITE, on_stored=lat.on_stored,
                    time_policy=TimePolicy(max_ahead_ms=None),
                )  # fmt: skip
                started = time.perf_counter()
                ingest.start()
                pole_b = threading.Thread(target=_pole_b, args=(server, lat, every_s, done))
                pole_b.start()
            else:
                ingest.start()
                pole_b = threading.Thread(target=_pole_b, args=(server, lat, every_s, done))
                pole_b.start()
                time.sleep(0.5)
                started = time.perf_counter()
                _flood(server, lines)
            _until_quiet(lat)
            done.set()
            pole_b.join()
            ingest.wait_for(lambda: len(lat.ms) >= len(lat.sent), 30)
            lat.flood_done_at = (lat.flood_done_at or time.perf_counter()) - started
    finally:
        ingest.stop()
        store.close()
        server.stop()
    return lat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--flood", type=int, default=100_000)
    ap.add_argument("--every-ms", type=float, default=50.0)
    ap.add_argument("--layouts", default="live,backlog")
    args = ap.parse_args()
    print(f"flood {args.flood:,} readings from pole-a; pole-b every {args.every_ms:.0f} ms")
    print("layout   fair share  pole-b n  p50 ms  p95 ms  max ms  flood stored")
    for layout in args.layouts.split(","):
        for fair in (False, True):
            with tempfile.TemporaryDirectory(prefix="sidewalk-fair-") as tmp:
                lat = run(layout, fair, args.flood, args.every_ms / 1000, Path(tmp))
            ms = sorted(lat.ms)
            p95 = ms[min(len(ms) - 1, int(0.95 * len(ms)))] if ms else float("nan")
            print(
                f"{layout:8} {'on' if fair else 'off':10}  {len(ms):8}  "
                f"{statistics.median(ms) if ms else float('nan'):6.0f}  {p95:6.0f}  "
                f"{max(ms) if ms else float('nan'):6.0f}  {lat.flood_stored:,} in"
                f" {lat.flood_done_at:.1f} s"
            )


if __name__ == "__main__":
    main()
