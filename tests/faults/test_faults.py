"""Real faults, each repeated: no acknowledged reading lost, none stored twice.

The full repetitions (Mosquitto killed ten times …) are ``bench/fault_matrix.py``;
these are the small in-suite versions. Analytics killed mid-storm is
``tests/e2e/test_analytics_restart.py`` (notices identical to an undisturbed run).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.faults.harness import (
    FaultResult,
    PostgresProcess,
    VictoriaServer,
    run_analytics_fault,
    run_broker_kills,
    run_influx_outage,
    run_ingest_kills,
    run_pole_offline,
)
from tests.harness.mosquitto import MosquittoServer

pytestmark = pytest.mark.services


def check(result: FaultResult, expected_sent: int) -> None:
    assert result.sent == expected_sent
    assert result.lost == 0, result
    assert result.duplicates == 0, result
    assert len(result.recovery_s) == result.repetitions, result
    assert result.ok


def test_mosquitto_killed_three_times_mid_stream(tmp_path: Path) -> None:
    check(run_broker_kills(tmp_path, repetitions=3, n=1500, rate=300.0), 1500)


def test_ingest_process_killed_mid_batch(
    tmp_path: Path, broker: MosquittoServer, stoppable_victoria: VictoriaServer
) -> None:
    result = run_ingest_kills(tmp_path, broker, stoppable_victoria, repetitions=1, n=800)
    check(result, 800)
    assert "800 of 800" in result.note


def test_time_series_server_down_ten_minutes(
    tmp_path: Path, broker: MosquittoServer, stoppable_victoria: VictoriaServer
) -> None:
    result = run_influx_outage(tmp_path, broker, stoppable_victoria, repetitions=1)
    check(result, 600 + 2 * 50)
    assert stoppable_victoria.running


def test_pole_offline_for_a_day(tmp_path: Path, broker: MosquittoServer) -> None:
    check(run_pole_offline(tmp_path, broker, repetitions=1, hours=24.0), 1440)


def test_postgresql_restarted_under_analytics_twice(
    tmp_path: Path, broker: MosquittoServer
) -> None:
    """The case database goes away mid-storm: the runner rolls back, retries, loses no notice."""
    postgres = PostgresProcess()
    postgres.start()
    try:
        result = run_analytics_fault(tmp_path, broker, repetitions=2, postgres=postgres)
    finally:
        postgres.stop()
        postgres.remove()
    assert result.notices_identical, result
    assert result.duplicates == 0, result
    assert "2 notices" in result.note, result
    assert len(result.recovery_s) == 2, result
