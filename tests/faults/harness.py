"""Scripted faults against real services, shared by ``tests/faults`` and ``bench/fault_matrix``.

Each ``run_*`` function plays one fault ``repetitions`` times on services it is
given (or starts itself) and returns a ``FaultResult``: how many readings the
pole buffered (a reading is acknowledged once its disk buffer's ``append``
returned), how many of those the store lacks at the end (lost), how many
stored rows repeat another's content under a different seq (duplicates; the
store's ``(device, seq)`` key rules out the plain kind), and the recovery
time of each repetition (fault over → the store holds everything the pole had
buffered by then; each function's docstring says exactly). ``run_analytics_fault``
compares notices and clock records with an undisturbed replay instead.
``broker_kill_under_load`` and ``broker_offline_queue`` measure what the bare
broker (deploy settings, plain paho clients, no watermark) loses. See
``docs/faults.md``.
"""

from __future__ import annotations

import getpass
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from itertools import pairwise
from pathlib import Path

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.edge.publisher import Publisher
from sidewalk.edge.simulated import ScenarioReading
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.influx import InfluxForwarder
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.harness.mosquitto import MosquittoServer, free_port
from tests.ingest.pipeline import running_ingest, running_publisher, slug

REPO = Path(__file__).resolve().parents[2]
DEPLOY_CONF = REPO / "deploy" / "mosquitto.conf"
# The deploy file's queueing and persistence settings; listener, paths, user
# and logging are the only lines a test replaces.
QUEUEING_KEYS = frozenset(
    {
        "persistence",
        "autosave_interval",
        "autosave_on_changes",
        "persistent_client_expiration",
        "max_queued_messages",
        "max_queued_bytes",
        "max_inflight_messages",
        "max_inflight_bytes",
        "max_packet_size",
        "message_size_limit",
        "memory_limit",
        "queue_qos0_messages",
        "upgrade_outgoing_qos",
        "retain_available",
    }
)


@dataclass
class FaultResult:
    """One fault's figures over all its repetitions."""

    fault: str
    repetitions: int
    sent: int = 0
    lost: int = 0
    duplicates: int = 0
    notices_identical: bool | None = None
    recovery_s: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def ok(self) -> bool:
        """Nothing lost, nothing doubled, notices (where they apply) identical."""
        return (
            self.lost == 0
            and self.duplicates == 0
            and self.notices_identical is not False
            and len(self.recovery_s) == self.repetitions
        )


def _interrupt(proc: subprocess.Popen[bytes] | None) -> None:
    """SIGINT (a clean stop for VictoriaMetrics and PostgreSQL's fast shutdown), then -9 at 20 s."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_until(predicate: Callable[[], bool], timeout_s: float, poll_s: float = 0.02) -> float:
    """Seconds until ``predicate()`` held; raises ``TimeoutError`` after ``timeout_s``."""
    started = time.monotonic()
    while not predicate():
        if time.monotonic() - started > timeout_s:
            raise TimeoutError(f"not within {timeout_s:.0f} s")
        time.sleep(poll_s)  # polling another process's store: nothing to wait on
    return time.monotonic() - started


def readings(
    n: int, t0_ms: int, step_ms: int, frontage: str = "main-st-101"
) -> list[ScenarioReading]:
    """n readings alternating weather and snow, ``step_ms`` apart in event time (unique ts)."""
    out: list[ScenarioReading] = []
    for i in range(n):
        ts = t0_ms + i * step_ms
        if i % 2 == 0:
            out.append(ScenarioReading(ts, "weather", {"air_temp_c": -5.0 + i % 7}))
        else:
            values = {"frontage": frontage, "snow_cover_fraction": (i % 10) / 10,
                      "cleared_width_mm": float(i % 1500)}  # fmt: skip
            out.append(ScenarioReading(ts, "snow", values))
    return out


def recent_t0(n: int, step_ms: int) -> int:
    """An event-time start that ends an hour ago: VictoriaMetrics refuses future samples."""
    return (time.time_ns() // 1_000_000) - 3_600_000 - n * step_ms


def count_loss(store: SqliteTimeSeriesStore, device: str, buffered: int) -> tuple[int, int]:
    """(seqs 1..buffered missing from the store, stored rows repeating another's content)."""
    seqs = set(store.seqs(device))
    lost = len(set(range(1, buffered + 1)) - seqs)
    rows = store.readings(device=device)
    keys = {(r.stream, r.ts, getattr(r, "frontage", None)) for r in rows}
    return lost, len(rows) - len(keys)


def stored_through(store: SqliteTimeSeriesStore, device: str, seq: int) -> Callable[[], bool]:
    """A predicate: the store holds (or knows lost) every seq of ``device`` up to ``seq``."""
    return lambda: store.stored_up_to(device) >= seq


class PacedPole:
    """Buffers readings through a publisher at ``rate`` per second, on its own thread."""

    def __init__(self, publisher: Publisher, items: list[ScenarioReading], rate: float) -> None:
        self.publisher = publisher
        self.items = items
        self.rate = rate
        self.buffered = 0  # highest seq whose append returned
        self._thread = threading.Thread(target=self._run, name="paced-pole", daemon=True)

    def start(self) -> None:
        """Start buffering."""
        self._thread.start()

    def join(self, timeout_s: float) -> None:
        """Wait until every item is buffered."""
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            raise TimeoutError("the pole did not finish buffering")

    def wait_buffered(self, count: int, timeout_s: float = 60.0) -> None:
        """Block until at least ``count`` readings are buffered."""
        wait_until(lambda: self.buffered >= count, timeout_s, 0.005)

    def _run(self) -> None:
        started = time.monotonic()
        for i, item in enumerate(self.items):
            reading = self.publisher.record(item.stream, item.ts_ms, item.values)
            self.buffered = reading.seq
            ahead = (i + 1) / self.rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)  # pacing the simulated sensor


# ---------------------------------------------------------------- services


def deploy_queueing_lines() -> list[str]:
    """The active queueing/persistence lines of ``deploy/mosquitto.conf``."""
    lines = []
    for raw in DEPLOY_CONF.read_text().splitlines():
        line = raw.split("#", 1)[0].strip()
        if line and line.split()[0] in QUEUEING_KEYS:
            lines.append(line)
    return lines


def deploy_broker(workdir: Path) -> MosquittoServer:
    """A Mosquitto with the deploy file's queueing and persistence settings on loopback."""
    workdir.mkdir(parents=True, exist_ok=True)
    server = MosquittoServer(workdir)
    server.config.write_text(
        f"listener {server.port} {server.host}\n"
        f"user {getpass.getuser()}\n"
        "allow_anonymous true\n"
        f"persistence_location {workdir / 'data'}/\n"
        f"log_dest file {server.log}\n"
        "log_type error\nlog_type warning\nlog_type notice\n"
        + "\n".join(deploy_queueing_lines())
        + "\n"
    )
    return server


class VictoriaServer:
    """A VictoriaMetrics that can be stopped and started again on the same port and data.

    ``-dedup.minScrapeInterval=1ms`` keeps one sample per series and timestamp,
    as InfluxDB does when a point is written twice.
    """

    def __init__(self, workdir: Path, binary: str = "victoria-metrics") -> None:
        self.workdir = workdir
        self.binary = binary
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self._proc: subprocess.Popen[bytes] | None = None
        workdir.mkdir(parents=True, exist_ok=True)

    @property
    def running(self) -> bool:
        """True while the process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def start(self, timeout_s: float = 30.0) -> None:
        """Start and wait for ``/health``."""
        if self.running:
            return
        with (self.workdir / "victoria.log").open("ab") as log:
            self._proc = subprocess.Popen(
                [self.binary, f"-httpListenAddr=127.0.0.1:{self.port}",
                 f"-storageDataPath={self.workdir / 'data'}", "-retentionPeriod=100y",
                 "-loggerLevel=WARN", "-dedup.minScrapeInterval=1ms"],
                cwd=self.workdir, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        wait_until(self._healthy, timeout_s, 0.05)

    def _healthy(self) -> bool:
        if self._proc is not None and self._proc.poll() is not None:
            raise RuntimeError(f"victoria-metrics exited with {self._proc.returncode}")
        try:
            with urllib.request.urlopen(f"{self.url}/health", timeout=1) as resp:
                return bool(resp.status == 200)
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            return False

    def stop(self) -> None:
        """Graceful stop (SIGINT: VictoriaMetrics flushes what it accepted)."""
        proc, self._proc = self._proc, None
        _interrupt(proc)

    def seqs(self, device: str) -> list[int]:
        """Every ``seq`` sample of ``device`` (weather and snow), sorted, duplicates kept."""
        with urllib.request.urlopen(f"{self.url}/internal/force_flush", timeout=10):
            pass
        query = urllib.parse.urlencode({"match[]": f'{{__name__=~".*_seq",device="{device}"}}'})
        with urllib.request.urlopen(f"{self.url}/api/v1/export?{query}", timeout=30) as resp:
            lines = resp.read().decode().splitlines()
        values: list[int] = []
        for line in lines:
            if line.strip():
                values += [int(v) for v in json.loads(line)["values"]]
        return sorted(values)


# ---------------------------------------------------------------- faults


def run_broker_kills(workdir: Path, repetitions: int, n: int, rate: float = 400.0) -> FaultResult:
    """Mosquitto (deploy settings) killed with -9 and restarted mid-stream, ``repetitions`` times.

    Recovery: broker started again → the store holds every seq buffered by then.
    """
    result = FaultResult("Mosquitto kill -9 + restart mid-stream", repetitions)
    workdir.mkdir(parents=True, exist_ok=True)
    broker = deploy_broker(workdir / "mosquitto")
    broker.start()
    site, device = slug("site"), slug("pole")
    try:
        with (
            running_ingest(broker.host, broker.port, workdir / "ts.db", site) as ingest,
            running_publisher(
                broker.host, broker.port, workdir / "buf.db", site, device, resend_after_s=1.0
            ) as pub,
        ):
            store = ingest.store
            assert isinstance(store, SqliteTimeSeriesStore)
            pole = PacedPole(pub, readings(n, recent_t0(n, 60_000), 60_000), rate)
            pole.start()
            for k in range(repetitions):
                pole.wait_buffered((k + 1) * n // (repetitions + 1))
                broker.kill()
                time.sleep(0.3)  # down long enough for both clients to notice
                broker.start()
                # Everything buffered until the broker came back, stored.
                target = pole.buffered
                result.recovery_s.append(wait_until(stored_through(store, device, target), 120))
            pole.join(120)
            wait_until(lambda: store.stored_up_to(device) >= n, 120)
            result.sent = pole.buffered
            result.lost, result.duplicates = count_loss(store, device, pole.buffered)
    finally:
        broker.stop()
    return result


def ingest_config(path: Path, broker: MosquittoServer, site: str, influx_url: str | None) -> Path:
    """A ``sidewalk ingest`` configuration for the fault runs."""
    text = (
        f'site = "{site}"\ndata_dir = "{path.parent / "var"}"\n'
        f'[mqtt]\nurl = "mqtt://{broker.host}:{broker.port}"\nclient_id = "ingest-{site}"\n'
        f'[timeseries]\nsqlite_path = "{path.parent / "ts.db"}"\n'
    )
    if influx_url is not None:
        text += f'influx_url = "{influx_url}"\n'
    # The fault runs' poles are made up per run; known devices only is tested on
    # its own (tests/ingest/test_known_devices.py).
    text += "[ingest]\nknown_devices_only = false\n"
    path.write_text(text)
    return path


@contextmanager
def ingest_process(config: Path, log: Path) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    """``sidewalk ingest`` as a subprocess; yields a (re)start function; kills it at the end."""
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> subprocess.Popen[bytes]:
        seen = log.read_text(errors="replace").count("ingest consuming") if log.exists() else 0
        proc = subprocess.Popen(
            [sys.executable, "-m", "sidewalk.cli", "ingest", "-c", str(config)],
            stdout=log.open("ab"), stderr=subprocess.STDOUT, cwd=REPO,
            env={**os.environ, "COLUMNS": "200"},
        )  # fmt: skip
        procs.append(proc)

        def ready() -> bool:
            if proc.poll() is not None:
                raise RuntimeError(f"ingest exited:\n{log.read_text(errors='replace')}")
            return log.read_text(errors="replace").count("ingest consuming") > seen

        wait_until(ready, 60, 0.05)
        return proc

    try:
        yield start
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()


def run_ingest_kills(
    workdir: Path,
    broker: MosquittoServer,
    victoria: VictoriaServer | None,
    repetitions: int,
    *,
    n: int,
    rate: float = 400.0,
) -> FaultResult:
    """``sidewalk ingest`` (a real process, InfluxDB view on) killed with -9 mid-batch.

    Recovery: ingest restarted (start-up included) → the store holds every seq
    buffered by the restart. With ``victoria`` the InfluxDB view must end complete too.
    """
    result = FaultResult("ingest kill -9 mid-batch", repetitions)
    workdir.mkdir(parents=True, exist_ok=True)
    site, device = slug("site"), slug("pole")
    config = ingest_config(
        workdir / "ingest.toml", broker, site, victoria.url if victoria else None
    )
    with ingest_process(config, workdir / "ingest.log") as start_ingest:
        proc = start_ingest()
        store = SqliteTimeSeriesStore(workdir / "ts.db")
        try:
            with running_publisher(
                broker.host, broker.port, workdir / "buf.db", site, device, resend_after_s=1.0
            ) as pub:
                pole = PacedPole(pub, readings(n, recent_t0(n, 60_000), 60_000), rate)
                pole.start()
                for k in range(repetitions):
                    pole.wait_buffered((k + 1) * n // (repetitions + 1))
                    # Mid-batch: readings are flowing and ingest has committed some.
                    wait_until(lambda: store.count(device) > 0, 30)
                    proc.send_signal(signal.SIGKILL)
                    proc.wait(10)
                    restarted = time.monotonic()
                    target = pole.buffered
                    proc = start_ingest()
                    wait_until(stored_through(store, device, target), 120)
                    result.recovery_s.append(time.monotonic() - restarted)
                pole.join(120)
                wait_until(stored_through(store, device, n), 120)
                result.sent = pole.buffered
                result.lost, result.duplicates = count_loss(store, device, pole.buffered)
            if victoria is not None:
                vm = victoria
                wait_until(lambda: len(set(vm.seqs(device))) >= n, 60, 0.5)
                view = vm.seqs(device)
                view_lost = n - len(set(view) & set(range(1, n + 1)))
                result.lost += view_lost
                result.note = f"InfluxDB view: {len(set(view))} of {n} seqs"
        finally:
            store.close()
    return result


def run_influx_outage(
    workdir: Path,
    broker: MosquittoServer,
    victoria: VictoriaServer,
    repetitions: int,
    *,
    outage_s: int = 600,
    step_ms: int = 1000,
    rate: float = 400.0,
) -> FaultResult:
    """The time-series server down for ``outage_s`` of event time, ``repetitions`` times.

    The pole produces one reading per ``step_ms`` of event time (faster than
    wall time); ingest keeps storing into SQLite and the forwarder backs off.
    Recovery: server started again → the InfluxDB view holds every stored reading.
    """
    result = FaultResult(f"time-series server down {outage_s // 60} min", repetitions)
    workdir.mkdir(parents=True, exist_ok=True)
    site, device = slug("site"), slug("pole")
    per_outage = outage_s * 1000 // step_ms
    lead = 50
    n = repetitions * (per_outage + lead) + lead
    items = readings(n, recent_t0(n, step_ms), step_ms)
    victoria.start()
    # The forwarder has its own connection to the store, as `sidewalk ingest` wires it.
    view_store = SqliteTimeSeriesStore(workdir / "ts.db")
    forwarder = InfluxForwarder(
        view_store, victoria.url, token="", org="clyman", bucket="sidewalk",
        backoff_min_s=0.1, backoff_max_s=1.0, poll_s=0.2, timeout_ms=2000,
    )  # fmt: skip
    forwarder.start()
    with running_ingest(
        broker.host, broker.port, workdir / "ts.db", site, influx=forwarder
    ) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        try:
            with running_publisher(
                broker.host, broker.port, workdir / "buf.db", site, device
            ) as pub:
                pole = PacedPole(pub, items, rate)
                pole.start()
                for k in range(repetitions):
                    start_seq = lead + k * (per_outage + lead)
                    pole.wait_buffered(start_seq)
                    victoria.stop()
                    pole.wait_buffered(start_seq + per_outage)
                    wait_until(stored_through(store, device, start_seq + per_outage), 60)
                    if forwarder.backlog() == 0:
                        raise AssertionError("nothing accumulated while the server was down")
                    victoria.start()
                    result.recovery_s.append(wait_until(lambda: forwarder.backlog() == 0, 120))
                pole.join(120)
                wait_until(stored_through(store, device, n), 60)
                assert forwarder.flush(60), "the InfluxDB view did not catch up"
                result.sent = pole.buffered
                lost, result.duplicates = count_loss(store, device, pole.buffered)
                view = victoria.seqs(device)
                result.lost = lost + len(set(range(1, n + 1)) - set(view))
                result.duplicates += len(view) - len(set(view))
                result.note = f"InfluxDB view: {len(set(view))} of {n} seqs, {len(view)} samples"
        finally:
            forwarder.close()
            view_store.close()
    return result


def run_pole_offline(
    workdir: Path, broker: MosquittoServer, repetitions: int, hours: float = 24.0,
    step_ms: int = 60_000,
) -> FaultResult:  # fmt: skip
    """A pole cut off for ``hours`` of event time: its buffer holds, then drains.

    Recovery: the pole reconnects → the store holds everything it buffered.
    """
    result = FaultResult(f"pole offline {hours:g} h", repetitions)
    workdir.mkdir(parents=True, exist_ok=True)
    site, device = slug("site"), slug("pole")
    per = int(hours * 3_600_000 // step_ms)
    n = repetitions * per
    items = readings(n, recent_t0(n, step_ms), step_ms)
    with running_ingest(broker.host, broker.port, workdir / "ts.db", site) as ingest:
        store = ingest.store
        assert isinstance(store, SqliteTimeSeriesStore)
        for k in range(repetitions):
            # Offline: the publisher is not running; the sensors keep appending.
            buffer = ReadingBuffer(workdir / "buf.db", device)
            for item in items[k * per : (k + 1) * per]:
                buffer.append(item.stream, item.ts_ms, item.values)
            held = len(buffer)
            buffer.close()
            if held < per:
                raise AssertionError(f"the buffer held {held} of {per} readings")
            with running_publisher(
                broker.host, broker.port, workdir / "buf.db", site, device
            ) as pub:
                back = time.monotonic()
                if not pub.wait_stored((k + 1) * per, timeout_s=120):
                    raise TimeoutError("the pole's buffer did not drain")
                result.recovery_s.append(time.monotonic() - back)
                wait_until(lambda: len(pub.buffer) == 0, 30)
        result.sent = n
        result.lost, result.duplicates = count_loss(store, device, n)
    return result


# ---------------------------------------------------------------- the raw broker, no watermark


class RawConsumer:
    """A plain paho QoS 1 subscriber with a persistent session (MQTT 3.1.1, no buffer)."""

    def __init__(self, broker: MosquittoServer, client_id: str, topic: str) -> None:
        self.broker = broker
        self.topic = topic
        self.received: set[int] = set()
        self.deliveries = 0
        self._lock = threading.Lock()
        self._client = paho.Client(
            CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=False
        )
        self._client.max_inflight_messages_set(1000)
        self._client.on_message = self._on_message

    def _on_message(self, client: paho.Client, userdata: object, msg: paho.MQTTMessage) -> None:
        with self._lock:
            self.received.add(int(msg.payload))
            self.deliveries += 1

    def connect(self, subscribe: bool = True) -> None:
        """Connect (resuming the session) and, the first time, subscribe at QoS 1."""
        self._client.connect(self.broker.host, self.broker.port, keepalive=30)
        self._client.loop_start()
        if subscribe:
            done = threading.Event()
            self._client.on_subscribe = lambda *_: done.set()
            self._client.subscribe(self.topic, 1)
            if not done.wait(10):
                raise TimeoutError("no SUBACK")

    def disconnect(self) -> None:
        """Disconnect; the broker queues for the session meanwhile."""
        self._client.disconnect()
        self._client.loop_stop()

    def wait_quiet(self, expected: int, timeout_s: float, quiet_s: float = 3.0) -> None:
        """Until ``expected`` arrived, or nothing more came for ``quiet_s``."""
        deadline = time.monotonic() + timeout_s
        last, since = -1, time.monotonic()
        while time.monotonic() < deadline:
            with self._lock:
                count = len(self.received)
            if count >= expected:
                return
            if count != last:
                last, since = count, time.monotonic()
            elif time.monotonic() - since > quiet_s:
                return
            time.sleep(0.05)  # polling paho's thread's counter


_RAW_WINDOW = 20_000


def raw_publish(
    broker: MosquittoServer,
    topic: str,
    n: int,
    on_acked: Callable[[int], None] | None = None,
    *,
    rate: float | None = None,
) -> set[int]:
    """Publish payloads 1..n at QoS 1 from a plain paho client; return those the broker acked.

    A broker acknowledges one connection's QoS 1 messages in order, so k PUBACKs
    acknowledge payloads 1..k. ``on_acked(count)`` runs on paho's thread after
    each PUBACK (the kill demonstration kills the broker from it). At most
    ``_RAW_WINDOW`` messages wait for a PUBACK: paho numbers messages with 16-bit
    ids, and more than 65,535 outstanding at once overwrite each other inside
    paho (found here: a 100,000-message run "lost" everything after 67,000).
    ``rate`` paces publishing (messages per second).
    """
    acks = [0]
    gone = threading.Event()
    client = paho.Client(CallbackAPIVersion.VERSION2, client_id=f"raw-pub-{slug('x')}")
    client.max_inflight_messages_set(1000)
    client.max_queued_messages_set(0)

    def on_publish(c: paho.Client, u: object, mid: int, rc: object, p: object) -> None:
        acks[0] += 1  # only paho's thread writes it
        if on_acked is not None:
            on_acked(acks[0])

    client.on_publish = on_publish
    client.on_disconnect = lambda *_: gone.set()
    client.connect(broker.host, broker.port, keepalive=30)
    client.loop_start()
    try:
        started = time.monotonic()
        for i in range(1, n + 1):
            while i - acks[0] > _RAW_WINDOW and not gone.is_set():
                time.sleep(0.002)  # waiting on PUBACKs counted by paho's thread
            if gone.is_set():
                break
            client.publish(topic, str(i).encode(), 1)
            if rate is not None and (ahead := i / rate - (time.monotonic() - started)) > 0:
                time.sleep(ahead)
        deadline = time.monotonic() + 60
        while not gone.is_set() and acks[0] < n and time.monotonic() < deadline:
            time.sleep(0.02)  # waiting on PUBACKs counted by paho's thread
    finally:
        client.disconnect()
        client.loop_stop()
    return set(range(1, acks[0] + 1))


@dataclass
class BrokerLoss:
    """What the bare broker acknowledged and then failed to deliver."""

    case: str
    acked: int
    delivered: int

    @property
    def lost(self) -> int:
        """Acknowledged to the publisher, never delivered."""
        return self.acked - self.delivered


def broker_offline_queue(workdir: Path, n: int) -> BrokerLoss:
    """An offline persistent session on the deploy settings: does it get all n queued messages?"""
    broker = deploy_broker(workdir / "queue")
    broker.start()
    topic = f"bench/{slug('queue')}"
    try:
        consumer = RawConsumer(broker, slug("offline"), topic)
        consumer.connect()
        consumer.disconnect()
        acked = raw_publish(broker, topic, n)
        consumer.connect(subscribe=False)
        consumer.wait_quiet(len(acked), timeout_s=120)
        consumer.disconnect()
        delivered = len(acked & consumer.received)
        return BrokerLoss(f"offline session, {n} queued", len(acked), delivered)
    finally:
        broker.stop()


def broker_kill_under_load(workdir: Path, n: int, kill_at: int, rate: float = 5000.0) -> BrokerLoss:
    """Kill -9 the deploy-settings broker after ``kill_at`` PUBACKs; count acked-then-lost.

    Messages go out at ``rate`` per second to an offline persistent session, so
    everything acknowledged sits in the broker's queue; after the restart the
    consumer collects what survived the last autosave.
    """
    autosave_s = next(
        (int(line.split()[1]) for line in deploy_queueing_lines()
         if line.startswith("autosave_interval ")), 1800,
    )  # fmt: skip
    broker = deploy_broker(workdir / "kill")
    broker.start()
    topic = f"bench/{slug('kill')}"
    killed = threading.Event()

    def maybe_kill(count: int) -> None:
        if count >= kill_at and not killed.is_set():
            killed.set()
            broker.kill()

    try:
        consumer = RawConsumer(broker, slug("offline"), topic)
        consumer.connect()
        consumer.disconnect()
        # Let an autosave take the session itself, so what is lost is messages.
        time.sleep(autosave_s + 1)
        acked = raw_publish(broker, topic, n, on_acked=maybe_kill, rate=rate)
        broker.kill()
        broker.start()
        consumer.connect(subscribe=False)
        consumer.wait_quiet(len(acked), timeout_s=60)
        consumer.disconnect()
        return BrokerLoss(
            f"kill -9 after {kill_at} PUBACKs", len(acked), len(acked & consumer.received)
        )
    finally:
        broker.stop()


# ---------------------------------------------------------------- analytics and its database


class PostgresProcess:
    """A throwaway PostgreSQL cluster that can be restarted (fast shutdown, then start)."""

    def __init__(self) -> None:
        from tests.harness.postgres import PG_BIN, PG_USER

        self.bin = PG_BIN
        self.user = PG_USER
        # Its own directory under /tmp: the postgres user (when we are root)
        # cannot traverse a pytest tmp_path.
        self.root = Path(tempfile.mkdtemp(prefix="sidewalk-faults-pg-"))
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None
        self._run_as = PG_USER if os.geteuid() == 0 else None
        (self.root / "sock").mkdir()
        if self._run_as is not None:
            shutil.chown(self.root, self._run_as)
            shutil.chown(self.root / "sock", self._run_as)
        init = subprocess.run(
            [str(PG_BIN / "initdb"), "-D", str(self.root / "data"), "-U", PG_USER, "-A", "trust",
             "-E", "UTF8", "--locale=C", "--no-sync"],
            user=self._run_as, cwd=self.root, capture_output=True, text=True, check=False,
        )  # fmt: skip
        if init.returncode != 0:
            raise RuntimeError(f"initdb failed:\n{init.stderr}")

    def url(self, database: str) -> str:
        """SQLAlchemy URL of ``database``."""
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    def start(self) -> None:
        """Start and wait until it accepts connections."""
        import psycopg

        with (self.root / "postgres.log").open("ab") as log:
            self._proc = subprocess.Popen(
                [str(self.bin / "postgres"), "-D", str(self.root / "data"), "-h", "127.0.0.1",
                 "-p", str(self.port), "-k", str(self.root / "sock"), "-c", "fsync=off",
                 "-c", "max_connections=50"],
                user=self._run_as, cwd=self.root, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        dsn = f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres connect_timeout=2"

        def ready() -> bool:
            try:
                with psycopg.connect(dsn):
                    return True
            except psycopg.OperationalError:
                return False

        wait_until(ready, 30, 0.1)

    def create_database(self, name: str) -> str:
        """Create ``name``; return its URL."""
        import psycopg

        dsn = f"host=127.0.0.1 port={self.port} user={self.user} dbname=postgres"
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def remove(self) -> None:
        """Stop and delete the cluster."""
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)

    def stop(self) -> None:
        """Fast shutdown: clients' transactions roll back, connections drop."""
        proc, self._proc = self._proc, None
        _interrupt(proc)


def _terminate(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def start_runner(config: Path, log: Path, runner_id: str) -> subprocess.Popen[bytes]:
    """``sidewalk analytics --event-time`` as ``runner_id``; waits for its "running" line.

    A fresh id per run: a runner resuming another run's MQTT session would be
    handed that run's unacknowledged readings.
    """
    seen = log.read_text(errors="replace").count("analytics running") if log.exists() else 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "sidewalk.cli", "analytics", "--event-time", "-c", str(config)],
        stdout=log.open("ab"), stderr=subprocess.STDOUT, cwd=REPO,
        env={**os.environ, "SIDEWALK_ANALYTICS__CLIENT_ID": runner_id},
    )  # fmt: skip

    def running() -> bool:
        if proc.poll() is not None:
            raise RuntimeError(f"analytics exited early:\n{log.read_text(errors='replace')}")
        return log.read_text(errors="replace").count("analytics running") > seen

    wait_until(running, 60, 0.05)
    return proc


def snapshot_time(cases: CaseStore, runner_id: str) -> datetime | None:
    """The event time of the runner's last saved engine state."""
    saved = cases.clocks.load_engine_snapshot(runner_id)
    now = None if saved is None else json.loads(saved)["now"]
    return None if now is None else datetime.fromisoformat(now)


def _snapshot_reached(cases: CaseStore, runner_id: str, event_time: datetime) -> bool:
    try:
        now = snapshot_time(cases, runner_id)
    except Exception:  # the database may still be coming back
        return False
    return now is not None and now >= event_time


def _catch_up(cases: CaseStore, runner_id: str, event_time: datetime) -> float:
    """Seconds until the runner's saved engine has reached ``event_time``."""
    return wait_until(lambda: _snapshot_reached(cases, runner_id, event_time), 90, 0.05)


def _spaced_sample(rng: random.Random, population: range, k: int, *, min_gap: int) -> list[int]:
    """``k`` sorted values from ``population``, each at least ``min_gap`` after the last."""
    for _ in range(1000):
        picked = sorted(rng.sample(population, k))
        if all(b - a >= min_gap for a, b in pairwise(picked)):
            return picked
    raise ValueError(f"cannot place {k} faults {min_gap} apart in {population}")


def run_analytics_fault(  # noqa: PLR0915  (one scripted story, read top to bottom)
    workdir: Path,
    broker: MosquittoServer,
    repetitions: int,
    *,
    postgres: PostgresProcess | None = None,
    seed: int = 20261130,
) -> FaultResult:
    """The first storm through ``sidewalk analytics --event-time`` while it (or its database) fails.

    Without ``postgres``: the runner is killed with -9 at random points and
    started again (case records in SQLite). With ``postgres``: the case
    records live in PostgreSQL, which is restarted at random points under the
    running runner. Either way the notices and clock records must equal an
    undisturbed in-process replay. Recovery: fault over → the runner's
    snapshot has caught up with the last reading published before the fault.
    """

    from sidewalk.core.contract import topic_for
    from sidewalk.core.mqtt import MqttClient, MqttSettings
    from sidewalk.core.profile import load_profile
    from sidewalk.scenarios import expand, load_scenario, to_readings
    from sidewalk.system import notice_summary, open_cases, replay_in_process, seed_scenario
    from tests.e2e.test_analytics_restart import clock_rows

    fault = "PostgreSQL restarted under analytics" if postgres else "analytics kill -9 mid-storm"
    result = FaultResult(fault, repetitions)
    workdir.mkdir(parents=True, exist_ok=True)
    profile = load_profile()
    story = load_scenario("first-storm")
    items = to_readings(story, expand(story))
    reference = open_cases(f"sqlite:///{workdir / 'reference.sqlite3'}", profile)
    _, expected = replay_in_process(story, reference, profile)
    if postgres is not None:
        db = postgres.create_database(f"faults_{slug('a').replace('-', '_')}")
    else:
        db = f"sqlite:///{workdir / 'cases.sqlite3'}"
    cases = open_cases(db, profile)
    seed_scenario(cases, story)
    config = workdir / "sidewalk.toml"
    config.write_text(
        f'site = "{story.scenario.site}"\n[mqtt]\nurl = "mqtt://{broker.host}:{broker.port}"\n'
        f'[cases]\ndatabase_url = "{db}"\n'
    )
    runner_id = slug("analytics")
    runner = start_runner(config, workdir / "analytics.log", runner_id)
    publisher = MqttClient(
        MqttSettings(host=broker.host, port=broker.port, client_id=slug("fault-pub"))
    )
    publisher.connect()
    rng = random.Random(seed)
    # At least 40 readings apart: the database is down for 20 of them, and a
    # second stop while it is still down would merge two faults into one.
    faults = _spaced_sample(rng, range(50, len(items) - 50), repetitions, min_gap=40)
    try:
        restore_at = -1  # index after which the database comes back
        back: tuple[float, datetime] | None = None  # database back at, awaited event time
        for i, reading in enumerate(items):
            topic = topic_for(story.scenario.site, reading.device, reading.stream)
            publisher.publish_and_wait(topic, reading.to_json())
            if postgres is not None and i == restore_at:
                postgres.start()
                back = (time.monotonic(), reading.event_time)
            if back is not None and _snapshot_reached(cases, runner_id, back[1]):
                # Measured while the stream goes on.
                result.recovery_s.append(time.monotonic() - back[0])
                back = None
            if not faults or i != faults[0]:
                continue
            faults.pop(0)
            if back is not None:
                # Each fault is measured on its own: the last one must be over first.
                _catch_up(cases, runner_id, back[1])
                result.recovery_s.append(time.monotonic() - back[0])
                back = None
            time.sleep(rng.uniform(0.0, 0.3))  # land anywhere inside a batch
            if postgres is not None:
                # Down while readings keep coming: the runner's saves fail meanwhile.
                postgres.stop()
                restore_at = i + 20
            else:
                runner.send_signal(signal.SIGKILL)
                runner.wait(timeout=10)
                restarted = time.monotonic()
                runner = start_runner(config, workdir / "analytics.log", runner_id)
                _catch_up(cases, runner_id, reading.event_time)
                result.recovery_s.append(time.monotonic() - restarted)
        last = items[-1].event_time
        wait_until(lambda: snapshot_time(cases, runner_id) == last, 90, 0.1)
        if back is not None:
            result.recovery_s.append(time.monotonic() - back[0])
    finally:
        publisher.disconnect()
        _terminate(runner)
    got = cases.notices.list()
    result.sent = len(items)
    result.notices_identical = notice_summary(got) == notice_summary(expected) and clock_rows(
        cases
    ) == clock_rows(reference)
    result.duplicates = len(got) - len({n.number for n in got})
    result.note = f"{len(got)} notices (undisturbed: {len(expected)})"
    return result
