"""Structured logs: one JSON object per line with the extra fields; secrets never written."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from sidewalk.core.logs import REDACTED, configure_logging
from sidewalk.core.mqtt import MqttClient
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, slug
from tests.ingest.pipeline import settings as mqtt_settings


@pytest.fixture
def restore_root() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)


def lines(stream: io.StringIO) -> list[str]:
    return stream.getvalue().splitlines()


@pytest.mark.usefixtures("restore_root")
def test_json_lines_carry_the_extra_fields() -> None:
    out = io.StringIO()
    configure_logging("json", logging.INFO, stream=out)
    log = logging.getLogger("sidewalk.ingest.consumer")
    before = datetime.now(UTC)
    log.warning(
        "dead letter %s", "malformed_json",
        extra={"device": "pole-main-01", "seq": 42, "frontage": "main-st-101",
               "reason": "malformed_json", "path": Path("/var/x")},
    )  # fmt: skip
    log.debug("below the level")
    log.info("multi\nline message")
    first, second = (json.loads(line) for line in lines(out))  # exactly two lines
    assert first["level"] == "WARNING"
    assert first["logger"] == "sidewalk.ingest.consumer"
    assert first["message"] == "dead letter malformed_json"
    assert (first["device"], first["seq"], first["frontage"], first["reason"]) == (
        "pole-main-01", 42, "main-st-101", "malformed_json",
    )  # fmt: skip
    assert first["path"] == "/var/x"
    ts = datetime.fromisoformat(first["ts"])
    assert ts.utcoffset() == timedelta(0)
    assert abs((ts - before).total_seconds()) < 5
    assert second["message"] == "multi\nline message"


@pytest.mark.usefixtures("restore_root")
def test_exceptions_stay_on_one_line() -> None:
    out = io.StringIO()
    configure_logging("json", stream=out)
    try:
        raise RuntimeError("disk I/O error")
    except RuntimeError:
        logging.getLogger("sidewalk.test").exception("store write failed", extra={"batch": 3})
    (line,) = lines(out)
    entry = json.loads(line)
    assert entry["batch"] == 3
    assert "RuntimeError: disk I/O error" in entry["exc"]


@pytest.mark.usefixtures("restore_root")
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_secret_fields_are_redacted(fmt: str) -> None:
    out = io.StringIO()
    configure_logging("json" if fmt == "json" else "text", stream=out)
    logging.getLogger("sidewalk.test").warning(
        "connecting",
        extra={"mqtt_password": "hunter2", "Authorization": "Bearer abc", "influx_token": "t0k",
               "device": "pole-1"},
    )  # fmt: skip
    text = out.getvalue()
    for secret in ("hunter2", "Bearer abc", "t0k"):
        assert secret not in text
    assert "pole-1" in text
    if fmt == "json":
        entry = json.loads(text)
        assert entry["mqtt_password"] == entry["influx_token"] == REDACTED
    else:
        assert text.startswith("WARNING sidewalk.test: connecting ")
        assert "device=pole-1" in text


@pytest.mark.usefixtures("restore_root")
def test_extra_fields_cannot_overwrite_the_envelope() -> None:
    out = io.StringIO()
    configure_logging("json", stream=out)
    logging.getLogger("sidewalk.test").info("hello", extra={"level": "FAKE", "ts": "never"})
    entry = json.loads(out.getvalue())
    assert entry["level"] == "INFO"
    assert entry["ts"] != "never"


@pytest.mark.services
@pytest.mark.usefixtures("restore_root")
def test_ingest_logs_a_dead_letter_with_its_reason_and_device_as_fields(
    broker: MosquittoServer, tmp_path: Path
) -> None:
    stream = io.StringIO()
    configure_logging("json", logging.WARNING, stream)
    site = slug("logs")
    raw = MqttClient(mqtt_settings(broker.host, broker.port, slug("raw"), clean_start=True))
    with running_ingest(broker.host, broker.port, tmp_path / "ts.db", site) as ingest:
        raw.connect()
        try:
            raw.publish(f"sidewalk/v1/{site}/pole-9/weather", b"{not json", 1)
            assert ingest.wait_for(lambda: ingest.stats.dead_letters == 1, 10), ingest.stats
        finally:
            raw.disconnect()
    records = [json.loads(line) for line in lines(stream)]
    dead = [r for r in records if r["message"].startswith("dead letter")]
    assert len(dead) == 1, records
    assert dead[0]["reason"] == "malformed_json"
    assert dead[0]["device"] == "pole-9"
    assert dead[0]["topic"] == f"sidewalk/v1/{site}/pole-9/weather"
