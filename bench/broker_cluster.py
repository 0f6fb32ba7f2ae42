"""A real broker cluster: three RabbitMQ nodes (MQTT plugin) on loopback, one killed with -9.

Where a village outgrows one machine it moves to an existing clustered broker,
not something of ours. This bench proves the data path on one that installs
here from Debian (``apt-get install rabbitmq-server``: RabbitMQ 3.10 with its
MQTT plugin, MQTT 3.1.1 only). It starts three nodes on loopback, each with its
own ports and data directory, joins them into one cluster, and makes MQTT
subscriptions durable *quorum* queues (``mqtt.durable_queue_type = quorum``):
replicated on all three nodes, so a queue outlives one node.

Poles (the real ``Publisher`` over a real ``ReadingBuffer``) are spread over
the three nodes, ingest (``IngestConsumer`` into SQLite) connects to the first.
While the poles record at ``--rate`` readings/s in all, a node is killed with
``kill -9`` a third of the way through and started again after ``--down-s``
seconds: by default ingest's own node (``--victim ingest``; its poles and
ingest reconnect to it when it is back, as the client reconnects to the same
address; a deployment puts a load balancer or several addresses in front),
or one with poles only (``--victim poles``). Meanwhile the poles on the other
nodes keep publishing into the two-node majority. At the end every pole's
watermark must cover all it recorded, and the bench counts:

- **lost**: readings recorded by a pole and not in the store (must be 0);
- **stored twice**: rows beyond one per ``(device, seq)`` (must be 0);
- **copies received twice**: copies ingest received and dropped as
  duplicates (re-delivery of unacknowledged messages, pole re-sends), which
  the store and analytics' gate absorb;
- the pole re-sends (``Publisher.resent``) and the recovery time.

    uv run python -m bench.broker_cluster [--poles 6] [--n 3000] [--rate 600] [--down-s 5]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from sidewalk.core.contract import TimePolicy
from sidewalk.core.mqtt import MqttSettings
from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.edge.publisher import Publisher
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

RABBIT_BIN = Path("/usr/lib/rabbitmq/bin")
SITE = "cluster"
T0 = 1_764_460_800_000


def free_port() -> int:
    """A TCP port free on loopback right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class RabbitNode:
    """One RabbitMQ node of the loopback cluster: its ports, directories and process."""

    def __init__(self, root: Path, index: int) -> None:
        self.name = f"sidewalk{index}@localhost"
        self.dir = root / f"node{index}"
        self.dir.mkdir(parents=True, exist_ok=True)
        self.amqp_port, self.mqtt_port = free_port(), free_port()
        self.dist_port = free_port()
        self.home = root  # the shared Erlang cookie lives in $HOME
        (self.dir / "rabbitmq.conf").write_text(
            f"listeners.tcp.default = 127.0.0.1:{self.amqp_port}\n"
            f"mqtt.listeners.tcp.default = 127.0.0.1:{self.mqtt_port}\n"
            "mqtt.allow_anonymous = true\n"
            "loopback_users = none\n"
            # MQTT 3.1.1 has no Receive Maximum: this is ingest's window (default 10).
            "mqtt.prefetch = 1000\n"
            # Subscriptions of persistent sessions as replicated quorum queues.
            "mqtt.durable_queue_type = quorum\n"
            "cluster_partition_handling = pause_minority\n"
            "log.console = false\n"
            "log.file.level = warning\n"
        )
        (self.dir / "enabled_plugins").write_text("[rabbitmq_mqtt].\n")
        self.proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        """The environment that makes ``rabbitmq-server``/``rabbitmqctl`` this node."""
        return {
            **os.environ,
            "HOME": str(self.home),
            "RABBITMQ_NODENAME": self.name,
            "RABBITMQ_NODE_IP_ADDRESS": "127.0.0.1",
            "RABBITMQ_NODE_PORT": str(self.amqp_port),
            "RABBITMQ_DIST_PORT": str(self.dist_port),
            "RABBITMQ_CONFIG_FILE": str(self.dir / "rabbitmq.conf"),
            "RABBITMQ_ENABLED_PLUGINS_FILE": str(self.dir / "enabled_plugins"),
            "RABBITMQ_MNESIA_BASE": str(self.dir / "mnesia"),
            "RABBITMQ_LOG_BASE": str(self.dir / "log"),
            "RABBITMQ_PID_FILE": str(self.dir / "pid"),
            "RABBITMQ_ADVANCED_CONFIG_FILE": str(self.dir / "advanced.config"),
            "RABBITMQ_CONF_ENV_FILE": str(self.dir / "rabbitmq-env.conf"),
        }

    def ctl(self, *args: str, timeout_s: float = 120) -> str:
        """Run ``rabbitmqctl -n <this node> …`` and return its output (raising on failure)."""
        out = subprocess.run(
            [str(RABBIT_BIN / "rabbitmqctl"), "-n", self.name, *args],
            env=self.env(), capture_output=True, text=True, timeout=timeout_s, check=False,
        )  # fmt: skip
        if out.returncode != 0:
            raise RuntimeError(f"rabbitmqctl {' '.join(args)} on {self.name}:\n{out.stderr}")
        return out.stdout

    def start(self) -> None:
        """Start the node and wait until it has booted (plugins included)."""
        log = (self.dir / "server.out").open("ab")
        self.proc = subprocess.Popen(
            [str(RABBIT_BIN / "rabbitmq-server")], env=self.env(), stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
        self.await_startup()

    def await_startup(self, timeout_s: float = 180) -> None:
        """Wait until the node has booted; ``await_startup`` fails until it is in epmd."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                self.ctl("await_startup", "--timeout", "60", timeout_s=90)
                return
            except RuntimeError:
                if self.proc is not None and self.proc.poll() is not None:
                    raise RuntimeError(f"{self.name} exited; see {self.dir / 'log'}") from None
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def os_pid(self) -> int:
        """The Erlang VM's own process id (beam.smp), the one ``kill -9`` must hit."""
        return int(self.ctl("eval", "list_to_integer(os:getpid()).").strip())

    def kill(self) -> None:
        """``kill -9`` the node's VM: no shutdown, no flush."""
        os.kill(self.os_pid(), signal.SIGKILL)
        if self.proc is not None:
            self.proc.wait(30)
            self.proc = None

    def stop(self) -> None:
        """Stop the node if it runs (the whole process group, whatever state it is in)."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(30)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc = None


class RabbitCluster:
    """Three nodes joined into one cluster."""

    def __init__(self, root: Path, size: int = 3) -> None:
        root.mkdir(parents=True, exist_ok=True)
        cookie = root / ".erlang.cookie"
        cookie.write_text("SIDEWALKBENCHCOOKIE")
        cookie.chmod(0o400)
        self.nodes = [RabbitNode(root, i + 1) for i in range(size)]
        # Erlang's port mapper, which the first node starts as a daemon: stopped
        # again at the end unless it was running before.
        self._epmd = shutil.which("epmd")
        self._epmd_was_running = (
            self._epmd is not None
            and subprocess.run(
                [self._epmd, "-names"], capture_output=True, check=False, timeout=10
            ).returncode
            == 0
        )

    def start(self) -> None:
        """Start every node and join the others to the first."""
        first, *rest = self.nodes
        first.start()
        for node in rest:
            node.start()
            node.ctl("stop_app")
            node.ctl("join_cluster", first.name)
            node.ctl("start_app")
            node.await_startup()

    def running(self, ask: RabbitNode | None = None) -> list[str]:
        """The nodes running, as ``ask`` (default: the first node) sees them."""
        out = (ask or self.nodes[0]).ctl("cluster_status", "--formatter", "json")
        return sorted(json.loads(out)["running_nodes"])

    def stop(self) -> None:
        """Stop every node (and the port mapper, if they started it)."""
        for node in self.nodes:
            node.stop()
        if self._epmd is not None and not self._epmd_was_running:
            subprocess.run([self._epmd, "-kill"], capture_output=True, check=False, timeout=10)


def mqtt(port: int, client_id: str) -> MqttSettings:
    """MQTT 3.1.1 to one node, persistent session, quick reconnects."""
    return MqttSettings(
        host="127.0.0.1", port=port, client_id=client_id, protocol="3.1.1",
        reconnect_min_s=1, reconnect_max_s=2, connect_timeout_s=10,
    )  # fmt: skip


class Pole(threading.Thread):
    """Records ``n`` weather readings at ``rate`` per second into its publisher."""

    def __init__(self, publisher: Publisher, n: int, rate: float) -> None:
        super().__init__(daemon=True)
        self.publisher, self.n, self.rate = publisher, n, rate
        self.recorded = 0

    def run(self) -> None:
        started = time.monotonic()
        for i in range(self.n):
            self.publisher.record("weather", T0 + i * 60_000, {"air_temp_c": -5.0 + i % 9})
            self.recorded = i + 1
            ahead = (i + 1) / self.rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)


def run(args: argparse.Namespace, root: Path) -> bool:
    """The whole measurement; True when nothing was lost and nothing stored twice."""
    cluster = RabbitCluster(root / "rabbit")
    nodes = cluster.nodes
    store = SqliteTimeSeriesStore(root / "ts.db")
    ingest = IngestConsumer(
        store, mqtt(nodes[0].mqtt_port, "ingest-cluster"), site=SITE,
        time_policy=TimePolicy(max_ahead_ms=None),
    )  # fmt: skip
    publishers: list[Publisher] = []
    poles: list[Pole] = []
    homes: list[int] = []
    # The poles' buffers on tmpfs when there is one: fsync'd appends on this
    # VM's disk would pace the poles, and the poles' disks are not measured.
    shm = Path("/dev/shm")
    buf_dir = Path(tempfile.mkdtemp(dir=shm if shm.is_dir() else root))
    try:
        t = time.monotonic()
        cluster.start()
        print(f"cluster up in {time.monotonic() - t:.1f} s: {', '.join(cluster.running())}")
        ingest.start()
        for p in range(args.poles):
            home = p % len(nodes)
            device = f"pole-{p}"
            buffer = ReadingBuffer(buf_dir / f"{device}.db", device)
            pub = Publisher(
                buffer, mqtt(nodes[home].mqtt_port, f"pole-{device}"), site=SITE,
                resend_after_s=args.resend_after_s, retry_connect_s=0.5,
            )  # fmt: skip
            pub.start()
            publishers.append(pub)
            homes.append(home)
            poles.append(Pole(pub, args.n, args.rate / args.poles))
        started = time.monotonic()
        for pole in poles:
            pole.start()
        victim = nodes[0 if args.victim == "ingest" else 1]
        while sum(p.recorded for p in poles) < args.poles * args.n // 3:
            time.sleep(0.05)
        killed_at = sum(p.recorded for p in poles)
        victim.kill()
        on_it = homes.count(nodes.index(victim))
        print(f"kill -9 {victim.name} after {killed_at} readings recorded ({on_it} poles"
              f"{' and ingest' if victim is nodes[0] else ''} on it)")  # fmt: skip
        time.sleep(args.down_s)
        live = next(node for node in nodes if node is not victim)
        print(f"running while it was down: {', '.join(cluster.running(live))}")
        t = time.monotonic()
        victim.start()
        print(f"{victim.name} restarted in {time.monotonic() - t:.1f} s")
        for pole in poles:
            pole.join()
        recorded_at = time.monotonic()
        ok_all = all(pub.wait_stored(args.n, timeout_s=args.timeout_s) for pub in publishers)
        done = time.monotonic()
        return report(args, store, ingest, publishers, ok_all, done - started,
                      done - recorded_at)  # fmt: skip
    finally:
        for pub in publishers:
            pub.stop(5)
            pub.buffer.close()
        ingest.stop()
        store.close()
        cluster.stop()
        shutil.rmtree(buf_dir, ignore_errors=True)


def report(  # noqa: PLR0917 (one line of figures)
    args: argparse.Namespace,
    store: SqliteTimeSeriesStore,
    ingest: IngestConsumer,
    publishers: Sequence[Publisher],
    covered: bool,
    total_s: float,
    tail_s: float,
) -> bool:
    """Print the counts; True when nothing was lost and nothing stored twice."""
    lost = 0
    rows = store.count()
    distinct = 0
    for p in range(args.poles):
        seqs = store.seqs(f"pole-{p}")
        distinct += len(set(seqs))
        lost += len(set(range(1, args.n + 1)) - set(seqs))
    n = args.poles * args.n
    twice = rows - distinct
    s = ingest.stats
    print(
        f"readings recorded: {n} ({args.poles} poles x {args.n}) in {total_s:.1f} s;"
        f" every watermark covered: {covered} ({tail_s:.1f} s after the last reading)"
    )
    print(f"lost: {lost}   stored twice: {twice}   rows: {rows}")
    print(f"reading copies ingest received: {s.stored + s.duplicates}, dropped as duplicates:"
          f" {s.duplicates} ({s.duplicates / n:.2%}); pole re-sends:"
          f" {sum(p.resent for p in publishers)}; dead letters: {s.dead_letters}")  # fmt: skip
    ok = covered and lost == 0 and twice == 0
    print("nothing lost, nothing stored twice:", "OK" if ok else "FAILED")
    return ok


def main() -> None:
    """Parse arguments, check RabbitMQ is installed, run."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--poles", type=int, default=6)
    ap.add_argument("--n", type=int, default=3000, help="readings per pole")
    ap.add_argument("--rate", type=float, default=600, help="readings/s, all poles together")
    ap.add_argument("--down-s", type=float, default=5.0, help="how long the node stays down")
    ap.add_argument("--resend-after-s", type=float, default=2.0, help="the poles' ack window")
    ap.add_argument("--timeout-s", type=float, default=120.0)
    ap.add_argument(
        "--victim", choices=("ingest", "poles"), default="ingest",
        help="kill ingest's node (default) or a node with poles only",
    )  # fmt: skip
    ap.add_argument("--keep", action="store_true", help="keep the nodes' directories")
    args = ap.parse_args()
    if not (RABBIT_BIN / "rabbitmq-server").exists():
        raise SystemExit("RabbitMQ not installed: apt-get install -y rabbitmq-server")
    root = Path(tempfile.mkdtemp(prefix="sidewalk-cluster-"))
    try:
        ok = run(args, root)
    finally:
        if args.keep:
            print(f"kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
    if not ok:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
