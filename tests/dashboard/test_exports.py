"""Exports: notices, bills, payments and the tax roll as CSV and spreadsheet, in the
clerk's column names, times in the Village's zone, money in dollars; clerk and admin only.

A small village of its own (no replayed storm): two frontages, a notice each, two
bills (one paid in full, one part paid and certified to the tax roll).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal

import pytest
from fastapi.testclient import TestClient

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.storage.cases import CaseStore

NOW = datetime(2027, 3, 1, 18, 0, tzinfo=UTC)
PASSWORD = "correct horse battery"


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    cases = CaseStore(f"sqlite:///{tmp_path_factory.mktemp('exports') / 'cases.sqlite3'}")
    cases.create_schema()
    cases.registry.upsert_device("pole-1", "clyman")
    for i, (name, address) in enumerate(
        (("Zoë Žák", "105 Main St"), ("Bert Brandt", "103 Main St"))
    ):
        cases.registry.upsert_owner(f"o-{i}", name, [f"{i} Elm St", "Clyman, WI 53016"])
        cases.registry.upsert_frontage(
            f"f-{i}", site="clyman", parcel_number=f"026-000{i}", street_address=address,
            length_ft=66, zone="residential", owner_id=f"o-{i}", device_id="pole-1",
        )  # fmt: skip
        # 23:00 UTC on Dec 10 is 5 PM in Clyman (America/Chicago).
        issued = datetime(2026, 12, 10, 23, 0, tzinfo=UTC)
        notice = cases.notices.create(
            f"n-{i}", "clearing_violation", f"f-{i}", issued,
            deadline=issued + timedelta(hours=24), citation="§ 370-10 B(2)",
        )  # fmt: skip
        cases.notices.set_rendered(notice.id, "text", "<p>html</p>")
        work = cases.bills.order_abatement(f"a-{i}", f"f-{i}", "notice_expired", issued)
        cases.bills.add_expense(work.id, Decimal("1234.5"), issued + timedelta(days=2), "crew")
        bill = cases.bills.create(f"b-{i}", work.id, issued + timedelta(days=3))
        if i == 0:
            cases.bills.record_payment(
                "p-0", bill.id, Decimal("1234.50"), issued + timedelta(days=5), method="check",
                reference="1041",
            )  # fmt: skip
        else:
            cases.bills.record_payment(
                "p-1", bill.id, Decimal("200"), issued + timedelta(days=6), method="cash"
            )
            cases.bills.certify_tax_roll(bill.id, issued + timedelta(days=70), 2027)
    for role in ("viewer", "clerk", "admin"):
        add_user(cases, role, PASSWORD, role, who="test")
    app = create_app(cases, None, load_profile(), secret_key="test-secret-key-0123456789",
                     now=lambda: NOW)  # fmt: skip
    with TestClient(app) as c:
        yield c
    cases.close()


_SESSIONS: dict[str, str] = {}


def log_in(client: TestClient, role: str) -> None:
    """Log in as ``role`` once per module (argon2 is slow by design), then reuse the cookie."""
    client.cookies.clear()
    if role not in _SESSIONS:
        response = client.post("/api/session", json={"username": role, "password": PASSWORD})
        response.raise_for_status()
        _SESSIONS[role] = response.cookies["sw_session"]
    client.cookies.set("sw_session", _SESSIONS[role])


def rows(client: TestClient, name: str) -> list[dict[str, str]]:
    response = client.get(f"/api/exports/{name}.csv")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/csv")
    assert f'filename="{name}-2027-03-01.csv"' in response.headers["content-disposition"]
    return list(csv.DictReader(io.StringIO(response.content.decode("utf-8-sig"))))


def test_notices_csv_has_clerks_columns_and_local_times(client: TestClient) -> None:
    log_in(client, "clerk")
    notices = rows(client, "notices")
    assert [n["Notice number"] for n in notices] == ["CLY-2026-000001", "CLY-2026-000002"]
    first = notices[0]
    assert first["Notice"] == "Notice to clear snow and ice"  # not clearing_violation
    assert first["Owner of record"] == "Zoë Žák"
    assert first["Property address"] == "105 Main St"
    assert first["Issued"] == "2026-12-10 17:00"  # Clyman's time, not UTC 23:00
    assert first["Deadline in the notice"] == "2026-12-11 17:00"
    assert first["Status"] == "Ready to serve: not yet served"
    assert first["Served"] == ""


def test_bills_payments_and_tax_roll_in_dollars(client: TestClient) -> None:
    log_in(client, "clerk")
    bills = rows(client, "bills")
    assert [b["Amount billed ($)"] for b in bills] == ["1234.50", "1234.50"]
    assert [b["Balance due ($)"] for b in bills] == ["0.00", "1034.50"]
    assert [b["Status"] for b in bills] == ["Paid in full", "Certified to the tax roll"]
    payments = rows(client, "payments")
    paid = [(p["Amount paid ($)"], p["Paid by"], p["Check or receipt number"]) for p in payments]
    assert paid == [("1234.50", "Check", "1041"), ("200.00", "Cash", "")]
    roll = rows(client, "tax-roll")
    assert len(roll) == 1
    assert roll[0]["Special tax ($)"] == "1034.50"
    assert roll[0]["Parcel number"] == "026-0001"
    # The sections as the Code has them, never the profile's "(inferred)" mark.
    assert roll[0]["Ordinance section"] == "§ 370-10 G; § 66.0907(5), Wis. Stats."
    assert rows(client, "tax-roll") == roll
    assert client.get("/api/exports/tax-roll.csv?year=2026").text.count("\n") == 1  # header only


def test_spreadsheet_has_dates_and_dollar_amounts(client: TestClient) -> None:
    # Ignored: openpyxl ships no type hints.
    from openpyxl import load_workbook  # type: ignore[import-untyped]

    log_in(client, "admin")
    response = client.get("/api/exports/bills.xlsx")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/vnd.openxmlformats")
    sheet = load_workbook(io.BytesIO(response.content)).active
    header = [c.value for c in sheet[1]]
    assert header[0] == "Bill number"
    balance = sheet.cell(3, header.index("Balance due ($)") + 1)
    assert balance.value == pytest.approx(1034.5)
    assert balance.number_format == '"$"#,##0.00'
    billed = sheet.cell(2, header.index("Billed") + 1).value
    # Clyman's wall time, as a spreadsheet holds it (no offset): 23:00 UTC is 5 PM.
    assert billed == datetime(2026, 12, 13, 17, 0, tzinfo=UTC).replace(tzinfo=None)
    assert isinstance(sheet.cell(2, header.index("Due") + 1).value, date | None)


def test_exports_are_for_the_clerk_and_admin_only(client: TestClient) -> None:
    for role in ("viewer",):
        log_in(client, role)
        for name in ("notices", "bills", "payments", "tax-roll"):
            assert client.get(f"/api/exports/{name}.csv").status_code == 403
    log_in(client, "clerk")
    assert client.get("/api/exports/notices.pdf").status_code == 404
    client.cookies.clear()
    assert client.get("/api/exports/notices.csv").status_code == 401
