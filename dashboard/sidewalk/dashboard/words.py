"""The clerk's and the inspector's words for notices, steps and service (USERS.md).

Only presentation: what each notice kind, person step and way of serving is
called on screen. Internal names (kinds, states, keys, ids) never reach the
page; a kind missing here shows as its words with spaces, never as a key.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

# The notice words are the documents' too (the register, its CSV and PDF).
from sidewalk.alerts.wording import ABATEMENT_REASONS, NOTICE_KINDS, NOTICE_STATUS, notice_kind

# A step as a button says it (what the person did or found).
STEP_LABELS: Final = {
    "record_delivery": "Record service",
    "confirm_hazard": "Confirm hazard (immediate danger)",
    "owner_unavailable": "Owner cannot be reached: Village removes it",
    "inspected_clear": "Inspected: sidewalk cleared",
    "abatement_done": "Village crew finished the work",
    "bill_received": "Owner received the bill",
    "paid_in_full": "Paid in full",
    "record_treated": "Sidewalk sanded or salted",
    "record_ice": "Untreated ice on the sidewalk",
}

# A step as the notice's history tells it.
STEP_DONE: Final = {
    "record_delivery": "Notice served",
    "confirm_hazard": "Hazard confirmed",
    "owner_unavailable": "Owner could not be reached",
    "inspected_clear": "Inspected: sidewalk cleared",
    "abatement_done": "Village crew finished the work",
    "bill_received": "Owner received the bill",
    "paid_in_full": "Bill paid in full",
    "record_treated": "Sidewalk sanded or salted",
    "record_ice": "Untreated ice seen on the sidewalk",
}

SERVICE_METHODS: Final = {
    "hand": "Personal service (handed to the owner or person in charge)",
    "posted": "Posted on the premises",
    "mail": "Mail (the time is when it was received)",
    "email": "E-mail",
}

# How a served notice's history says it was served.
SERVED_BY: Final = {
    "hand": "by personal service",
    "posted": "by posting on the premises",
    "mail": "by mail",
    "email": "by e-mail",
}


# What each kind of clock is called (the clock's own state words are in ``states``).
CLOCK_KINDS: Final = {
    "clearing": "Snow and ice clearing",
    "enforcement": "Notice and enforcement",
    "frozen_subgrade": "Frozen ground",
    "keep_off": "New concrete: keep off",
    "opening_permit": "Street opening permit",
    "obstruction": "Obstruction of the sidewalk",
    "sweeping": "Street sweeping",
    "street_privilege": "Street privilege",
    "inspection": "Sidewalk inspection",
}

# An alert (``states.ALERT_ACTIONS``) as the Overview's "New alerts" says it.
ALERTS: Final = {
    "violation.recorded": "Violation recorded",
    "notice.issued": "Notice ready to serve",
    "hazard.candidate": "Possible hazard: a person must decide",
    "clearing.unverified": "Deadline passed, not measured: a person must look",
    "clearing.needs_review": "Camera evidence missing: a person must look",
    "abatement.ordered": "Village removal ordered",
    "tax_roll.certified": "Unpaid costs certified to the tax roll",
    "tax_roll.due_without_unpaid_bill": "Tax-roll date reached with no unpaid bill: check it",
    "tax_roll.held": "Tax-roll entry waits on day 60: the bill is still payable, or not yet out",
    "tax_roll.late": "Entered on the tax roll after day 60: the bill was still payable then",
}


def step_label(kind: str) -> str:
    return STEP_LABELS.get(kind, kind.replace("_", " ").capitalize())


def setting_words(name: str) -> str:
    """A profile setting's dotted name as words (``snow_and_ice.nonhazard_notice_period``
    → "nonhazard notice period")."""
    return name.rsplit(".", 1)[-1].replace("_", " ")


def clock_kind(kind: str) -> str:
    return CLOCK_KINDS.get(kind, kind.replace("_", " ").capitalize())


def alert_words(action: str) -> str:
    return ALERTS.get(action, action.replace(".", ": ").replace("_", " ").capitalize())


def alert_about(subject: str, detail: Mapping[str, Any], addresses: Mapping[str, str]) -> str:
    """What an alert is about in the clerk's words: the notice's number, else the frontage's
    street address (from the row's detail, or the first part of a violation's key), else
    the parcel. Never the stored subject (``violation:main-st-105:clearing:2026-…``)."""
    kind, _, rest = subject.partition(":")
    if kind == "notice":
        return f"Notice {rest}"
    frontage = detail.get("frontage")
    if not isinstance(frontage, str):
        frontage = rest if kind == "frontage" else rest.split(":", 1)[0] if ":" in rest else None
    if frontage:
        return addresses.get(frontage, frontage)
    parcel = detail.get("parcel")
    return f"Parcel {parcel}" if parcel else ""

__all__ = [
    "ABATEMENT_REASONS",
    "ALERTS",
    "CLOCK_KINDS",
    "NOTICE_KINDS",
    "NOTICE_STATUS",
    "SERVED_BY",
    "SERVICE_METHODS",
    "STEP_DONE",
    "STEP_LABELS",
    "alert_about",
    "alert_words",
    "clock_kind",
    "notice_kind",
    "setting_words",
    "step_label",
]
