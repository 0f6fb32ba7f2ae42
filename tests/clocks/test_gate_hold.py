"""Analytics' gate holds a reading nothing in its batch can judge, as ingest's store does.

A day's buffer delivered late (received 12 h after its last reading), one reading
per 3 minutes, seq 60 stamped a day ahead but not ahead of its receipt. Given the
readings in batches split several ways, the gate (``ReadingGate.admit_batch``)
keeps every good reading and never passes seq 60 on, whichever batch it ends;
``admit_many`` (which holds nothing) passes it on when it ends a batch, as the
gate did before. The held reading is in the engine's snapshot: a restart between
the two batches still decides it, and a re-delivered copy is a duplicate.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.analytics.clocks.gate import ADMITTED, HELD, GateState, ReadingGate
from sidewalk.core.config import ConfigError, load_settings
from sidewalk.core.contract import TimePolicy, WeatherReading, topic_for
from sidewalk.core.mqtt import MqttMessage, MqttSettings
from sidewalk.core.profile import load_profile
from sidewalk.system import build_analytics
from tests.clocks.live import seeded
from tests.ingest.pipeline import slug

T0 = 1_764_460_800_000  # 2025-11-30T00:00:00Z
MIN = 60_000
DAY = 86_400_000
N, BAD = 458, 60
POLE = "pole-1"


def reading(seq: int, ts: int) -> WeatherReading:
    return WeatherReading(device=POLE, seq=seq, ts=ts, air_temp_c=-2.0)


def buffer() -> list[WeatherReading]:
    out = [reading(s, T0 + s * 3 * MIN) for s in range(1, N + 1)]
    out[BAD - 1] = reading(BAD, T0 + BAD * 3 * MIN + DAY)
    return out


RECEIVED = T0 + N * 3 * MIN + DAY // 2

SPLITS = {
    "one batch": [N],
    "skewed one last of a batch": [BAD, N - BAD],
    "batches of 20": [20] * 23,
    "batches of 50": [50] * 10,
    "one reading a batch": [1] * N,
}


def batches(sizes: list[int]) -> list[list[WeatherReading]]:
    rs, out, start = buffer(), [], 0
    for size in sizes:
        out.append(rs[start : start + size])
        start += size
    # The pole's next delivery, in line: it decides a hold on the last reading.
    out.append([reading(N + 1, T0 + (N + 1) * 3 * MIN)])
    return out


@pytest.mark.parametrize("split", SPLITS)
def test_the_skewed_reading_never_passes_and_no_good_one_is_lost(split: str) -> None:
    gate = ReadingGate(TimePolicy())
    passed: list[int] = []
    for batch in batches(SPLITS[split]):
        verdicts = gate.admit_batch(batch, RECEIVED)
        passed += [v.reading.seq for v in verdicts if v.outcome == ADMITTED]
    assert passed == [s for s in range(1, N + 2) if s != BAD]  # in order, none twice
    assert gate.state.skipped == {"implausible_time": 1}
    assert gate.held() == []


def test_without_holding_the_skewed_reading_ending_a_batch_passes() -> None:
    """What the gate did before (``admit_many`` still does): the reason for the hold."""
    gate = ReadingGate(TimePolicy())
    passed = []
    for batch in batches(SPLITS["skewed one last of a batch"]):
        skips = gate.admit_many(batch, RECEIVED)
        passed += [r.seq for r, skip in zip(batch, skips, strict=True) if skip is None]
    assert BAD in passed


def test_a_held_reading_is_said_held_and_decided_by_the_pole_s_next_one() -> None:
    gate = ReadingGate(TimePolicy())
    first, rest, *_ = batches(SPLITS["skewed one last of a batch"])
    verdicts = gate.admit_batch(first, RECEIVED)
    assert [v.outcome for v in verdicts] == [ADMITTED] * (BAD - 1) + [HELD]
    assert verdicts[-1].detail is not None
    assert "held for the pole's next reading" in verdicts[-1].detail
    [held] = gate.held()
    assert (held.seq, held.received_ms) == (BAD, RECEIVED)
    later = gate.admit_batch(rest, RECEIVED + MIN)
    # The held one's verdict comes first, before the reading that decided it.
    assert (later[0].reading.seq, later[0].outcome) == (BAD, "implausible_time")
    assert later[0].received_ms == RECEIVED  # judged as of when it arrived
    assert "out of line" in (later[0].detail or "")
    assert all(v.outcome == ADMITTED for v in later[1:])


def test_a_clock_reset_lets_the_held_reading_stand_just_before_its_next() -> None:
    gate = ReadingGate(TimePolicy())
    now = T0 + 3 * DAY
    gate.admit_batch([reading(s, T0 + s * MIN) for s in range(1, 11)], now)
    jump = reading(11, T0 + DAY)
    assert [v.outcome for v in gate.admit_batch([jump], now)] == [HELD]
    after = gate.admit_batch([reading(12, T0 + DAY + MIN)], now + MIN)
    assert [(v.reading.seq, v.outcome) for v in after] == [(11, ADMITTED), (12, ADMITTED)]
    # The pole's time moved: a reading back at the old run is now stepped back.
    assert gate.admit_batch([reading(13, T0 + 12 * MIN)], now + MIN)[0].outcome == (
        "implausible_time"
    )


def test_a_hold_that_runs_out_is_quarantined() -> None:
    policy = TimePolicy(max_hold_ms=5 * MIN)
    gate = ReadingGate(policy)
    gate.admit_batch(batches(SPLITS["skewed one last of a batch"])[0], RECEIVED)
    assert gate.expire(RECEIVED + 5 * MIN - 1) == []
    [verdict] = gate.expire(RECEIVED + 5 * MIN)
    assert (verdict.reading.seq, verdict.outcome) == (BAD, "implausible_time")
    assert "no reading of the pole came within 5 min" in (verdict.detail or "")
    assert gate.held() == []
    # A next batch decides a run-out hold before its own readings, too.
    gate = ReadingGate(policy)
    gate.admit_batch(batches(SPLITS["skewed one last of a batch"])[0], RECEIVED)
    late = gate.admit_batch([reading(BAD + 1, T0 + (BAD + 1) * 3 * MIN)], RECEIVED + 6 * MIN)
    assert [(v.reading.seq, v.outcome) for v in late] == [
        (BAD, "implausible_time"),
        (BAD + 1, ADMITTED),
    ]


@dataclass
class At:
    """The runner's clock, at an epoch ms."""

    ms: int

    def now(self) -> datetime:
        return datetime.fromtimestamp(self.ms / 1000, tz=UTC)


def engine() -> ClockEngine:
    made = ClockEngine(load_profile(), [FrontageSpec("a", POLE)])
    made.gate.policy = TimePolicy()
    return made


def test_a_held_reading_survives_a_restart_and_its_copy_is_a_duplicate() -> None:
    first, rest, *_ = batches(SPLITS["skewed one last of a batch"])
    before = engine()
    before.gate.admit_batch(first, RECEIVED)
    saved = before.snapshot()
    assert json.loads(saved)["gate"]["spaces"][f"{POLE}/"]["held"]["seq"] == BAD
    after = engine()
    after.restore(saved)
    [held] = after.gate.held()
    assert held.reading() == first[-1]
    # The broker re-delivers the unacknowledged copy after a restart: a duplicate.
    assert after.gate.admit_batch([first[-1]], RECEIVED)[0].outcome == "duplicate"
    verdicts = after.gate.admit_batch(rest, RECEIVED + MIN)
    assert (verdicts[0].reading.seq, verdicts[0].outcome) == (BAD, "implausible_time")


def test_a_snapshot_without_a_hold_reads_and_writes_as_before() -> None:
    """Older snapshots have no ``held``; one with nothing held writes none."""
    gate = ReadingGate(TimePolicy())
    gate.admit_batch([reading(1, T0), reading(2, T0 + MIN)], T0 + 2 * MIN)
    made = engine()
    made.gate.state = gate.state
    written = json.loads(made.snapshot())["gate"]
    assert written["spaces"][f"{POLE}/"] == {
        "runs": [[1, 2]], "last_seq": 2, "last_ts": T0 + MIN, "before_ts": T0,
        "suspect": False, "closed_at": None,
    }  # fmt: skip
    restored = engine()
    restored.restore(made.snapshot())
    assert restored.gate.state == gate.state
    assert isinstance(restored.gate.state, GateState)


def test_the_runner_logs_a_held_and_a_quarantined_reading_in_utc_and_epoch_ms(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    village = seeded(tmp_path)
    unused = MqttSettings(host="127.0.0.1", port=1, client_id=slug("live"))
    runner = build_analytics(
        village.cases, village.profile, unused, site="clyman", mode="live", persist_jobs=False
    )
    first, rest, *_ = batches(SPLITS["skewed one last of a batch"])

    def messages(rs: list[WeatherReading]) -> list[MqttMessage]:
        topic = topic_for("clyman", POLE, "weather")
        return [MqttMessage(topic, r.to_json(), 1, False, r.seq) for r in rs]

    runner.clock = At(RECEIVED)
    caplog.set_level(logging.WARNING, logger="sidewalk.analytics.runner")
    try:
        assert [r.seq for r in runner._admit_many(messages(first))] == list(range(1, BAD))
        [held] = [r for r in caplog.records if "holds" in r.getMessage()]
        # seq 60: 2025-11-30 03:00 UTC + 1 day
        stamp = T0 + BAD * 3 * MIN + DAY
        assert f"stamped 2025-12-01 03:00:00 UTC (ts {stamp})" in held.getMessage()
        assert f"(ts {RECEIVED})" in held.getMessage()
        caplog.clear()
        runner.clock = At(RECEIVED + MIN)
        assert [r.seq for r in runner._admit_many(messages(rest))] == list(range(BAD + 1, N + 1))
        [quarantined] = [r for r in caplog.records if "quarantines" in r.getMessage()]
        assert f"weather seq {BAD} of {POLE}, stamped 2025-12-01 03:00:00 UTC" in (
            quarantined.getMessage()
        )
        assert "out of line" in quarantined.getMessage()
    finally:
        village.cases.close()


def test_the_hold_is_set_in_the_time_section(tmp_path: Path) -> None:
    path = tmp_path / "sidewalk.toml"
    path.write_text("[time]\nmax_hold_s = 120\n", encoding="utf-8")
    assert load_settings(path).time.policy().max_hold_ms == 120_000
    assert load_settings(None).time.policy() == TimePolicy()  # the default is unchanged
    path.write_text("[time]\nmax_hold_s = 0\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"time\.max_hold_s: Input should be greater than 0"):
        load_settings(path)
    path.write_text("[time]\nmax_hold_s = 172800\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"time\.max_hold_s"):
        load_settings(path)
