"""Checks and the endpoint server: failures are reported with their reasons, never hidden."""

from __future__ import annotations

import threading
from pathlib import Path

from prometheus_client import CollectorRegistry

from sidewalk.core.health import flag, run_checks, threads_alive
from sidewalk.core.observability import ObservabilityServer
from sidewalk.ingest.metrics import StoreCollector
from tests.observability.scrape import get


def test_failures_are_collected_and_a_raising_check_does_not_stop_the_others() -> None:
    ran: list[str] = []

    def boom() -> str | None:
        ran.append("boom")
        raise ConnectionError("database down")

    def fine() -> str | None:
        ran.append("fine")
        return None

    report = run_checks({"db": boom, "broker": flag(lambda: False, "not connected"), "x": fine})
    assert ran == ["boom", "fine"]
    assert not report.ok
    assert report.status_code == 503
    assert report.body() == {
        "status": "unavailable",
        "checks": {"x": "ok", "db": "ConnectionError: database down", "broker": "not connected"},
    }
    assert run_checks({"x": fine}).status_code == 200
    assert run_checks({}).body() == {"status": "ok", "checks": {}}


def test_threads_alive_by_name() -> None:
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, name="obs-test-worker", daemon=True)
    check = threads_alive(["obs-test-worker"])
    assert check() == "thread(s) not running: obs-test-worker"
    worker.start()
    try:
        assert check() is None
    finally:
        stop.set()
        worker.join(5)
    assert check() == "thread(s) not running: obs-test-worker"


def test_a_failing_collector_gives_500_with_the_reason(tmp_path: Path) -> None:
    registry = CollectorRegistry()
    registry.register(StoreCollector(tmp_path / "missing.db"))  # read-only: never created
    server = ObservabilityServer(registry, live={}, ready={}, port=0)
    server.start()
    try:
        status, body = get(f"{server.url}/metrics")
        assert status == 500
        assert "OperationalError" in body
        assert get(f"{server.url}/healthz") == (200, '{"status": "ok", "checks": {}}')
    finally:
        server.stop()
    assert not (tmp_path / "missing.db").exists()
