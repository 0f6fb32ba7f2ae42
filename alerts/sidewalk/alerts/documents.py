"""The notice register and the tax-roll certification for the Clerk-Treasurer (CSV and PDF).

Amounts are written from the exact Decimals of the case records; each
document's total is checked against the sum of its lines before it is written.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sidewalk.alerts.accounts import held_words
from sidewalk.alerts.letterhead import cited, plain_citation
from sidewalk.alerts.pdf import table_pdf
from sidewalk.alerts.wording import delivery_words, notice_kind, notice_status, usd
from sidewalk.core.clock import format_local
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records

# -- spreadsheet text ------------------------------------------------------------------

# A cell a spreadsheet would read as a formula (or, for TAB and CR, as a cell
# break) when it starts with one of these (OWASP "CSV injection").
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(value: object) -> object:
    """``value`` as a CSV cell that stays text: a string a spreadsheet would run as a
    formula gets a leading single quote; numbers (a negative amount too) stay numbers."""
    if isinstance(value, str) and value.startswith(FORMULA_TRIGGERS):
        return "'" + value
    return value


# -- notice register -------------------------------------------------------------------


@dataclass(frozen=True)
class RegisterRow:
    number: str
    kind: str
    frontage: str
    parcel: str
    owner: str
    issued: str
    deadline: str
    status: str
    delivered: str
    received: str
    deliveries: str
    problem: str


REGISTER_HEADER = (
    "number", "kind", "frontage", "parcel", "owner", "issued", "deadline", "status",
    "delivered", "received", "deliveries", "problem",
)  # fmt: skip


def notice_register(cases: records.CaseStore, profile: Profile) -> list[RegisterRow]:
    """Every notice in issue order, with its deliveries and why it is stuck, if it is:
    in the clerk's words (its kind, state and deliveries), never their keys."""
    zone = profile.zone
    parcels = {f.id: f.parcel_number for f in cases.registry.list_frontages()}
    jobs: dict[int, list[str]] = {}
    for job in cases.notices.list_delivery_jobs():
        jobs.setdefault(job.notice_id, []).append(delivery_words(job.channel, job.status))
    rows = []
    for n in cases.notices.list():
        problem = ""
        if n.status == "pending":
            failures = [
                a
                for a in cases.audit.list(f"notice:{n.number}")
                if a.action == "notice.render_failed"
            ]
            problem = str(failures[-1].detail.get("reason", "")) if failures else "not rendered"
        elif n.status == "held":
            problem = "held: " + (held_words(cases, n) or "it waits for the Village's confirmation")
        rows.append(
            RegisterRow(
                number=n.number,
                kind=notice_kind(n.kind),
                frontage=n.frontage_id,
                parcel=parcels.get(n.frontage_id, ""),
                owner=n.owner_name,
                issued=format_local(n.issued_at, zone),
                deadline=format_local(n.deadline, zone) if n.deadline else "",
                status=notice_status(n.status),
                delivered=format_local(n.delivered_at, zone) if n.delivered_at else "",
                received=format_local(n.received_at, zone) if n.received_at else "",
                deliveries="; ".join(jobs.get(n.id, [])),
                problem=problem,
            )
        )
    return rows


def register_csv(rows: Sequence[RegisterRow]) -> str:
    """The register as CSV, one notice a row, columns as ``REGISTER_HEADER``."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(REGISTER_HEADER)
    for r in rows:
        writer.writerow([csv_cell(getattr(r, name)) for name in REGISTER_HEADER])
    return out.getvalue()


def register_pdf(rows: Sequence[RegisterRow], profile: Profile, at: datetime) -> bytes:
    """The register as a landscape PDF table, as of ``at``."""
    return table_pdf(
        f"{profile.village.name} - notice register",
        [f"As of {format_local(at, profile.zone)}; {len(rows)} notices."],
        ("number", "kind", "parcel", "owner", "issued", "status", "delivered", "problem"),
        [
            (r.number, r.kind, r.parcel, r.owner, r.issued, r.status, r.delivered, r.problem)
            for r in rows
        ],
        at,
        widths=(26, 28, 24, 30, 40, 16, 40, 30),
    )


# -- tax roll ----------------------------------------------------------------------------


@dataclass(frozen=True)
class TaxRollLine:
    parcel: str
    property_address: str
    owner: str
    owner_address: str
    bill_id: int
    billed: Decimal
    paid: Decimal
    amount: Decimal
    costs_incurred: str
    certified: str
    citation: str


# The columns in the Clerk-Treasurer's words (as the dashboard's tax-roll export heads them).
TAX_ROLL_HEADER = (
    "Parcel number", "Property address", "Owner of record", "Owner's mailing address",
    "Bill number", "Billed ($)", "Paid before certifying ($)", "Special tax ($)", "Work done",
    "Certified", "Ordinance section",
)  # fmt: skip


class ReconciliationError(ValueError):
    """A certification whose lines do not reconcile with the bills behind them."""


def tax_roll_lines(cases: records.CaseStore, profile: Profile, tax_year: int) -> list[TaxRollLine]:
    """The certified special taxes of one tax year, each reconciled with its bill."""
    zone = profile.zone
    lines = []
    for entry in cases.bills.list_tax_roll(tax_year):
        bill = cases.bills.get(entry.bill_id)
        frontage = cases.registry.get_frontage(entry.frontage_id)
        # Certified = billed - paid at certification; later payments are the Treasurer's to settle.
        if entry.amount > bill.amount or entry.amount <= 0:
            raise ReconciliationError(
                f"tax-roll entry for bill {bill.id}: {entry.amount} against a bill of {bill.amount}"
            )
        lines.append(
            TaxRollLine(
                parcel=entry.parcel_number,
                property_address=frontage.street_address,
                owner=bill.owner_name,
                owner_address=", ".join(bill.owner_address_lines),
                bill_id=bill.id,
                billed=bill.amount,
                paid=bill.amount - entry.amount,
                amount=entry.amount,
                costs_incurred=format_local(bill.costs_incurred_at, zone),
                certified=format_local(entry.certified_at, zone),
                # The sections, as every document cites them: never a profile mark or note.
                citation=cited(entry.citation)
                or cited(profile.billing.tax_roll_after.citation)
                or "",
            )
        )
    return lines


def tax_roll_total(lines: Sequence[TaxRollLine]) -> Decimal:
    """The exact sum of the certified special taxes."""
    return sum((line.amount for line in lines), Decimal("0.00"))


def tax_roll_csv(lines: Sequence[TaxRollLine]) -> str:
    """One row per parcel charge, then a TOTAL row; amounts as exact decimal text."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(TAX_ROLL_HEADER)
    for x in lines:
        writer.writerow(
            [
                csv_cell(c) for c in (
                    x.parcel, x.property_address, x.owner, x.owner_address, x.bill_id,
                    x.billed, x.paid, x.amount, x.costs_incurred, x.certified, x.citation,
                )
            ]
        )  # fmt: skip
    writer.writerow(["TOTAL", "", "", "", "", "", "", tax_roll_total(lines), "", "", ""])
    return out.getvalue()


def tax_roll_pdf(
    lines: Sequence[TaxRollLine], profile: Profile, tax_year: int, at: datetime
) -> bytes:
    """The certification to the Clerk-Treasurer, quoting § 370-10 G and naming every other
    section an entry is made under (§ 370-8 F, § 144-12 C, …), with a signature line."""
    rule = profile.billing.tax_roll_after
    total = tax_roll_total(lines)
    own = cited(rule.citation)
    others = sorted({x.citation for x in lines if x.citation and x.citation != own})
    return table_pdf(
        f"{profile.village.name} - certification of special taxes for the {tax_year} tax roll",
        [
            f'{plain_citation(rule.citation)}: "{rule.words}"'
            if not rule.unconfirmed
            else rule.describe(),
            *(
                [f"Also entered under: {'; '.join(plain_citation(c) for c in others)}."]
                if others
                else []
            ),
            f"The following charges for abatement remain unpaid and are certified for entry on "
            f"the {tax_year} tax roll as special taxes against the parcels named.",
        ],
        ("parcel", "property", "owner", "bill", "billed", "paid", "special tax", "certified"),
        [
            (
                x.parcel,
                x.property_address,
                x.owner,
                str(x.bill_id),
                usd(x.billed),
                usd(x.paid),
                usd(x.amount),
                x.certified,
            )
            for x in lines
        ],
        at,
        closing=[
            f"Total certified: {usd(total)} on {len(lines)} parcel charge(s).",
            f"Prepared {format_local(at, profile.zone)} by Sidewalk Watch from the case records.",
            "",
            "Village Clerk-Treasurer: ______________________________   Date: ______________",
        ],
        widths=(28, 34, 36, 12, 22, 22, 24, 46),
    )
