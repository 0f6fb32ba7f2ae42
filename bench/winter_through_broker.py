"""A real winter for one pole through the real path, beside the same readings in-process.

The 2017-18 Minneapolis record (``--days`` from 2017-10-01, default the whole
season to 2018-05-01) drives one simulated pole (``sensors.simulate_pole``:
weather every 5 min with its seeded faults) and its ``--frontages`` walks
(``season``'s owner model and hourly camera). Every reading is published at
QoS 1 to a Mosquitto the bench starts itself; ``IngestConsumer`` stores them
in SQLite and the analytics runner (stream mode) turns them into case
records and notices. The same readings then go straight into a
``ClockEngine`` with its own recorder and notice issuer; the notices must be
identical.

The runner hands each batch of messages to the engine together
(``ClockEngine.step_many``; the in-process reference steps reading by
reading) and saves the engine's whole state (``snapshot()``) before it
acknowledges the batch: the bench gives how many saves that took, their
time and the state's size at the end.

    uv run python -m bench.winter_through_broker [--days 30] [--frontages 10] [--seed 1]
"""

from __future__ import annotations

import argparse
import heapq
import random
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.recorder import CaseRecorder
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.contract import AnyReading, SnowMeasurement, topic_for
from sidewalk.core.mqtt import MqttClient, MqttSettings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.ingest.consumer import IngestConsumer
from sidewalk.scenarios.accuracy import storms_from_hours, with_new_snow
from sidewalk.scenarios.season import (
    COVER_MM,
    _camera_stream,
    _owners,
    _plan_clearing,
    frontage_ids,
)
from sidewalk.scenarios.sensors import simulate_pole
from sidewalk.scenarios.weather import load_minneapolis, winter_bounds
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from sidewalk.system import build_analytics, frontage_specs, notice_summary, open_cases
from tests.harness.mosquitto import MosquittoServer

SITE = "bench"
POLE = "pole-bench-01"
WINTER = "2017-18"
WINDOW = 1000


def winter_readings(days: int | None, frontages: int, seed: int) -> list[AnyReading]:
    """The pole's weather and its camera's measurements of each walk, in event-time order."""
    start, end = winter_bounds(WINTER)
    if days is not None:
        end = min(end, start + timedelta(days=days))
    hours = load_minneapolis(start, end)
    sim = simulate_pole(hours, POLE, seed=seed)
    rng = random.Random(seed)
    walks = _owners(frontage_ids(frontages), rng)
    storms = [s for s in with_new_snow(storms_from_hours(hours), sim.truth)
              if s.new_snow_mm >= COVER_MM]  # fmt: skip
    for walk in walks:
        _plan_clearing(walk, storms, rng)
    cams = list(_camera_stream(walks, sim.truth, POLE, rng))
    return list(heapq.merge(sim.readings, cams, key=lambda r: r.ts))


def seed_frontages(cases: CaseStore, ids: list[str]) -> None:
    """The pole and its frontages in the case records (made-up owners)."""
    cases.registry.upsert_device(POLE, SITE)
    for i, frontage in enumerate(ids):
        owner = f"owner-{frontage}"
        cases.registry.upsert_owner(owner, f"Owner {i + 1}", f"{i + 1} Main St, Clyman WI 53016")
        cases.registry.upsert_frontage(
            frontage, site=SITE, parcel_number=f"P-{i + 1:04d}",
            street_address=f"{101 + 2 * i} Main St", length_ft=66.0, zone="residential",
            owner_id=owner, device_id=POLE,
        )  # fmt: skip


def in_process(readings: list[AnyReading], cases: CaseStore, profile: Profile) -> float:
    """The readings straight into the engine, recorded as the runner records them; seconds."""
    engine = ClockEngine(profile, frontage_specs(cases, SITE))
    issuer = NoticeIssuer(cases, profile)
    recorder = CaseRecorder(
        cases, profile, on_violation=issuer.clearing_violation, on_notice=issuer.required_notice
    )
    started = time.perf_counter()
    for reading in readings:
        recorder.record(engine.observe(reading) + engine.advance(reading.event_time))
    return time.perf_counter() - started


def _publish(server: MosquittoServer, readings: list[AnyReading]) -> None:
    """Publish every reading at QoS 1 from one client (in order); wait for every PUBACK.

    At most ``WINDOW`` unacknowledged at a time: paho's outgoing queue is bounded.
    """
    progress = threading.Condition()
    acked = 0

    def on_publish(_mid: int) -> None:
        nonlocal acked
        with progress:
            acked += 1
            progress.notify_all()

    settings = MqttSettings(
        host=server.host, port=server.port, client_id="bench-pole", clean_start=True
    )
    client = MqttClient(settings, on_publish=on_publish)
    client.connect()
    sent = 0

    def room() -> bool:
        return sent - acked < WINDOW

    for r in readings:
        with progress:
            if not progress.wait_for(room, 60):
                raise RuntimeError(f"only {acked} of {sent} publishes acknowledged")
        stream = "snow" if isinstance(r, SnowMeasurement) else "weather"
        client.publish(topic_for(SITE, r.device, stream), r.to_json(), 1)
        sent += 1
    with progress:
        if not progress.wait_for(lambda: acked == len(readings), 600):
            raise RuntimeError(f"only {acked} of {len(readings)} publishes acknowledged")
    client.disconnect()


@dataclass
class Saves:
    """The runner's state saves before acknowledging (``AnalyticsRunner._save``)."""

    count: int = 0
    seconds: float = 0.0
    last_bytes: int = 0


def _timed_saves(runner: AnalyticsRunner) -> Saves:
    saves = Saves()
    save = runner._save

    def timed() -> None:
        t0 = time.perf_counter()
        save()
        saves.seconds += time.perf_counter() - t0
        saves.count += 1
        saves.last_bytes = len(runner._saved)

    # Ignored: the bench wraps the runner's save to count its bytes.
    runner._save = timed  # type: ignore[method-assign]
    return saves


def through_broker(
    readings: list[AnyReading], workdir: Path, cases: CaseStore, profile: Profile
) -> tuple[float, int, Saves]:
    """Broker → ingest (SQLite) and analytics (stream mode) → case records;
    (seconds, stored, the runner's state saves)."""
    server = MosquittoServer(workdir / "mosquitto")
    server.start()
    store = SqliteTimeSeriesStore(workdir / "timeseries.sqlite3")

    def settings(client_id: str) -> MqttSettings:
        return MqttSettings(host=server.host, port=server.port, client_id=client_id)

    ingest = IngestConsumer(store, settings("bench-ingest"), site=SITE)
    runner = build_analytics(
        cases, profile, settings("bench-analytics"), site=SITE, mode="stream", persist_jobs=False
    )
    saves = _timed_saves(runner)
    n = len(readings)
    try:
        ingest.start()
        runner.start()
        started = time.perf_counter()
        _publish(server, readings)
        if not ingest.wait_for(lambda: ingest.stats.stored >= n, 600):
            raise RuntimeError(f"ingest stored {ingest.stats.stored} of {n}")
        if not runner.wait_for(lambda: runner.processed >= n, 600):
            raise RuntimeError(f"analytics processed {runner.processed} of {n}")
        seconds = time.perf_counter() - started
        return seconds, store.count(), saves
    finally:
        runner.stop()
        ingest.stop()
        store.close()
        server.stop()


def main() -> None:
    """Run both paths on the same readings; print the figures; fail if the notices differ."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--days", type=int, default=None, help="from 2017-10-01; default all")
    parser.add_argument("--frontages", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    profile = load_profile()
    t = time.perf_counter()
    readings = winter_readings(args.days, args.frontages, args.seed)
    cams = sum(isinstance(r, SnowMeasurement) for r in readings)
    first, last = readings[0].event_time, readings[-1].event_time
    print(f"winter {WINTER}: {first:%Y-%m-%d} to {last:%Y-%m-%d}, {args.frontages} frontages")
    print(f"readings: {len(readings)} ({len(readings) - cams} weather, {cams} camera); "
          f"simulated in {time.perf_counter() - t:.1f} s")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="sidewalk-winter-") as tmp:
        work = Path(tmp)
        live_cases = open_cases(f"sqlite:///{work / 'live.sqlite3'}", profile)
        direct_cases = open_cases(f"sqlite:///{work / 'direct.sqlite3'}", profile)
        ids = frontage_ids(args.frontages)
        seed_frontages(live_cases, ids)
        seed_frontages(direct_cases, ids)
        seconds, stored, saves = through_broker(readings, work, live_cases, profile)
        direct_s = in_process(readings, direct_cases, profile)
        live = notice_summary(live_cases.notices.list())
        direct = notice_summary(direct_cases.notices.list())
        print(f"through the broker: {seconds:.1f} s wall, {len(readings) / seconds:,.0f} "
              f"readings/s; stored {stored} of {len(readings)} published")  # fmt: skip
        print(f"  state saved before acknowledging: {saves.count:,} times, "
              f"{saves.seconds:.1f} s in all ({saves.seconds / max(saves.count, 1) * 1e3:.1f} ms "
              f"each), {saves.last_bytes / 1024:,.0f} KiB at the end")  # fmt: skip
        rate = len(readings) / direct_s
        print(f"in-process (engine + recorder): {direct_s:.1f} s, {rate:,.0f} readings/s")
        print(f"notices: {len(live)} through the broker, {len(direct)} in-process; "
              f"identical: {live == direct}")  # fmt: skip
        live_cases.close()
        direct_cases.close()
    if stored != len(readings) or live != direct:
        raise SystemExit("MISMATCH: stored count or notices differ")


if __name__ == "__main__":
    main()
