"""A winter on the services a village runs, checked against the Code's own text.

The processes start with the ``ExecStart`` lines of ``deploy/*.service`` (the
install path swapped for this checkout's ``.venv``), on
``deploy/sidewalk.example.toml`` with only paths, ports and the signature's file
changed, against real Mosquitto and PostgreSQL. The street is a county parcel
file imported with ``sidewalk registry import``; a sale re-imported with
``--effective`` between two storms; the pole registered through the
dashboard's API; the pole's own publisher plays three storms of the shared
Minneapolis record, compressed and laid in the weeks before today. Analytics
runs with ``--event-time``: a winter cannot be waited out in wall time (the
one difference from the unit; the live scheduler has tests of its own).

Every clearing notice is compared with ``oracle``: which walks, after which
storm, due when, to the owner of record on that date at the county's mailing
address, citing § 370-10, and the PDF the clerk prints carrying the configured
letterhead, officer and signature.
"""

from __future__ import annotations

import io
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from sidewalk.scenarios import Scenario, expand
from sidewalk.scenarios.accuracy import storms_from_hours
from sidewalk.scenarios.weather import WeatherDataMissing, load_minneapolis
from tests.acceptance.oracle import ClearingRule, Expected, clearing_rule, violates
from tests.harness.mosquitto import MosquittoServer, free_port
from tests.harness.postgres import PostgresServer
from tests.registry.parcels import generate, write_geojson

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT.parent / "shared" / "seeds"
BIN = ROOT / ".venv" / "bin"
DEVICE = "pole-acceptance-01"
# The walks the pole watches, and how each owner clears after each storm:
# (hours after the snow ceased, cleared width in feet); [] = never.
CLEARING: dict[int, list[list[tuple[float, float]]]] = {
    0: [[(10, 5)], [(8, 5)], [(6, 5)]],  # always in time: never a notice
    1: [[(6, 2)], [(10, 5)], []],  # a 2-ft path, then in time, then never
    2: [[(36, 5)], [(10, 5)], []],  # late (cleared before storm 2), in time, never (sold)
}


def exec_start(unit: str, config: Path) -> list[str]:
    """The unit's ExecStart with this checkout's venv and the test's config."""
    text = (ROOT / "deploy" / unit).read_text(encoding="utf-8")
    line = next(x for x in text.splitlines() if x.startswith("ExecStart="))
    argv = shlex.split(line.removeprefix("ExecStart="))
    argv[0] = str(BIN / Path(argv[0]).name)
    return [str(config) if a == "/etc/sidewalk/sidewalk.toml" else a for a in argv]


def example_config(tmp: Path, **values: str) -> str:
    """deploy/sidewalk.example.toml with ``key = value`` lines (or commented ones) replaced."""
    text = (ROOT / "deploy" / "sidewalk.example.toml").read_text(encoding="utf-8")
    for key, value in values.items():
        text, n = re.subn(rf"(?m)^(# )?{key} = .*$", f"{key} = {value}", text, count=1)
        assert n == 1, f"the example config has no {key} line"
    return text


def sidewalk(config: Path, *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [str(BIN / "sidewalk"), *args, "--config", str(config)],
        input=stdin, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"sidewalk {' '.join(args)}: {done.stdout}{done.stderr}"
    return done.stdout


def wait_http(url: str, timeout_s: float = 60.0) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            if httpx.get(url, timeout=1.0).status_code < 500:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    raise TimeoutError(url)


def storms_of_record() -> list[tuple[datetime, list[tuple[datetime, float]]]]:
    """Three storms of the 2017-18 Minneapolis record: (first hour, [(hour, snow water mm/h)])."""
    try:
        hours = load_minneapolis(date(2017, 11, 1), date(2018, 4, 1))
    except WeatherDataMissing as exc:
        pytest.skip(f"needs ../shared/data: {exc}")
    picked = []
    for storm in storms_from_hours(hours):
        if storm.snow_hours < 4 or storm.end - storm.onset > timedelta(hours=14):
            continue
        inside = [(h.start, h.snow_water_mm_h) for h in hours
                  if storm.onset <= h.start < storm.end and h.snowing]  # fmt: skip
        picked.append((inside[0][0], inside))
        if len(picked) == 3:
            break
    assert len(picked) == 3
    return picked


def code_rule() -> ClearingRule:
    """The oracle's § 370-10 A, read from the ordinance text beside the clone."""
    if not any(SEEDS.glob("*.txt")):
        pytest.skip(f"the ordinance text (the oracle's source) is not at {SEEDS}")
    return clearing_rule(SEEDS)


def winter(frontages: list[tuple[str, str]], start: datetime) -> tuple[Scenario, list[datetime]]:
    """The pole's scenario: the record's storms four days apart from ``start``; returns the
    scenario and each storm's true cessation (the end of its last snowing hour)."""
    snowfall, clearing, ceased = [], [], []
    for k, (first, hours) in enumerate(storms_of_record()):
        shift = start + timedelta(days=4 * k) - first
        for at, water in hours:
            rate = max(water * 10.0, 2.0)  # snow depth ~ 10 x its water
            snowfall.append({"start": at + shift, "end": at + shift + timedelta(hours=1),
                             "rate_mm_per_hour": rate,
                             "precip_mm_per_hour": max(water, 0.2)})  # fmt: skip
        end = hours[-1][0] + shift + timedelta(hours=1)
        ceased.append(end)
        for i, (fid, _) in enumerate(frontages):
            for after, width in CLEARING[i][k]:
                clearing.append({"frontage": fid, "at": end + timedelta(hours=after),
                                 "cleared_width_ft": width})  # fmt: skip
    scenario = Scenario.model_validate({
        "scenario": {"name": "acceptance-winter", "site": "clyman", "device": DEVICE,
                     "start": start - timedelta(hours=6), "end": ceased[-1] + timedelta(hours=30),
                     "weather_interval_minutes": 10, "camera_interval_minutes": 30, "seed": 24},
        "frontage": [{"id": fid, "address": addr, "parcel": fid, "length_ft": 55,
                      "walk_width_ft": 5, "owner": "-", "mailing_address": ["-"]}
                     for fid, addr in frontages],
        "snowfall": snowfall, "clearing": clearing,
    })  # fmt: skip
    return scenario, ceased


@pytest.fixture
def services(
    tmp_path: Path, mosquitto: MosquittoServer, postgres_server: PostgresServer
) -> Iterator[dict[str, object]]:
    from PIL import Image, ImageDraw

    signature = tmp_path / "signature.png"
    image = Image.new("RGB", (400, 100), "white")
    ImageDraw.Draw(image).line([(10, 70), (120, 20), (250, 80), (390, 30)], fill="navy", width=4)
    image.save(signature)
    db = postgres_server.create_database(f"acceptance_{os.getpid()}_{time.monotonic_ns()}")
    ports = {"ingest": free_port(), "analytics": free_port(), "dashboard": free_port()}
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        example_config(
            tmp_path,
            data_dir=f'"{tmp_path}"',
            url=f'"mqtt://{mosquitto.host}:{mosquitto.port}"',
            sqlite_path=f'"{tmp_path / "timeseries.sqlite3"}"',
            database_url=f'"{db}"',
            signature_image=f'"{signature}"',
            ingest_port=str(ports["ingest"]),
            analytics_port=str(ports["analytics"]),
            print_dir=f'"{tmp_path / "print"}"',
        ),
        encoding="utf-8",
    )
    os.environ.setdefault("SIDEWALK_DASHBOARD_SECRET", "acceptance-secret-" + "x" * 32)
    procs: list[subprocess.Popen[bytes]] = []
    logs = tmp_path / "logs"
    logs.mkdir()

    def start(unit: str, *extra: str) -> None:
        argv = exec_start(unit, config)
        argv = [str(ports["dashboard"]) if a == "8080" else a for a in argv]
        out = (logs / f"{unit}.log").open("wb")
        procs.append(subprocess.Popen([*argv, *extra], stdout=out, stderr=subprocess.STDOUT))

    yield {"config": config, "ports": ports, "start": start, "logs": logs, "db": db}
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()


def test_a_winter_of_notices_as_the_code_reads(services: dict[str, object], tmp_path: Path) -> None:  # noqa: PLR0915
    from pypdf import PdfReader

    from sidewalk.alerts.confirm import confirm_value, unconfirmed_report
    from sidewalk.core.config import Settings, mqtt_settings
    from sidewalk.core.profile import load_profile
    from sidewalk.edge.buffer import ReadingBuffer
    from sidewalk.edge.publisher import Publisher
    from sidewalk.edge.simulated import SimulatedPole
    from sidewalk.storage.connect import open_cases

    rule = code_rule()
    config = services["config"]
    assert isinstance(config, Path)
    ports = services["ports"]
    assert isinstance(ports, dict)
    start = services["start"]
    assert callable(start)
    today = datetime.now(UTC).replace(minute=0, second=0, microsecond=0)
    first_storm = today - timedelta(days=14)

    # The county file, imported as the IT person does, owners of record since autumn.
    county = generate(blocks_x=4, blocks_y=3, lots=8)
    county_file = write_geojson(county, tmp_path / "county.geojson")
    sidewalk(config, "registry", "import", str(county_file), "--effective",
             (first_storm - timedelta(days=60)).date().isoformat())  # fmt: skip
    profile = load_profile()
    cases = open_cases(str(services["db"]), profile)
    try:
        lots = sorted(
            (f for f in cases.registry.list_frontages() if f.street_address[0].isdigit()),
            key=lambda f: f.street_address,
        )
        assert len(lots) >= 150, "several hundred parcels' frontages"
        watched = lots[:3]
        owners = {f.id: cases.registry.get_owner(f.owner_id) for f in watched}
        # The Village confirms the profile's open values (a board action in life).
        for item in unconfirmed_report(cases, profile):
            if not item.confirmed:
                confirm_value(cases, profile, item.name, by="Village Board",
                              reference="acceptance: minutes item 1",
                              at=first_storm - timedelta(days=45),
                              who="clerk")  # fmt: skip
    finally:
        cases.close()
    # The third walk's parcel is sold between the second and third storms.
    sold = watched[2]
    sale_day = (first_storm + timedelta(days=6)).date()
    record = next(r for r in county.records
                  if r.attributes["SITEADRESS"].upper() == sold.street_address.upper())  # fmt: skip
    record.attributes.update(OWNERNME1="NEWCOMER PAT", OWNERNME2="",
                             PSTLADRESS="PO BOX 424 CLYMAN WI 53016")  # fmt: skip
    write_geojson(county, county_file)
    sidewalk(config, "registry", "import", str(county_file), "--effective", sale_day.isoformat())

    start("sidewalk-ingest.service")
    start("sidewalk-analytics.service", "--event-time")
    start("sidewalk-dashboard.service")
    wait_http(f"http://127.0.0.1:{ports['ingest']}/healthz")
    wait_http(f"http://127.0.0.1:{ports['analytics']}/healthz")
    web = f"http://127.0.0.1:{ports['dashboard']}"
    wait_http(f"{web}/api/session")

    # The admin registers the pole on the Poles page; it has watched since autumn.
    sidewalk(config, "dashboard", "add-user", "pat", "--role", "admin",
             stdin="a long enough password\na long enough password\n")  # fmt: skip
    client = httpx.Client(base_url=web, timeout=30.0)
    login = client.post(
        "/api/session", json={"username": "pat", "password": "a long enough password"}
    )
    assert login.status_code == 200, login.text
    client.headers["X-CSRF-Token"] = login.json()["csrf_token"]
    client.headers["Origin"] = web  # what a browser sends from our own page
    made = client.post("/api/registry/poles", json={"device_id": DEVICE, "label": "Main St east"})
    assert made.status_code == 200, made.text
    sidewalk(config, "registry", "pole", "assign", DEVICE, *[f.id for f in watched],
             "--by", "pat", "--at", (first_storm - timedelta(days=30)).isoformat())  # fmt: skip

    # The pole plays the winter through its own buffer and publisher.
    scenario, ceased = winter([(f.id, f.street_address) for f in watched], first_storm)
    settings = Settings.model_validate(
        {"mqtt": {"url": f"mqtt://127.0.0.1:{_broker_port(config)}"}}
    )
    buffer = ReadingBuffer(tmp_path / "pole-buffer.sqlite3", DEVICE)
    publisher = Publisher(buffer, mqtt_settings(settings, DEVICE), site="clyman")
    publisher.start()
    try:
        played = SimulatedPole(publisher, expand(scenario)).run()
        assert publisher.wait_stored(timeout_s=120), "ingest did not store the pole's readings"
    finally:
        publisher.stop()
    assert played

    # What the Code calls for.
    expected: list[Expected] = []
    for k, end in enumerate(ceased):
        due = end + timedelta(hours=rule.hours_to_clear)
        for i, f in enumerate(watched):
            widths = [(end + timedelta(hours=h), w) for h, w in CLEARING[i][k]]
            if not violates(rule, widths, due):
                continue
            after_sale = f.id == sold.id and due.date() >= sale_day
            owner = owners[f.id]
            expected.append(Expected(
                f.street_address, k, end,
                "NEWCOMER PAT" if after_sale else owner.name,
                ("PO BOX 424",) if after_sale else tuple(owner.address_lines),
            ))  # fmt: skip
    assert len(expected) == 4

    cases = open_cases(str(services["db"]), profile)
    try:
        deadline = time.monotonic() + 120
        notices = []
        while time.monotonic() < deadline:
            notices = [n for n in cases.notices.list(kind="clearing_violation") if n.body_text]
            if len(notices) >= len(expected):
                break
            time.sleep(1.0)
        by_address = {f.id: f.street_address for f in watched}
    finally:
        cases.close()
    found = sorted(((by_address[n.frontage_id], n) for n in notices), key=lambda x: x[0])
    assert [a for a, _ in found] == sorted(e.address for e in expected), _logs(services)
    compared = 0
    for want in sorted(expected, key=lambda e: (e.address, e.storm)):
        mine = [n for a, n in found if a == want.address]
        n = min(mine, key=lambda n: abs((n.deadline or n.issued_at) - want.due(rule)))
        assert n.deadline is not None
        # Due 24 h after the snow ceased; never early (the clock favours the owner).
        assert (
            want.due(rule) - timedelta(minutes=10)
            <= n.deadline
            <= want.due(rule) + timedelta(hours=3)
        ), (want, n.deadline)
        assert n.issued_at >= n.deadline, "a notice before its deadline"
        assert n.owner_name.upper() == want.owner.upper()
        assert n.owner_address_lines[0].upper().startswith(want.mailing[0].upper())
        pdf = client.get(f"/api/notices/{n.number}/letter.pdf")
        assert pdf.status_code == 200, pdf.text
        reader = PdfReader(io.BytesIO(pdf.content))
        text = " ".join((p.extract_text() or "") for p in reader.pages)
        flat = re.sub(r"\s+", " ", text)
        for words in ("Village Hall", "1 Main St", "(920) 555-0142", "Dana Kruger",
                      "Clerk-Treasurer", rule.section, want.address):  # fmt: skip
            assert words.upper() in flat.upper(), f"{n.number}'s letter lacks {words!r}"
        assert "Village of Clyman Office" not in flat, "a letter without the letterhead"
        assert any(page.images for page in reader.pages), "a letter without the signature"
        compared += 1
    assert compared == len(expected)
    print(f"oracle compared {compared} notices and {compared} PDF letters", file=sys.stderr)

    # The clerk records service on the dashboard; analytics (event time) applies it.
    served = serve_one(client, [n for _, n in found], services)
    frontage = next(n.frontage_id for _, n in found if n.number == served)

    # The clerk's pages in Chromium, at a phone's and a desk's width: words, not ids.
    screens(services, web, served, frontage)


def serve_one(client: httpx.Client, notices: list[Any], services: dict[str, object]) -> str:
    """Serve the first notice whose case still waits for service (a walk cleared after
    its notice has nothing left to serve), mailed and received a day after issue; wait
    for the analytics service to apply it; the oracle on the owner's deadline."""

    def steps(number: str) -> list[str]:
        return [step["kind"] for step in client.get(f"/api/notices/{number}").json()["steps"]]

    servable = [n for n in notices if "record_delivery" in steps(n.number)]
    assert servable, "no notice can be served: the never-cleared walks' notices should be"
    served = servable[0]
    received = served.issued_at + timedelta(days=1)
    made = client.post(f"/api/notices/{served.number}/service", json={
        "method": "mail", "served_by": "Dana Kruger", "at": received.isoformat(),
    })  # fmt: skip
    assert made.status_code == 200, made.text
    view: dict[str, Any] = {}
    end = time.monotonic() + 60
    while time.monotonic() < end:
        view = client.get(f"/api/notices/{served.number}").json()
        lines = view.get("history") or []
        if lines and not any(line["outcome"] == "waiting" for line in lines):
            break
        time.sleep(0.5)
    else:
        raise AssertionError(f"the service was never applied: {view}\n{_logs(services)}")
    assert not any(line["outcome"] == "refused" for line in view["history"]), view
    # § 370-10 F: the Village removes only "after receiving a written notice".
    owner_deadline = view["owner_deadline"]
    assert isinstance(owner_deadline, str), view
    assert datetime.fromisoformat(owner_deadline) > received, view
    return str(served.number)


def screens(services: dict[str, object], web: str, number: str, frontage: str) -> None:
    """The Notices list and the served notice's page at 390 and 1366 px, screenshotted
    into test-artifacts/acceptance/, and the words on them a clerk's, never ours."""
    from playwright.sync_api import sync_playwright

    from tests.dashboard.conftest import CHROMIUM, CHROMIUM_ARGS

    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (apt-get install chromium)")
    out = Path(__file__).resolve().parents[2] / "test-artifacts" / "acceptance"
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        try:
            for width in (390, 1366):
                page = browser.new_context(viewport={"width": width, "height": 900}).new_page()
                page.goto(f"{web}/login")
                page.get_by_label("User name").fill("pat")
                page.get_by_label("Password").fill("a long enough password")
                page.get_by_role("button", name="Log in").click()
                page.wait_for_selector("body[data-ready='today']", timeout=30_000)
                pages = (
                    ("today", "#today"), ("notices", "#notices"),
                    ("notice", f"#notice/{number}"), ("property", f"#property/{frontage}"),
                )  # fmt: skip
                for name, hash_ in pages:
                    page.goto(f"{web}/{hash_}")
                    page.wait_for_selector(f"body[data-ready='{name}']", timeout=30_000)
                    page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
                    text = page.inner_text("main")
                    if name != "today":
                        assert number in text, (name, text[:2000])
                    for ours in STATE_WORDS:
                        found = re.search(ours, text)
                        assert not found, (
                            name,
                            width,
                            ours,
                            text[max(0, found.start() - 300) : found.end() + 100],
                        )
                page.context.close()
        finally:
            browser.close()


# Words of ours that must never reach the clerk's screen: Python's None, the engine's
# snake_case states and kinds, "(inferred)" from the decision's citation.
STATE_WORDS = (
    r"\bNone\b(?! recorded)",  # Python's None; "None recorded." is the clerk's English
    r"\bclearing_violation\b",
    r"\bhazard_notice\b",
    r"\b[a-z]+_period\b",
    r"\brecord_delivery\b",
    r"\bundefined\b",
    r"\bnull\b",
    # Every value was confirmed by the Board in the autumn, before any notice.
    r"value not confirmed",
    r"\(inferred\)",
    r"\b[a-z]+-[a-z]+-\d+\b",  # a frontage id such as main-st-105
)


def _broker_port(config: Path) -> int:
    m = re.search(r'(?m)^url = "mqtt://[^:]+:(\d+)"', config.read_text(encoding="utf-8"))
    assert m
    return int(m.group(1))


def _logs(services: dict[str, object]) -> str:
    logs = services["logs"]
    assert isinstance(logs, Path)
    return "\n".join(
        f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in logs.iterdir()
    )
