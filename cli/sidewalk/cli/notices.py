"""``sidewalk notices …``: the paperwork from the command line.

Secrets come from the environment only: ``SIDEWALK_SMTP_PASSWORD``,
``SIDEWALK_WEBHOOK_SECRET`` (and ``SIDEWALK_DB_PASSWORD`` for the case records).
"""

# The alerts package (Jinja2, fpdf2) loads when a command runs (common.py: a fast --help).
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sidewalk.cli.common import (
    ConfigOption,
    WhoOption,
    command_group,
    console,
    fail,
    instant,
    load_settings,
    refusals,
    village,
)

if TYPE_CHECKING:
    from datetime import datetime

    from sidewalk.alerts.billing import Material
    from sidewalk.alerts.issue import NoticeIssuer
    from sidewalk.alerts.letterhead import Letterhead
    from sidewalk.cli.common import Village

notices_app = command_group(__doc__)

AtOption = Annotated[str | None, typer.Option(help="when, ISO 8601 or local time (default: now)")]
# sidewalk.alerts.delivery.DELIVERY_METHODS, written out so --help need not load fpdf2
# (tests/cli checks that they agree).
DELIVERY_METHODS = ("hand", "mail", "posted", "email")


def _now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


@contextmanager
def _issuer(config: Path | None) -> Iterator[NoticeIssuer]:
    from sidewalk.alerts.billing import BillingInputError
    from sidewalk.alerts.delivery import NotReadyError
    from sidewalk.alerts.issue import NoticeIssuer

    place = village(config)
    with place.cases() as cases, refusals(BillingInputError, NotReadyError, ValueError):
        yield NoticeIssuer(cases, place.profile, letterhead=letterhead(place))


def letterhead(place: Village) -> Letterhead | None:
    """The settings' [village] letterhead, stored with each notice issued here."""
    from sidewalk.alerts.letterhead import Letterhead

    village_settings = place.settings.village
    if village_settings is None:
        return None
    return Letterhead.from_settings(village_settings, place.profile)


def _at(issuer: NoticeIssuer, text: str | None) -> datetime:
    return instant("--at", text, issuer.profile.zone)


issue_app = command_group(
    "Issue the written notice for a case an inspector recorded (sidewalk street): numbered in"
    " the register, rendered under the Village's letterhead; its period runs from the service"
    " recorded with sidewalk street delivered / noticed (or notices delivered)."
)
notices_app.add_typer(issue_app, name="issue")

CaseIdOption = Annotated[str | None, typer.Option("--id", help="the case's id, as it was recorded")]
AddressOption = Annotated[
    str | None,
    typer.Option(help="instead of --id: the property's street address (one case waiting there)"),
]
PdfOption = Annotated[Path | None, typer.Option("--pdf", help="also write the letter here")]


def _case_at(issuer: NoticeIssuer, kind: str, address: str) -> str:
    """The one case of ``kind`` waiting for its notice at the street address ``address``."""
    from sidewalk.alerts.issue import CASE_NOTICE, CASE_WORDS, cases_awaiting_notice

    def plain(text: str) -> str:
        return " ".join(text.split()).casefold()

    streets = {f.id: f.street_address for f in issuer.cases.registry.list_frontages()}
    found = [
        v.key for v in cases_awaiting_notice(issuer.cases)
        if v.key.startswith(f"{kind}:") and plain(streets.get(v.frontage_id, "")) == plain(address)
    ]  # fmt: skip
    if not found:  # issued already and not yet served: that notice again
        found = [
            issuer.cases.clocks.get_violation(n.violation_id).key
            for n in issuer.cases.notices.list(kind=CASE_NOTICE[kind])
            if n.violation_id is not None and n.delivered_at is None
            and plain(streets.get(n.frontage_id, "")) == plain(address)
        ]  # fmt: skip
    what = CASE_WORDS[kind]
    if not found:
        fail(f"refused: no {what} at {address} waits for its notice")
    if len(found) > 1:
        ids = ", ".join(k.partition(":")[2] for k in found)
        fail(f"refused: {len(found)} cases of {what} at {address} wait for a notice ({ids}):"
             " give one with --id")  # fmt: skip
    return found[0]


def _issue(kind: str, case_id: str | None, who: str, *, address: str | None, at: str | None,
           pdf_out: Path | None, config: Path | None, serve: str) -> None:  # fmt: skip
    """Issue (or find) the notice for the case and say what to do with it next."""
    from sidewalk.alerts.issue import CaseNotOnRecord
    from sidewalk.alerts.pdf import notice_pdf
    from sidewalk.cli.common import no_nul
    from sidewalk.core.clock import format_local

    if (case_id is None) == (address is None):
        fail("give the case as --id or as --address, one of them")
    no_nul(id=case_id or "", address=address or "", who=who)
    with _issuer(config) as issuer, refusals(CaseNotOnRecord):
        issued = _at(issuer, at)
        case_key = f"{kind}:{case_id}" if address is None else _case_at(issuer, kind, address)
        before = {n.id for n in issuer.cases.notices.list()}
        notice = issuer.case_notice(case_key, issued, who=who)
        address = issuer.cases.registry.get_frontage(notice.frontage_id).street_address
        if pdf_out is not None and notice.body_text is not None:
            pdf_out.write_bytes(notice_pdf(notice, issuer.profile))
    again = "" if notice.id not in before else " (issued before; nothing new)"
    when = format_local(notice.issued_at, issuer.profile.zone)
    console().print(
        f"notice {notice.number}: {_KIND_WORDS[notice.kind]}, {address}, issued {when}"
        f"{again}", soft_wrap=True,
    )  # fmt: skip
    if notice.body_text is None:
        console().print(
            f"not written yet ({notice.status}): see sidewalk notices register for why",
            soft_wrap=True,
        )
        return
    if pdf_out is not None:
        console().print(f"letter: {pdf_out}")
    console().print(
        f"once served, record it: sidewalk street {serve} --id {case_key.partition(':')[2]}"
        " --method hand|posted|mail --at WHEN --who NAME", soft_wrap=True,
    )  # fmt: skip


# The register's words for the kinds issued here (dashboard/words.py says the same).
_KIND_WORDS = {
    "obstruction_notice": "notice to remove an obstruction",
    "inspection_notice": "notice of an inspector's finding",
}


@issue_app.command("obstruction")
def issue_obstruction(  # noqa: PLR0917 (Typer maps parameters to options)
    who: WhoOption,
    id: CaseIdOption = None,
    address: AddressOption = None,
    at: AtOption = None,
    pdf: PdfOption = None,
    config: ConfigOption = None,
) -> None:
    """§ 370-8 D/E: the notice to remove an obstruction recorded with sidewalk street
    obstruction (or left after a § 370-9 permit ended) within 24 hours of its service."""
    _issue("obstruction", id, who, address=address, at=at, pdf_out=pdf, config=config,
           serve="delivered")  # fmt: skip


@issue_app.command("finding")
def issue_finding(  # noqa: PLR0917 (Typer maps parameters to options)
    who: WhoOption,
    id: CaseIdOption = None,
    address: AddressOption = None,
    at: AtOption = None,
    pdf: PdfOption = None,
    config: ConfigOption = None,
) -> None:
    """The notice of an inspector's finding recorded with sidewalk street finding,
    demolition or excavation (§ 370-10 C, § 370-11 C, § 370-14, §§ 144-11, 144-12 B;
    § 144-12 C's order): correct it within the period after its service."""
    _issue("inspection", id, who, address=address, at=at, pdf_out=pdf, config=config,
           serve="noticed")  # fmt: skip


@notices_app.command("register")
def register(
    config: ConfigOption = None,
    csv_out: Annotated[Path | None, typer.Option("--csv")] = None,
    pdf_out: Annotated[Path | None, typer.Option("--pdf")] = None,
) -> None:
    """The notice register: every notice, its deliveries, and why a pending one is stuck."""
    from rich.table import Table

    from sidewalk.alerts import documents

    with _issuer(config) as issuer:
        rows = documents.notice_register(issuer.cases, issuer.profile)
        if csv_out:
            csv_out.write_text(documents.register_csv(rows), encoding="utf-8")
        if pdf_out:
            pdf_out.write_bytes(documents.register_pdf(rows, issuer.profile, _now()))
    table = Table(title="Notice register")
    for name in ("number", "kind", "parcel", "owner", "status", "deliveries", "problem"):
        table.add_column(name)
    for r in rows:
        table.add_row(r.number, r.kind, r.parcel, r.owner, r.status, r.deliveries, r.problem)
    console().print(table)


@notices_app.command("render-pending")
def render_pending(config: ConfigOption = None) -> None:
    """Render again every pending notice (after fixing an address or a template)."""
    with _issuer(config) as issuer:
        for n in issuer.render_pending():
            console().print(f"{n.number}: {n.status}")


@notices_app.command("queue")
def queue(
    number: str,
    channel: Annotated[list[str], typer.Option(help="print | email | webhook (repeatable)")],
    webhook_url: Annotated[str | None, typer.Option()] = None,
    config: ConfigOption = None,
) -> None:
    """Queue a rendered notice for delivery (queueing twice is harmless)."""
    from sidewalk.alerts import delivery

    with _issuer(config) as issuer:
        notice = issuer.cases.notices.get_by_number(number)
        jobs = delivery.queue_notice(
            issuer.cases, notice.id, channel, _now(), webhook_url=webhook_url
        )
    for job in jobs:
        console().print(f"job {job.id}: {job.channel} → {job.target} ({job.status})")


@notices_app.command("print-batch")
def print_batch(
    out: Annotated[
        Path | None, typer.Option(help="folder for the batch PDF (default: [delivery] print_dir)")
    ] = None,
    duplex: Annotated[bool, typer.Option(help="start every notice on a new sheet")] = True,
    config: ConfigOption = None,
) -> None:
    """Every queued print job as one PDF for window envelopes."""
    from sidewalk.alerts import delivery

    out = out or load_settings(config).delivery.print_dir
    with _issuer(config) as issuer:
        batch = delivery.print_batch(issuer.cases, issuer.profile, out, _now(), duplex=duplex)
    if batch is None:
        console().print("nothing queued for print")
        return
    console().print(f"{batch.path} ({len(batch.notices)} notices, sha256 {batch.sha256})")


@notices_app.command("deliver")
def deliver(  # noqa: PLR0917 (Typer maps parameters to options)
    smtp_host: Annotated[str | None, typer.Option(help="default: [delivery] smtp_host")] = None,
    smtp_port: Annotated[int | None, typer.Option(help="default: [delivery] smtp_port")] = None,
    sender: Annotated[str | None, typer.Option(help="From: (default: [delivery] sender)")] = None,
    smtp_user: Annotated[str | None, typer.Option(help="default: [delivery] smtp_user")] = None,
    starttls: Annotated[bool | None, typer.Option("--starttls/--no-starttls")] = None,
    config: ConfigOption = None,
) -> None:
    """Send what is due by e-mail and webhook, once; jobs a crash left mid-send become uncertain.

    The mail server comes from the options, else from the settings' [delivery]."""
    import os

    from sidewalk.alerts import delivery

    mail = load_settings(config).delivery
    smtp_host = smtp_host or mail.smtp_host
    channels: dict[str, delivery.Channel] = {}
    with _issuer(config) as issuer:
        if smtp_host:
            settings = delivery.SmtpSettings(
                smtp_host, smtp_port or mail.smtp_port, sender or mail.sender or "dpw@localhost",
                smtp_user or mail.smtp_user, os.environ.get("SIDEWALK_SMTP_PASSWORD"),
                mail.starttls if starttls is None else starttls,
            )  # fmt: skip
            channels[delivery.EMAIL] = delivery.SmtpChannel(settings, issuer.profile)
        if secret := os.environ.get("SIDEWALK_WEBHOOK_SECRET"):
            channels[delivery.WEBHOOK] = delivery.WebhookChannel(secret.encode(), issuer.profile)
        worker = delivery.Deliverer(issuer.cases, issuer.profile, channels)
        uncertain = worker.recover()
        report = worker.run_once()
    console().print(
        f"sent {len(report.sent)}, retrying {len(report.retrying)}, failed {len(report.failed)},"
        f" uncertain {len(uncertain)}"
    )


@notices_app.command("delivered")
def delivered(
    number: str,
    who: WhoOption,
    method: Annotated[str, typer.Option(help=" | ".join(DELIVERY_METHODS))] = "hand",
    at: AtOption = None,
    config: ConfigOption = None,
) -> None:
    """Record how and when a notice was delivered (the B(1)/(2) periods run from here).

    For mail, --at is the date it was received. Only the methods the profile's
    notice_delivery lists start a period (by default hand, posted, mail; the
    hazard notice hand or posted); any other is refused.
    """
    from sidewalk.alerts import delivery

    with _issuer(config) as issuer:
        notice = issuer.cases.notices.get_by_number(number)
        n = delivery.record_notice_delivery(
            issuer.cases, notice.id, _at(issuer, at), who, method, profile=issuer.profile
        )
    console().print(f"{n.number} delivered {n.delivered_at}")


def _materials(items: list[str]) -> tuple[Material, ...]:
    from decimal import Decimal, InvalidOperation

    from sidewalk.alerts.billing import Material

    out = []
    for item in items:
        name, _, cost = item.rpartition("=")
        try:
            out.append(Material(name, Decimal(cost)))
        except InvalidOperation:
            fail(f"material {item!r}: write it as 'description=12.34'")
    return tuple(out)


@notices_app.command("bill")
def bill(  # noqa: PLR0917 (Typer maps parameters to options)
    abatement_id: int,
    who: WhoOption,
    crew_hours: Annotated[
        str,
        typer.Option(
            help="person-hours, e.g. 2.5 (default: the crew's hours recorded when it finished)"
        ),
    ] = "0",
    equipment_hours: Annotated[str, typer.Option()] = "0",
    material: Annotated[list[str] | None, typer.Option(help="'salt=21.90' (repeatable)")] = None,
    at: AtOption = None,
    completed_at: Annotated[
        str | None,
        typer.Option(
            help="when the crew finished (the costs' date), for an abatement no clock"
            " completes; a § 370-10 abatement takes its recorded abatement_done"
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Price an abatement, keep its expense account and issue the bill notice."""
    from decimal import Decimal

    from sidewalk.alerts import accounts
    from sidewalk.alerts.billing import AbatementWork

    work = AbatementWork(Decimal(crew_hours), Decimal(equipment_hours), _materials(material or []))
    with _issuer(config) as issuer:
        if work.crew_hours == 0 and work.equipment_hours == 0:
            # The crew's hours recorded when it finished (sidewalk act abatement_done --worker).
            recorded = accounts.crew_work_of(issuer.cases.bills.get_abatement(abatement_id))
            if recorded is not None:
                work = recorded.work(work.materials)
        done = (
            None
            if completed_at is None
            else instant("--completed-at", completed_at, issuer.profile.zone)
        )
        billed = accounts.bill_abatement(
            issuer, abatement_id, work, _at(issuer, at), who=who, completed_at=done
        )
        held = accounts.held_words(issuer.cases, billed.notice)
    console().print(f"bill {billed.bill.id}: {billed.bill.amount} (notice {billed.notice.number})")
    if held is not None:  # not sent: the clerk is told why, and what releases it
        console().print(f"held, not sent: {held}", markup=False, soft_wrap=True)


@notices_app.command("bill-received")
def bill_received(
    bill_id: int, who: WhoOption, at: AtOption = None, config: ConfigOption = None
) -> None:
    """Record the bill's receipt: it is payable within 10 calendar days from it."""
    from sidewalk.alerts import accounts

    with _issuer(config) as issuer:
        b = accounts.record_bill_receipt(issuer, bill_id, _at(issuer, at), who)
    console().print(f"bill {b.id} received; due {b.due_date}")


@notices_app.command("pay")
def pay(  # noqa: PLR0917 (Typer maps parameters to options)
    bill_id: int,
    amount: str,
    key: Annotated[str, typer.Option(help="receipt number: the same key twice is one payment")],
    who: WhoOption,
    method: Annotated[str, typer.Option()] = "cash",
    reference: Annotated[str | None, typer.Option()] = None,
    at: AtOption = None,
    config: ConfigOption = None,
) -> None:
    """Record a payment, partial or full."""
    from decimal import Decimal

    from sidewalk.alerts import accounts

    with _issuer(config) as issuer:
        b = accounts.record_payment(
            issuer.cases, key, bill_id, Decimal(amount), _at(issuer, at),
            who=who, method=method, reference=reference,
        )  # fmt: skip
    console().print(f"bill {b.id}: paid {b.paid} of {b.amount}, balance {b.balance} ({b.status})")


@notices_app.command("overdue")
def overdue(config: ConfigOption = None) -> None:
    """Open bills past their last day to pay."""
    from sidewalk.alerts import accounts

    with _issuer(config) as issuer:
        for b in accounts.overdue_bills(issuer, _now()):
            console().print(
                f"bill {b.id} {b.frontage_id} {b.owner_name}: {b.balance} due {b.due_date}"
            )


@notices_app.command("tax-roll")
def tax_roll(
    year: int,
    csv_out: Annotated[Path, typer.Option("--csv")],
    pdf_out: Annotated[Path, typer.Option("--pdf")],
    config: ConfigOption = None,
) -> None:
    """The tax-roll certification for the Clerk-Treasurer, as CSV and PDF."""
    from sidewalk.alerts import documents

    with _issuer(config) as issuer:
        lines = documents.tax_roll_lines(issuer.cases, issuer.profile, year)
        csv_out.write_text(documents.tax_roll_csv(lines), encoding="utf-8")
        pdf_out.write_bytes(documents.tax_roll_pdf(lines, issuer.profile, year, _now()))
    console().print(f"{len(lines)} charges, total {documents.tax_roll_total(lines)}")


@notices_app.command("evidence")
def evidence_cmd(
    number: str,
    out: Annotated[Path, typer.Option(help="the .zip to write")],
    config: ConfigOption = None,
) -> None:
    """Build a notice's evidence package (PDF, records, history, audit rows, manifest)."""
    from sidewalk.alerts import evidence

    with _issuer(config) as issuer:
        notice = issuer.cases.notices.get_by_number(number)
        path = evidence.evidence_package(issuer, notice.id, out)
    console().print(str(path))


@notices_app.command("verify")
def verify(package: Path | None = None, config: ConfigOption = None) -> None:
    """Verify an evidence package, or (with no package) the audit log's hash chain."""
    from sidewalk.alerts import evidence

    if package is not None:
        result = evidence.verify_evidence_package(package)
        console().print("ok" if result.ok else "\n".join(result.problems))
        raise typer.Exit(0 if result.ok else 1)
    with _issuer(config) as issuer:
        chain = issuer.cases.audit.verify_chain()
    console().print(f"audit chain: {'ok' if chain.ok else chain.reason} ({chain.rows} rows)")
    raise typer.Exit(0 if chain.ok else 1)
