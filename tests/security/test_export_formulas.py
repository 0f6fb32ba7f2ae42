"""Exports keep every cell text: a county owner name that is a formula stays a string."""

from __future__ import annotations

import csv
import io
import zipfile
from decimal import Decimal

# Ignored: openpyxl ships no type hints.
from openpyxl import load_workbook  # type: ignore[import-untyped]

from sidewalk.alerts.documents import (
    REGISTER_HEADER,
    RegisterRow,
    TaxRollLine,
    register_csv,
    tax_roll_csv,
)
from sidewalk.dashboard.routes.exports import Table, csv_text, xlsx_bytes

EVIL = '=HYPERLINK("http://evil.example","x")'
HOSTILE = [EVIL, "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "\tx", "\rx", "=WEBSERVICE(A1)"]


def test_xlsx_and_csv_exports_write_formulas_as_text() -> None:
    rows: list[tuple[str | Decimal | None, ...]] = [
        (h, Decimal("-12.50"), "Main St") for h in HOSTILE
    ]
    table = Table("Notices", ("Owner of record", "Billed ($)", "Street"), list(rows))
    book = xlsx_bytes(table)
    with zipfile.ZipFile(io.BytesIO(book)) as z:
        sheet_xml = z.read("xl/worksheets/sheet1.xml").decode()
    assert "<f>" not in sheet_xml
    assert "<f " not in sheet_xml
    sheet = load_workbook(io.BytesIO(book)).active
    for r, hostile in enumerate(HOSTILE, start=2):
        cell = sheet.cell(r, 1)
        assert cell.data_type == "s"
        assert cell.value == hostile.replace("\r", "\n")
        assert sheet.cell(r, 2).value == -12.5  # money stays a number

    parsed = list(csv.reader(io.StringIO(csv_text(table))))
    assert [row[0] for row in parsed[1:]] == ["'" + h for h in HOSTILE]
    assert all(row[1] == "-12.50" and row[2] == "Main St" for row in parsed[1:])

    line = TaxRollLine(
        parcel="@1", property_address="+2", owner=EVIL, owner_address="-3", bill_id=7,
        billed=Decimal("-1.00"), paid=Decimal("0.00"), amount=Decimal("5.00"),
        costs_incurred="x", certified="y", citation="§ 370-10",
    )  # fmt: skip
    roll = list(csv.reader(io.StringIO(tax_roll_csv([line]))))[1]
    assert roll[:4] == ["'@1", "'+2", "'" + EVIL, "'-3"]
    assert roll[5] == "-1.00"
    assert all(not c.startswith(("=", "+", "@")) for c in roll)
    fields = {name: "" for name in REGISTER_HEADER} | {"owner": EVIL, "parcel": "-7"}
    register = list(csv.reader(io.StringIO(register_csv([RegisterRow(**fields)]))))[1]
    assert "'" + EVIL in register
    assert "'-7" in register
