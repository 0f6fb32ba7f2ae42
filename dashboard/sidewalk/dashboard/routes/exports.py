"""Exports: notices, bills, payments and the tax-roll list as CSV and spreadsheet.

One route per export and format, ``/api/exports/{name}.csv`` or ``.xlsx``, for the roles
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Annotated, Final, Literal, get_args
from zoneinfo import ZoneInfo

from fastapi import APIRouter, Depends, Query
from fastapi.responses import Response

from sidewalk.alerts.documents import csv_cell, tax_roll_lines
from sidewalk.alerts.letterhead import cited
from sidewalk.core.profile import Profile
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
            local(n.delivered_at, zone), cited(n.citation) or "",
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


def tax_roll_table(cases: CaseStore, profile: Profile, year: int | None) -> Table:
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
                else "" if c is None else csv_cell(c) if isinstance(c, str) else str(c)
                for c in row
            ]
        )  # fmt: skip
    return out.getvalue()


def xlsx_bytes(table: Table) -> bytes:
    """The table as a one-sheet workbook: dates as dates, money as dollars, header frozen."""
    # Ignored: openpyxl ships no type hints.
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
            if isinstance(cell.value, str):
                # Text stays text: "=HYPERLINK(...)" from a county file is not a formula.
                cell.data_type = "s"
                cell.number_format = "@"
            elif i in money:
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


class CsvResponse(Response):
    media_type = "text/csv"


class XlsxResponse(Response):
    media_type = XLSX


def download(table: Table, fmt: Format, now: datetime, zone: ZoneInfo) -> Response:
    stem = f"{table.title.lower().replace(' ', '-')}-{now.astimezone(zone):%Y-%m-%d}"
    disposition = {"Content-Disposition": f'attachment; filename="{stem}.{fmt}"'}
    if fmt == "csv":
        # The byte-order mark makes Excel read the names' diacritics as UTF-8.
        body = ("\ufeff" + csv_text(table)).encode("utf-8")
        return CsvResponse(body, media_type="text/csv; charset=utf-8", headers=disposition)
    return XlsxResponse(xlsx_bytes(table), headers=disposition)


Build = Callable[[CaseStore, Profile], Table]


def _notices(cases: CaseStore, profile: Profile) -> Table:
    return notices_table(cases.notices.list(), cases, profile.zone)


def _bills(cases: CaseStore, profile: Profile) -> Table:
    return bills_table(cases.bills.list(), cases, profile.zone)


def _payments(cases: CaseStore, profile: Profile) -> Table:
    paid = [(b, p) for b in cases.bills.list() for p in cases.bills.list_payments(b.id)]
    return payments_table(paid, cases, profile.zone)


def _route(name: str, fmt: Format, build: Build, summary: str) -> None:
    """``GET /exports/{name}.{fmt}``: one route per export and format (one media type each)."""

    def export(user: MayExport, cases: Cases, profile: VillageProfile, now: Now) -> Response:
        return download(build(cases, profile), fmt, now, profile.zone)

    response_class = CsvResponse if fmt == "csv" else XlsxResponse
    router.add_api_route(
        f"/{name}.{fmt}", export, methods=["GET"], response_class=response_class,
        summary=f"{summary} ({fmt.upper()})", name=f"export_{name}_{fmt}",
    )  # fmt: skip


for _name, _build, _summary in (
    ("notices", _notices, "Every notice: number, kind, property, owner, issued, deadline, status"),
    ("bills", _bills, "Every bill for work the Village did, with what was paid and is due"),
    ("payments", _payments, "Every payment against a bill"),
):
    for _fmt in get_args(Format):
        _route(_name, _fmt, _build, _summary)

Year = Annotated[
    int | None, Query(ge=2000, le=2100, description="one tax year; default every year")
]


@router.get("/tax-roll.csv", response_class=CsvResponse)
def export_tax_roll_csv(
    user: MayExport, cases: Cases, profile: VillageProfile, now: Now, year: Year = None
) -> Response:
    """The special taxes certified to the tax roll, as ``sidewalk notices tax-roll`` lists them."""
    return download(tax_roll_table(cases, profile, year), "csv", now, profile.zone)


@router.get("/tax-roll.xlsx", response_class=XlsxResponse)
def export_tax_roll_xlsx(
    user: MayExport, cases: Cases, profile: VillageProfile, now: Now, year: Year = None
) -> Response:
    """The special taxes certified to the tax roll, as a spreadsheet."""
    return download(tax_roll_table(cases, profile, year), "xlsx", now, profile.zone)
