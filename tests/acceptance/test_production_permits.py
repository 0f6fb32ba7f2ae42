"""Street-opening permits on the services a village runs, checked against § 370-7's text.

The same production path as the winter (``test_production_winter``: the units'
``ExecStart`` lines, the shipped example config, real Mosquitto and PostgreSQL, a
county file imported, the pole registered on the dashboard): the clerk enters the
season's street-opening permits and the dates of their work with ``sidewalk cold
permit`` and ``sidewalk cold permit-work`` as each happens, while the pole's weather
readings carry analytics' event time from one December to the next August.

What the engine found (``sidewalk cold status``, and the findings it recorded) is
compared with ``oracle.opening_violations``, written from the Code's own days and
dates (§ 370-7 G: cold mix replaced by the following June 1, permanent pavement
within 60 days of the permit; H: an emergency's permit applied for by the next
business day; I: the work finished within 30 days of the Clerk-Treasurer's repaving
notice, no opening for five years after a repaving): each violation the Code calls
for found, citing its subsection and stating its last day, and none other. Every
notice the register holds about a permit must carry the letterhead, cite § 370-7
with the right subsection and be addressed to the permit holder.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections import Counter
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from sidewalk.scenarios import Scenario, expand
from tests.acceptance.oracle import (
    Opening,
    OpeningFinding,
    citation_problems,
    cites_subsection,
    day_in_words,
    opening_rule,
    opening_violations,
)
from tests.acceptance.test_production_winter import (  # noqa: F401 (fixtures)
    DEVICE,
    PROFILE_FILE,
    SEEDS,
    ZONE,
    Player,
    _broker_port,
    _logs,
    assert_letterhead,
    own_broker,
    pdf_text,
    services,
    sidewalk,
    tail,
    wait_for,
    wait_http,
)
from tests.registry.parcels import generate, write_geojson

ROOT = Path(__file__).resolve().parents[2]
TALLY: Counter[str] = Counter()
# What the clerk read, for the word check below the season.
SEEN: dict[str, str] = {}


def season_year(today: date) -> int:
    """The December the season starts in: the last whose next August is past (and within
    the 731 days a pole's readings may be behind)."""
    return today.year - 1 if today >= date(today.year, 9, 1) else today.year - 2


def at(day: date, hour: int = 9, minute: int = 0) -> datetime:
    return datetime.combine(day, time(hour, minute), ZONE)


def first_weekday(year: int, month: int, weekday: int) -> date:
    day = date(year, month, 1)
    return day + timedelta(days=(weekday - day.weekday()) % 7)


def the_permits(w: int) -> tuple[list[Opening], list[tuple[datetime, list[str]]]]:
    """The season's openings as the Code sees them, and the clerk's entries in time order
    (when entered, the command's arguments)."""
    friday = first_weekday(w, 12, 4)  # a Friday-night emergency
    tuesday = friday + timedelta(days=4)
    spring = w + 1
    openings = [
        # H: applied for five days later (due by the end of Monday).
        Opening("SO-H1", "Main St", at(friday, 22), tuesday + timedelta(days=1), emergency=True,
                applied=at(tuesday + timedelta(days=1)), cold_mix_on=friday + timedelta(days=1),
                permanent_on=date(spring, 6, 1)),
        # G: the cold mix never replaced (due by the following June 1); H in time.
        Opening("SO-G1", "Elm St", at(tuesday, 14), tuesday + timedelta(days=1), emergency=True,
                applied=at(tuesday + timedelta(days=1), 8), cold_mix_on=tuesday),
        # G: permanent pavement 77 days after the permit's date (due within 60).
        Opening("SO-G2", "Oak St", at(date(spring, 5, 11), 8), date(spring, 5, 4),
                permanent_on=date(spring, 7, 20)),
        # Nothing wrong: paved in time.
        Opening("SO-OK", "Pine St", at(date(spring, 4, 20), 8), date(spring, 4, 13),
                permanent_on=date(spring, 5, 15)),
        # I: the Clerk-Treasurer's repaving notice of May 1; the work finished June 10.
        Opening("SO-I1", "Cedar St", at(date(spring, 4, 14), 8), date(spring, 4, 6),
                pavement=False, repaving_notice_on=date(spring, 5, 1),
                completed_on=date(spring, 6, 10)),
        # I: opened three years after the street was repaved; and one six years after.
        Opening("SO-I2", "Maple St", at(date(spring, 8, 10), 8), date(spring, 8, 3),
                pavement=False, street_repaved_on=date(spring - 3, 6, 15)),
        Opening("SO-I3", "Birch St", at(date(spring, 8, 10), 8), date(spring, 8, 3),
                pavement=False, street_repaved_on=date(spring - 6, 6, 15)),
    ]  # fmt: skip
    entries: list[tuple[datetime, list[str]]] = []
    for o in openings:
        args = ["cold", "permit", "--id", o.permit, "--street", o.street,
                "--opened-at", o.opened.isoformat(), "--approved-at", at(o.approved).isoformat(),
                "--who", "Dana Kruger",
                # § 370-7 B and F's notices, given in time (not what this test is about).
                "--dpw-notified-at", (o.opened - timedelta(days=3)).isoformat(),
                "--parties-notified-at", (o.opened - timedelta(days=4)).isoformat()]  # fmt: skip
        if o.emergency:
            args.append("--emergency")
        if not o.pavement:
            args.append("--no-pavement")
        if o.street_repaved_on is not None:
            args += ["--street-repaved-on", o.street_repaved_on.isoformat()]
        entered = o.opened + timedelta(hours=12)
        if o.cold_mix_on is not None:
            args += ["--cold-mix-on", o.cold_mix_on.isoformat()]
            entered = max(entered, at(o.cold_mix_on, 17))
        entries.append((entered, args))

        def work(when: datetime, *given: str, o: Opening = o) -> None:
            entries.append((when, ["cold", "permit-work", "--id", o.permit, "--who",
                                   "Dana Kruger", "--at", when.isoformat(), *given]))  # fmt: skip

        if o.applied is not None:
            work(o.applied + timedelta(hours=1), "--applied-at", o.applied.isoformat())
        if o.permanent_on is not None:
            work(at(o.permanent_on, 17), "--permanent-pavement-on", o.permanent_on.isoformat())
        if o.repaving_notice_on is not None:
            work(at(o.repaving_notice_on, 17), "--repaving-notice-on",
                 o.repaving_notice_on.isoformat())  # fmt: skip
        if o.completed_on is not None:
            work(at(o.completed_on, 17), "--work-completed-on", o.completed_on.isoformat())
    return openings, sorted(entries, key=lambda e: e[0])


def quiet_weather(start: datetime, frontage: tuple[str, str]) -> list[Any]:
    """The pole's first weather reading (no snow) at ``start``, for ``tail`` to go on from."""
    scenario = Scenario.model_validate({
        "scenario": {"name": "acceptance-permits", "site": "clyman", "device": DEVICE,
                     "start": start, "end": start + timedelta(hours=1),
                     "weather_interval_minutes": 60, "camera_interval_minutes": 60, "seed": 7},
        "frontage": [{"id": frontage[0], "address": frontage[1], "parcel": frontage[0],
                      "length_ft": 55, "walk_width_ft": 5, "owner": "-",
                      "mailing_address": ["-"]}],
        "snowfall": [], "clearing": [],
    })  # fmt: skip
    return [r for r in expand(scenario) if r.stream == "weather"][:1]


def entries_applied(services: dict[str, object], profile: Any) -> None:  # noqa: F811
    """Wait until the analytics service has applied every permit entry (or refused it)."""
    from sidewalk.storage.connect import open_cases

    def none_pending() -> bool:
        cases = open_cases(str(services["db"]), profile)
        try:
            return not [a for a in cases.actions.pending() if a.kind == "record_permit"]
        finally:
            cases.close()

    wait_for(none_pending, "the permit entries applied", services)


def test_a_season_of_street_openings_as_section_370_7_reads(  # noqa: PLR0915
    services: dict[str, object],  # noqa: F811 (the fixture)
    tmp_path: Path,
) -> None:
    from sidewalk.core.config import Settings, mqtt_settings
    from sidewalk.core.profile import load_profile
    from sidewalk.edge.buffer import ReadingBuffer
    from sidewalk.edge.publisher import Publisher
    from sidewalk.storage.connect import open_cases

    if not any(SEEDS.glob("*.txt")):
        pytest.skip(f"the ordinance text (the oracle's source) is not at {SEEDS}")
    rule = opening_rule(SEEDS)
    village_says = tomllib.loads(PROFILE_FILE.read_text(encoding="utf-8"))
    holidays = frozenset(village_says["calendar"]["holidays"])
    config, ports, start = services["config"], services["ports"], services["start"]
    assert isinstance(config, Path)
    assert isinstance(ports, dict)
    assert callable(start)
    w = season_year(datetime.now(UTC).astimezone(ZONE).date())
    openings, entries = the_permits(w)
    first = at(date(w, 12, 1), 0)
    end = at(date(w + 1, 8, 20), 12)

    county = generate(blocks_x=2, blocks_y=2, lots=4)
    county_file = write_geojson(county, tmp_path / "county.geojson")
    sidewalk(config, "registry", "import", str(county_file), "--effective",
             (first - timedelta(days=60)).date().isoformat())  # fmt: skip
    profile = load_profile()
    cases = open_cases(str(services["db"]), profile)
    try:
        lot = min((f for f in cases.registry.list_frontages() if f.street_address[0].isdigit()),
                  key=lambda f: f.street_address)  # fmt: skip
    finally:
        cases.close()
    start("sidewalk-ingest.service")
    start("sidewalk-analytics.service", "--event-time")
    start("sidewalk-dashboard.service")
    wait_http(f"http://127.0.0.1:{ports['ingest']}/healthz")
    wait_http(f"http://127.0.0.1:{ports['analytics']}/healthz")
    web = f"http://127.0.0.1:{ports['dashboard']}"
    wait_http(f"{web}/api/session")
    sidewalk(config, "dashboard", "add-user", "pat", "--role", "admin",
             stdin="a long enough password\na long enough password\n")  # fmt: skip
    client = httpx.Client(base_url=web, timeout=30.0)
    login = client.post(
        "/api/session", json={"username": "pat", "password": "a long enough password"}
    )
    assert login.status_code == 200, login.text
    client.headers["X-CSRF-Token"] = login.json()["csrf_token"]
    client.headers["Origin"] = web
    made = client.post("/api/registry/poles", json={"device_id": DEVICE, "label": "Main St east"})
    assert made.status_code == 200, made.text
    sidewalk(config, "registry", "pole", "assign", DEVICE, lot.id, "--by", "pat",
             "--at", (first - timedelta(days=30)).isoformat())  # fmt: skip

    settings = Settings.model_validate(
        {"mqtt": {"url": f"mqtt://127.0.0.1:{_broker_port(config)}"}}
    )
    publisher = Publisher(
        ReadingBuffer(tmp_path / "pole-buffer.sqlite3", DEVICE),
        mqtt_settings(settings, DEVICE), site="clyman",
    )  # fmt: skip
    publisher.start()
    later = services["later"]
    assert isinstance(later, list)
    later.append(publisher.stop)
    play = Player(publisher, ports["analytics"], services)
    weather = quiet_weather(first, (lot.id, lot.street_address))
    play(weather)

    # The clerk enters each permit and each date of its work as it happens; the pole's
    # readings carry event time on between the entries.
    for when, args in entries:
        play(tail(weather, play.last, when, minutes=360))
        sidewalk(config, *args)
        entries_applied(services, profile)
    play(tail(weather, play.last, end, minutes=360))
    entries_applied(services, profile)

    # What the Code calls for, as of the season's end.
    today = end.date()
    expected: list[OpeningFinding] = [
        f for o in openings for f in opening_violations(rule, o, today, holidays)
    ]
    assert {(f.permit, f.letter) for f in expected} == {
        ("SO-H1", "H"),
        ("SO-G1", "G"),
        ("SO-G2", "G"),
        ("SO-I1", "I"),
        ("SO-I2", "I"),
    }, expected  # the season is the one the test means
    cases = open_cases(str(services["db"]), profile)
    try:
        found = [
            (o.permit, a.detail)
            for o in openings
            for a in cases.audit.list(f"permit:{o.permit}")
            if a.action == "finding.violation"
        ]
        refused = [a for a in cases.actions.list() if a.kind == "record_permit" and a.error]
        notices = cases.notices.list()
    finally:
        cases.close()
    assert not refused, [(a.target, a.error) for a in refused]
    status = sidewalk(config, "cold", "status")
    SEEN["output of sidewalk cold status"] = status
    flat_status = re.sub(r"\s+", " ", status)

    # Each § 370-7 G, H, I violation found is one the Code calls for, citing its
    # subsection and stating the last day the Code allowed; and each the Code calls for
    # was found.
    mine = [(p, d) for p, d in found
            if any(cites_subsection(d.get("citation") or "", x) for x in "GHI")]  # fmt: skip
    for permit, detail in mine:
        want = [f for f in expected if f.permit == permit
                and cites_subsection(detail["citation"], f.letter)]  # fmt: skip
        assert want, (permit, detail, "a § 370-7 violation the Code does not call for")
        message = re.sub(r"\s+", " ", detail["message"])
        assert any(f.last_day is not None and day_in_words(f.last_day) in message
                   for f in want), (permit, message, want)  # fmt: skip
        assert cites_subsection(message, want[0].letter), message
        # The clerk's page shows the stored sentence, citing as the Code does.
        assert re.sub(r"\s*\(inferred\)", "", message) in flat_status, (message, status)
        TALLY["§ 370-7 finding: one the Code calls for, its subsection, its last day"] += 1
    for f in expected:
        assert any(p == f.permit and cites_subsection(d["citation"], f.letter)
                   for p, d in mine), (f, mine, _logs(services))  # fmt: skip
        TALLY[f"§ 370-7 {f.letter} violation the Code calls for: found"] += 1
    ok = [p for p, _ in found if p in ("SO-OK", "SO-I3")]
    assert not ok, ("violations found for openings the Code finds nothing wrong with", found)
    TALLY["§ 370-7: no violation for an opening paved in time or opened after five years"] += 2

    # Every notice the register holds about a permit: letterhead, § 370-7 and its
    # subsection, addressed to the permit holder.
    about = [
        n
        for n in notices
        if n.kind == "permit_advisory" or cites_subsection(n.citation or "", "[A-I]")
    ]
    for n in about:
        flat = pdf_text(client, n.number)
        assert_letterhead(flat, n.number, "§ 370-7")
        assert any(cites_subsection(flat, f.letter) for f in expected), (n.number, flat[:2000])
        # ``sidewalk cold permit`` records no holder: a notice about a permit has no
        # permit holder to be addressed to.
        pytest.fail(f"{n.number} ({n.kind}) is addressed to {n.owner_name!r}, and the permit "
                    f"records no holder: {flat[:600]}")  # fmt: skip
    TALLY[f"permit notices in the register ({len(about)} of {len(notices)})"] += 1
    _summary()


def test_the_permit_findings_cite_the_code_not_the_profile() -> None:
    """The clerk reads § 370-7's findings citing the Code, never the profile's marks."""
    if "output of sidewalk cold status" not in SEEN:
        pytest.skip("the season above did not run")
    text = SEEN["output of sidewalk cold status"]
    wrong = citation_problems(text, ("§ 370-7",))
    assert not wrong, (wrong, text)


def _summary() -> None:
    out = ROOT / "test-artifacts" / "acceptance"
    out.mkdir(parents=True, exist_ok=True)
    width = max(len(k) for k in TALLY)
    table = [f"{'oracle check'.ljust(width)}  documents",
             *(f"{check.ljust(width)}  {n}" for check, n in TALLY.items())]  # fmt: skip
    (out / "oracle-summary-permits.txt").write_text("\n".join(table) + "\n", encoding="utf-8")
    print("\n" + "\n".join(table), file=sys.stderr)
