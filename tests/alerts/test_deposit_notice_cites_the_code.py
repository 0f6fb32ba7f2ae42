"""§ 370-10 C's notice states what the Code applies to a deposit and no more: each
24-hour period a separate offense (§ 370-10 E) and the penalty (§ 370-10 H); never the
removal after notice of § 370-10 F, which follows only B's notices. Whether G charges
the Village's removal to the owner is the profile's reading
(``snow_and_ice.deposit_removal_charge``, for the Village attorney): the letter says so
in words until the Village confirms it, and says nothing of a bill under the other
reading."""

from __future__ import annotations

from pathlib import Path

from sidewalk.alerts.confirm import confirm_value
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.core.profile import Profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.connect import open_cases
from tests.alerts.conftest import T0, flat

PENDING = "the Village attorney has yet to decide"


def _letter(issuer: NoticeIssuer, key: str) -> str:
    notice = issuer.inspection_notice(
        key, "main-101", T0, rule="snow_on_street", observed_at=T0,
        description="snow from the driveway plowed into the street",
    )  # fmt: skip
    assert notice.status == "rendered", notice.status
    assert notice.body_text is not None
    return flat(notice.body_text.partition("\f")[0])


def test_a_deposit_notice_cites_e_h_and_g_as_the_villages_reading(
    issuer: NoticeIssuer, tmp_path: Path, profile: Profile
) -> None:
    reading = profile.snow_and_ice.deposit_removal_charge
    assert (reading.value, reading.unconfirmed) == ("charged under G", True)
    assert "Village attorney" in (reading.note or "")
    # A Village that confirmed C's period, not yet the reading of G.
    cases = open_cases(f"sqlite:///{tmp_path / 'pending.sqlite3'}", profile)
    try:
        cases.registry.upsert_owner(
            "owner-smith", "Jane Smith", ["101 Main St", "Clyman, WI 53016"]
        )
        cases.registry.upsert_frontage(
            "main-101", site="clyman", parcel_number="026-0915-0001",
            street_address="101 Main St", length_ft=66.0, zone="residential",
            owner_id="owner-smith",
        )  # fmt: skip
        for name in ("snow_and_ice.deposit_removal_after_notice",):
            confirm_value(cases, profile, name, by="Village Board", reference="minutes item 3",
                          at=T0, who="clerk")  # fmt: skip
        pending = NoticeIssuer(cases, profile, letterhead=issuer.letterhead)
        letter = _letter(pending, "C-1")
        what_follows = letter.partition("What happens if you do not.")[2]
        assert "is a separate offense (Village Code § 370-10 E)" in what_follows, what_follows
        assert "§ 370-10 H" in what_follows, what_follows
        assert "§ 370-10 F" not in letter, letter
        assert "(§ 370-10 G, as the Village reads it; " + PENDING in what_follows, what_follows
        for ours in ("unconfirmed", "inferred", "_"):
            assert ours not in letter, ours
        # Confirmed by the Village: G is cited plainly.
        confirm_value(cases, profile, "snow_and_ice.deposit_removal_charge", by="Village Board",
                      reference="minutes item 4", at=T0, who="clerk")  # fmt: skip
        confirmed = _letter(pending, "C-2")
    finally:
        cases.close()
    assert "charge its expenses to the owner, as the expenses of abating a snow or ice hazard" \
        " (§ 370-10 G)." in confirmed, confirmed  # fmt: skip
    assert PENDING not in confirmed


def test_under_the_other_reading_a_deposit_notice_threatens_no_bill(
    issuer: NoticeIssuer, cases: CaseStore, profile: Profile
) -> None:
    snow = profile.snow_and_ice
    other = snow.model_copy(update={
        "deposit_removal_charge": snow.deposit_removal_charge.model_copy(
            update={"value": "penalty only"}
        ),
    })  # fmt: skip
    penalty_only = profile.model_copy(update={"snow_and_ice": other})
    letter = _letter(NoticeIssuer(cases, penalty_only, letterhead=issuer.letterhead), "C-3")
    what_follows = letter.partition("What happens if you do not.")[2]
    assert "is a separate offense (Village Code § 370-10 E)" in what_follows, what_follows
    assert "§ 370-10 G" not in what_follows, what_follows
    assert "tax roll" not in what_follows, what_follows
