"""§ 370-10 B(1): the hazard notice takes effect only when handed over or posted, so it is
addressed for that at the property (the premises address), to the owner by name where
the registry has no person in charge or occupant; the owner's mailing address (here a
PO box) is shown on it apart, and the owner's copy goes there. The premises address
carries the ZIP code: the parcel record's, or the village's (its profile's) where the
record has none."""

from __future__ import annotations

from datetime import timedelta

from sidewalk.alerts.delivery import record_notice_delivery
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.pdf import notice_pdf
from sidewalk.analytics.runner import AnalyticsRunner
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from tests.alerts.conftest import flat, pdf_text

PO_BOX = ["PO Box 412", "Watertown WI 53094"]


def test_a_hazard_notice_is_addressed_to_the_premises_not_the_owners_po_box(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    runner, cases = stormed
    [notice] = cases.notices.list(kind="clearing_violation", frontage_id="main-st-105")
    key = cases.clocks.get_violation(notice.violation_id or 0).key
    frontage = cases.registry.get_frontage("main-st-105")
    owner = cases.registry.get_owner(frontage.owner_id)
    cases.registry.upsert_owner(owner.id, owner.name, PO_BOX)
    assert runner.engine.now is not None
    confirmed = runner.engine.now + timedelta(minutes=20)
    cases.actions.record("confirm_hazard", key, confirmed, "Officer Quinn")
    runner.tick()
    [hazard] = cases.notices.list(kind="hazard_notice")
    assert hazard.owner_name == owner.name
    assert frontage.parcel_id is None
    assert profile.village.zip_code == "53016"
    # No parcel record (so no ZIP code of its own): the village's.
    assert hazard.owner_address_lines == (frontage.street_address, "Clyman WI 53016")
    assert hazard.detail["served_on"] == {"name": owner.name, "role": "owner"}
    assert hazard.detail["owner_mailing"] == {"name": owner.name, "address": PO_BOX}
    text = flat(pdf_text(notice_pdf(hazard, profile)))
    # The window address is the property; the PO box is shown apart, once, as the owner's.
    window = text.split("Dear", 1)[0]
    assert f"{owner.name} {frontage.street_address} Clyman WI 53016" in window
    assert "PO Box 412" not in window
    assert f"Owner of record: {owner.name}; mailing address: PO Box 412, Watertown WI 53094." in (
        text
    )
    # Served by posting at the property; the owner's copy is mailed to the PO box.
    posted = confirmed + timedelta(minutes=10)
    record_notice_delivery(cases, hazard.id, posted, "Officer Quinn", "posted", profile=profile)
    copy = NoticeIssuer(cases, profile).owner_copy(cases.notices.get(hazard.id))
    copy_pdf = flat(pdf_text(notice_pdf(copy, profile)))
    assert "PO Box 412" in copy_pdf.split("Dear", 1)[0]


def test_the_premises_address_takes_the_parcels_own_zip_before_the_villages(
    stormed: tuple[AnalyticsRunner, CaseStore], profile: Profile
) -> None:
    """A parcel record with its own ZIP code (a village may span two) keeps it; a profile
    with no ZIP code and a record with none give the town and state alone, never "None"."""
    _, cases = stormed
    f = cases.registry.get_frontage("main-st-105")

    def parcel_with(zip_code: str | None) -> None:
        cases.registry.upsert_parcel(
            "P-105", tax_parcel_id=f.parcel_number, site_address=f.street_address,
            place="Village of Clyman", zip_code=zip_code, source="county file",
        )  # fmt: skip
        cases.registry.upsert_frontage(
            f.id, site=f.site, parcel_number=f.parcel_number, street_address=f.street_address,
            length_ft=f.length_ft, zone=f.zone, owner_id=f.owner_id, device_id=f.device_id,  # type: ignore[arg-type]
            may_deposit_on_street=f.may_deposit_on_street, parcel_id="P-105",
        )  # fmt: skip

    issuer = NoticeIssuer(cases, profile)
    parcel_with("53016-9421")
    assert issuer._premises(f.id) == [f.street_address, "Clyman WI 53016-9421"]
    parcel_with(None)
    assert issuer._premises(f.id) == [f.street_address, "Clyman WI 53016"]
    village = profile.village.model_copy(update={"zip_code": None})
    bare = NoticeIssuer(cases, profile.model_copy(update={"village": village}))
    assert bare._premises(f.id) == [f.street_address, "Clyman WI"]
