"""Admin: the Village's letterhead and issuing officer, and confirming profile values.

The letterhead is read-only here: it lives in the settings file's ``[village]``
table (``sidewalk check`` reads the same), so the page shows what each letter
will carry, what is missing and which setting to change. ``serve`` hands the
settings' table to the app as ``app.state.village``; an app built without it
shows the letterhead as not set.

A profile value the code text leaves open (``unconfirmed``) is used by no
notice until the Village confirms it (``alerts.confirm``): the admin records
who confirmed it, when, and the board action or ordinance reference; the
confirmation is audited and the notices held for it go out.
"""

from __future__ import annotations

from datetime import date, datetime, time
from typing import Final

from fastapi import APIRouter, HTTPException, Request
from pydantic import BaseModel, Field

from sidewalk.alerts.confirm import ConfirmationError, confirm_value, unconfirmed_report
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.letterhead import Letterhead, letterhead_problems
from sidewalk.core.config import VillageConfig
from sidewalk.dashboard.routes.deps import (
    Cases,
    MayManageUsers,
    Now,
    RequestBody,
    VillageProfile,
    iso,
)
from sidewalk.dashboard.words import setting_words
from sidewalk.storage.cases import CaseStoreError

router = APIRouter(prefix="/admin", tags=["admin"])

# (setting, what it is on the letter), in the order a letter prints them.
LETTERHEAD_FIELDS = (
    ("office", "Office"),
    ("address_lines", "Office address"),
    ("telephone", "Telephone"),
    ("email", "E-mail"),
    ("office_hours", "Office hours"),
    ("website", "Website"),
    ("officer_name", "Issuing officer"),
    ("officer_title", "Officer's title"),
    ("signature_image", "Signature image"),
)


class LetterheadLine(BaseModel):
    label: str
    value: str | None = Field(description="None: not set")
    setting: str = Field(description="the settings-file key to change, e.g. [village] telephone")


class LetterheadView(BaseModel):
    village: str
    lines: list[LetterheadLine]
    problems: list[str] = Field(description="what `sidewalk check` says about these settings")


# A unit as the confirmable text writes it (``0 degC``), as a person reads it (``0 °C``).
UNIT_SHOWN: Final[dict[str, str]] = {
    "degC": "°C",
    "degF": "°F",
    "in per ft": "inch per foot",
    "percent": "%",
}


def value_words(value: str) -> str:
    """A profile value's text with its unit as written for people: ``0 degC`` → ``0 °C``
    (the text itself stays what a confirmation records)."""
    number, sep, unit = value.partition(" ")
    shown = UNIT_SHOWN.get(unit)
    if not sep or shown is None or not number.replace(".", "", 1).lstrip("-").isdigit():
        return value
    return f"{number}%" if shown == "%" else f"{number} {shown}"


class ConfirmationView(BaseModel):
    name: str = Field(description="the profile value's name (sent back to confirm it)")
    label: str
    value: str = Field(description="as a confirmation records it")
    shown: str = Field(description="the value as the page writes it (0 °C)")
    note: str
    confirmed_by: str | None
    reference: str | None
    confirmed_at: str | None
    recorded_by: str | None
    held_notices: int


class ConfirmBody(RequestBody):
    name: str = Field(min_length=1, max_length=120)
    confirmed_by: str = Field(max_length=120)
    confirmed_on: date
    reference: str = Field(max_length=200)


class Confirmed(BaseModel):
    confirmation: ConfirmationView
    released: list[str] = Field(description="notice numbers that went out now")
    still_held: list[str]


def village_settings(request: Request) -> VillageConfig | None:
    village: VillageConfig | None = getattr(request.app.state, "village", None)
    return village


def letterhead_lines(village: VillageConfig | None) -> list[LetterheadLine]:
    """Each letterhead setting as the page shows it (None where it is not set)."""
    lines = []
    for key, label in LETTERHEAD_FIELDS:
        raw = getattr(village, key, None) if village is not None else None
        if isinstance(raw, list):
            value: str | None = ", ".join(raw) or None
        else:
            value = None if raw in (None, "") else str(raw)
        lines.append(LetterheadLine(label=label, value=value, setting=f"[village] {key}"))
    return lines


@router.get("/letterhead")
def letterhead(request: Request, user: MayManageUsers, profile: VillageProfile) -> LetterheadView:
    """What every letter carries, what is missing, and the setting to change."""
    village = village_settings(request)
    return LetterheadView(
        village=profile.village.name,
        lines=letterhead_lines(village),
        problems=letterhead_problems(village),
    )


def _view(cases: Cases, profile: VillageProfile, name: str) -> ConfirmationView:
    for item in unconfirmed_report(cases, profile):
        if item.name == name:
            done = item.confirmation
            return ConfirmationView(
                name=item.name, label=setting_words(item.name).capitalize(), value=item.value,
                shown=value_words(item.value),
                note=item.note, confirmed_by=done.confirmed_by if done else None,
                reference=done.reference if done else None,
                confirmed_at=iso(done.confirmed_at) if done else None,
                recorded_by=done.recorded_by if done else None, held_notices=item.held_notices,
            )  # fmt: skip
    raise HTTPException(404, "the profile has no such value awaiting confirmation")


@router.get("/confirmations")
def confirmations(
    user: MayManageUsers, cases: Cases, profile: VillageProfile
) -> list[ConfirmationView]:
    """Every value the code text leaves open, confirmed or not, and the notices held for it."""
    return [_view(cases, profile, item.name) for item in unconfirmed_report(cases, profile)]


def check_confirmation(body: ConfirmBody, today: date) -> None:
    """One line naming the field for each thing a confirmation cannot be recorded with."""
    if len(body.confirmed_by.strip()) < 2:
        raise HTTPException(422, "Confirmed by: name the person or board that confirmed it")
    if len(body.reference.strip()) < 3:
        raise HTTPException(
            422, "Board action or ordinance: give the motion, resolution or ordinance number"
        )
    if body.confirmed_on > today:
        raise HTTPException(422, "Confirmed on: the date cannot be in the future")


@router.post("/confirmations")
def confirm(
    *,
    request: Request, body: ConfirmBody, user: MayManageUsers, cases: Cases,
    profile: VillageProfile, now: Now,
) -> Confirmed:  # fmt: skip
    """Record the Village's confirmation of one value (audited); held notices go out."""
    zone = profile.zone
    check_confirmation(body, now.astimezone(zone).date())
    village = village_settings(request)
    issuer = NoticeIssuer(
        cases, profile,
        letterhead=Letterhead.from_settings(village, profile) if village is not None else None,
    )  # fmt: skip
    try:
        _, released = confirm_value(
            cases, profile, body.name, by=body.confirmed_by.strip(),
            reference=body.reference.strip(),
            at=datetime.combine(body.confirmed_on, time(0), tzinfo=zone), who=user.username,
            issuer=issuer,
        )  # fmt: skip
    except ConfirmationError:
        raise HTTPException(404, "the profile has no such value awaiting confirmation") from None
    except CaseStoreError as exc:
        raise HTTPException(422, str(exc)) from None
    return Confirmed(
        confirmation=_view(cases, profile, body.name),
        released=[n.number for n in released if n.status != "held"],
        still_held=[n.number for n in released if n.status == "held"],
    )
