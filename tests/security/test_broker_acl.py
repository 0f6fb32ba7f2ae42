"""Per-device credentials against a real Mosquitto running the shipped ACL file.

One broker for the module: anonymous access off, a password file made with
``mosquitto_passwd``, an ACL generated from ``deploy/mosquitto-acl.example``
(its village swapped for the test's site, nothing else changed, plus one
test-only ``probe`` user that may read and write everything, to feed and
watch the others), a plain listener for logins, a server-only TLS listener
for logins over TLS, and a mutual-TLS listener that requires a client
certificate and takes the device id from its CN. The two TLS listeners carry
the options of the shipped pole listeners (read from deploy/mosquitto.conf),
which make a pole's client id its login; the plain one stands for the
servers' loopback listener.

Every rule line of the example is tried (``test_every_acl_line_grants_what_it_says``),
and the refusals that matter are tried too: spoofing another device or site,
forging the watermark, sending commands, and the server roles writing readings.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

import pytest

from sidewalk.core.contract import WeatherReading, topic_for
from sidewalk.core.mqtt import (
    MqttClient,
    MqttConnectRefused,
    MqttError,
    MqttMessage,
    MqttSettings,
    TlsSettings,
)
from sidewalk.core.profile import load_profile
from sidewalk.edge.config import EdgeSecrets
from sidewalk.edge.device import Device, SimulatedClock
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from sidewalk.system import build_analytics, open_cases
from tests.edge_device.poles import START, Recorder, fast_dir, pole_settings
from tests.harness.mosquitto import MosquittoServer, free_port
from tests.ingest.pipeline import scenario_clock, slug
from tests.security.certs import Issued, TestCA

pytestmark = pytest.mark.services

REPO = Path(__file__).resolve().parents[2]
ACL_EXAMPLE = REPO / "deploy" / "mosquitto-acl.example"
EXAMPLE_SITE = "clyman"  # the example spells its village out
SITE = "elmwood"  # the test's village: proves the file is generated, not assumed
PASSWORDS = {
    "pole-a": "pw-a",
    "pole-b": "pw-b",
    "ingest": "pw-ingest",
    "analytics": "pw-analytics",
    "operator": "pw-operator",
    "probe": "pw-probe",
    "pole-r": "pw-r-old",  # rotated by test_a_rotated_password_takes_effect_on_reload
}
DEVICE = "pole-a"  # what %u becomes for pattern lines


@dataclass(frozen=True)
class Rule:
    user: str | None  # None: a pattern line (every login, %u = the login)
    access: str  # read, write or readwrite
    topic: str


def acl_rules(text: str) -> list[Rule]:
    """The rule lines of a Mosquitto ACL file (comments and blanks skipped)."""
    rules, user = [], None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):  # only whole-line comments: topics hold "#"
            continue
        words = line.split()
        if words[0] == "user":
            user = words[1]
        elif words[0] in {"topic", "pattern"}:
            access, topic = (words[1], words[2]) if len(words) == 3 else ("readwrite", words[1])
            rules.append(Rule(None if words[0] == "pattern" else user, access, topic))
        else:
            raise AssertionError(f"unexpected ACL line {raw!r}")
    return rules


def generate_acl(example: str, site: str) -> str:
    """The example for ``site``, plus the test's all-access ``probe`` user."""
    marker = f"sidewalk/v1/{EXAMPLE_SITE}/"
    assert marker in example
    generated = example.replace(marker, f"sidewalk/v1/{site}/")
    assert EXAMPLE_SITE not in "".join(r.topic for r in acl_rules(generated))
    return (
        generated + "\n# test only: feeds and watches the others\nuser probe\ntopic readwrite #\n"
    )


def concrete(rule: Rule) -> tuple[str, str]:
    """(login, a topic the rule covers): %u is the device, + one level, # two."""
    user = rule.user or DEVICE
    levels = ["x1" if w == "+" else "deep/er" if w == "#" else w for w in rule.topic.split("/")]
    return user, "/".join(levels).replace("%u", user)


MOSQUITTO_CONF = REPO / "deploy" / "mosquitto.conf"
# Per-installation lines of a shipped listener block, replaced by the test's own.
_SITE_LINES = ("listener", "certfile", "keyfile", "cafile")


def pole_listener_options(kind: str) -> list[str]:
    """The options of the shipped pole listener ``kind`` (its commented block in
    deploy/mosquitto.conf), without its address and certificate paths."""
    lines = iter(MOSQUITTO_CONF.read_text("utf-8").splitlines())
    for line in lines:
        if line.strip() == f"# pole listener ({kind}):":
            break
    else:
        raise AssertionError(f"no '# pole listener ({kind}):' block in {MOSQUITTO_CONF}")
    options = []
    for line in lines:
        if not line.startswith("# ") or not line[2:].strip():
            break
        option = line[2:].strip()
        if option.split()[0] not in _SITE_LINES:
            options.append(option)
    assert options, kind
    return options


@dataclass
class SecuredBroker:
    server: MosquittoServer
    tls_port: int  # mutual TLS: client certificate, CN = login
    password_tls_port: int  # server-only TLS: passwords
    ca: TestCA
    passwd: Path

    def login(self, user: str | None, password: str | None = None, **kw: object) -> MqttSettings:
        """Settings for the password listener."""
        return MqttSettings(
            host="127.0.0.1",
            port=self.server.port,
            client_id=slug(user or "anon"),
            username=user,
            password=PASSWORDS.get(user or "") if password is None else password,
            reconnect_max_s=1,
            connect_timeout_s=3.0,
            **kw,  # type: ignore[arg-type]  # test-only passthrough of MqttSettings fields
        )


@pytest.fixture(scope="module")
def secured() -> Iterator[SecuredBroker]:
    with tempfile.TemporaryDirectory(prefix="sidewalk-secured-") as tmp:
        work = Path(tmp)
        passwd = work / "passwd"
        for i, (user, password) in enumerate(PASSWORDS.items()):
            flags = ["-c"] if i == 0 else []
            subprocess.run(
                ["mosquitto_passwd", *flags, "-b", str(passwd), user, password], check=True
            )
        acl = work / "sidewalk.acl"
        acl.write_text(generate_acl(ACL_EXAMPLE.read_text("utf-8"), SITE))
        ca = TestCA(work)
        server_cert = ca.issue("broker", server=True)
        tls_port, password_tls_port = free_port(), free_port()
        tls_files = (
            f"cafile {ca.files.cert}\ncertfile {server_cert.cert}\nkeyfile {server_cert.key}\n"
        )
        # The main (password) listener stands for the servers' loopback listener;
        # the two TLS listeners are the shipped pole listeners' options.
        server = MosquittoServer(
            work,
            allow_anonymous=False,
            extra_config=(
                f"password_file {passwd}\n"
                f"acl_file {acl}\n"
                f"listener {tls_port} 127.0.0.1\n"
                + tls_files
                + "".join(f"{o}\n" for o in pole_listener_options("certificates"))
                + f"listener {password_tls_port} 127.0.0.1\n"
                + tls_files
                + "".join(f"{o}\n" for o in pole_listener_options("passwords"))
            ),
        )
        server.start()
        try:
            yield SecuredBroker(server, tls_port, password_tls_port, ca, passwd)
        finally:
            server.stop()


def _reading(device: str, seq: int) -> bytes:
    return WeatherReading(device=device, seq=seq, ts=1_764_460_800_000, air_temp_c=-3.0).to_json()


def test_a_device_cannot_publish_as_another(secured: SecuredBroker) -> None:
    watcher = Recorder(
        "127.0.0.1", secured.server.port, "sidewalk/v1/#", username="ingest", password="pw-ingest"
    )
    pole_a = MqttClient(secured.login("pole-a"))
    pole_a.connect()
    try:
        forged = topic_for(SITE, "pole-b", "weather")
        own = topic_for(SITE, "pole-a", "weather")
        watermark = topic_for(SITE, "pole-a", "stored")
        # Mosquitto 2.0 drops a denied QoS 1 publish, and to an MQTT 5 client it may
        # close the connection as it acknowledges it (paho then re-sends it after
        # reconnecting until an acknowledgement wins the race): whether the denied
        # ones are acknowledged is the broker's business; what arrives is the test.
        pole_a.publish_and_wait(forged, _reading("pole-b", 1), timeout_s=2)
        pole_a.publish_and_wait(watermark, b'{"forged": true}', timeout_s=2)
        assert pole_a.publish_and_wait(own, _reading("pole-a", 1), timeout_s=30)
        # Same client, same QoS: had the forged ones passed, they would arrive first.
        assert watcher.wait(lambda ms: any(m.topic == own for m in ms), timeout_s=10)
        assert [m.topic for m in watcher.messages] == [own]
    finally:
        pole_a.disconnect()
        watcher.close()


@pytest.mark.parametrize(("user", "password"), [("pole-a", "wrong"), (None, None), ("nobody", "x")])
def test_a_refused_login_raises(
    secured: SecuredBroker, user: str | None, password: str | None
) -> None:
    client = MqttClient(secured.login(user, password))
    with pytest.raises(MqttConnectRefused):
        client.connect()
    assert not client.is_connected


def test_a_device_with_a_wrong_password_fails_to_start(secured: SecuredBroker) -> None:
    with fast_dir() as tmp:
        cfg = pole_settings(
            "127.0.0.1", secured.server.port, tmp / "pole", site=SITE, device="pole-a"
        )
        device = Device(cfg, secrets=EdgeSecrets.from_env({"SIDEWALK_EDGE_MQTT_PASSWORD": "nope"}))
        with pytest.raises(MqttConnectRefused):
            device.start()


def _run_pole_through_ingest(
    secured: SecuredBroker, cfg_kw: dict[str, object], secrets: EdgeSecrets
) -> None:
    """Ten minutes of eight sensors from pole-a, stored by ingest, watermark back to the pole;
    analytics, with its own login, receives the same readings."""
    with fast_dir() as tmp:
        store = SqliteTimeSeriesStore(tmp / "ts.db")
        ingest = IngestConsumer(
            store, secured.login("ingest", clean_start=True), site=SITE, now_ms=scenario_clock()
        )
        ingest.start()
        profile = load_profile()
        cases = open_cases(f"sqlite:///{tmp / 'cases.db'}", profile)
        analytics = build_analytics(
            cases, profile, secured.login("analytics", clean_start=True), site=SITE,
            mode="stream", persist_jobs=False,
        )  # fmt: skip
        analytics.start()
        try:
            cfg = pole_settings(
                "127.0.0.1", secured.server.port, tmp / "pole", site=SITE, device="pole-a", **cfg_kw
            )
            device = Device(cfg, clock=SimulatedClock(START), secrets=secrets)
            device.start()
            try:
                device.run(until=START + timedelta(minutes=10))
                assert device.publisher is not None
                # The watermark comes back only if ingest may write it and the pole may read it.
                assert device.publisher.wait_stored(timeout_s=15)
            finally:
                device.close()
            # Every test's pole is "pole-a": a later one continues after the earlier one's
            # retained watermark, as a re-imaged pole would.
            seqs = store.seqs("pole-a")
            assert seqs == list(range(seqs[0], seqs[0] + 80))
            deadline = time.monotonic() + 10
            while analytics.processed < 80 and time.monotonic() < deadline:
                time.sleep(0.05)  # the runner's worker drains its queue on its own thread
            assert analytics.processed >= 80
        finally:
            analytics.stop()
            cases.close()
            ingest.stop()
            store.close()


def test_the_whole_protocol_passes_the_acl(secured: SecuredBroker) -> None:
    _run_pole_through_ingest(
        secured, {}, EdgeSecrets.from_env({"SIDEWALK_EDGE_MQTT_PASSWORD": "pw-a"})
    )


def test_tls_with_a_per_device_client_certificate(secured: SecuredBroker) -> None:
    client = secured.ca.issue("pole-a", server=False)
    mqtt = {
        "url": f"mqtts://127.0.0.1:{secured.tls_port}",
        "ca_file": str(secured.ca.files.cert),
        "cert_file": str(client.cert),
    }
    _run_pole_through_ingest(secured, {"mqtt": mqtt}, EdgeSecrets(tls_keyfile=client.key))


def test_tls_refuses_a_client_without_a_certificate(secured: SecuredBroker) -> None:
    settings = MqttSettings(
        host="127.0.0.1",
        port=secured.tls_port,
        client_id=slug("nocert"),
        tls=TlsSettings(ca_certs=str(secured.ca.files.cert)),
        connect_timeout_s=2.0,
    )
    with pytest.raises(MqttError):
        MqttClient(settings).connect()


def test_tls_refuses_a_broker_signed_by_another_ca(secured: SecuredBroker, tmp_path: Path) -> None:
    other = TestCA(tmp_path, "other-ca")
    client = secured.ca.issue("pole-b", server=False)
    settings = MqttSettings(
        host="127.0.0.1",
        port=secured.tls_port,
        client_id=slug("wrongca"),
        tls=TlsSettings(
            ca_certs=str(other.files.cert), certfile=str(client.cert), keyfile=str(client.key)
        ),
        connect_timeout_s=2.0,
    )
    with pytest.raises(MqttError):
        MqttClient(settings).connect()


# ---------------------------------------------------------------- every ACL line


class Peer:
    """A logged-in client that keeps what it receives."""

    def __init__(self, secured: SecuredBroker, user: str) -> None:
        self.user = user
        self.messages: list[tuple[str, bytes]] = []
        self._cond = threading.Condition()
        # Its own client id: a pole listener names a client by its username, and
        # a second "pole-a" session would take this one over (and it back again).
        settings = secured.login(user, clean_start=True)
        settings = replace(settings, client_id=f"peer-{settings.client_id}")
        self.client = MqttClient(settings, on_message=self._got)
        self.client.connect()

    def _got(self, msg: MqttMessage) -> None:
        with self._cond:
            self.messages.append((msg.topic, msg.payload))
            self._cond.notify_all()

    def subscribe(self, topic: str) -> bool:
        """False when the broker refuses the subscription outright."""
        try:
            self.client.subscribe(topic, 1)
        except MqttError:
            return False
        return True

    def got(self, payload: bytes, timeout_s: float) -> bool:
        with self._cond:
            return self._cond.wait_for(
                lambda: any(p == payload for _, p in self.messages), timeout_s
            )

    def close(self) -> None:
        self.client.disconnect()


@pytest.fixture(scope="module")
def peers(secured: SecuredBroker) -> Iterator[dict[str, Peer]]:
    made = {user: Peer(secured, user) for user in PASSWORDS if user != "pole-r"}
    # The probe watches everything; a write is judged by what reaches it.
    assert made["probe"].subscribe("sidewalk/v1/#")
    try:
        yield made
    finally:
        for peer in made.values():
            peer.close()


def _mark() -> bytes:
    return uuid.uuid4().hex.encode()


def can_write(peers: dict[str, Peer], user: str, topic: str) -> bool:
    """Whether ``user``'s publish to ``topic`` reaches a subscriber.

    Mosquitto drops a refused QoS 1 publish (acknowledging it, and to an MQTT 5
    client perhaps closing the connection too), so the answer is in delivery:
    the broker routes a message before it acknowledges it, so once a later
    sentinel from the probe arrives after the acknowledgement (or the wait for
    it), the probe message would have.
    """
    probe, sentinel = _mark(), _mark()
    peers[user].client.publish_and_wait(topic, probe, timeout_s=10)
    assert peers["probe"].client.publish_and_wait(f"sidewalk/v1/{SITE}/sentinel", sentinel)
    assert peers["probe"].got(sentinel, timeout_s=10)
    return peers["probe"].got(probe, timeout_s=0)


def can_read(peers: dict[str, Peer], user: str, topic: str, sentinel_topic: str) -> bool:
    """Whether ``user`` receives what the probe publishes on ``topic``.

    ``sentinel_topic`` is one ``user`` may read: the probe publishes there
    after ``topic``, and messages from one publisher to one subscriber keep
    their order, so once the sentinel is in, the probe message would be.
    """
    reader = peers[user]
    if not reader.subscribe(topic):
        return False
    assert reader.subscribe(sentinel_topic)
    probe, sentinel = _mark(), _mark()
    assert peers["probe"].client.publish_and_wait(topic, probe)
    assert peers["probe"].client.publish_and_wait(sentinel_topic, sentinel)
    assert reader.got(sentinel, timeout_s=10), f"{user} never got its sentinel"
    return reader.got(probe, timeout_s=0)


# A topic each login may read, for can_read's sentinel (itself proven by the line tests).
SENTINEL_READ = {
    "pole-a": f"sidewalk/v1/{SITE}/pole-a/stored",
    "pole-b": f"sidewalk/v1/{SITE}/pole-b/stored",
    "ingest": f"sidewalk/v1/{SITE}/sentinel",
    "analytics": f"sidewalk/v1/{SITE}/sentinel",
    "operator": f"sidewalk/v1/{SITE}/pole-a/status",
}
RULES = acl_rules(ACL_EXAMPLE.read_text("utf-8"))


def test_the_example_acl_parses_into_rules() -> None:
    users = {r.user for r in RULES}
    assert users == {None, "ingest", "analytics", "operator"}
    assert len([r for r in RULES if r.user is None]) >= 8


@pytest.mark.parametrize(
    "rule", [r for r in acl_rules(generate_acl(ACL_EXAMPLE.read_text("utf-8"), SITE))
             if r.user != "probe"],
    ids=lambda r: f"{r.user or 'pattern'} {r.access} {r.topic}",
)  # fmt: skip
def test_every_acl_line_grants_what_it_says(peers: dict[str, Peer], rule: Rule) -> None:
    user, topic = concrete(rule)
    if "write" in rule.access:
        assert can_write(peers, user, topic), (user, topic)
    if "read" in rule.access:
        assert can_read(peers, user, topic, SENTINEL_READ[user]), (user, topic)


def _t(device: str, stream: str, site: str = SITE) -> str:
    return f"sidewalk/v1/{site}/{device}/{stream}"


@pytest.mark.parametrize(
    ("user", "topic", "why"),
    [
        ("pole-a", _t("pole-b", "weather"), "another device's readings"),
        ("pole-a", _t("pole-b", "status"), "another device's availability"),
        ("pole-a", _t("pole-a", "weather", site="othertown"), "another site"),
        ("pole-a", _t("pole-a", "weather", site=EXAMPLE_SITE), "the example's site"),
        ("pole-a", _t("pole-a", "stored"), "its own watermark"),
        ("pole-a", _t("pole-b", "stored"), "another device's watermark"),
        ("pole-a", _t("pole-b", "cmd/reboot"), "another device's commands"),
        ("pole-a", _t("pole-a", "cmd/reboot"), "commands to itself"),
        ("pole-a", _t("pole-b", "cmd/x1/reply"), "another device's replies"),
        ("ingest", _t("pole-a", "weather"), "ingest forging a reading"),
        ("ingest", _t("pole-a", "cmd/reboot"), "ingest sending commands"),
        ("analytics", _t("pole-a", "weather"), "analytics forging a reading"),
        ("analytics", _t("pole-a", "stored"), "analytics forging a watermark"),
        ("operator", _t("pole-a", "weather"), "an operator forging a reading"),
        ("operator", _t("pole-a", "stored"), "an operator forging a watermark"),
    ],
)
def test_writes_outside_the_acl_are_dropped(
    peers: dict[str, Peer], user: str, topic: str, why: str
) -> None:
    assert not can_write(peers, user, topic), why


@pytest.mark.parametrize(
    ("user", "topic", "why"),
    [
        ("pole-a", _t("pole-b", "stored"), "another device's watermark"),
        ("pole-a", _t("pole-b", "cmd/reboot"), "another device's commands"),
        ("pole-a", _t("pole-b", "weather"), "another device's readings"),
        ("pole-a", _t("pole-a", "stored", site="othertown"), "its id at another site"),
        ("operator", _t("pole-a", "weather"), "readings are not the operator's"),
    ],
)
def test_reads_outside_the_acl_are_not_delivered(
    peers: dict[str, Peer], user: str, topic: str, why: str
) -> None:
    assert not can_read(peers, user, topic, SENTINEL_READ[user]), why


def test_a_device_subscribed_to_everything_gets_only_its_own(peers: dict[str, Peer]) -> None:
    pole = peers["pole-b"]
    pole.subscribe("sidewalk/v1/#")
    others = [_t("pole-a", "stored"), _t("pole-a", "cmd/reboot"), _t("pole-a", "weather")]
    marks = [_mark() for _ in others]
    for topic, mark in zip(others, marks, strict=True):
        assert peers["probe"].client.publish_and_wait(topic, mark)
    own = _mark()
    assert peers["probe"].client.publish_and_wait(_t("pole-b", "stored"), own)
    assert pole.got(own, timeout_s=10)
    assert not any(pole.got(mark, timeout_s=0) for mark in marks)


# ---------------------------------------------------------------- server-only TLS


def _password_tls(secured: SecuredBroker, user: str, password: str, ca: Path) -> MqttSettings:
    return MqttSettings(
        host="127.0.0.1",
        port=secured.password_tls_port,
        client_id=slug(f"tls-{user}"),
        username=user,
        password=password,
        tls=TlsSettings(ca_certs=str(ca)),
        connect_timeout_s=3.0,
        reconnect_max_s=1,
    )


def test_server_only_tls_with_a_password_and_the_acl(
    secured: SecuredBroker, peers: dict[str, Peer]
) -> None:
    own, forged = _mark(), _mark()
    # The denied publish on a connection of its own: Mosquitto 2.0 may close an
    # MQTT 5 connection on it, and paho would re-send it before anything after it.
    forger = MqttClient(_password_tls(secured, "pole-a", "pw-a", secured.ca.files.cert))
    forger.connect()
    forger.publish_and_wait(_t("pole-b", "weather"), forged, timeout_s=2)
    forger.disconnect()
    pole = MqttClient(_password_tls(secured, "pole-a", "pw-a", secured.ca.files.cert))
    pole.connect()
    try:
        assert pole.publish_and_wait(_t("pole-a", "weather"), own)
        assert peers["probe"].got(own, timeout_s=10)
        assert not peers["probe"].got(forged, timeout_s=0)
    finally:
        pole.disconnect()
    refused = MqttClient(_password_tls(secured, "pole-a", "wrong", secured.ca.files.cert))
    with pytest.raises(MqttConnectRefused):
        refused.connect()


def test_server_only_tls_refuses_a_broker_from_another_ca(
    secured: SecuredBroker, tmp_path: Path
) -> None:
    other = TestCA(tmp_path, "other-ca")
    with pytest.raises(MqttError):
        MqttClient(_password_tls(secured, "pole-a", "pw-a", other.files.cert)).connect()


def test_plain_mqtt_on_a_tls_listener_is_refused(secured: SecuredBroker) -> None:
    settings = MqttSettings(
        host="127.0.0.1", port=secured.password_tls_port, client_id=slug("plain"),
        username="pole-a", password="pw-a", connect_timeout_s=1.0, protocol="5",
    )  # fmt: skip
    with pytest.raises(MqttError):
        MqttClient(settings).connect()


def test_mutual_tls_refuses_a_client_certificate_from_another_ca(
    secured: SecuredBroker, tmp_path: Path
) -> None:
    other = TestCA(tmp_path, "rogue-ca")
    rogue = other.issue("pole-a", server=False)  # the right name, the wrong signer
    settings = MqttSettings(
        host="127.0.0.1",
        port=secured.tls_port,
        client_id=slug("rogue"),
        tls=TlsSettings(
            ca_certs=str(secured.ca.files.cert), certfile=str(rogue.cert), keyfile=str(rogue.key)
        ),
        connect_timeout_s=1.0,
        protocol="5",
    )
    with pytest.raises(MqttError):
        MqttClient(settings).connect()


def test_a_rotated_password_takes_effect_on_reload(secured: SecuredBroker) -> None:
    """What docs/security.md tells an operator: mosquitto_passwd, then SIGHUP (reload)."""
    subprocess.run(
        ["mosquitto_passwd", "-b", str(secured.passwd), "pole-r", "pw-r-new"], check=True
    )
    proc = secured.server._proc  # the harness keeps the process private; a reload needs its pid
    assert proc is not None
    os.kill(proc.pid, signal.SIGHUP)
    deadline = time.monotonic() + 10
    while True:
        old = MqttClient(secured.login("pole-r", "pw-r-old"))
        try:
            old.connect()
        except MqttConnectRefused:
            break
        old.disconnect()
        assert time.monotonic() < deadline, "the old password still works after a reload"
        time.sleep(0.1)  # the broker re-reads its files on its own loop
    new = MqttClient(secured.login("pole-r", "pw-r-new"))
    new.connect()
    try:
        assert new.publish_and_wait(_t("pole-r", "weather"), _mark())
    finally:
        new.disconnect()


# ---------------------------------------------------------------- client ids bound to logins


def _now_reading(device: str, seq: int) -> bytes:
    ts = time.time_ns() // 1_000_000 - 60_000 + seq  # now, so no time check holds it back
    return WeatherReading(device=device, seq=seq, ts=ts, air_temp_c=-3.0).to_json()


def _pole_login(
    secured: SecuredBroker, user: str, client_id: str, port: int, cert: Issued | None = None
) -> MqttSettings:
    """A pole's valid login on one of the pole listeners (``cert`` for the certificate
    one), asking for ``client_id``."""
    files: dict[str, str] = {}
    username: str | None = user
    password: str | None = PASSWORDS[user]
    if port == secured.tls_port:
        assert cert is not None
        files = {"certfile": str(cert.cert), "keyfile": str(cert.key)}
        username = password = None
    return MqttSettings(
        host="127.0.0.1",
        port=port,
        client_id=client_id,
        clean_start=True,
        username=username,
        password=password,
        tls=TlsSettings(ca_certs=str(secured.ca.files.cert), **files),
        connect_timeout_s=3.0,
        reconnect_max_s=1,
    )


class Attacker:
    """pole-a's valid logins, password and certificate, asking for others' client ids."""

    def __init__(self, secured: SecuredBroker, client_ids: list[str]) -> None:
        cert = secured.ca.issue("pole-a", server=False)
        ports = (secured.password_tls_port, secured.tls_port)
        self.logins = [
            _pole_login(secured, "pole-a", cid, port, cert) for cid in client_ids for port in ports
        ]
        self.attempts = 0

    def connect(self, times: int) -> int:
        """Connect ``times`` times with a clean session, taking turns through the client
        ids and listeners; how many connections the broker accepted."""
        accepted = 0
        for _ in range(times):
            attacker = MqttClient(self.logins[self.attempts % len(self.logins)])
            self.attempts += 1
            attacker.connect()  # a valid login: the broker takes it
            accepted += attacker.is_connected
            attacker.disconnect()
        return accepted


def test_a_pole_cannot_take_over_a_servers_or_another_poles_session(
    secured: SecuredBroker,
) -> None:
    """pole-a, with its own valid login on either pole listener, connects 20 times with
    the client ids of ingest, analytics and pole-b and a clean session while they are
    connected, and 10 times with ingest's while it is away: nobody is disconnected,
    ingest's queued session survives, and all 50 of pole-b's readings are stored."""
    ingest_id, analytics_id = "sidewalk-ingest", "sidewalk-analytics"
    with fast_dir() as tmp:
        store = SqliteTimeSeriesStore(tmp / "ts.db")
        ingest_mqtt = replace(secured.login("ingest"), client_id=ingest_id)
        analytics = MqttClient(replace(secured.login("analytics"), client_id=analytics_id))
        pole_b_login = _pole_login(secured, "pole-b", "pole-b", secured.password_tls_port)
        pole_b = MqttClient(replace(pole_b_login, clean_start=False))
        ingest = IngestConsumer(store, ingest_mqtt, site=SITE)
        ingest.start()
        analytics.connect()
        pole_b.connect()
        topic = topic_for(SITE, "pole-b", "weather")
        everyone = Attacker(secured, [ingest_id, analytics_id, "pole-b"])
        ingest_only = Attacker(secured, [ingest_id])
        try:
            # While ingest is connected: readings flow between the attempts.
            for seq in range(1, 26):
                assert pole_b.publish_and_wait(topic, _now_reading("pole-b", seq))
                if seq % 5 == 0:
                    assert everyone.connect(4) == 4
            # While ingest is away its persistent session queues pole-b's readings.
            ingest.stop()
            for seq in range(26, 51):
                assert pole_b.publish_and_wait(topic, _now_reading("pole-b", seq))
            assert ingest_only.connect(10) == 10
            ingest = IngestConsumer(store, ingest_mqtt, site=SITE)
            ingest.start()
            assert ingest.mqtt.session_present, "ingest's session was wiped"
            deadline = time.monotonic() + 10
            while store.seqs("pole-b") != list(range(1, 51)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert store.seqs("pole-b") == list(range(1, 51))
            for client in (ingest.mqtt, analytics, pole_b):
                assert client.session_takeovers == 0, client.settings.client_id
                assert client.problem is None, client.settings.client_id
        finally:
            ingest.stop()
            analytics.disconnect()
            pole_b.disconnect()
            store.close()
