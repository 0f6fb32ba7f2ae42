"""Per-device credentials against a real Mosquitto running the shipped ACL file.

One broker for the module: anonymous access off, a password file made with
``mosquitto_passwd``, ``deploy/mosquitto-acl.example`` as the ACL, a plain
listener for logins and a TLS listener that requires a client certificate and
takes the device id from its CN.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

import pytest

from sidewalk.core.contract import WeatherReading, topic_for
from sidewalk.core.mqtt import (
    MqttClient,
    MqttConnectRefused,
    MqttError,
    MqttSettings,
    TlsSettings,
)
from sidewalk.edge.config import EdgeSecrets
from sidewalk.edge.device import Device, SimulatedClock
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from tests.edge_device.poles import START, Recorder, fast_dir, pole_settings
from tests.harness.mosquitto import MosquittoServer, free_port
from tests.ingest.pipeline import slug
from tests.security.certs import TestCA

pytestmark = pytest.mark.services

REPO = Path(__file__).resolve().parents[2]
ACL = REPO / "deploy" / "mosquitto-acl.example"
SITE = "clyman"  # the example ACL spells the village out
PASSWORDS = {"pole-a": "pw-a", "pole-b": "pw-b", "ingest": "pw-ingest"}


@dataclass
class SecuredBroker:
    server: MosquittoServer
    tls_port: int
    ca: TestCA

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
        ca = TestCA(work)
        server_cert = ca.issue("broker", server=True)
        tls_port = free_port()
        server = MosquittoServer(
            work,
            allow_anonymous=False,
            extra_config=(
                f"password_file {passwd}\n"
                f"acl_file {ACL}\n"
                f"listener {tls_port} 127.0.0.1\n"
                f"cafile {ca.files.cert}\n"
                f"certfile {server_cert.cert}\n"
                f"keyfile {server_cert.key}\n"
                "require_certificate true\n"
                "use_identity_as_username true\n"
            ),
        )
        server.start()
        try:
            yield SecuredBroker(server, tls_port, ca)
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
        # Mosquitto acknowledges a denied QoS 1 publish and drops it.
        assert pole_a.publish_and_wait(forged, _reading("pole-b", 1))
        assert pole_a.publish_and_wait(watermark, b'{"forged": true}')
        assert pole_a.publish_and_wait(own, _reading("pole-a", 1))
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
    """Ten minutes of eight sensors from pole-a, stored by ingest, watermark back to the pole."""
    with fast_dir() as tmp:
        store = SqliteTimeSeriesStore(tmp / "ts.db")
        ingest = IngestConsumer(store, secured.login("ingest", clean_start=True), site=SITE)
        ingest.start()
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
        finally:
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
