"""Correcting and undoing an entry on a notice's page, in Chromium at 1366 and 390 px.

§ 370-10 B runs the owner's period from the delivery of the notice and F orders
the Village's work when it runs out; G dates the costs from the crew's completion.
A wrong service is corrected with a reason after a confirmation; what rests on it
(the crew's completion) must be undone first, and the page says so in words. The
entry stays on record; the clocks recompute from the corrected facts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest

from tests.dashboard.conftest import ARTIFACTS, CHROMIUM, Dashboard
from tests.dashboard.test_browser import fresh_page, no_sideways_scroll, plain_words, shot

pytestmark = pytest.mark.skipif(
    not CHROMIUM.exists(), reason="Debian chromium is not installed (apt-get install chromium)"
)

if CHROMIUM.exists():
    from playwright.sync_api import Browser, BrowserContext, expect

NUMBER = "CLY-2026-000001"  # 103 Main St


@pytest.fixture(scope="module")
def browser_context(chromium_browser: Browser, dashboard: Dashboard) -> Iterator[BrowserContext]:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    context = chromium_browser.new_context(viewport={"width": 1366, "height": 900})
    yield context
    context.close()


def settled(check: Callable[[], bool], timeout_s: float = 10.0) -> bool:
    """The action ticker applies what was recorded within a tenth of a second or so."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def served_then_worked(dashboard: Dashboard) -> None:
    """Served (so it was entered) at 9 AM the day before: the period ran out at 9 AM today,
    the Village's removal was ordered, and the crew's completion was recorded at noon."""
    cases, end = dashboard.storm.cases, dashboard.storm.end
    clerk = dashboard.login("clerk")
    at = "2026-12-11T09:00"
    served = clerk.post(
        f"/api/notices/{NUMBER}/service", json={"method": "hand", "served_by": "Pat", "at": at}
    )
    assert served.status_code == 200, served.text
    assert settled(lambda: all(a.applied_at for a in cases.actions.list()))
    dashboard.storm.runner.advance(end + timedelta(minutes=1))
    done = clerk.post(f"/api/notices/{NUMBER}/actions", json={"kind": "abatement_done"})
    assert done.status_code == 200, done.text
    assert settled(lambda: all(a.applied_at for a in cases.actions.list()))
    [order] = cases.bills.list_abatements()
    assert order.status == "completed"


def inspector_may_not_correct(dashboard: Dashboard) -> None:
    """The clerk keeps the record: an inspector sees the entries but may not correct them."""
    inspector = dashboard.login("inspector")
    seen = inspector.get(f"/api/notices/{NUMBER}").json()
    assert [e["may_correct"] for e in seen["entries"]] == [False, False]
    entry = seen["entries"][0]["id"]
    refused = inspector.post(
        f"/api/notices/{NUMBER}/entries/{entry}/correction",
        json={"undo": True, "reason": "wrong notice"},
    )
    assert refused.status_code == 403


def test_370_10_b_f_a_wrong_service_is_corrected_after_undoing_the_work_resting_on_it(
    browser_context: BrowserContext, dashboard: Dashboard
) -> None:
    cases, end = dashboard.storm.cases, dashboard.storm.end
    served_then_worked(dashboard)
    page, errors = fresh_page(browser_context, dashboard, "clerk", 1366, 900)
    page.goto(f"{dashboard.url}/#notice/{NUMBER}")
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    service, work = page.locator("[data-entry]").nth(0), page.locator("[data-entry]").nth(1)
    expect(service).to_contain_text("Notice served by personal service")
    expect(service.locator(".blocked")).to_have_text(
        "The crew's completion of the Village's work was recorded on Saturday, December 12,"
        " 2026 at 12:00 PM CST after the service of the notice, and rests on it: undo the"
        " crew's completion of the Village's work first."
    )
    expect(service.get_by_role("button")).to_have_count(0)
    plain_words(page)
    shot(page, "30-corrections-blocked-1366")

    # Undo the crew's completion (entered too soon), after the confirmation.
    work.get_by_role("button", name="Correct or undo…").click()
    page.get_by_label("Undo it: it should not have been recorded (wrong notice, not done)").check()
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#correct-problem")).to_contain_text("Reason:")  # required
    page.get_by_label("Reason (required, kept on record)").fill("the crew has not finished")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#correction-text")).to_contain_text("Undo “Village crew finished")
    assert len(cases.actions.list()) == 2  # nothing recorded before the confirmation
    page.get_by_role("button", name="Yes, undo it").click()
    # Now the service may be corrected: it was at 2 PM, so the period runs to 2 PM today.
    service.get_by_role("button", name="Correct or undo…").click()
    page.get_by_label("The right time (leave empty to keep it)").fill("2026-12-11T14:00")
    page.get_by_label("Reason (required, kept on record)").fill("served at 2 PM, not 9 AM")
    page.get_by_role("button", name="Continue").click()
    expect(page.locator("#correction-text")).to_contain_text("Correct to Fri, Dec 11, 2:00 PM")
    page.get_by_role("button", name="Yes, record the correction").click()
    expect(page.locator("#notice-deadline")).to_contain_text("today 2:00 PM")
    expect(page.locator("ol.history")).to_contain_text(
        "Service corrected to Friday, December 11, 2026 at 2:00 PM CST, by personal service."
        " Reason: served at 2 PM, not 9 AM"
    )
    plain_words(page)
    assert no_sideways_scroll(page)
    shot(page, "30-corrections-done-1366")

    # The runner recomputes: the order that rested on the old deadline is withdrawn.
    assert settled(lambda: all(a.applied_at for a in cases.actions.list()))
    assert [a.error for a in cases.actions.list()] == [None] * 4
    assert cases.bills.list_abatements()[0].status == "withdrawn"
    [clock] = cases.clocks.list(frontage_id="main-st-103", kind="enforcement")
    assert (clock.state, clock.deadline) == ("notice_period", end + timedelta(hours=2))
    audited = {a.action for a in cases.audit.list(f"notice:{NUMBER}")}
    assert {"notice.delivered", "notice.delivery_corrected"} <= audited

    # On a phone: the same page, no sideways scroll; the undone entry is not offered.
    page.set_viewport_size({"width": 390, "height": 844})
    page.reload()
    expect(page.locator("body")).to_have_attribute("data-ready", "notice")
    expect(page.locator("[data-entry]")).to_have_count(1)
    expect(page.get_by_role("button", name="Correct or undo…")).to_be_visible()
    assert no_sideways_scroll(page)
    shot(page, "30-corrections-390")
    assert errors == []
    page.close()

    inspector_may_not_correct(dashboard)
    assert len(cases.actions.list()) == 4
