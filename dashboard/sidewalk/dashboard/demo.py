"""A replayed storm for the dashboard: what ``sidewalk demo --serve`` and the tests open.

The scenario's readings go into a real SQLite time-series store and, in event
time, through the analytics runner's own ``handle`` (engine → recorder →
notice issuer), so the case records hold exactly what the live path would.
The runner is never connected to a broker here: ``ActionTicker`` calls its
``tick`` every ``interval_s`` so that actions people record on the dashboard
are applied the way the live runner applies them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.contract import WeatherReading
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import Profile
from sidewalk.scenarios import Scenario, expand, to_readings
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore


@dataclass
class ReplayedStorm:
    """The stores and runner after a scenario's replay; ``end`` is its last event time."""

    cases: CaseStore
    timeseries: SqliteTimeSeriesStore
    runner: AnalyticsRunner
    end: datetime

    def close(self) -> None:
        self.timeseries.close()
        self.cases.close()


def replay_storm(scenario: Scenario, workdir: Path, profile: Profile) -> ReplayedStorm:
    """Replay ``scenario`` into fresh SQLite stores in ``workdir``."""
    from sidewalk.system import build_analytics, open_cases, seed_scenario

    workdir.mkdir(parents=True, exist_ok=True)
    cases = open_cases(f"sqlite:///{workdir / 'cases.sqlite3'}", profile)
    timeseries = SqliteTimeSeriesStore(workdir / "timeseries.sqlite3")
    seed_scenario(cases, scenario)
    head = scenario.scenario
    # Never connected: the demo feeds it directly and ticks it for actions.
    offline = MqttSettings(host="127.0.0.1", port=1, client_id=f"dashboard-demo-{head.site}")
    runner = build_analytics(
        cases, profile, offline, site=head.site, mode="stream", persist_jobs=False
    )
    readings = to_readings(scenario, expand(scenario))
    timeseries.write_batch(readings, sites={head.device: head.site})
    for reading in readings:
        runner.handle(reading)
    last = max(r.event_time for r in readings if isinstance(r, WeatherReading))
    cases.record_device_seen(head.device, last, "online")
    return ReplayedStorm(cases, timeseries, runner, head.end)


class ActionTicker:
    """Applies recorded actions through ``runner.tick()`` on a short interval."""

    def __init__(self, runner: AnalyticsRunner, interval_s: float = 0.2) -> None:
        self.runner = runner
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="demo-action-ticker", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.runner.tick()
