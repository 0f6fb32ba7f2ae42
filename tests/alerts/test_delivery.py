"""Delivery over real servers: SMTP (aiosmtpd), a webhook (http.server), the print batch.

Idempotent: a second run, a restart and a crash mid-send never send a notice twice.
"""

from __future__ import annotations

import hashlib
import hmac
from base64 import b64decode
from datetime import datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path

import pytest
from pypdf import PageObject, PdfReader

from sidewalk.alerts.delivery import (
    Deliverer,
    NotReadyError,
    RetryPolicy,
    SmtpChannel,
    SmtpSettings,
    WebhookChannel,
    print_batch,
    queue_notice,
    record_notice_delivery,
)
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore, NoticeRecord
from tests.alerts.conftest import T0, Hook, Mailbox, flat, free_port, pdf_text


class Now:
    """A settable clock for the worker (retries are checked without sleeping)."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at


def obstruction(issuer: NoticeIssuer, key: str = "obs-1") -> NoticeRecord:
    return issuer.obstruction_notice(
        key, "main-101", T0, area="sidewalk", observed_at=T0, description="a bench",
        clear_width_mm=600.0,
    )  # fmt: skip


def smtp(profile: Profile, port: int, now: Now) -> SmtpChannel:
    return SmtpChannel(SmtpSettings("127.0.0.1", port, "dpw@clyman.example"), profile, clock=now)


def test_email_carries_the_pdf_and_is_sent_once_across_retries_and_restarts(
    issuer: NoticeIssuer, cases: CaseStore, profile: Profile,
    smtp_server: tuple[Mailbox, int], tmp_path: Path,
) -> None:  # fmt: skip
    mailbox, port = smtp_server
    notice = obstruction(issuer)
    now = Now(T0 + timedelta(minutes=5))
    queue_notice(cases, notice.id, ["email"], now.at)
    queue_notice(cases, notice.id, ["email"], now.at)  # queueing twice is one job
    worker = Deliverer(cases, profile, {"email": smtp(profile, port, now)}, clock=now)
    assert len(worker.run_once().sent) == 1
    assert worker.run_once().sent == []
    # A restart: a new store and worker on the same database.
    again = CaseStore(cases.url)
    assert (
        Deliverer(again, profile, {"email": smtp(profile, port, now)}, clock=now).run_once().sent
        == []
    )
    again.close()
    [envelope] = mailbox.messages
    assert envelope.rcpt_tos == ["jane@example.org"]
    msg = message_from_bytes(envelope.original_content or b"", policy=policy.default)
    assert isinstance(msg, EmailMessage)
    assert notice.number in str(msg["Subject"])
    [attachment] = list(msg.iter_attachments())
    assert attachment.get_filename() == f"{notice.number}.pdf"
    pdf = attachment.get_payload(decode=True)
    assert isinstance(pdf, bytes)
    assert "NOTICE TO REMOVE AN OBSTRUCTION" in flat(pdf_text(pdf))
    # An e-mail server's acceptance is no delivery (the profile's notice_delivery):
    # sent, recorded, and no period runs from it.
    sent = cases.notices.get(notice.id)
    assert sent.delivered_at is None
    assert sent.status != "delivered"
    assert [j.status for j in cases.notices.list_delivery_jobs(notice_id=notice.id)] == ["sent"]


def test_a_crash_mid_send_leaves_the_job_uncertain_and_unsent(
    issuer: NoticeIssuer, cases: CaseStore, profile: Profile, smtp_server: tuple[Mailbox, int]
) -> None:
    mailbox, port = smtp_server
    notice = obstruction(issuer)
    now = Now(T0)
    [job] = queue_notice(cases, notice.id, ["email"], now.at)
    assert cases.notices.claim_delivery(job.id, now.at) is not None  # then the process died
    now.at += timedelta(minutes=30)
    worker = Deliverer(cases, profile, {"email": smtp(profile, port, now)}, clock=now)
    assert worker.run_once().sent == []
    assert worker.recover() == [job.id]
    assert worker.run_once().sent == []
    assert mailbox.messages == []
    assert cases.notices.get_delivery_job(job.id).status == "uncertain"
    # A person checks the mail log: it never left, so send it again.
    cases.notices.resolve_delivery(job.id, sent=False, at=now.at, who="Clerk Lee")
    assert worker.run_once().sent == [job.id]
    assert len(mailbox.messages) == 1


def test_a_failed_smtp_server_retries_with_backoff_then_fails_visibly(
    issuer: NoticeIssuer, cases: CaseStore, profile: Profile
) -> None:
    notice = obstruction(issuer)
    now = Now(T0)
    [job] = queue_notice(cases, notice.id, ["email"], now.at)
    policy_ = RetryPolicy(base=timedelta(minutes=1), cap=timedelta(minutes=3), max_attempts=4)
    dead_port = free_port()  # nothing listens here
    worker = Deliverer(cases, profile, {"email": smtp(profile, dead_port, now)}, policy_, now)
    waits = []
    for _ in range(4):
        report = worker.run_once()
        state = cases.notices.get_delivery_job(job.id)
        if state.next_attempt_at and state.status == "queued":
            waits.append(state.next_attempt_at - now.at)
            assert worker.run_once().retrying == []  # not due yet
            now.at = state.next_attempt_at
    assert waits == [timedelta(minutes=1), timedelta(minutes=2), timedelta(minutes=3)]
    assert report.failed == [job.id]
    state = cases.notices.get_delivery_job(job.id)
    assert state.status == "failed"
    assert state.attempts == 4
    assert "unreachable" in (state.last_error or "")
    kept = cases.notices.get(notice.id)
    assert kept.status == "rendered"
    assert kept.delivered_at is None
    assert [d.status for d in cases.notices.list_deliveries(notice_id=notice.id)] == ["failed"] * 4


def test_a_refused_recipient_fails_at_once(
    issuer: NoticeIssuer, cases: CaseStore, profile: Profile, smtp_server: tuple[Mailbox, int]
) -> None:
    mailbox, port = smtp_server
    mailbox.refuse = True
    notice = obstruction(issuer)
    now = Now(T0)
    [job] = queue_notice(cases, notice.id, ["email"], now.at)
    report = Deliverer(cases, profile, {"email": smtp(profile, port, now)}, clock=now).run_once()
    assert report.failed == [job.id]
    assert "SMTP 550" in (cases.notices.get_delivery_job(job.id).last_error or "")


def test_webhook_is_signed_retried_and_not_a_delivery_to_the_owner(
    issuer: NoticeIssuer, cases: CaseStore, profile: Profile, webhook_server: tuple[Hook, str]
) -> None:
    hook, url = webhook_server
    hook.statuses = [503]
    notice = obstruction(issuer)
    now = Now(T0)
    [job] = queue_notice(cases, notice.id, ["webhook"], now.at, webhook_url=url)
    worker = Deliverer(cases, profile, {"webhook": WebhookChannel(b"s3cret", profile)}, clock=now)
    assert worker.run_once().retrying == [job.id]
    now.at += timedelta(minutes=1)
    assert worker.run_once().sent == [job.id]
    assert worker.run_once().sent == []
    [(headers, body, raw)] = hook.requests
    expected = hmac.new(b"s3cret", raw, hashlib.sha256).hexdigest()
    assert headers["X-Sidewalk-Signature"] == f"sha256={expected}"
    assert headers["Idempotency-Key"] == job.key
    assert body["number"] == notice.number
    assert hashlib.sha256(b64decode(body["pdf_base64"])).hexdigest() == body["pdf_sha256"]
    assert cases.notices.get(notice.id).delivered_at is None


def window_positions(page: PageObject, line: str) -> list[tuple[float, float]]:
    """Where ``line`` is drawn on ``page`` (points from the bottom-left corner)."""
    found: list[tuple[float, float]] = []

    def visit(text: str, cm: object, tm: list[float], *_: object) -> None:
        if text.strip() == line:
            found.append((tm[4], tm[5]))

    page.extract_text(visitor_text=visit)
    return found


def test_print_batch_is_one_pdf_laid_out_for_window_envelopes(
    issuer: NoticeIssuer, cases: CaseStore, profile: Profile, tmp_path: Path
) -> None:
    notices = [obstruction(issuer, f"obs-{i}") for i in range(3)]
    for n in notices:
        queue_notice(cases, n.id, ["print"], T0)
    batch = print_batch(cases, profile, tmp_path / "print", T0 + timedelta(hours=1))
    assert batch is not None
    assert batch.notices == [n.number for n in notices]
    assert print_batch(cases, profile, tmp_path / "print", T0 + timedelta(hours=2)) is None
    data = batch.path.read_bytes()
    assert hashlib.sha256(data).hexdigest() == batch.sha256
    reader = PdfReader(batch.path)
    assert len(reader.pages) == 6  # the letter and its evidence record: one sheet each, duplex
    for i, n in enumerate(notices):
        page = reader.pages[2 * i]
        found = window_positions(page, "Jane Smith")
        [(x, y)] = found  # the address prints once, in the window
        height = float(page.mediabox.height)
        # 1 in from the left, 2 in from the top (72 pt to the inch).
        assert 70 <= x <= 76
        assert 140 <= height - y <= 156
        assert n.number in page.extract_text()
        assert reader.pages[2 * i + 1].extract_text().lstrip().startswith("EVIDENCE RECORD")
    # Printing is not delivery: the owner has it once it is mailed or handed over.
    assert all(cases.notices.get(n.id).delivered_at is None for n in notices)


def test_a_pending_notice_cannot_be_queued_or_delivered(
    issuer: NoticeIssuer, cases: CaseStore
) -> None:
    cases.registry.upsert_owner("owner-smith", "Jane Smith", [], None)
    notice = obstruction(issuer)
    assert notice.status == "pending"
    with pytest.raises(NotReadyError, match="render it before delivery"):
        queue_notice(cases, notice.id, ["print"], T0)
    with pytest.raises(NotReadyError, match="never rendered"):
        record_notice_delivery(
            cases, notice.id, T0, "Officer Quinn", "hand", profile=issuer.profile
        )
