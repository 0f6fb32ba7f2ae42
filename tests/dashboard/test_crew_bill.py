"""A bill the crew's work makes (§ 370-10 F, G), on the real app over its own storm.

The owner of 103 Main St was served and did not clear; the Village's crew did. Where
the crew records that it finished (the notice's page, phone and desk) it says who
worked how many hours and which equipment ran how long; the clerk previews the bill
as the owner will read it (the letter's own words), priced at the profile's rates,
each marked "not confirmed" until the Village confirms it; confirms it; and the bill
is numbered in the notice register. A bill's steps ("Owner received the bill", "Paid
in full") are offered only once the bill exists, and refused (409, in words) before;
the receipt sets the bill's received date and its last day to pay (G: 10 calendar
days from receipt).

The browser test runs first (file order) and records the crew's hours through the
form at 390 px; the route test records the same hours itself when run alone.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from pypdf import PdfReader

from sidewalk.alerts.confirm import confirm_value
from sidewalk.alerts.issue import PREVIEW_NUMBER
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import CaseStore
from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, Dashboard
from tests.dashboard.test_browser import fresh_page, no_sideways_scroll, plain_words, shot
from tests.dashboard.test_corrections import settled

if CHROMIUM.exists():
    from playwright.sync_api import Browser, BrowserContext, expect

NUMBER = "CLY-2026-000001"  # 103 Main St
CREW = {
    "workers": [{"name": "Pat Olson", "hours": "2.5"}, {"name": "Lee Kruger", "hours": "2.5"}],
    "equipment": [{"name": "plow truck", "hours": "1"}],
}
BODY = {"materials": [{"description": "salt", "cost": "12.50"}]}
# Hand-worked from the profile's placeholders: 5 person-hours at $45.00 = $225.00,
# 1 machine-hour at $65.00 = $65.00, salt $12.50 at cost: $302.50.
TOTAL = "302.50"


@pytest.fixture(scope="module")
def ordered(dashboard: Dashboard) -> Dashboard:
    """103's notice served at 9 AM the day before: its period ran out at 9 AM today and the
    Village's removal is ordered; the crew has not recorded anything yet."""
    cases, end = dashboard.storm.cases, dashboard.storm.end
    clerk = dashboard.login("clerk")
    served = clerk.post(
        f"/api/notices/{NUMBER}/service",
        json={"method": "hand", "served_by": "Pat", "at": "2026-12-11T09:00"},
    )
    assert served.status_code == 200, served.text
    assert settled(lambda: all(a.applied_at for a in cases.actions.list()))
    dashboard.storm.runner.advance(end + timedelta(minutes=1))
    # The demo village confirmed every value; here the Board's confirmation is of last
    # year's fee schedule, and the profile carries this year's rates, not yet confirmed.
    for name, value in (("crew_hourly_rate", "$40.00"), ("equipment_hourly_rate", "$60.00")):
        cases.confirmations.confirm(
            f"abatement_rates.{name}", value, confirmed_by="Village Board",
            reference="fee schedule 2025", confirmed_at=end - timedelta(days=300), who="test",
        )  # fmt: skip
    steps = [s["kind"] for s in clerk.get(f"/api/notices/{NUMBER}").json()["steps"]]
    assert "abatement_done" in steps, steps
    return dashboard


@pytest.fixture(scope="module")
def browser_context(chromium_browser: Browser, ordered: Dashboard) -> Iterator[BrowserContext]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium_browser.new_context(viewport={"width": 390, "height": 844})
    yield context
    context.close()


def crew_on_a_phone(browser_context: BrowserContext, dashboard: Dashboard) -> list[str]:
    """The crew records that it finished, with its hours, on a phone (390 px)."""
    page, errors = fresh_page(browser_context, dashboard, "inspector", 390, 844)
    page.goto(f"{dashboard.url}/#notice/{NUMBER}")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    # Before any bill: no bill steps on the page.
    steps = page.locator("[data-step]")
    expect(steps.filter(has_text="Owner received the bill")).to_have_count(0)
    expect(steps.filter(has_text="Paid in full")).to_have_count(0)
    page.get_by_role("button", name="Village crew finished the work").click()
    form = page.locator("#crew-form")
    expect(form).to_contain_text("Crew labor, per worker: $45.00 an hour (not confirmed)")
    page.get_by_label("Worker 1").fill("Pat Olson")
    page.locator("#done-worker-1-hours").fill("two")
    page.get_by_role("button", name="Add a worker").click()
    page.get_by_label("Worker 2").fill("Lee Kruger")
    page.locator("#done-worker-2-hours").fill("2.5")
    page.get_by_label("Equipment 1").fill("plow truck")
    page.locator("#done-equipment-1-hours").fill("1")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#notice-problem")).to_contain_text(
        "Worker 1 (Pat Olson): write the hours as a number"
    )
    page.locator("#done-worker-1-hours").fill("2.5")
    assert no_sideways_scroll(page)
    shot(page, "40-crew-hours-390")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#crew-confirm-text")).to_have_text(
        "Crew's hours: Pat Olson 2.5 h, Lee Kruger 2.5 h; plow truck 1 h."
    )
    page.get_by_role("button", name="Yes, record it").click()
    expect(page.locator("ol.history")).to_contain_text("Village crew finished the work")
    plain_words(page)
    return errors


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")
def test_the_crew_enters_its_hours_on_a_phone_and_the_clerk_previews_the_bill(
    browser_context: BrowserContext, ordered: Dashboard
) -> None:
    dashboard = ordered
    errors = crew_on_a_phone(browser_context, dashboard)
    cases = dashboard.storm.cases
    assert settled(lambda: all(a.applied_at for a in cases.actions.list()))
    [order] = cases.bills.list_abatements()
    assert order.status == "completed"
    assert order.detail["crew_work"] == CREW

    # The clerk at a desk: the hours, the rates, and the bill previewed as the owner reads it.
    desk, desk_errors = fresh_page(browser_context, dashboard, "clerk", 1366, 900)
    desk.goto(f"{dashboard.url}/#notices")
    expect(desk.locator("body")).to_have_attribute("data-ready", "notices")
    block = desk.locator("div.panel", has_text="Village work at 103 Main St")
    expect(block).to_contain_text("Crew's hours: Pat Olson 2.5 h, Lee Kruger 2.5 h; plow truck 1 h")
    block.get_by_label("Material 1").fill("salt")
    block.locator(f"#mat-{order.id}-1-cost").fill("12.50")
    block.get_by_role("button", name="Preview the bill").click()
    preview = block.locator(".bill-preview")
    expect(preview).to_contain_text(f"Total${TOTAL}")
    expect(preview).to_contain_text("rate not confirmed")
    expect(preview).to_contain_text("held, not sent, until the Village confirms")
    expect(
        preview.get_by_role("button", name=f"Confirm and issue the bill (${TOTAL})")
    ).to_be_visible()
    plain_words(desk)
    assert no_sideways_scroll(desk)
    shot(desk, "41-bill-preview-1366")
    desk.set_viewport_size({"width": 390, "height": 844})
    assert no_sideways_scroll(desk)
    shot(desk, "41-bill-preview-390")
    # At the desk the hours may still be changed before the bill: the form comes filled in.
    desk.set_viewport_size({"width": 1366, "height": 900})
    block.get_by_role("button", name="Change the crew's hours").click()
    expect(block.get_by_label("Worker 2")).to_have_value("Lee Kruger")
    expect(block.locator(f"#crew-{order.id}-equipment-1-hours")).to_have_value("1")
    assert no_sideways_scroll(desk)
    shot(desk, "42-crew-hours-change-1366")
    # Nothing is billed until the clerk confirms.
    assert cases.bills.list() == []
    assert errors == []
    assert desk_errors == []


def no_bill_steps_yet(clerk: httpx.Client, cases: CaseStore) -> list[str]:
    """Before any bill: neither bill step is offered, and the server refuses both in words."""
    steps = [s["kind"] for s in clerk.get(f"/api/notices/{NUMBER}").json()["steps"]]
    assert "bill_received" not in steps, steps
    assert "paid_in_full" not in steps, steps
    for kind in ("bill_received", "paid_in_full"):
        refused = clerk.post(f"/api/notices/{NUMBER}/actions", json={"kind": kind})
        assert refused.status_code == 409, refused.text
        assert "no bill has been issued for this case yet" in refused.json()["detail"]
    assert not [a for a in cases.actions.list() if a.kind in ("bill_received", "paid_in_full")]
    return steps


def previewed_unconfirmed(clerk: httpx.Client, cases: CaseStore, order: int) -> None:
    """The preview priced at the rates, each marked until confirmed; nothing is stored, and
    a bill is refused without the previewed total, or with a stale one."""
    bad = clerk.post(
        f"/api/abatements/{order}/crew-work",
        json={"workers": [{"name": "Pat Olson", "hours": "25"}], "equipment": []},
    )
    assert bad.status_code == 422, bad.text
    assert "at most 24 hours" in bad.json()["detail"]
    [listed] = [a for a in clerk.get("/api/abatements").json() if a["id"] == order]
    assert listed["crew_work"]["words"] == "Pat Olson 2.5 h, Lee Kruger 2.5 h; plow truck 1 h"
    assert [r["text"] for r in listed["rates"]] == [
        "Crew labor, per worker: $45.00 an hour (not confirmed)",
        "Equipment: $65.00 an hour (not confirmed)",
    ]
    seen = clerk.post(f"/api/abatements/{order}/bill/preview", json=BODY)
    assert seen.status_code == 200, seen.text
    first = seen.json()
    assert first["total"] == TOTAL
    assert [(x["text"], x["unconfirmed"]) for x in first["lines"]] == [
        ("Crew labor: 5 hours at $45.00 an hour = $225.00", True),
        ("Equipment: 1 hour at $65.00 an hour = $65.00", True),
        ("Materials: salt = $12.50", False),
    ]
    assert "held, not sent, until the Village confirms" in first["held"]
    for total, said in ((None, "Preview the bill first"), ("290.00", "preview it again")):
        refused = clerk.post(f"/api/abatements/{order}/bill", json={**BODY, "total": total})
        assert refused.status_code == 409, refused.text
        assert said in refused.json()["detail"]
    assert cases.bills.list() == []


def issued(clerk: httpx.Client, cases: CaseStore, order: int, preview: str) -> dict[str, Any]:
    """Confirmed: numbered in the notice register, its letter the preview's words."""
    billed = clerk.post(f"/api/abatements/{order}/bill", json={**BODY, "total": TOTAL})
    assert billed.status_code == 200, billed.text
    bill: dict[str, Any] = billed.json()
    assert re.fullmatch(r"CLY-2026-\d{6}", bill["number"]), bill
    assert bill["number"] != NUMBER
    assert bill["amount"] == TOTAL
    assert "held" not in bill
    notice = cases.notices.get_by_number(bill["number"])
    assert notice.kind == "abatement_bill"
    assert notice.body_text == preview.replace(PREVIEW_NUMBER, bill["number"])
    assert f"Bill No. {bill['number']}" in notice.body_text
    pdf = clerk.get(f"/api/notices/{bill['number']}/letter.pdf")
    assert pdf.status_code == 200
    text = " ".join(p.extract_text() for p in PdfReader(io.BytesIO(pdf.content)).pages)
    assert bill["number"] in text
    assert f"${TOTAL}" in text
    twice = clerk.post(f"/api/abatements/{order}/bill", json={**BODY, "total": TOTAL})
    assert twice.status_code == 409, twice.text
    assert "billed already" in twice.json()["detail"]
    listed = next(a["bill"] for a in clerk.get("/api/abatements").json() if a["id"] == order)
    assert listed["number"] == bill["number"]
    return bill


def receipt_offered(clerk: httpx.Client) -> None:
    """The receipt is offered once the bill exists; the payment in full is refused while
    money is owed."""
    steps = [s["kind"] for s in clerk.get(f"/api/notices/{NUMBER}").json()["steps"]]
    assert "bill_received" in steps, steps
    assert "paid_in_full" not in steps, steps
    unpaid = clerk.post(f"/api/notices/{NUMBER}/actions", json={"kind": "paid_in_full"})
    assert unpaid.status_code == 409, unpaid.text
    assert f"the bill has ${TOTAL} left to pay" in unpaid.json()["detail"]


def received(clerk: httpx.Client, cases: CaseStore, bill: dict[str, Any]) -> None:
    """The receipt recorded (Dec 14, 10 AM) set the bill's received and due dates, the
    clock was told once, and a second receipt is refused in words."""
    on_record = cases.bills.get(bill["id"])
    assert on_record.received_at is not None
    assert on_record.received_at.date() == date(2026, 12, 14)
    assert on_record.due_date == date(2026, 12, 24)
    assert cases.notices.get_by_number(bill["number"]).received_at == on_record.received_at
    told = [a for a in cases.actions.list() if a.kind == "bill_received"]
    assert [(a.who, a.detail.get("bill")) for a in told] == [("clerk", bill["id"])]
    twice = clerk.post(f"/api/notices/{NUMBER}/actions", json={"kind": "bill_received"})
    assert twice.status_code == 409, twice.text
    assert "is recorded already" in twice.json()["detail"]
    assert cases.bills.get(bill["id"]).balance == Decimal(TOTAL)


def test_preview_confirm_numbered_bill_and_the_bill_steps_only_once_it_exists(
    ordered: Dashboard,
) -> None:
    dashboard = ordered
    cases = dashboard.storm.cases
    clerk = dashboard.login("clerk")
    steps = no_bill_steps_yet(clerk, cases)
    if "abatement_done" in steps:  # run alone: the crew records its hours here
        done = clerk.post(f"/api/notices/{NUMBER}/actions", json={"kind": "abatement_done", **CREW})
        assert done.status_code == 200, done.text
        assert settled(lambda: all(a.applied_at for a in cases.actions.list()))
    [order] = cases.bills.list_abatements()
    assert order.status == "completed"
    previewed_unconfirmed(clerk, cases, order.id)
    # The Village confirms this year's fee schedule: the marks go, and the bill will be sent.
    for name in ("abatement_rates.crew_hourly_rate", "abatement_rates.equipment_hourly_rate"):
        confirm_value(
            cases, load_profile(), name, by="Village Board", reference="fee schedule 2026",
            at=dashboard.storm.end, who="test",
        )  # fmt: skip
    again = clerk.post(f"/api/abatements/{order.id}/bill/preview", json=BODY).json()
    assert [x["unconfirmed"] for x in again["lines"]] == [False, False, False]
    assert again["total"] == TOTAL
    assert again["held"] is None
    assert PREVIEW_NUMBER in again["text"]
    assert f"Total due: ${TOTAL}" in again["text"]
    issued(clerk, cases, order.id, again["text"])
    receipt_offered(clerk)


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")
def test_the_clerk_records_the_bills_receipt_on_its_page_and_the_due_date_follows(
    browser_context: BrowserContext, ordered: Dashboard
) -> None:
    """After the bill (the test above): on the bill's own page, on a phone, "Owner received
    the bill" asks when; G's 10 calendar days run from that receipt."""
    dashboard = ordered
    cases = dashboard.storm.cases
    [bill] = cases.bills.list()
    [letter] = cases.notices.list(kind="abatement_bill")
    page, errors = fresh_page(browser_context, dashboard, "clerk", 390, 844)
    page.goto(f"{dashboard.url}/#notice/{letter.number}")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    expect(page.locator("[data-step]").filter(has_text="Paid in full")).to_have_count(0)
    page.get_by_role("button", name="Owner received the bill").click()
    page.get_by_label("When the owner received it").fill("2026-12-14T10:00")
    assert no_sideways_scroll(page)
    shot(page, "43-bill-received-390")
    page.get_by_role("button", name="Yes, record it").click()
    # G: payable within 10 calendar days from receipt: Dec 14 + 10 = Dec 24.
    expect(page.locator("#toast")).to_contain_text("payable by Thursday, December 24, 2026")
    expect(page.locator("[data-step]").filter(has_text="Owner received the bill")).to_have_count(0)
    # Once received, only what is left: no service to record, and the receipt, applied to
    # its case a moment later, shown as done without a reload (as a reload shows it).
    expect(page.locator("[data-step]")).to_have_count(0)
    expect(page.locator("#still-to-do")).to_contain_text(f"${TOTAL} is left to pay")
    expect(page.locator("ol.history li.waiting")).to_have_count(0)
    received_line = page.locator("ol.history li.done").last
    expect(received_line).to_have_text(re.compile("Owner received the bill — clerk$"))
    # Its status says so (it said "Ready to serve: not yet served" after the receipt).
    expect(page.locator("#notice-status")).to_have_text(
        "Received by the owner on Monday, December 14, 2026; payable by Thursday, December 24, 2026"
    )
    plain_words(page)
    shot(page, "27-notice-390")
    page.set_viewport_size({"width": 1366, "height": 900})
    assert no_sideways_scroll(page)
    shot(page, "27-notice-1366")
    assert errors == []
    clerk = dashboard.login("clerk")
    received(clerk, cases, {"id": bill.id, "number": letter.number})


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Debian chromium is not installed")
def test_a_bill_paid_in_full_offers_nothing_more_on_its_page(
    browser_context: BrowserContext, ordered: Dashboard
) -> None:
    """After the receipt (the test above): the clerk records the payment in full on the
    Notices page; the bill's page then offers no step (no service, no receipt) and says, in
    words, that nothing is left to record, the payment's closing of the case shown as done."""
    dashboard = ordered
    cases = dashboard.storm.cases
    [bill] = cases.bills.list()
    assert bill.received_at is not None, "run after the receipt test (file order)"
    [letter] = cases.notices.list(kind="abatement_bill")
    page, errors = fresh_page(browser_context, dashboard, "clerk", 1366, 900)
    page.goto(f"{dashboard.url}/#notices")
    expect(page.locator("body")).to_have_attribute("data-ready", "notices")
    block = page.locator("div.panel", has_text="Village work at 103 Main St")
    block.get_by_label("Payment $").fill(TOTAL)
    block.get_by_role("button", name="Record payment").click()
    expect(page.locator("#toast")).to_contain_text("Payment recorded")
    expect(block).to_contain_text("left to pay $0.00 (paid)")
    page.goto(f"{dashboard.url}/#notice/{letter.number}")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    expect(page.locator("#still-to-do")).to_contain_text(
        "Paid in full: nothing more is to be recorded on this bill."
    )
    expect(page.locator("[data-step]")).to_have_count(0)
    expect(page.locator("#no-steps")).to_have_count(0)
    expect(page.locator("ol.history li.waiting")).to_have_count(0)
    expect(page.locator("ol.history")).to_contain_text("Bill paid in full — clerk")
    plain_words(page)
    page.set_viewport_size({"width": 390, "height": 844})
    assert no_sideways_scroll(page)
    shot(page, "44-bill-paid-390")
    clerk = dashboard.login("clerk")
    seen = clerk.get(f"/api/notices/{letter.number}").json()
    assert seen["steps"] == []
    assert cases.bills.get(bill.id).status == "paid"
    assert errors == []
