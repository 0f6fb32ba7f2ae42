"""The greeting names every owner of record: the county's second owner (OWNERNME2)
comes into the window above the mailing address, and the salutation names both."""

from __future__ import annotations

import pytest

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import Addressee
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import T0, flat, pdf_text


def test_a_notice_to_two_owners_greets_both(issuer: NoticeIssuer, cases: CaseStore) -> None:
    # As the county import records them: the second owner first in the window.
    cases.registry.upsert_owner(
        "owner-kowalski", "KOWALSKI ANNA", ["KOWALSKI PIOTR", "PO BOX 27", "CLYMAN WI 53016"]
    )
    cases.registry.upsert_frontage(
        "main-107", site="clyman", parcel_number="026-0915-0007", street_address="107 Main St",
        length_ft=66.0, zone="residential", owner_id="owner-kowalski",
    )  # fmt: skip
    notice = issuer.obstruction_notice(
        "obs-7", "main-107", T0, area="sidewalk", observed_at=T0, description="a bench"
    )
    text = flat(pdf_text(notice_pdf(notice, issuer.profile)))
    assert "Dear KOWALSKI ANNA and KOWALSKI PIOTR:" in text
    assert "PO BOX 27" in text  # the window keeps the address as recorded


@pytest.mark.parametrize(
    ("name", "lines", "greeting"),
    [
        ("Jane Smith", ("101 Main St", "Clyman, WI 53016"), "Jane Smith"),
        ("DOE JOHN", ("DOE JANE", "123 MAIN ST", "CLYMAN WI 53016"), "DOE JOHN and DOE JANE"),
        ("LANDLORD LLC", ("C/O PAT REYES", "PO BOX 13", "CLYMAN WI 53016"), "LANDLORD LLC"),
        ("A", ("B", "C", "9 ELM ST", "CLYMAN WI 53016"), "A, B and C"),
        ("SAME NAME", ("SAME NAME", "PO BOX 1", "CLYMAN WI 53016"), "SAME NAME"),
    ],
)
def test_who_the_greeting_names(name: str, lines: tuple[str, ...], greeting: str) -> None:
    assert Addressee(name, lines).greeting == greeting
