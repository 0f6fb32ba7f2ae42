"""Dashboard figures in headless Debian Chromium over a seeded village of N frontages.

The dashboard runs in a process of its own (uvicorn, heap settled as ``serve``
does), as in the village; this process stands in for the analytics runner (it
commits to the same SQLite case store) and drives Chromium.

``overview``: time to a usable overview. "Usable" = the page has fetched
``/api/overview`` and ``/api/map``, drawn every frontage on the map and the
clock table, and marked itself ready (``body[data-ready=overview]``);
measured from ``page.goto`` (a fresh page, logged-in cookie, warm server).
The two API calls are also timed alone (server round trip).

``latency``: a clock state change committed to the case records → shown in the
open overview page. One transition at a time is committed (as the recorder
does: one transaction each); the dashboard's live feed finds it by polling
(``--poll-ms``) and pushes it over server-sent events; the page recolours the
frontage on the map as the event arrives (stamped ``received_ms``), then
re-reads the overview and redraws the clock table (a MutationObserver stamps
when the clock's row shows the new state). Writer and browser share the
machine's clock. Each event waits for the previous one to show, then a random
pause (0–300 ms) so commits fall anywhere in the poll cycle. ``--burst N``
then commits N transitions back to back (a storm's first snow moves every
frontage's clock) and times the last one to the map and to the table.

Seeding 2,000 frontages takes minutes: ``--store PATH`` keeps the village and
reuses it.

    .venv/bin/python bench/dashboard_figures.py overview [--frontages 2000] [--runs 7]
    .venv/bin/python bench/dashboard_figures.py latency [--frontages 2000] [--events 40]
        [--poll-ms 200 50] [--burst 1000] [--store PATH]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import socket
import statistics
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from playwright.sync_api import BrowserContext, Page, expect, sync_playwright

from sidewalk.core.profile import load_profile
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
# In the page: when each watched clock's row in the clock table shows the state wanted.
WATCH_TABLE = """() => {
  window.__benchWant = {}; window.__benchShown = {};
  const check = () => {
    for (const [id, want] of Object.entries(window.__benchWant)) {
      if (window.__benchShown[id]) continue;
      const row = document.querySelector(`[data-clock="${id}"]`);
      if (row && row.textContent.includes(want)) window.__benchShown[id] = Date.now();
    }
  };
  new MutationObserver(check).observe(document.getElementById("clock-rows"),
    { childList: true, subtree: true, characterData: true });
}"""


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


def village(path: Path, frontages: int) -> None:
    """The seeded village in ``path`` (made once: reused when it is there)."""
    if path.exists():
        cases = CaseStore(f"sqlite:///{path}")
        have = len(cases.registry.list_frontages())
        cases.close()
        if have != frontages:
            raise SystemExit(f"{path} holds {have} frontages, not {frontages}")
        print(f"reusing the village of {have} frontages in {path}")
        return
    started = time.perf_counter()
    cases = CaseStore(f"sqlite:///{path}")
    cases.create_schema()
    seed_village(cases, frontages, datetime.now(UTC))
    add_user(cases, "bench", PASSWORD, "clerk")
    cases.close()
    print(f"seeded {frontages} frontages in {time.perf_counter() - started:.0f} s")


def _serve(path: str, port: int, poll_s: float) -> None:
    """The dashboard process: the app over the store, served as ``serve`` serves it."""
    import uvicorn

    from sidewalk.dashboard.app import create_app, settle_heap

    cases = CaseStore(f"sqlite:///{path}")
    app = create_app(
        cases, None, load_profile(), secret_key="bench-secret-0123456789", poll_s=poll_s
    )
    settle_heap()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)


@contextmanager
def running_dashboard(path: Path, poll_s: float = 0.2) -> Iterator[str]:
    """The dashboard over ``path`` in a process of its own on a free loopback port."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(str(path), port, poll_s), daemon=True
    )
    process.start()
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 600  # imports alone take a minute on a busy machine
    while True:
        try:
            httpx.get(f"{url}/login", timeout=2).raise_for_status()
            break
        except httpx.HTTPError:
            if time.monotonic() > deadline or not process.is_alive():
                raise RuntimeError("the dashboard did not start") from None
            time.sleep(0.1)
    try:
        yield url
    finally:
        process.terminate()
        process.join(timeout=10)


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


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


@contextmanager
def store(args: argparse.Namespace) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="dashboard-bench-") as tmp:
        path = args.store or Path(tmp) / "cases.sqlite3"
        village(path, args.frontages)
        yield path


def overview(args: argparse.Namespace) -> None:
    """Time to a usable overview (see the module docstring)."""
    print(f"load average at start: {load()}")
    with store(args) as path, running_dashboard(path) as url, chromium() as context:
        log_in(context, url)
        api: dict[str, list[float]] = {"/api/overview": [], "/api/map": []}
        for _ in range(args.runs):
            for api_path, times in api.items():
                started = time.perf_counter()
                response = context.request.get(f"{url}{api_path}")
                times.append((time.perf_counter() - started) * 1000)
                assert response.ok
        usable: list[float] = []
        for run in range(args.runs + 1):
            page = context.new_page()
            started = time.perf_counter()
            page.goto(f"{url}/#overview")
            expect(page.locator("body")).to_have_attribute("data-ready", "overview", timeout=60_000)
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
    print(f"load average at end: {load()}")


def _wait(page: Page, script: str, what: str, timeout_s: float = 30) -> float:
    deadline = time.monotonic() + timeout_s
    while True:
        got = page.evaluate(script)
        if got is not None:
            return float(got)
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} never reached the page")
        time.sleep(0.01)


def _commit(writer: CaseStore, clock: int, state: str, at: datetime) -> tuple[float, int]:
    """Commit one transition as the recorder does; (commit time in ms, transition id)."""
    cause = Cause(kind="deadline", ts=int(at.timestamp() * 1000))
    transition = writer.clocks.record_transition(clock, state, at, cause)
    return time.time() * 1000, transition.id


def latency(args: argparse.Namespace) -> None:
    """Clock transition committed → shown in the browser (see the module docstring)."""
    rng = random.Random(7)
    rows: list[tuple[str, list[float], list[float]]] = []
    print(f"load average at start: {load()}")
    with store(args) as path:
        writer = CaseStore(f"sqlite:///{path}")
        running = [c.id for c in writer.clocks.list(active_only=True)]
        at = datetime.now(UTC)
        for poll_ms in args.poll_ms:
            with running_dashboard(path, poll_s=poll_ms / 1000) as url, chromium() as context:
                log_in(context, url)
                page = context.new_page()
                page.goto(f"{url}/#overview")
                expect(page.locator("#live-status")).to_have_text("live", timeout=60_000)
                expect(page.locator("body")).to_have_attribute(
                    "data-ready", "overview", timeout=60_000
                )
                page.evaluate(WATCH_TABLE)
                to_page: list[float] = []
                to_table: list[float] = []
                for n in range(args.events):
                    clock = running[rng.randrange(len(running))]
                    state = "snowing" if n % 2 == 0 else "clearing_period"
                    page.evaluate(f"window.__benchWant[{clock}] = {json.dumps(state)}")
                    time.sleep(rng.uniform(0, 0.3))
                    at += timedelta(seconds=1)
                    written_ms, tid = _commit(writer, clock, state, at)
                    got = _wait(page, f"window.__swLive.find(e => e.id === {tid})?.received_ms"
                                " ?? null", f"transition {tid}")  # fmt: skip
                    shown = _wait(page, f"window.__benchShown[{clock}] ?? null", f"clock {clock}")
                    page.evaluate(f"delete window.__benchWant[{clock}];"
                                  f" delete window.__benchShown[{clock}]")  # fmt: skip
                    to_page.append(got - written_ms)
                    to_table.append(shown - written_ms)
                rows.append((f"{poll_ms} ms poll, one at a time", to_page, to_table))
                if args.burst and poll_ms == args.poll_ms[0]:
                    rows.append(burst(page, writer, running, args.burst, at))
                    at += timedelta(minutes=10)
        writer.close()
    print(
        f"\n{args.frontages} frontages; commit → shown in the overview (ms; median / p95 / max)\n"
    )
    print(f"{'':32}{'map (event in page)':>27}{'clock table redrawn':>27}")
    for name, page_ms, table_ms in rows:
        cells = []
        for values in (page_ms, table_ms):
            p95 = statistics.quantiles(values, n=20)[-1] if len(values) > 1 else values[0]
            cells.append(f"{statistics.median(values):7.0f} {p95:7.0f} {max(values):7.0f}")
        print(f"{name:32}{cells[0]:>27}{cells[1]:>27}")
    print(f"load average at end: {load()}")


def burst(
    page: Page, writer: CaseStore, running: list[int], count: int, at: datetime
) -> tuple[str, list[float], list[float]]:
    """``count`` transitions committed back to back; the last commit → the last shown."""
    clocks = running[:count]
    at += timedelta(minutes=1)
    last = clocks[-1]
    # A state the last clock is not in, so its row changes only with the burst.
    state = "needs_review" if writer.clocks.get(last).state == "unverified" else "unverified"
    page.evaluate(f"window.__benchWant[{last}] = {json.dumps(state)}")
    written_ms, tid = 0.0, 0
    started = time.perf_counter()
    for clock in clocks:
        written_ms, tid = _commit(writer, clock, state, at)
    spent = time.perf_counter() - started
    got = _wait(page, f"window.__swLive.find(e => e.id === {tid})?.received_ms ?? null", "burst")
    shown = _wait(page, f"window.__benchShown[{last}] ?? null", "burst table")
    page.evaluate(f"delete window.__benchWant[{last}]; delete window.__benchShown[{last}]")
    print(f"burst: {count} transitions committed in {spent:.1f} s")
    return f"burst of {count}: the last", [got - written_ms], [shown - written_ms]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figure", choices=["overview", "latency"])
    parser.add_argument("--frontages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7, help="overview: page loads measured")
    parser.add_argument("--events", type=int, default=40, help="latency: transitions per row")
    parser.add_argument("--poll-ms", type=int, nargs="+", default=[200, 50])
    parser.add_argument("--burst", type=int, default=1000, help="latency: transitions at once")
    parser.add_argument("--store", type=Path, help="keep the seeded village here; reuse it")
    args = parser.parse_args()
    overview(args) if args.figure == "overview" else latency(args)


if __name__ == "__main__":
    main()
