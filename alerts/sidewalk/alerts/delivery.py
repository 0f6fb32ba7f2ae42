"""Delivery of rendered notices: print queue and batch, e-mail over SMTP, webhook.

Every delivery goes through the outbox (``delivery_jobs``): a job is queued
once per (notice, channel, target), claimed before anything leaves the server,
and closed as sent, queued again with backoff, or failed. A job a crash left
``sending`` is not retried by itself (it may have gone out): ``recover`` marks
it ``uncertain`` for a person to settle. So a retry or a restart never sends a
notice twice, and a failed notice stays visible with its reason.

The clocks learn of a delivery through a person action: the notice's first
delivery to the owner records ``record_delivery`` for the violation when the
notice's period runs from delivery (§ 370-10 B(1), B(2)).

What counts as that delivery is the profile's ``notice_delivery`` setting, which
the Village confirms: by default personal service (``hand``), posting on the
premises (``posted``) or mail (``mail``, dated by its receipt) start a period,
and the 2-hour hazard notice only by personal service or posting. An e-mail
server accepting a message is recorded as sent, never as that delivery unless
the setting lists ``email``.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import os
import smtplib
import urllib.error
import urllib.request
from base64 import b64encode
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from email.utils import format_datetime
from pathlib import Path
from typing import Any, Final, Protocol

from sidewalk.alerts.notices import CLOCK_FROM_DELIVERY
from sidewalk.alerts.pdf import batch_pdf, notice_pdf
from sidewalk.core.clock import format_local
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records

log = logging.getLogger(__name__)

PRINT: Final = "print"
EMAIL: Final = "email"
WEBHOOK: Final = "webhook"
# How a person says a notice reached the owner.
DELIVERY_METHODS: Final = ("hand", "mail", "posted", "email")


class DeliveryError(Exception):
    """A channel could not deliver; ``permanent`` says whether retrying can help."""

    def __init__(self, message: str, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.permanent = permanent


class NotReadyError(ValueError):
    """The notice cannot be queued yet (not rendered, no e-mail address, …)."""


class NotDeliveryError(ValueError):
    """The method given does not deliver this notice (the profile's ``notice_delivery``)."""


# The notices whose recorded service starts the period of a case a person's entry opened
# (§ 370-8 D/E's 24 hours; an inspector's finding's period), and the step it records on
# the case (its target: the id after the violation key's ``obstruction:``/``inspection:``).
CASE_SERVICE: Final = {
    "obstruction_notice": "obstruction_notice_delivered",
    "inspection_notice": "inspection_notice_delivered",
}
# § 144-12 C: the order "shall be served ... in the manner provided for service of a
# summons in the circuit court" or, the owner not found, posted on the premises (and
# published): never by mail.
ORDER_SERVICE: Final = ("hand", "posted")


def method_refused(notice: records.NoticeRecord, method: str) -> str | None:
    """Why the Code itself refuses serving ``notice`` by ``method`` (None: it does not)."""
    is_order = notice.kind == "inspection_notice" and (
        notice.detail.get("rule") == "abandoned_excavation"
    )
    if is_order and method not in ORDER_SERVICE:
        return (
            f"notice {notice.number}: § 144-12 C has the order served as a summons is"
            " (personal service) or, the owner not found, posted on the premises, not by"
            f" {method}"
        )
    return None


def delivery_counts(profile: Profile, kind: str, method: str) -> bool:
    """Whether delivering a ``kind`` notice by ``method`` starts its period."""
    return profile.notice_delivery.counts(kind, method)


class Channel(Protocol):
    """Sends one notice; returns details for the record (e.g. the Message-ID)."""

    name: str
    # Whether success reaches the owner at all; whether that starts a period is the
    # profile's ``notice_delivery`` (``delivery_counts``).
    counts_as_delivery: bool

    def send(
        self, job: records.DeliveryJobRecord, notice: records.NoticeRecord, pdf: bytes
    ) -> Mapping[str, Any]: ...


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff: ``base`` × 2^(attempt-1), at most ``cap``, ``max_attempts`` tries."""

    base: timedelta = timedelta(minutes=1)
    cap: timedelta = timedelta(hours=1)
    max_attempts: int = 6

    def next_attempt(self, attempts: int, now: datetime) -> datetime | None:
        """When to try again after ``attempts`` tries, or None to give up."""
        if attempts >= self.max_attempts:
            return None
        return now + min(self.base * (1 << max(attempts - 1, 0)), self.cap)


# -- channels ------------------------------------------------------------------------


@dataclass(frozen=True)
class SmtpSettings:
    host: str
    port: int
    sender: str
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    starttls: bool = False
    timeout_s: float = 30.0


def notice_subject(notice: records.NoticeRecord, profile: Profile) -> str:
    """``Village of Clyman: Notice No. CLY-2026-000001 (hazard notice)``."""
    title = notice.kind.replace("_", " ")
    return f"{profile.village.name}: Notice No. {notice.number} ({title})"


def notice_email(
    notice: records.NoticeRecord,
    profile: Profile,
    pdf: bytes,
    *,
    sender: str,
    to: str,
    message_id: str,
    at: datetime,
) -> EmailMessage:
    """The e-mail for a notice: its text as the body, its PDF attached."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = to
    msg["Subject"] = notice_subject(notice, profile)
    msg["Date"] = format_datetime(at.astimezone(UTC))
    # Stable per job: a receiving system can drop a duplicate by it.
    msg["Message-ID"] = message_id
    msg["X-Sidewalk-Notice"] = notice.number
    # The letter, then its evidence record (a page of its own on paper).
    msg.set_content((notice.body_text or "").replace("\f", "\n" + "-" * 40 + "\n"))
    msg.add_attachment(pdf, maintype="application", subtype="pdf", filename=f"{notice.number}.pdf")
    return msg


@dataclass
class SmtpChannel:
    """E-mail with the PDF attached, over SMTP (optionally STARTTLS and login)."""

    settings: SmtpSettings
    profile: Profile
    counts_as_delivery: bool = True
    name: str = EMAIL
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def message_id(self, job: records.DeliveryJobRecord, notice: records.NoticeRecord) -> str:
        """The same for every attempt of a job, so a duplicate is recognisable downstream."""
        domain = self.settings.sender.rpartition("@")[2] or "sidewalk.invalid"
        return f"<{notice.number}.job{job.id}@{domain}>"

    def send(
        self, job: records.DeliveryJobRecord, notice: records.NoticeRecord, pdf: bytes
    ) -> Mapping[str, Any]:
        """Send one message over its own connection; raises ``DeliveryError``."""
        s = self.settings
        message_id = self.message_id(job, notice)
        msg = notice_email(
            notice, self.profile, pdf, sender=s.sender, to=job.target,
            message_id=message_id, at=self.clock(),
        )  # fmt: skip
        try:
            with smtplib.SMTP(s.host, s.port, timeout=s.timeout_s) as smtp:
                if s.starttls:
                    smtp.starttls()
                if s.username:
                    smtp.login(s.username, s.password or "")
                refused = smtp.send_message(msg)
        except smtplib.SMTPRecipientsRefused as exc:
            raise DeliveryError(f"recipient refused: {exc.recipients}", permanent=True) from None
        except smtplib.SMTPResponseException as exc:
            text = (
                exc.smtp_error.decode(errors="replace")
                if isinstance(exc.smtp_error, bytes)
                else str(exc.smtp_error)
            )
            raise DeliveryError(
                f"SMTP {exc.smtp_code}: {text}", permanent=exc.smtp_code >= 500
            ) from None
        except (smtplib.SMTPException, OSError) as exc:
            raise DeliveryError(f"SMTP server {s.host}:{s.port} unreachable: {exc}") from None
        if refused:
            raise DeliveryError(f"recipient refused: {refused}", permanent=True)
        return {"message_id": message_id, "pdf_sha256": hashlib.sha256(pdf).hexdigest()}


@dataclass
class WebhookChannel:
    """POSTs the notice as JSON (PDF in base64) to another system, signed with HMAC-SHA256.

    A webhook feeds a system, not the owner: its success is no delivery to the owner.
    """

    secret: bytes
    profile: Profile
    timeout_s: float = 10.0
    counts_as_delivery: bool = False
    name: str = WEBHOOK

    def payload(self, notice: records.NoticeRecord, pdf: bytes) -> bytes:
        """The JSON body: the notice's record, its text, and its PDF with the PDF's hash."""
        body = {
            "number": notice.number,
            "kind": notice.kind,
            "frontage": notice.frontage_id,
            "owner": {"name": notice.owner_name, "address": list(notice.owner_address_lines)},
            "issued_at": notice.issued_at.isoformat(),
            "deadline": notice.deadline.isoformat() if notice.deadline else None,
            "citation": notice.citation,
            "text": notice.body_text,
            "pdf_sha256": hashlib.sha256(pdf).hexdigest(),
            "pdf_base64": b64encode(pdf).decode("ascii"),
        }
        return json.dumps(body, sort_keys=True).encode("utf-8")

    def send(
        self, job: records.DeliveryJobRecord, notice: records.NoticeRecord, pdf: bytes
    ) -> Mapping[str, Any]:
        """POST once; 2xx is sent, anything else raises ``DeliveryError``."""
        body = self.payload(notice, pdf)
        signature = hmac.new(self.secret, body, hashlib.sha256).hexdigest()
        request = urllib.request.Request(
            job.target,
            data=body,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "Idempotency-Key": job.key,
                "X-Sidewalk-Signature": f"sha256={signature}",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                status = int(response.status)
        except urllib.error.HTTPError as exc:
            # 408 and 429 ask us to come back; other 4xx will not change on retry.
            permanent = 400 <= exc.code < 500 and exc.code not in (408, 429)
            raise DeliveryError(f"webhook answered HTTP {exc.code}", permanent=permanent) from None
        except (urllib.error.URLError, OSError) as exc:
            raise DeliveryError(f"webhook unreachable: {exc}") from None
        return {"http_status": status, "pdf_sha256": hashlib.sha256(pdf).hexdigest()}


# -- queueing ------------------------------------------------------------------------


def queue_notice(
    cases: records.CaseStore,
    notice_id: int,
    channels: Sequence[str],
    at: datetime,
    *,
    webhook_url: str | None = None,
) -> list[records.DeliveryJobRecord]:
    """Queue a rendered notice for print, e-mail (to the owner's address) and/or webhook.

    Raises ``NotReadyError`` for a notice still pending (it stays pending and
    visible) or a channel without a target; queueing twice returns the same jobs.
    """
    notice = cases.notices.get(notice_id)
    if notice.body_text is None:
        raise NotReadyError(f"notice {notice.number} is {notice.status}: render it before delivery")
    jobs = []
    for channel in channels:
        if channel == PRINT:
            target = PRINT
        elif channel == EMAIL:
            email = cases.registry.get_owner(notice.owner_id).email
            if not email:
                raise NotReadyError(f"notice {notice.number}: the owner has no e-mail address")
            target = email
        elif channel == WEBHOOK:
            if not webhook_url:
                raise NotReadyError("a webhook delivery needs the webhook URL")
            target = webhook_url
        else:
            raise NotReadyError(f"unknown channel {channel!r}: print, email or webhook")
        jobs.append(cases.notices.enqueue_delivery(notice.id, channel, target, at))
    return jobs


def record_notice_delivery(
    cases: records.CaseStore,
    notice_id: int,
    at: datetime,
    who: str,
    method: str,
    *,
    profile: Profile,
) -> records.NoticeRecord:
    """The notice was delivered at ``at`` by ``method`` (hand, posted, mail, email),
    as the officer who delivered it enters it: for mail, ``at`` is its receipt.

    Only a method the profile's ``notice_delivery`` counts for the notice's kind is
    a delivery (``NotDeliveryError`` otherwise: an e-mail accepted by a server, by
    default; mail for the 2-hour hazard notice). The first delivery wins. When the
    notice's period runs from delivery, the violation's clock hears of it through
    the ``record_delivery`` action, with the method; an obstruction's or an inspector's
    finding's case through its own step (``CASE_SERVICE``). A method the Code itself
    excludes (``method_refused``) is refused whatever the profile says.
    """
    if method not in DELIVERY_METHODS:
        raise ValueError(f"delivery method {method!r}: one of {', '.join(DELIVERY_METHODS)}")
    before = cases.notices.get(notice_id)
    if before.body_text is None:
        raise NotReadyError(f"notice {before.number} was never rendered; it cannot be delivered")
    if before.kind in CASE_SERVICE and at < before.issued_at:
        raise ValueError(
            f"notice {before.number} was issued {format_local(before.issued_at, profile.zone)};"
            " it cannot have been served before it was issued"
        )
    refused = method_refused(before, method)
    if refused is not None:
        raise NotDeliveryError(refused)
    if not delivery_counts(profile, before.kind, method):
        name, rule = profile.notice_delivery.rule_for(before.kind)
        raise NotDeliveryError(
            f"notice {before.number}: delivery by {method} does not start its period"
            f" ({name}: {', '.join(rule.value)}"
            f"{', unconfirmed' if rule.unconfirmed else ''})"
        )
    after = cases.notices.set_delivered(notice_id, at)
    if before.delivered_at is not None:
        return after
    cases.notices.record_delivery(
        method, before.owner_name, at, "delivered", notice_id=notice_id, detail={"who": who}
    )
    if before.kind in CLOCK_FROM_DELIVERY and before.violation_id is not None:
        violation = cases.clocks.get_violation(before.violation_id)
        cases.actions.record(
            "record_delivery", violation.key, at, who,
            {"notice": before.number, "method": method},
        )  # fmt: skip
    step = CASE_SERVICE.get(before.kind)
    if step is not None and before.violation_id is not None:
        # The case's period runs from this service; the method stays on the delivery row.
        case = cases.clocks.get_violation(before.violation_id).key.partition(":")[2]
        cases.actions.record(step, case, at, who, {})
    return after


# -- the worker ----------------------------------------------------------------------


@dataclass(frozen=True)
class DeliveryReport:
    sent: list[int] = field(default_factory=list)
    retrying: list[int] = field(default_factory=list)
    failed: list[int] = field(default_factory=list)


@dataclass
class Deliverer:
    """Works the outbox for the channels it is given (print jobs go to ``print_batch``)."""

    cases: records.CaseStore
    profile: Profile
    channels: Mapping[str, Channel]
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    clock: Callable[[], datetime] = lambda: datetime.now(UTC)

    def run_once(self) -> DeliveryReport:
        """Attempt every due job once; returns the job ids by outcome."""
        report = DeliveryReport()
        now = self.clock()
        for job in self.cases.notices.due_delivery_jobs(now):
            channel = self.channels.get(job.channel)
            if channel is None:
                continue
            claimed = self.cases.notices.claim_delivery(job.id, now)
            if claimed is None:
                continue  # another worker has it
            self._attempt(claimed, channel, report)
        return report

    def _attempt(
        self, job: records.DeliveryJobRecord, channel: Channel, report: DeliveryReport
    ) -> None:
        notice = self.cases.notices.get(job.notice_id)
        try:
            detail = channel.send(job, notice, notice_pdf(notice, self.profile))
        except DeliveryError as exc:
            now = self.clock()
            retry = None if exc.permanent else self.policy.next_attempt(job.attempts, now)
            log.warning("notice %s by %s: %s", notice.number, job.channel, exc)
            self.cases.notices.finish_delivery(
                job.id, now, sent=False, error=str(exc), retry_at=retry
            )
            (report.retrying if retry else report.failed).append(job.id)
            return
        now = self.clock()
        self.cases.notices.finish_delivery(job.id, now, sent=True, detail=detail)
        report.sent.append(job.id)
        if not channel.counts_as_delivery:
            return
        if delivery_counts(self.profile, notice.kind, job.channel):
            record_notice_delivery(
                self.cases, notice.id, now, f"delivery:{job.channel}", job.channel,
                profile=self.profile,
            )  # fmt: skip
            return
        # Accepted by the mail server: sent, not delivered; no period starts from it.
        name, rule = self.profile.notice_delivery.rule_for(notice.kind)
        self.cases.audit.append(
            "alerts", "delivery.not_counted", f"notice:{notice.number}",
            {"channel": job.channel, "job": job.id, "setting": name,
             "counts": list(rule.value), "unconfirmed": rule.unconfirmed},
            at=now,
        )  # fmt: skip

    def recover(self, stale_after: timedelta = timedelta(minutes=10)) -> list[int]:
        """After a restart: jobs left ``sending`` become ``uncertain`` (never re-sent)."""
        stale = self.cases.notices.mark_stale_deliveries_uncertain(self.clock() - stale_after)
        return [job.id for job in stale]


# -- print --------------------------------------------------------------------------


@dataclass(frozen=True)
class PrintBatch:
    path: Path
    sha256: str
    notices: list[str]
    jobs: list[int]


def print_batch(
    cases: records.CaseStore,
    profile: Profile,
    out_dir: Path,
    at: datetime,
    *,
    duplex: bool = True,
    limit: int | None = None,
) -> PrintBatch | None:
    """Every queued print job as one PDF for window envelopes, written to ``out_dir``.

    The file is written before the jobs are closed, so a crash leaves them
    claimed (then ``uncertain``), never silently printed-and-forgotten. Printing
    is not delivery: record the mailing or hand delivery with
    ``record_notice_delivery``. Returns None when nothing is queued.
    """
    claimed = []
    for job in cases.notices.due_delivery_jobs(at, channel=PRINT)[:limit]:
        got = cases.notices.claim_delivery(job.id, at)
        if got is not None:
            claimed.append(got)
    if not claimed:
        return None
    notices = [cases.notices.get(job.notice_id) for job in claimed]
    pdf = batch_pdf(notices, profile, at, duplex=duplex)
    digest = hashlib.sha256(pdf).hexdigest()
    out_dir.mkdir(parents=True, exist_ok=True)
    stamp = at.astimezone(profile.zone).strftime("%Y%m%d-%H%M%S")
    path = out_dir / f"print-batch-{stamp}-{digest[:12]}.pdf"
    partial = path.with_suffix(".pdf.part")
    partial.write_bytes(pdf)
    os.replace(partial, path)
    numbers = [n.number for n in notices]
    for job in claimed:
        cases.notices.finish_delivery(
            job.id, at, sent=True, detail={"batch": path.name, "batch_sha256": digest}
        )
    cases.audit.append(
        "alerts", "print_batch.created", f"print_batch:{path.name}",
        {"sha256": digest, "notices": numbers, "jobs": [j.id for j in claimed]}, at=at,
    )  # fmt: skip
    return PrintBatch(path, digest, numbers, [j.id for j in claimed])
