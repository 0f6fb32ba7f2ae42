"""Ingest's log says when a held or quarantined reading was stamped, in UTC and epoch ms.

On real Mosquitto: a day's buffer delivered late with seq 60 stamped a day ahead,
the last of what ingest first receives (held), then the rest (quarantined). One
warning each, naming the stamp as a person reads it (``2025-12-01 03:00:00 UTC``)
beside the epoch ms the pole sent.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from sidewalk.core.contract import TimePolicy
from tests.harness.mosquitto import MosquittoServer
from tests.ingest.pipeline import running_ingest, scenario_clock, slug
from tests.ingest.test_time_held import DAY, buffered_day, publish

pytestmark = pytest.mark.services


def _lines(caplog: pytest.LogCaptureFixture, start: str) -> list[str]:
    return [m for r in list(caplog.records) if (m := r.getMessage()).startswith(start)]


def test_held_and_quarantined_lines_give_the_stamp_in_utc_and_epoch_ms(
    broker: MosquittoServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    site, device = slug("site"), slug("pole")
    readings = buffered_day(device)
    stamp = readings[59].ts  # seq 60, taken 2025-11-30 03:00 UTC, stamped a day ahead
    words = f"stamped 2025-12-01 03:00:00 UTC (ts {stamp})"
    clock = scenario_clock(readings[-1].ts + DAY // 2)
    caplog.set_level(logging.WARNING, logger="sidewalk.ingest.consumer")
    with running_ingest(
        broker.host, broker.port, tmp_path / "ts.db", site, time_policy=TimePolicy(), now_ms=clock
    ) as ingest:
        publish(broker, site, readings[:60])
        # The count is taken before the line is written (on ingest's thread): wait for both.
        assert ingest.wait_for(lambda: ingest.stats.held == 1 and bool(_lines(caplog, "held ")), 10)
        assert _lines(caplog, "held ") == [
            f"held weather seq 60 of {device} for the pole's next reading: {words}"
        ]
        publish(broker, site, readings[60:])
        assert ingest.wait_for(
            lambda: ingest.stats.quarantined == 1 and bool(_lines(caplog, "quarantined ")), 20
        ), ingest.stats
    assert _lines(caplog, "quarantined ") == [
        f"quarantined weather seq 60 of {device}: implausible time, {words}"
    ]
