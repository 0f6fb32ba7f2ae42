"""Exports: notices, bills, payments and the tax-roll list as CSV and spreadsheet.

One route per export, ``/api/exports/{name}.csv`` or ``.xlsx``, for the roles
that may see owners' names and addresses (clerk, admin). Columns carry the
clerk's names, not field names; times are in the Village's zone; money is
dollars and cents (numbers in the spreadsheet, formatted as dollars; plain
``1234.50`` in the CSV so any spreadsheet reads it as a number).

The tables are built by pure functions from the records (``*_table``); the
two writers only lay them out.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Final, Literal
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from sidewalk.alerts.documents import tax_roll_lines
from sidewalk.dashboard.auth import User, require
from sidewalk.dashboard.routes.deps import Cases, Now, VillageProfile
from sidewalk.dashboard.words import NOTICE_STATUS, notice_kind
from sidewalk.storage.cases import BillRecord, CaseStore, NoticeRecord, PaymentRecord

router = APIRouter(prefix="/exports", tags=["exports"])

# Owners' names and mailing addresses are in every export: the roles that see them.
MayExport = Annotated[User, Depends(require("owner_details"))]
Format = Literal["csv", "xlsx"]
Cell = str | int | Decimal | datetime | date | None

BILL_STATUS: Final = {
    "open": "Open",
    "paid": "Paid in full",
    "certified": "Certified to the tax roll",
}
XLSX: Final = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


@dataclass(frozen=True)
class Table:
    title: str  # the sheet's name and the file's stem
    header: tuple[str, ...]
    rows: list[tuple[Cell, ...]]


def local(at: datetime | None, zone: ZoneInfo) -> datetime | None:
    """An instant as the Village's wall-clock time (no offset: a spreadsheet has none)."""
    return None if at is None else at.astimezone(zone).replace(tzinfo=None)


def dollars(amount: Decimal) -> Decimal:
    return amount.quantize(Decimal("0.01"))


def notices_table(notices: Sequence[NoticeRecord], cases: CaseStore, zone: ZoneInfo) -> Table:
    frontages = {f.id: f for f in cases.registry.list_frontages(include_retired=True)}
    rows: list[tuple[Cell, ...]] = []
    for n in sorted(notices, key=lambda n: (n.issued_at, n.number)):
        f = frontages.get(n.frontage_id)
        rows.append((
            n.number, notice_kind(n.kind), f.street_address if f else "",
            f.parcel_number if f else "", n.owner_name, ", ".join(n.owner_address_lines),
            local(n.issued_at, zone),
            local(n.deadline, zone), NOTICE_STATUS.get(n.status, n.status.capitalize()),
            local(n.delivered_at, zone), n.citation or "",
        ))  # fmt: skip
    return Table(
        "Notices",
        ("Notice number", "Notice", "Property address", "Parcel number", "Owner of record",
         "Owner's mailing address", "Issued", "Deadline in the notice", "Status", "Served",
         "Ordinance section"),
        rows,
    )  # fmt: skip


def bills_table(bills: Sequence[BillRecord], cases: CaseStore, zone: ZoneInfo) -> Table:
    frontages = {f.id: f for f in cases.registry.list_frontages(include_retired=True)}
    rows: list[tuple[Cell, ...]] = []
    for b in sorted(bills, key=lambda b: b.id):
        f = frontages.get(b.frontage_id)
        rows.append((
            b.id, f.street_address if f else "", f.parcel_number if f else "", b.owner_name,
            ", ".join(b.owner_address_lines), local(b.costs_incurred_at, zone),
            local(b.issued_at, zone), local(b.received_at, zone), b.due_date,
            dollars(b.amount), dollars(b.paid), dollars(b.balance),
            BILL_STATUS.get(b.status, b.status.capitalize()),
        ))  # fmt: skip
    return Table(
        "Bills",
        ("Bill number", "Property address", "Parcel number", "Owner of record",
         "Owner's mailing address", "Work done", "Billed", "Owner received it", "Due",
         "Amount billed ($)", "Paid ($)", "Balance due ($)", "Status"),
        rows,
    )  # fmt: skip


def payments_table(
    payments: Sequence[tuple[BillRecord, PaymentRecord]], cases: CaseStore, zone: ZoneInfo
) -> Table:
    frontages = {f.id: f for f in cases.registry.list_frontages(include_retired=True)}
    rows: list[tuple[Cell, ...]] = []
    for b, p in sorted(payments, key=lambda bp: (bp[1].paid_at, bp[1].id)):
        f = frontages.get(b.frontage_id)
        rows.append((
            local(p.paid_at, zone), b.id, f.street_address if f else "",
            f.parcel_number if f else "", b.owner_name, dollars(p.amount),
            p.method.replace("_", " ").capitalize(), p.reference or "",
        ))  # fmt: skip
    return Table(
        "Payments",
        ("Paid on", "Bill number", "Property address", "Parcel number", "Owner of record",
         "Amount paid ($)", "Paid by", "Check or receipt number"),
        rows,
    )  # fmt: skip


def tax_roll_table(cases: CaseStore, profile: VillageProfile, year: int | None) -> Table:
    """The certified special taxes (``sidewalk notices tax-roll``'s lines), every year or one."""
    years = sorted({e.tax_year for e in cases.bills.list_tax_roll(year)})
    rows: list[tuple[Cell, ...]] = []
    for y in years:
        for x in tax_roll_lines(cases, profile, y):
            rows.append((
                y, x.parcel, x.property_address, x.owner, x.owner_address, x.bill_id,
                dollars(x.billed), dollars(x.paid), dollars(x.amount), x.costs_incurred,
                x.certified, x.citation,
            ))  # fmt: skip
    return Table(
        "Tax roll",
        ("Tax year", "Parcel number", "Property address", "Owner of record",
         "Owner's mailing address", "Bill number", "Billed ($)", "Paid before certifying ($)",
         "Special tax ($)", "Work done", "Certified", "Ordinance section"),
        rows,
    )  # fmt: skip


def csv_text(table: Table) -> str:
    """The table as CSV; times as ``2026-12-10 17:00`` in the Village's zone."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    writer.writerow(table.header)
    for row in table.rows:
        writer.writerow(
            [
                c.strftime("%Y-%m-%d %H:%M") if isinstance(c, datetime)
                else "" if c is None else str(c)
                for c in row
            ]
        )  # fmt: skip
    return out.getvalue()


def xlsx_bytes(table: Table) -> bytes:
    """The table as a one-sheet workbook: dates as dates, money as dollars, header frozen."""
    from openpyxl import Workbook  # type: ignore[import-untyped]  # deferred: exports only
    from openpyxl.styles import Font  # type: ignore[import-untyped]

    book = Workbook()
    sheet = book.active
    sheet.title = table.title
    sheet.append(list(table.header))
    for cell in sheet[1]:
        cell.font = Font(bold=True)
    money = {i for i, h in enumerate(table.header) if h.endswith("($)")}
    for row in table.rows:
        sheet.append([float(c) if isinstance(c, Decimal) else c for c in row])
        for i, cell in enumerate(sheet[sheet.max_row]):
            if i in money:
                cell.number_format = '"$"#,##0.00'
            elif isinstance(cell.value, datetime):
                cell.number_format = "yyyy-mm-dd hh:mm"
            elif isinstance(cell.value, date):
                cell.number_format = "yyyy-mm-dd"
    for i, name in enumerate(table.header):
        width = max([len(name), *(len(str(r[i] or "")) for r in table.rows[:200])])
        sheet.column_dimensions[sheet.cell(1, i + 1).column_letter].width = min(width + 2, 50)
    sheet.freeze_panes = "A2"
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def download(table: Table, fmt: Format, now: datetime, zone: ZoneInfo) -> Response:
    stem = f"{table.title.lower().replace(' ', '-')}-{now.astimezone(zone):%Y-%m-%d}"
    disposition = {"Content-Disposition": f'attachment; filename="{stem}.{fmt}"'}
    if fmt == "csv":
        # The byte-order mark makes Excel read the names' diacritics as UTF-8.
        body = ("\ufeff" + csv_text(table)).encode("utf-8")
        return Response(body, media_type="text/csv; charset=utf-8", headers=disposition)
    return Response(xlsx_bytes(table), media_type=XLSX, headers=disposition)


@router.get("/notices.{fmt}", response_class=Response)
def export_notices(
    fmt: Format, user: MayExport, cases: Cases, profile: VillageProfile, now: Now
) -> Response:
    """Every notice: number, kind, property, owner, issued, deadline, status, served."""
    table = notices_table(cases.notices.list(), cases, profile.zone)
    return download(table, fmt, now, profile.zone)


@router.get("/bills.{fmt}", response_class=Response)
def export_bills(
    fmt: Format, user: MayExport, cases: Cases, profile: VillageProfile, now: Now
) -> Response:
    """Every bill for work the Village did, with what was paid and what is due."""
    return download(bills_table(cases.bills.list(), cases, profile.zone), fmt, now, profile.zone)


@router.get("/payments.{fmt}", response_class=Response)
def export_payments(
    fmt: Format, user: MayExport, cases: Cases, profile: VillageProfile, now: Now
) -> Response:
    """Every payment against a bill."""
    paid = [(b, p) for b in cases.bills.list() for p in cases.bills.list_payments(b.id)]
    return download(payments_table(paid, cases, profile.zone), fmt, now, profile.zone)


@router.get("/tax-roll.{fmt}", response_class=Response)
def export_tax_roll(
    *,
    fmt: Format, user: MayExport, cases: Cases, profile: VillageProfile, now: Now,
    year: int | None = Query(None, ge=2000, le=2100, description="one tax year; default all"),
) -> Response:  # fmt: skip
    """The special taxes certified to the tax roll (§ 370-10 G), as the command line lists them."""
    return download(tax_roll_table(cases, profile, year), fmt, now, profile.zone)
