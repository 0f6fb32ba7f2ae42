"""Dashboard figures in headless Debian Chromium over a seeded village of N frontages.

``overview``: time to a usable overview. "Usable" = the page has fetched
``/api/overview`` and ``/api/map``, drawn every frontage on the map and the
clock table, and marked itself ready (``body[data-ready=overview]``);
measured from ``page.goto`` (a fresh page, logged-in cookie, warm server).
The two API calls are also timed alone (server round trip).

``latency``: a clock transition committed to the case records → the browser
has it. A writer (standing in for the analytics runner, another process in
real life) commits one transition at a time to the SQLite case store; the
dashboard's live feed finds it by polling (``--poll-ms``) and pushes it over
server-sent events to Chromium on the overview page, which stamps its arrival
(``Date.now()``); writer and browser share the machine's clock. Each event
waits for the previous one to arrive, then a random pause (0–300 ms) so
commits fall anywhere in the poll cycle.

    uv run python bench/dashboard_figures.py overview [--frontages 500] [--runs 7]
    uv run python bench/dashboard_figures.py latency [--events 60] [--poll-ms 200 50]
"""

from __future__ import annotations

import argparse
import random
import socket
import statistics
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import uvicorn
from playwright.sync_api import BrowserContext, expect, sync_playwright

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.storage.cases import CaseStore, Cause

SHOTS = Path(__file__).resolve().parents[1] / "test-artifacts" / "dashboard"
PASSWORD = "bench password"
STREETS = ("Main St", "Church St", "Oak St", "Elm St", "Mill St", "Park Ave", "Lake St", "High St")
STATES = ("clearing_period", "clearing_period", "snowing", "complied", "violation")
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip


def seed_village(cases: CaseStore, frontages: int, now: datetime) -> list[int]:
    """``frontages`` frontages on eight streets, each with a clearing clock; returns clock ids."""
    cases.registry.upsert_device("pole-bench", "clyman")
    clocks = []
    for i in range(frontages):
        street = STREETS[i % len(STREETS)]
        number = 101 + (i // len(STREETS)) * 2 + (i % 2)
        fid = f"f-{i:04d}"
        cases.registry.upsert_owner(
            f"o-{i:04d}", f"Owner {i}", [f"{number} {street}", "Clyman, WI 53016"]
        )
        cases.registry.upsert_frontage(
            fid, site="clyman", parcel_number=f"026-{i:04d}", street_address=f"{number} {street}",
            length_ft=66, zone="residential", owner_id=f"o-{i:04d}", device_id="pole-bench",
        )  # fmt: skip
        started = now - timedelta(hours=2)
        cause = Cause(kind="reading", ts=int(started.timestamp() * 1000), device="pole-bench")
        clock = cases.clocks.open(fid, "clearing", "snowing", started, cause)
        state = STATES[i % len(STATES)]
        cases.clocks.record_transition(
            clock.id, state, started + timedelta(minutes=30), cause,
            deadline=now + timedelta(hours=20) if state == "clearing_period" else None,
            closes=state in {"complied", "violation"},
        )  # fmt: skip
        clocks.append(clock.id)
    return clocks


@contextmanager
def running_dashboard(frontages: int, poll_s: float = 0.2) -> Iterator[tuple[str, CaseStore]]:
    """A seeded case store served by uvicorn on a free loopback port; yields (url, cases)."""
    with tempfile.TemporaryDirectory(prefix="dashboard-bench-") as tmp:
        profile = load_profile()
        cases = CaseStore(f"sqlite:///{Path(tmp) / 'cases.sqlite3'}")
        cases.create_schema()
        now = datetime.now(UTC)
        seed_village(cases, frontages, now)
        add_user(cases, "bench", PASSWORD, "clerk")
        app = create_app(cases, None, profile, secret_key="bench-secret-0123456789", poll_s=poll_s)
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        config = uvicorn.Config(
            app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1
        )
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}", cases
        finally:
            server.should_exit = True
            thread.join(timeout=10)
            cases.close()


@contextmanager
def chromium() -> Iterator[BrowserContext]:
    """Headless Debian Chromium with a fresh profile."""
    with (
        tempfile.TemporaryDirectory(prefix="bench-chromium-") as profile_dir,
        sync_playwright() as p,
    ):
        context = p.chromium.launch_persistent_context(
            profile_dir, executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS, headless=True,
            viewport={"width": 1400, "height": 1000},
        )  # fmt: skip
        try:
            yield context
        finally:
            context.close()


def log_in(context: BrowserContext, url: str) -> None:
    """Log the context in through the API (the cookie then serves every page)."""
    response = context.request.post(
        f"{url}/api/session", data={"username": "bench", "password": PASSWORD}
    )
    if not response.ok:
        raise RuntimeError(f"bench login failed: {response.status}")


def overview(args: argparse.Namespace) -> None:
    """Time to a usable overview (see the module docstring)."""
    with running_dashboard(args.frontages) as (url, _cases), chromium() as context:
        log_in(context, url)
        api: dict[str, list[float]] = {"/api/overview": [], "/api/map": []}
        for _ in range(args.runs):
            for path, times in api.items():
                started = time.perf_counter()
                response = context.request.get(f"{url}{path}")
                times.append((time.perf_counter() - started) * 1000)
                assert response.ok
        usable: list[float] = []
        for run in range(args.runs + 1):
            page = context.new_page()
            started = time.perf_counter()
            page.goto(f"{url}/#overview")
            expect(page.locator("body")).to_have_attribute("data-ready", "overview", timeout=30_000)
            expect(page.locator("[data-frontage-shape]")).to_have_count(args.frontages)
            elapsed = (time.perf_counter() - started) * 1000
            if run:  # the first run warms the browser's module cache
                usable.append(elapsed)
            else:
                SHOTS.mkdir(parents=True, exist_ok=True)
                page.screenshot(path=str(SHOTS / f"bench-overview-{args.frontages}.png"))
            page.close()
    print(f"\n{args.frontages} frontages, {args.runs} runs (median / max, ms)\n")
    print(f"{'step':<44}{'median':>10}{'max':>10}")
    for name, times in (
        ("GET /api/overview (server round trip)", api["/api/overview"]),
        ("GET /api/map (server round trip)", api["/api/map"]),
        ("page.goto → usable overview (Chromium)", usable),
    ):
        print(f"{name:<44}{statistics.median(times):>10.0f}{max(times):>10.0f}")


def latency(args: argparse.Namespace) -> None:
    """Clock transition committed → in the browser (see the module docstring)."""
    rng = random.Random(7)
    results: list[tuple[int, list[float]]] = []
    for poll_ms in args.poll_ms:
        with (
            running_dashboard(args.frontages, poll_s=poll_ms / 1000) as (url, cases),
            chromium() as context,
        ):
            log_in(context, url)
            page = context.new_page()
            page.goto(f"{url}/#overview")
            expect(page.locator("#live-status")).to_have_text("live", timeout=30_000)
            running = cases.clocks.list(active_only=True)
            latencies: list[float] = []
            at = datetime.now(UTC)
            for n in range(args.events):
                clock = running[n % len(running)]
                at += timedelta(seconds=1)
                cause = Cause(kind="deadline", ts=int(at.timestamp() * 1000))
                state = "snowing" if n % 2 == 0 else "clearing_period"
                time.sleep(rng.uniform(0, 0.3))
                written_ms = time.time() * 1000
                t = cases.clocks.record_transition(clock.id, state, at, cause)
                deadline = time.monotonic() + 10
                while True:
                    got = page.evaluate(
                        f"window.__swLive.find(e => e.id === {t.id})?.received_ms ?? null"
                    )
                    if got is not None:
                        latencies.append(float(got) - written_ms)
                        break
                    if time.monotonic() > deadline:
                        raise TimeoutError(f"transition {t.id} never reached the browser")
                    time.sleep(0.005)
        results.append((poll_ms, latencies))
    print(
        f"\n{args.frontages} frontages, {args.events} clock transitions per row; "
        "commit → browser (ms)\n"
    )
    print(f"{'poll interval':<16}{'median':>10}{'p95':>10}{'max':>10}")
    for poll_ms, lat in results:
        p95 = statistics.quantiles(lat, n=20)[-1]
        print(f"{poll_ms:>10} ms  {statistics.median(lat):>10.0f}{p95:>10.0f}{max(lat):>10.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figure", choices=["overview", "latency"])
    parser.add_argument("--frontages", type=int, default=500)
    parser.add_argument("--runs", type=int, default=7, help="overview: page loads measured")
    parser.add_argument("--events", type=int, default=60, help="latency: transitions per row")
    parser.add_argument("--poll-ms", type=int, nargs="+", default=[200, 50])
    args = parser.parse_args()
    overview(args) if args.figure == "overview" else latency(args)


if __name__ == "__main__":
    main()
