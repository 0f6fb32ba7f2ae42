"""Ingest throughput beside the raw receive rate of paho and of the C client.

Starts its own Mosquitto, queues the same N QoS 1 readings to five persistent
sessions (mosquitto_sub; a bare subscriber through ``core.mqtt`` over MQTT 5
and over 3.1.1, paho acking each on receipt and storing nothing; the same with
ingest's manual ``ack_many`` per batch; ingest), then drains
each session in turn and times it. Ingest validates, commits to SQLite in
batches and acknowledges only after each commit. Finally checks the store
holds exactly N readings, and prints the writer's CPU cost per reading outside
MQTT: validation (fast path beside the reference path every rejection takes)
and ``write_batch`` with a device's seqs in order and split between two
workers (each batch opens gaps the other's next batch fills).

    uv run python -m bench.ingest_throughput [--n 50000] [--batch 500]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

from sidewalk.core.contract import (
    AnyReading,
    WeatherReading,
    _parse_payload_slow,
    parse_payload,
    parse_topic,
    topic_for,
)
from sidewalk.core.mqtt import MqttClient, MqttMessage, MqttSettings
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.ingest.validate import Accepted, classify
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer

SITE = "bench"
T0 = 1_764_460_800_000


def _settings(
    server: MosquittoServer, client_id: str, receive_maximum: int, protocol: str = "5"
) -> MqttSettings:
    return MqttSettings(
        host=server.host,
        port=server.port,
        client_id=client_id,
        receive_maximum=receive_maximum,
        protocol="3.1.1" if protocol == "3.1.1" else "5",
    )


def _make_session(
    server: MosquittoServer, client_id: str, topic: str, receive_max: int, protocol: str = "5"
) -> None:
    """Create a persistent session with a subscription, then leave it to queue."""
    client = MqttClient(_settings(server, client_id, receive_max, protocol), manual_ack=True)
    client.connect()
    client.subscribe(topic, 1)
    client.disconnect()


def _publish(server: MosquittoServer, n: int, devices: int) -> float:
    """Publish n weather readings at QoS 1 spread over devices; returns seconds."""
    done = threading.Event()
    acked = 0
    lock = threading.Lock()

    def on_publish(_mid: int) -> None:
        nonlocal acked
        with lock:
            acked += 1
            if acked == n:
                done.set()

    client = MqttClient(
        MqttSettings(host=server.host, port=server.port, client_id="bench-pub", clean_start=True),
        on_publish=on_publish,
    )
    client.connect()
    start = time.perf_counter()
    for i in range(n):
        device = f"pole-{i % devices}"
        reading = WeatherReading(
            device=device, seq=i // devices + 1, ts=T0 + i, air_temp_c=-5.0 + (i % 50) / 10
        )
        client.publish(topic_for(SITE, device, "weather"), reading.to_json(), 1)
    if not done.wait(300):
        raise RuntimeError(f"only {acked} of {n} publishes acknowledged")
    elapsed = time.perf_counter() - start
    client.disconnect()
    return elapsed


def _drain_mosquitto_sub(server: MosquittoServer, topic: str, n: int) -> float:
    exe = shutil.which("mosquitto_sub")
    if exe is None:
        raise RuntimeError("mosquitto_sub not installed (Debian package mosquitto-clients)")
    start = time.perf_counter()
    subprocess.run(
        [
            exe,
            "-h",
            server.host,
            "-p",
            str(server.port),
            "-i",
            "bench-c",
            "-c",
            "-q",
            "1",
            "-t",
            topic,
            "-C",
            str(n),
        ],
        stdout=subprocess.DEVNULL,
        check=True,
        timeout=600,
    )
    return time.perf_counter() - start


def _drain_paho(
    server: MosquittoServer, n: int, receive_max: int, protocol: str, batch: int = 0
) -> float:
    """Drain a session; ``batch`` > 0 acks through ``ack_many`` per batch, as ingest does."""
    done = threading.Event()
    count = 0
    held: list[MqttMessage] = []

    def on_message(msg: MqttMessage) -> None:
        nonlocal count
        count += 1
        if batch:
            held.append(msg)
            if len(held) >= batch or count == n:
                client.ack_many(held)
                held.clear()
        if count == n:
            done.set()

    cid = f"bench-paho-{protocol}" + ("-batch" if batch else "")
    client = MqttClient(
        _settings(server, cid, receive_max, protocol), on_message=on_message, manual_ack=batch > 0
    )
    start = time.perf_counter()
    client.connect()  # the session made earlier holds the subscription
    if not done.wait(600):
        raise RuntimeError(f"bare subscriber got {count} of {n}")
    elapsed = time.perf_counter() - start
    client.disconnect()
    return elapsed


def _drain_ingest(
    server: MosquittoServer, db: Path, n: int, batch: int, receive_max: int
) -> tuple[float, int]:
    store = SqliteTimeSeriesStore(db)
    consumer = IngestConsumer(
        store, _settings(server, "bench-ingest", receive_max), site=SITE, batch_size=batch
    )
    start = time.perf_counter()
    consumer.start()
    if not consumer.wait_for(lambda: consumer.stats.stored >= n, 600):
        raise RuntimeError(f"ingest stored {consumer.stats.stored} of {n}")
    elapsed = time.perf_counter() - start
    consumer.stop()
    rows = store.count()
    store.close()
    return elapsed, rows


def _cpu_us(f: Callable[[], object], n: int) -> float:
    """Process CPU µs per item of ``f()`` over n items (fsync waits are not CPU)."""
    start = time.process_time()
    f()
    return 1e6 * (time.process_time() - start) / n


def _cpu_costs(tmp: Path, n: int, devices: int, batch: int) -> list[tuple[str, float]]:
    """The writer thread's CPU per reading, without MQTT."""
    msgs = []
    for i in range(n):
        device = f"pole-{i % devices}"
        reading = WeatherReading(
            device=device, seq=i // devices + 1, ts=T0 + i, air_temp_c=-5.0 + (i % 50) / 10
        )
        msgs.append(
            MqttMessage(topic_for(SITE, device, "weather"), reading.to_json(), 1, False, i + 1)
        )
    verdicts = [classify(m, T0) for m in msgs]
    readings: list[AnyReading] = [v.reading for v in verdicts if isinstance(v, Accepted)]
    assert len(readings) == n
    # Alternate the two parsers so neither gets the warmer caches.
    slow = fast = 0.0
    for _ in range(2):
        slow += _cpu_us(
            lambda: [_parse_payload_slow(parse_topic(m.topic), m.payload) for m in msgs], n
        )
        fast += _cpu_us(lambda: [parse_payload(m.topic, m.payload) for m in msgs], n)
    whole = _cpu_us(lambda: [classify(m, T0) for m in msgs], n)

    def write(path: Path, batches: list[list[AnyReading]]) -> float:
        store = SqliteTimeSeriesStore(path)
        us = _cpu_us(lambda: [store.write_batch(b) for b in batches], n)
        if store.count() != n or store.gaps():
            raise SystemExit(f"{path.name}: store incomplete or gaps left")
        store.close()
        return us

    in_order = [readings[k : k + batch] for k in range(0, n, batch)]
    odd = [r for r in readings if r.seq % 2]
    even = [r for r in readings if not r.seq % 2]
    half = batch // 2
    split = [
        part
        for k in range(0, max(len(odd), len(even)), half)
        for part in (odd[k : k + half], even[k : k + half])
    ]
    return [
        ("parse: reference path (json.loads + model_validate)", slow / 2),
        ("parse: parse_payload (fast path)", fast / 2),
        ("classify (topic split, parse_payload, verdict)", whole),
        (f"write_batch/{batch}, seqs in order", write(tmp / "a.db", in_order)),
        (f"write_batch/{half}, seqs split between two workers", write(tmp / "b.db", split)),
    ]


def main() -> None:
    """Run the three consumers over the same N messages and print one table."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=50_000, help="messages (default 50000)")
    ap.add_argument("--batch", type=int, default=500, help="ingest commit batch (default 500)")
    ap.add_argument("--devices", type=int, default=10, help="devices publishing (default 10)")
    ap.add_argument(
        "--mosquitto-default-inflight",
        action="store_true",
        help="keep Mosquitto's default of 20 in-flight messages for 3.1.1 clients"
        " (mosquitto_sub, the 3.1.1 row) instead of deploy/mosquitto.conf's 1000",
    )
    args = ap.parse_args()
    n, batch = args.n, args.batch
    receive_max = min(65535, 2 * batch)
    topic = f"sidewalk/v1/{SITE}/+/weather"
    with tempfile.TemporaryDirectory(prefix="sidewalk-bench-") as tmp:
        # As deploy/mosquitto.conf: 3.1.1 clients may have 1000 messages in flight.
        inflight = "" if args.mosquitto_default_inflight else "max_inflight_messages 1000\n"
        server = MosquittoServer(Path(tmp) / "broker", autosave_s=60, extra_config=inflight)
        server.start()
        try:
            subprocess.run(
                [
                    shutil.which("mosquitto_sub") or "mosquitto_sub",
                    "-h",
                    server.host,
                    "-p",
                    str(server.port),
                    "-i",
                    "bench-c",
                    "-c",
                    "-q",
                    "1",
                    "-t",
                    topic,
                    "-E",
                ],
                check=True,
                timeout=30,
            )
            for proto in ("5", "3.1.1"):
                _make_session(server, f"bench-paho-{proto}", topic, receive_max, proto)
            _make_session(server, "bench-paho-5-batch", topic, receive_max, "5")
            _make_session(server, "bench-ingest", f"sidewalk/v1/{SITE}/+/+", receive_max)
            pub_s = _publish(server, n, args.devices)
            results = [
                ("mosquitto_sub (C client, QoS 1)", _drain_mosquitto_sub(server, topic, n)),
                (
                    "paho via core.mqtt, MQTT 5 (ack on receipt, no store)",
                    _drain_paho(server, n, receive_max, "5"),
                ),
                (
                    "paho via core.mqtt, MQTT 3.1.1 (ack on receipt, no store)",
                    _drain_paho(server, n, receive_max, "3.1.1"),
                ),
                (
                    f"core.mqtt as ingest: MQTT 5, ack_many/{batch}, no store",
                    _drain_paho(server, n, receive_max, "5", batch),
                ),
            ]
            ingest_s, rows = _drain_ingest(server, Path(tmp) / "ts.db", n, batch, receive_max)
            results.append(
                (f"ingest, MQTT 5 (validate, SQLite commit/{batch}, ack after)", ingest_s)
            )
        finally:
            server.stop()
        cpu = _cpu_costs(Path(tmp), min(n, 20_000), args.devices, batch)
    base = n / results[0][1]
    print(f"\nN = {n} QoS 1 readings queued to persistent sessions; published in {pub_s:.1f} s")
    window = 20 if args.mosquitto_default_inflight else 1000
    print(f"3.1.1 in-flight window {window}; MQTT 5 Receive Maximum {receive_max}")
    print(f"{'consumer':<58} {'seconds':>8} {'msg/s':>9} {'x C client':>10}")
    for name, seconds in results:
        rate = n / seconds
        print(f"{name:<58} {seconds:>8.2f} {rate:>9.0f} {rate / base:>10.2f}")
    verdict = "OK" if rows == n else "MISMATCH"
    print(f"store rows: {rows} (expected {n}) {verdict}")
    print(f"\nwriter CPU per reading, {min(n, 20_000)} weather readings, no MQTT")
    for name, us in cpu:
        print(f"{name:<58} {us:>8.1f} µs")
    if rows != n:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
