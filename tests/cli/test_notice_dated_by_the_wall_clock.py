"""A notice issued from the live dashboard (``sidewalk dashboard``, POST /api/notices) is
dated by the wall clock when the person issued it: in the register, on the letter, on its
evidence page, in its history and in the audit log; never an event time or a fixed one.

The app is the one ``sidewalk dashboard`` builds from its configuration (only uvicorn's
``run`` is stood in for, by a client on the same app), on a first-storm village whose
obstruction an inspector recorded an hour ago and the analytics runner applied."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

import sidewalk.dashboard.app as dashboard_app
from sidewalk.alerts.wording import local_day
from sidewalk.cli.common import village
from sidewalk.cli.dashboard import serve
from sidewalk.core.clock import format_local
from sidewalk.dashboard.auth import role_of
from tests.alerts.conftest import flat, pdf_text
from tests.clocks.live import seeded
from tests.dashboard.conftest import PASSWORD, SECRET_KEY, cheap_password_hash

CASE = "obstruction:OB-7"


def test_a_notice_issued_in_the_live_dashboard_is_dated_when_it_was_issued(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    village_records = seeded(tmp_path)
    cases, profile = village_records.cases, village_records.profile
    # Its own stores, and a broker address nothing answers on (the poles' link retries).
    text = village_records.config.read_text(encoding="utf-8")
    village_records.config.write_text(
        f'data_dir = "{tmp_path / "var"}"\n{text}'
        f'[timeseries]\nsqlite_path = "{tmp_path / "ts.sqlite3"}"\n'
        '[mqtt]\nurl = "mqtt://127.0.0.1:1"\n',
        encoding="utf-8",
    )
    runner = village_records.runner("wall-clock-notice-test")
    seen = datetime.now(UTC) - timedelta(hours=1)
    cases.actions.record(
        "record_obstruction", "OB-7", seen, "Pat Inspector",
        {"frontage": "main-st-105", "kind": "other", "area": "sidewalk",
         "description": "a trailer parked across the walk"},
    )  # fmt: skip
    runner.tick()
    assert cases.clocks.violation_by_key(CASE) is not None
    for role in ("inspector", "clerk"):
        cases.dashboard.add_user(role, cheap_password_hash(), role_of(role), who="test")

    issued: dict[str, object] = {}

    def run(app: FastAPI, host: str, port: int, **_: object) -> None:
        """Stands in for uvicorn: the inspector issues the notice, the clerk prints it."""
        # The dashboard answers only to its own names: localhost is one.
        client = TestClient(app, base_url="http://localhost")
        client.headers["Origin"] = "http://localhost"
        login = client.post("/api/session", json={"username": "inspector", "password": PASSWORD})
        assert login.status_code == 200, login.text
        client.headers["X-CSRF-Token"] = login.json()["csrf_token"]
        issued["before"] = datetime.now(UTC)
        answer = client.post("/api/notices", json={"case": CASE})
        issued["after"] = datetime.now(UTC)
        assert answer.status_code == 200, answer.text
        number = answer.json()["number"]
        client.post("/api/session", json={"username": "clerk", "password": PASSWORD})
        issued["view"] = client.get(f"/api/notices/{number}").json()
        letter = client.get(f"/api/notices/{number}/letter.pdf")
        assert letter.status_code == 200, letter.text
        issued["letter"] = flat(pdf_text(letter.content))
        issued["number"] = number

    monkeypatch.setattr(dashboard_app, "serve", run)
    serve(village(village_records.config), SECRET_KEY, host="127.0.0.1", port=1, geojson=None)

    before, after = issued["before"], issued["after"]
    assert isinstance(before, datetime)
    assert isinstance(after, datetime)
    notice = cases.notices.get_by_number(str(issued["number"]))
    assert before <= notice.issued_at <= after, (before, notice.issued_at, after)
    view = issued["view"]
    assert isinstance(view, dict)
    assert datetime.fromisoformat(view["issued_at"]) == notice.issued_at
    assert [(h["text"], datetime.fromisoformat(h["at"])) for h in view["history"]] == [
        ("Notice issued", notice.issued_at)
    ]
    # The letter's date and its evidence page's issue time are the same moment, in words.
    letter = str(issued["letter"])
    zone = profile.zone
    assert (
        letter.split("Notice No.", 2)[1].split()[1:5]
        == local_day(notice.issued_at.astimezone(zone).date()).split()
    )
    assert f"issued {format_local(notice.issued_at, zone)}" in letter
    # Who issued it, and when, in the audit log: the same instant.
    [by] = [
        a for a in cases.audit.list(f"notice:{notice.number}") if a.action == "notice.issued_by"
    ]
    assert (by.actor, by.recorded_at) == ("inspector", notice.issued_at)
    cases.close()
