"""Admin: accounts (add, role, disable, reset a password), the letterhead as the
settings hold it, and confirming profile values the code text leaves open; every
change audited, and all of it the administrator's alone."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sidewalk.core.config import VillageConfig
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.storage.cases import CaseStore

NOW = datetime(2026, 12, 12, 18, 0, tzinfo=UTC)
PASSWORD = "correct horse battery"
ORIGIN = "http://testserver"


@dataclass
class Admin:
    app: FastAPI
    cases: CaseStore
    client: TestClient
    csrf: dict[str, str]

    def log_in(self, username: str, password: str = PASSWORD) -> int:
        self.client.cookies.clear()
        r = self.client.post("/api/session", json={"username": username, "password": password})
        if r.status_code == 200:
            self.csrf = {"X-CSRF-Token": r.json()["csrf_token"], "Origin": ORIGIN}
        return int(r.status_code)

    def send(self, method: str, path: str, body: object) -> tuple[int, dict[str, object]]:
        r = self.client.request(method, path, json=body, headers=self.csrf)
        return r.status_code, r.json()

    def audit(self, action: str) -> list[dict[str, object]]:
        return [
            {"actor": a.actor, "subject": a.subject, **a.detail}
            for a in self.cases.audit.recent(100)
            if a.action == action
        ]


@pytest.fixture(scope="module")
def admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Admin]:
    cases = CaseStore(f"sqlite:///{tmp_path_factory.mktemp('admin') / 'cases.sqlite3'}")
    cases.create_schema()
    for role in ("clerk", "admin"):
        add_user(cases, role, PASSWORD, role, who="test")
    app = create_app(cases, None, load_profile(), secret_key="test-secret-key-0123456789",
                     now=lambda: NOW)  # fmt: skip
    with TestClient(app) as client:
        yield Admin(app, cases, client, {})
    cases.close()


def test_an_admin_adds_changes_disables_and_resets_an_account(admin: Admin) -> None:
    assert admin.log_in("admin") == 200
    pat = {"username": "pat", "password": "pat-pass-1", "role": "inspector"}
    assert admin.send("POST", "/api/users", pat)[0] == 201
    status, body = admin.send("PATCH", "/api/users/pat", {"role": "clerk"})
    assert (status, body["role"], body["disabled"]) == (200, "clerk", False)
    # A typed password, then a one-time one shown once.
    status, body = admin.send("POST", "/api/users/pat/password", {"password": "pat-pass-2"})
    assert (status, body["one_time_password"]) == (200, None)
    status, body = admin.send("POST", "/api/users/pat/password", {})
    one_time = body["one_time_password"]
    assert status == 200
    assert isinstance(one_time, str)
    assert len(one_time) >= 12
    assert admin.send("PATCH", "/api/users/pat", {"disabled": True})[0] == 200
    assert admin.send("PATCH", "/api/users/nobody", {"disabled": True})[0] == 404
    # Nobody locks the Village out by disabling or demoting their own account.
    assert admin.send("PATCH", "/api/users/admin", {"disabled": True})[0] == 409
    assert admin.send("PATCH", "/api/users/admin", {"role": "viewer"})[0] == 409
    assert admin.send("PATCH", "/api/users/pat", {"role": "owner"})[0] == 422

    changes = [a for a in admin.audit("user.changed") if a["subject"] == "user:pat"]
    assert [sorted(k for k in a if k not in {"actor", "subject"}) for a in changes] == [
        ["disabled"], ["password"], ["password"], ["role"],
    ]  # newest first  # fmt: skip
    assert {a["actor"] for a in changes} == {"admin"}
    assert admin.audit("user.created")[0]["subject"] == "user:pat"

    assert admin.log_in("pat", one_time) == 401  # disabled
    assert admin.log_in("admin") == 200
    assert admin.send("PATCH", "/api/users/pat", {"disabled": False})[0] == 200
    assert admin.log_in("pat", "pat-pass-2") == 401  # the one-time password replaced it
    assert admin.log_in("pat", one_time) == 200


def test_accounts_and_settings_are_the_admins_alone(admin: Admin) -> None:
    assert admin.log_in("clerk") == 200
    assert admin.client.get("/api/users").status_code == 403
    assert admin.client.get("/api/admin/letterhead").status_code == 403
    assert admin.client.get("/api/admin/confirmations").status_code == 403
    assert admin.send("POST", "/api/users/clerk/password", {})[0] == 403
    assert admin.send("PATCH", "/api/users/clerk", {"role": "admin"})[0] == 403


def test_the_letterhead_as_the_settings_hold_it_and_what_is_missing(admin: Admin) -> None:
    assert admin.log_in("admin") == 200
    unset = admin.client.get("/api/admin/letterhead").json()
    assert unset["problems"][0].startswith("[village] is not set")
    assert {line["value"] for line in unset["lines"]} == {None}
    admin.app.state.village = VillageConfig(
        office="Village Hall", address_lines=["1 Main St", "Clyman, WI 53016"],
        telephone="(920) 555-0142", email="clerk@clyman.example", office_hours="Mon-Fri 8-4",
        officer_name="Dana Ortiz", officer_title="Clerk-Treasurer",
    )  # fmt: skip
    try:
        view = admin.client.get("/api/admin/letterhead").json()
    finally:
        del admin.app.state.village
    lines = {line["label"]: (line["value"], line["setting"]) for line in view["lines"]}
    assert lines["Issuing officer"] == ("Dana Ortiz", "[village] officer_name")
    assert lines["Office address"][0] == "1 Main St, Clyman, WI 53016"
    assert lines["Signature image"] == (None, "[village] signature_image")
    assert view["problems"] == [
        "[village] signature_image is not set: letters are printed without a signature"
    ]


def test_confirming_a_profile_value_records_who_when_and_the_board_action(admin: Admin) -> None:
    assert admin.log_in("admin") == 200
    name = "snow_and_ice.nonhazard_notice_period"
    values = {v["name"]: v for v in admin.client.get("/api/admin/confirmations").json()}
    assert values[name]["confirmed_by"] is None
    assert values[name]["label"] == "Nonhazard notice period"
    good = {"name": name, "confirmed_by": "Village Board", "confirmed_on": "2026-12-01",
            "reference": "Board motion 2026-14"}  # fmt: skip
    # Each missing piece is refused with one line naming the field.
    status, body = admin.send("POST", "/api/admin/confirmations", {**good, "confirmed_by": " "})
    assert (status, str(body["detail"]).split(":")[0]) == (422, "Confirmed by")
    status, body = admin.send("POST", "/api/admin/confirmations", {**good, "reference": ""})
    assert (status, str(body["detail"]).split(":")[0]) == (422, "Board action or ordinance")
    tomorrow = {**good, "confirmed_on": "2026-12-13"}
    status, body = admin.send("POST", "/api/admin/confirmations", tomorrow)
    assert (status, str(body["detail"]).split(":")[0]) == (422, "Confirmed on")
    assert admin.send("POST", "/api/admin/confirmations", {**good, "name": "nope"})[0] == 404
    assert admin.audit("profile.confirmed") == []

    status, body = admin.send("POST", "/api/admin/confirmations", good)
    assert status == 200
    confirmation = body["confirmation"]
    assert isinstance(confirmation, dict)
    assert (confirmation["confirmed_by"], confirmation["reference"]) == (
        "Village Board", "Board motion 2026-14",
    )  # fmt: skip
    # The board's day in Clyman: midnight there, 06:00 UTC.
    confirmed_at = datetime.fromisoformat(str(confirmation["confirmed_at"]))
    assert confirmed_at == datetime(2026, 12, 1, 6, 0, tzinfo=UTC)
    assert confirmation["recorded_by"] == "admin"
    [audited] = admin.audit("profile.confirmed")
    assert (audited["actor"], audited["subject"], audited["reference"]) == (
        "admin", f"profile:{name}", "Board motion 2026-14",
    )  # fmt: skip
