"""How fast a pole drains a day's backlog, and what publishing costs it in CPU.

Starts its own Mosquitto and, in a child process on another core, an ingest
consumer into SQLite. The pole's disk buffer holds a day of eight sensors at
one sample a minute (11,520 readings, made by the device's own simulated
sensors and mapping). Then, in the same run:

1. **Drain**: the ``Publisher`` starts and sends the backlog; the clock stops
   when the server's retained watermark covers the last seq (end to end:
   broker, ingest's validation and commit, watermark back to the pole).
2. **Raw**: the same payloads through ``mosquitto_pub -q 1 -l`` to a
   ``mosquitto_sub -q 1 -C N`` (the C clients; broker only, no store).
3. **CPU**: the pole's process CPU (``time.process_time``, this process is
   pinned to one core) per reading while it drains, beside the cost of only
   ``json.dumps`` of the same readings' fields, the floor any publisher pays.

    uv run python -m bench.edge_drain [--hours 24] [--sensors 8]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import subprocess
import tempfile
import threading
import time
from datetime import UTC, datetime
from multiprocessing.synchronize import Event as MpEvent
from pathlib import Path

from sidewalk.core.mqtt import MqttSettings
from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.edge.config import SimulatedSensor
from sidewalk.edge.device import SimulatedClock, SimulatedSource, weather_from_sample
from sidewalk.edge.publisher import Publisher
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer

SITE, DEVICE = "bench", "pole-bench"
QUANTITIES = [
    ("air_temp_c", None),
    ("relative_humidity_pct", None),
    ("surface_temp_c", None),
    ("snow_depth_mm", None),
    ("precip_mm", None),
    ("ground_temp_c", 50),
    ("ground_temp_c", 300),
    ("ground_temp_c", 1200),
]


def _ingest_main(host: str, port: int, db: str, ready: MpEvent, stop: MpEvent) -> None:
    """The server side, in its own process and on its own core."""
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) > 1:
        os.sched_setaffinity(0, {1})
    store = SqliteTimeSeriesStore(db)
    mqtt = MqttSettings(host=host, port=port, client_id="bench-ingest")
    consumer = IngestConsumer(store, mqtt, site=SITE)
    consumer.start()
    ready.set()
    stop.wait()
    consumer.stop()
    store.close()


def _fill(buffer: ReadingBuffer, hours: int, sensors: int) -> list[dict[str, object]]:
    """A day of samples through the device's simulated sensors and mapping."""
    clock = SimulatedClock(datetime(2025, 11, 30, tzinfo=UTC))
    sources = []
    for i in range(sensors):
        quantity, depth = QUANTITIES[i % len(QUANTITIES)]
        cfg = SimulatedSensor(
            id=f"s{i}",
            kind="simulated",
            quantity=quantity,
            probe_depth_mm=depth,
            base=1.0,
        )
        sources.append(SimulatedSource(cfg.id, cfg, clock.now))
    fields: list[dict[str, object]] = []
    for _ in range(hours * 60):
        for src in sources:
            for w in weather_from_sample(src.read(None))[0]:
                buffer.append("weather", w.ts_ms, w.values)
                fields.append({"device": DEVICE, "ts": w.ts_ms, **w.values})
        clock.wait(threading.Event(), 60)
    return fields


def _raw_c_clients(server: MosquittoServer, payloads: list[bytes]) -> float:
    """Seconds for mosquitto_pub -l to hand ``payloads`` to a waiting mosquitto_sub."""
    pub, sub = shutil.which("mosquitto_pub"), shutil.which("mosquitto_sub")
    if pub is None or sub is None:
        raise RuntimeError("mosquitto-clients is not installed")
    topic = "bench/raw/weather"  # outside ingest's subscription: the broker alone
    base = ["-h", server.host, "-p", str(server.port), "-q", "1", "-t", topic]
    receiver = subprocess.Popen(
        [sub, *base, "-C", str(len(payloads)), "-i", "bench-raw-sub"], stdout=subprocess.DEVNULL
    )
    time.sleep(0.5)  # mosquitto_sub gives no signal when subscribed; nothing to wait on
    start = time.perf_counter()
    subprocess.run(
        [pub, *base, "-l", "-i", "bench-raw-pub"],
        input=b"\n".join(payloads) + b"\n",
        check=True,
        timeout=120,
    )
    receiver.wait(120)
    return time.perf_counter() - start


def _report(n: int, hours: int, sensors: int, *seconds: float) -> None:
    drain_s, raw_s, cpu_s, floor_s = seconds
    print(f"backlog: {n:,} readings ({sensors} sensors x {hours} h at 1/min)")
    print(f"timer from publisher start to watermark covering seq {n:,}; {os.cpu_count()} cores")
    print()
    print("| path | seconds | readings/s |")
    print("|---|---:|---:|")
    drain = "pole drain: Publisher → Mosquitto → ingest (SQLite) → watermark"
    raw = "raw: mosquitto_pub -q 1 -l → mosquitto_sub -q 1 (no store)"
    print(f"| {drain} | {drain_s:.2f} | {n / drain_s:,.0f} |")
    print(f"| {raw} | {raw_s:.2f} | {n / raw_s:,.0f} |")
    print()
    print("| pole CPU, one core | µs per reading |")
    print("|---|---:|")
    print(f"| publisher process while draining (process_time) | {cpu_s / n * 1e6:.1f} |")
    print(f"| floor: json.dumps of the same readings' fields | {floor_s / n * 1e6:.1f} |")


def main() -> None:
    """Run the three measurements and print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--sensors", type=int, default=8)
    args = ap.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {0})
    ctx = mp.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="sidewalk-drain-") as tmp:
        work = Path(tmp)
        server = MosquittoServer(work / "broker")
        server.start()
        ready, stop = ctx.Event(), ctx.Event()
        ingest = ctx.Process(
            target=_ingest_main, args=(server.host, server.port, str(work / "ts.db"), ready, stop)
        )
        ingest.start()
        try:
            if not ready.wait(30):
                raise RuntimeError("ingest did not start")
            # Filling a day through fsync'd appends takes ~45 s on this VM's disk and is
            # not what is measured; on tmpfs when there is one.
            shm = Path("/dev/shm")
            buf_dir = Path(tempfile.mkdtemp(dir=shm)) if shm.is_dir() else work
            buffer = ReadingBuffer(buf_dir / "buffer.sqlite3", DEVICE)
            fields = _fill(buffer, args.hours, args.sensors)
            n = len(fields)
            payloads = [r.payload for r in buffer.after(0, n)]

            publisher = Publisher(
                buffer,
                MqttSettings(host=server.host, port=server.port, client_id=DEVICE),
                site=SITE,
            )
            cpu0, wall0 = time.process_time(), time.perf_counter()
            publisher.start()
            if not publisher.wait_stored(n, timeout_s=600):
                raise RuntimeError("the watermark never covered the backlog")
            drain_s, cpu_s = time.perf_counter() - wall0, time.process_time() - cpu0
            publisher.stop()
            buffer.close()
            if buf_dir != work:
                shutil.rmtree(buf_dir)

            raw_s = _raw_c_clients(server, payloads)

            t = time.process_time()
            for f in fields:
                json.dumps(f).encode()
            floor_s = time.process_time() - t
        finally:
            stop.set()
            ingest.join(30)
            server.stop()

    _report(n, args.hours, args.sensors, drain_s, raw_s, cpu_s, floor_s)


if __name__ == "__main__":
    main()
