"""What analytics exposes: clocks by kind and state, the runner's progress; its checks.

Collectors read the engine under the runner's lock at scrape time, so no hot
path carries metric calls. ``docs/observability.md`` lists every metric.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Final

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from sidewalk.analytics.clocks.engine import ClockEngine
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.health import Check, database_reachable, threads_alive
from sidewalk.core.observability import Observability

# The documented default port (docs/observability.md); off unless configured.
ANALYTICS_PORT: Final = 9465


def clock_states(engine: ClockEngine) -> Counter[tuple[str, str]]:
    """How many clocks of each kind are in each state (the clock kinds of ``docs/clocks.md``)."""
    counts: Counter[tuple[str, str]] = Counter()
    for clock in engine.clocks.values():
        counts["clearing", clock.state] += 1
    for case in engine.enforcement.cases.values():
        counts["enforcement", case.state] += 1
    for subgrade in engine.cold.subgrade.values():
        counts["frozen_subgrade", subgrade.state] += 1
    for keep_off in engine.cold.keep_off.values():
        counts["keep_off", keep_off.state] += 1
    for permit in engine.cold.permits.values():
        counts["opening_permit", permit.state] += 1
    for obstruction in engine.street.obstructions.values():
        counts["obstruction", obstruction.state] += 1
    for sweeping in engine.street.sweeping.values():
        counts["sweeping", sweeping.state] += 1
    return counts


class AnalyticsCollector(Collector):
    """The clock engine's states and the runner's progress."""

    def __init__(self, runner: AnalyticsRunner) -> None:
        self._runner = runner

    def collect(self) -> Iterable[Metric]:
        runner = self._runner
        # Under the runner's lock: the worker thread mutates these dicts.
        counts, now = runner.inspect(lambda engine: (clock_states(engine), engine.now))
        clocks = GaugeMetricFamily(
            "sidewalk_clocks", "Clocks in the engine by kind and state", labels=["kind", "state"]
        )
        for (kind, state), count in sorted(counts.items()):
            clocks.add_metric([kind, state], count)
        yield clocks
        yield CounterMetricFamily(
            "sidewalk_analytics_processed_readings",
            "Readings the engine has observed since start",
            value=runner.processed,
        )
        yield GaugeMetricFamily(
            "sidewalk_analytics_pending_messages",
            "Messages received by analytics and not yet processed",
            value=runner.pending,
        )
        skipped = CounterMetricFamily(
            "sidewalk_analytics_skipped_readings",
            "Readings from the broker not acted on, by reason (duplicate, implausible_time, …)",
            labels=["reason"],
        )
        for reason, count in sorted(runner.skipped().items()):
            skipped.add_metric([reason], count)
        yield skipped
        yield CounterMetricFamily(
            "sidewalk_analytics_mqtt_handler_errors",
            "Exceptions raised while handing received messages over (logged with the topic)",
            value=runner.mqtt_handler_errors,
        )
        yield CounterMetricFamily(
            "sidewalk_analytics_session_takeovers",
            "Times the broker gave analytics' session to another client with its client id",
            value=runner.session_takeovers,
        )
        if now is not None:
            yield GaugeMetricFamily(
                "sidewalk_analytics_event_time_seconds",
                "The engine's event time (Unix time); behind wall time while catching up",
                value=now.timestamp(),
            )


def _case_database_ready(runner: AnalyticsRunner) -> Check:
    """Readiness of the case database: the runner's last batch or tick was recorded
    (a full disk fails every write while a ping still answers), and it answers."""
    reachable = database_reachable(runner.recorder.cases)

    def check() -> str | None:
        return runner.record_problem or reachable()

    return check


def analytics_observability(
    runner: AnalyticsRunner, registry: CollectorRegistry | None = None
) -> Observability:
    """Analytics: clocks by state and progress; worker alive. Ready while its session is
    its own, its worker (and in live mode the scheduler) runs, and the case database,
    the one store it writes, records its batches and ticks."""
    registry = registry or CollectorRegistry()
    registry.register(AnalyticsCollector(runner))
    threads = [f"analytics-{runner.id}"]
    if runner.mode == "live":
        threads.append("APScheduler")  # fires the deadlines; its thread's fixed name
    return Observability(
        registry,
        live={"worker": threads_alive(threads)},
        ready={
            "broker": lambda: runner.broker_problem,
            # A worker that ended leaves the session connected and nothing processed.
            "worker": threads_alive(threads),
            "database": _case_database_ready(runner),
        },
    )
