"""The first storm replayed once, handed to each test as a fresh copy.

Replaying the storm through a stream-mode runner costs about a CPU second; many
tests start from the state it leaves and then change it. ``replay_once`` runs
it once into a template case database and keeps the engine's snapshot;
``restore`` copies that database for one test and builds a new runner from
the snapshot, as a restarted runner resumes (``snapshot()`` restores every
clock exactly: tests/e2e/test_enforcement_records.py checks the round trip).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from sidewalk.alerts.letterhead import Letterhead
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import Profile
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import CaseStore
from sidewalk.system import build_analytics, open_cases, seed_scenario


@dataclass(frozen=True)
class StormTemplate:
    """The case database after the storm, and the engine state that goes with it."""

    database: Path
    engine_state: bytes


def _runner(
    cases: CaseStore,
    profile: Profile,
    mqtt: MqttSettings,
    letterhead: Letterhead | None,
    tick_seconds: float = 30.0,
) -> AnalyticsRunner:
    return build_analytics(
        cases, profile, mqtt, site="clyman", mode="stream", persist_jobs=False,
        letterhead=letterhead, tick_seconds=tick_seconds,
    )  # fmt: skip


def replay_once(
    database: Path, profile: Profile, mqtt: MqttSettings, letterhead: Letterhead | None = None
) -> StormTemplate:
    """first-storm seeded and fed through a stream-mode runner into ``database``."""
    cases = open_cases(f"sqlite:///{database}", profile)
    try:
        story = load_scenario("first-storm")
        seed_scenario(cases, story, profile=profile)
        runner = _runner(cases, profile, mqtt, letterhead)
        for reading in to_readings(story, expand(story)):
            runner.handle(reading)
        return StormTemplate(database, runner.engine.snapshot())
    finally:
        cases.close()


def restore(
    template: StormTemplate,
    database: Path,
    profile: Profile,
    mqtt: MqttSettings,
    letterhead: Letterhead | None = None,
    *,
    tick_seconds: float = 30.0,
) -> tuple[AnalyticsRunner, CaseStore]:
    """A copy of the template's records at ``database`` and a runner resumed on them."""
    shutil.copyfile(template.database, database)
    cases = open_cases(f"sqlite:///{database}", profile)
    runner = _runner(cases, profile, mqtt, letterhead, tick_seconds)
    runner.engine.restore(template.engine_state)
    # What a failed write rolls the engine back to: the restored state, as after start().
    runner._saved = template.engine_state  # no public way without a broker (start() connects)
    return runner, cases
