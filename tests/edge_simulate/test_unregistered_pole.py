"""A pole the registry does not hold is told, in one line, to be registered."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pytest

from sidewalk.edge.simulated import SimulatedPole
from sidewalk.ingest.known import KnownDevices
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, running_publisher, slug, storm


def test_an_unregistered_pole_is_told_to_register(
    broker: MosquittoServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site, device = slug("site"), slug("pole")
    known = KnownDevices(lambda: {"another-pole"})
    with (
        running_ingest(broker.host, broker.port, tmp_path / "ts.db", site, known_devices=known),
        running_publisher(
            broker.host, broker.port, tmp_path / "buf.db", site, device, resend_after_s=0.5
        ) as pub,
        caplog.at_level(logging.ERROR, logger="sidewalk.edge.publisher"),
    ):
        SimulatedPole(pub, storm(4)).run()
        time.sleep(1.5)  # several re-send windows pass: the line is not repeated
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "Poles page" not in caplog.text:
            time.sleep(0.1)
        assert not pub.wait_stored(timeout_s=0.1)
    lines = [
        r.getMessage()
        for r in caplog.records
        if r.name == "sidewalk.edge.publisher" and "registry pole add" in r.getMessage()
    ]
    assert len(lines) == 1, caplog.text  # said once, not at every re-send
    assert "\n" not in lines[0]
    assert f"sidewalk registry pole add {device}" in lines[0]
    assert "Poles page" in lines[0]
