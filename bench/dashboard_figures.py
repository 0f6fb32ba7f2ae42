"""Dashboard figures in headless Debian Chromium over a seeded village of N frontages.

The dashboard runs in a process of its own (uvicorn, heap settled as ``serve``
does), as in the village; this process stands in for the analytics runner (it
commits to the same SQLite case store) and drives Chromium.

``overview``: time to a usable overview. "Usable" = the page has fetched
``/api/overview/page`` (one request: frontages, running clocks, alerts, map
shapes), drawn every frontage on the map (the map says how many it painted:
``data-shapes-drawn``; past 100 frontages it is one canvas) and the first page of
each table, and marked itself ready (``body[data-ready=overview]``); measured
from ``page.goto`` (a fresh page, logged-in cookie, warm server) to the first
frame on the screen after the page is so, stamped in the page (``STAMP_USABLE``); beside it the time
Playwright's ``expect`` sees, rounded up to its next poll (what this bench
printed before 2026-12-07). The API call is
also timed alone (server round trip), beside ``/api/overview`` and ``/api/map``
(the whole records, what the page read before) as the reference. Beside the
wall times, figures that depend less on the machine's load: the dashboard
process's CPU per request (``/proc/<pid>/stat``) and Chromium's main-thread
time per load (CDP ``Performance.getMetrics``: script, style, layout, all tasks, and the
thread's CPU time).

``map``: the same for the Map page (every frontage drawn, the parcels beneath), beside
``/api/map`` and ``/api/parcels`` timed alone.

``today``: the same for Today (``body[data-ready=today]`` with every line
drawn) over ``tests/dashboard/test_today.py``'s village (each frontage has one
thing for Today; the dashboard's clock is that test's ``NOW``), beside
``/api/today`` timed alone.

``latency``: a clock state change committed to the case records → shown in the
open overview page. One transition at a time is committed (as the recorder
does: one transaction each); the dashboard's live feed finds it by polling
(``--poll-ms``) and pushes it over server-sent events; the page recolours the
frontage on the map as the event arrives (stamped ``received_ms``) and updates
the clock's row in the clock table from the event (a MutationObserver stamps
when the row shows the new state). The table draws 50 rows at a time, so the
clerk's filter box is set to the clock's address first, as a clerk watching
one frontage would. Writer and browser share the machine's clock. Each event
waits for the previous one to show, then a random pause (0–300 ms) so commits
fall anywhere in the poll cycle. ``--burst N`` then commits N transitions back
to back (a storm's first snow moves every frontage's clock) and times the last
one to the map and to the table.

Seeding 2,000 frontages takes minutes: ``--store PATH`` keeps the village and
reuses it (``today`` needs a store of its own kind: ``bench/dashboard_today.py``'s
``--store`` is one).

    .venv/bin/python bench/dashboard_figures.py overview [--frontages 2000] [--runs 7]
    .venv/bin/python bench/dashboard_figures.py map [--frontages 2000] [--runs 7]
    .venv/bin/python bench/dashboard_figures.py today [--frontages 2000] [--runs 7] [--store PATH]
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
import sys
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
from sidewalk.dashboard.states import label
from sidewalk.storage.cases import CaseStore, Cause

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
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
# Before the page's own scripts: the wall-clock time the page became usable, stamped once
# it is (``body[data-ready]`` is the page's name, ``drawn`` in the page) and the next frame
# is on the screen (an SVG map is in the page before Chromium styles and paints it, a
# canvas only once painted: both are timed to the frame that shows them). Playwright's
# ``expect`` polls 0, 20, 70, 170, 270, 770, 1270 ms … after ``goto`` returns, so the time it
# sees is rounded up to the next poll: that time is printed beside this one.
STAMP_USABLE = """(([name, selector, count]) => {
  let seen = false;
  const check = () => {
    if (seen || document.body?.dataset.ready !== name) return;
    if (document.querySelectorAll(selector).length !== count) return;
    seen = true;
    requestAnimationFrame(() => setTimeout(() => { window.__benchUsable = Date.now(); }, 0));
  };
  const all = { attributes: true, childList: true, subtree: true };
  new MutationObserver(check).observe(document, all);
})(%s)"""


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
        cases.create_schema()  # a village kept from before a migration: brought up to date
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


def _serve(path: str, port: int, poll_s: float, fixed_now: str | None) -> None:
    """The dashboard process: the app over the store, served as ``serve`` serves it."""
    import uvicorn

    from sidewalk.dashboard.app import create_app, settle_heap

    cases = CaseStore(f"sqlite:///{path}")
    at = None if fixed_now is None else datetime.fromisoformat(fixed_now)
    app = create_app(
        cases, None, load_profile(), secret_key="bench-secret-0123456789", poll_s=poll_s,
        now=(lambda: at) if at else None,
    )  # fmt: skip
    settle_heap()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning", timeout_graceful_shutdown=1)


@contextmanager
def running_dashboard(
    path: Path, poll_s: float = 0.2, fixed_now: datetime | None = None
) -> Iterator[tuple[str, int]]:
    """The dashboard over ``path`` in a process of its own on a free loopback port
    (its URL and process id); ``fixed_now``: the dashboard's clock stands there."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = multiprocessing.get_context("spawn").Process(
        target=_serve,
        args=(str(path), port, poll_s, fixed_now.isoformat() if fixed_now else None),
        daemon=True,
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
        assert process.pid is not None
        yield url, process.pid
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


def process_cpu_s(pid: int) -> float:
    """CPU seconds (user + system) the process ``pid`` has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Chromium's main-thread figures for a page (CDP Performance.getMetrics), in ms: time in
# script, style, layout and all tasks (wall time: stretched when the machine is busy), and
# the thread's CPU time (much less so).
METRICS = {"script": "ScriptDuration", "style": "RecalcStyleDuration",
           "layout": "LayoutDuration", "all tasks": "TaskDuration",
           "CPU": "ThreadTime"}  # fmt: skip


def page_figures(
    context: BrowserContext, url: str, pid: int, page_name: str, *, apis: list[str],
    drawn: tuple[str, int], runs: int,
) -> None:  # fmt: skip
    """Time ``apis`` alone (wall, and the dashboard's CPU) and ``runs`` fresh loads of
    ``#page_name`` to usable: ready, with ``drawn`` (selector, count) in the page."""
    wall: dict[str, list[float]] = {path: [] for path in apis}
    cpu: dict[str, float] = dict.fromkeys(apis, 0.0)
    for _ in range(runs):
        for path in apis:
            started, started_cpu = time.perf_counter(), process_cpu_s(pid)
            response = context.request.get(f"{url}{path}")
            wall[path].append((time.perf_counter() - started) * 1000)
            cpu[path] += process_cpu_s(pid) - started_cpu
            assert response.ok, path
    usable: list[float] = []
    polled: list[float] = []
    chromium_ms: dict[str, list[float]] = {name: [] for name in METRICS}
    selector, count = drawn
    for run in range(runs + 1):
        page = context.new_page()
        page.add_init_script(STAMP_USABLE % json.dumps([page_name, selector, count]))
        cdp = context.new_cdp_session(page)
        cdp.send("Performance.enable")
        # Differences from here: a renderer process may serve more than one page.
        before = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        started, started_ms = time.perf_counter(), time.time() * 1000
        page.goto(f"{url}/#{page_name}")
        expect(page.locator("body")).to_have_attribute("data-ready", page_name, timeout=60_000)
        expect(page.locator(selector)).to_have_count(count)
        elapsed = (time.perf_counter() - started) * 1000
        stamped = _wait(page, "window.__benchUsable ?? null", "the usable stamp")
        if run:  # the first run warms the browser's module cache
            usable.append(stamped - started_ms)
            polled.append(elapsed)
            got = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
            for name, key in METRICS.items():
                chromium_ms[name].append((got[key] - before.get(key, 0.0)) * 1000)
        else:
            SHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SHOTS / f"bench-{page_name}-{count}.png"))
        page.close()
    print(f"\n{runs} runs (median / max, ms; CPU: the dashboard process, mean per request)\n")
    print(f"{'step':<46}{'median':>9}{'max':>9}{'CPU':>9}")
    for path in apis:
        times = wall[path]
        print(f"{'GET ' + path + ' (server round trip)':<46}{statistics.median(times):>9.0f}"
              f"{max(times):>9.0f}{cpu[path] / runs * 1000:>9.0f}")  # fmt: skip
    print(f"{f'page.goto → usable {page_name} (Chromium)':<46}"
          f"{statistics.median(usable):>9.0f}{max(usable):>9.0f}")  # fmt: skip
    print(f"{'  the same as expect() polling sees it':<46}"
          f"{statistics.median(polled):>9.0f}{max(polled):>9.0f}")  # fmt: skip
    for name, times in chromium_ms.items():
        print(f"{f'  Chromium main thread: {name}':<46}"
              f"{statistics.median(times):>9.0f}{max(times):>9.0f}")  # fmt: skip


def overview(args: argparse.Namespace) -> None:
    """Time to a usable overview (see the module docstring)."""
    print(f"load average at start: {load()}")
    with store(args) as path, running_dashboard(path) as (url, pid), chromium() as context:
        log_in(context, url)
        print(f"{args.frontages} frontages")
        apis = ["/api/overview/page", "/api/overview", "/api/map"]
        drawn = (f'[data-shapes-drawn="{args.frontages}"]', 1)  # the map, every frontage on it
        page_figures(context, url, pid, "overview", apis=apis, drawn=drawn, runs=args.runs)
    print(f"load average at end: {load()}")


def map_page(args: argparse.Namespace) -> None:
    """Time to a usable Map page (every frontage and parcel drawn), as ``overview``."""
    print(f"load average at start: {load()}")
    with store(args) as path, running_dashboard(path) as (url, pid), chromium() as context:
        log_in(context, url)
        print(f"{args.frontages} frontages")
        drawn = (f'[data-shapes-drawn="{args.frontages}"]', 1)
        page_figures(context, url, pid, "map", apis=["/api/map", "/api/parcels"], drawn=drawn,
                     runs=args.runs)  # fmt: skip
    print(f"load average at end: {load()}")


def today(args: argparse.Namespace) -> None:
    """Time to a usable Today (see the module docstring)."""
    from tests.dashboard.test_today import NOW, add_block

    print(f"load average at start: {load()}")
    with tempfile.TemporaryDirectory(prefix="dashboard-bench-") as tmp:
        path = args.store or Path(tmp) / "cases.sqlite3"
        cases = CaseStore(f"sqlite:///{path}")
        if path.exists():
            cases.create_schema()  # kept from before a migration: brought up to date
        if path.exists() and cases.registry.list_frontages():
            have = len(cases.registry.list_frontages())
            if have != args.frontages:
                raise SystemExit(f"{path} holds {have} frontages, not {args.frontages}")
            print(f"reusing the village of {have} frontages in {path}")
        else:
            started = time.perf_counter()
            cases.create_schema()
            cases.registry.upsert_device("pole-1", "clyman")
            add_block(cases, 0, args.frontages)
            add_user(cases, "bench", PASSWORD, "clerk")
            print(f"seeded {args.frontages} frontages in {time.perf_counter() - started:.0f} s")
        cases.close()
        with running_dashboard(path, fixed_now=NOW) as (url, pid), chromium() as context:
            log_in(context, url)
            groups = context.request.get(f"{url}/api/today").json()["groups"]
            lines = sum(len(g["items"]) for g in groups)
            print(f"{args.frontages} frontages, {lines} lines on Today")
            page_figures(context, url, pid, "today", apis=["/api/today", "/api/overview/page"],
                         drawn=(".todo-item", lines), runs=args.runs)  # fmt: skip
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
        addresses = {f.id: f.street_address for f in writer.registry.list_frontages()}
        running = {c.id: addresses[c.frontage_id] for c in writer.clocks.list(active_only=True)}
        clocks = list(running)
        at = datetime.now(UTC)
        for poll_ms in args.poll_ms:
            with (
                running_dashboard(path, poll_s=poll_ms / 1000) as (url, _),
                chromium() as context,
            ):
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
                    clock = clocks[rng.randrange(len(clocks))]
                    state = "snowing" if n % 2 == 0 else "clearing_period"
                    watch(page, clock, running[clock])
                    wanted = json.dumps(label(state, "clearing"))
                    page.evaluate(f"window.__benchWant[{clock}] = {wanted}")
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


def watch(page: Page, clock: int, address: str) -> None:
    """The clock table filtered to the clock's address (it draws 50 rows at a time), as a
    clerk watching one frontage would; waits until the clock's row is drawn."""
    page.fill("#clock-rows-filter", address)
    expect(page.locator(f'[data-clock="{clock}"]')).to_have_count(1)


def burst(
    page: Page, writer: CaseStore, running: dict[int, str], count: int, at: datetime
) -> tuple[str, list[float], list[float]]:
    """``count`` transitions committed back to back; the last commit → the last shown."""
    clocks = list(running)[:count]
    at += timedelta(minutes=1)
    last = clocks[-1]
    watch(page, last, running[last])
    # A state the last clock is not in, so its row changes only with the burst.
    state = "needs_review" if writer.clocks.get(last).state == "unverified" else "unverified"
    wanted = json.dumps(label(state, "clearing"))
    page.evaluate(f"window.__benchWant[{last}] = {wanted}")
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
    parser.add_argument("figure", choices=["overview", "map", "today", "latency"])
    parser.add_argument("--frontages", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=7, help="overview: page loads measured")
    parser.add_argument("--events", type=int, default=40, help="latency: transitions per row")
    parser.add_argument("--poll-ms", type=int, nargs="+", default=[200, 50])
    parser.add_argument("--burst", type=int, default=1000, help="latency: transitions at once")
    parser.add_argument("--store", type=Path, help="keep the seeded village here; reuse it")
    args = parser.parse_args()
    figures = {"overview": overview, "map": map_page, "today": today, "latency": latency}
    figures[args.figure](args)


if __name__ == "__main__":
    main()
