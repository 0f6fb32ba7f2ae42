"""How a clock's state shows on the dashboard: a category with a colour and a word.

Only presentation: the states themselves are the clock engine's enums
(``sidewalk.analytics.clocks.states``). Each enum has its table here, keyed by its
members, so a renamed state is a type error and a state with no entry fails
``tests/dashboard/test_states.py``, instead of showing as "No clock yet".
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import StrEnum
from typing import Any, Final, Literal, NamedTuple

from sidewalk.analytics.clocks.states import (
    CaseState,
    ClearingState,
    InspectionState,
    KeepOffState,
    ObstructionState,
    PermitState,
    SubgradeState,
    SweepingState,
)

Category = Literal[
    "clear",
    "snowing",
    "clearing",
    "unverified",
    "violation",
    "hazard",
    "abatement",
    "work",
    "frozen",
    "none",
]

# category -> (label, colour); colours pass WCAG AA against white text or are
# paired with a dark outline, and every category is also written out in words.
CATEGORIES: Final[dict[Category, tuple[str, str]]] = {
    "clear": ("Clear / complied", "#1b7f3b"),
    "snowing": ("Snowing", "#3b6fb6"),
    "clearing": ("Owner's time to clear running", "#8a6d00"),
    "unverified": ("Deadline passed, not measured", "#6b4fa1"),
    "violation": ("Violation / notice", "#c0392b"),
    "hazard": ("Hazard notice", "#7f1010"),
    "abatement": ("Village abatement / billing", "#4a4a4a"),
    "work": ("Permit or work period running", "#2e6b73"),
    "frozen": ("Frozen ground", "#1f4e79"),
    "none": ("No clock yet", "#5f6b76"),
}


class Shown(NamedTuple):
    """A state's map category and its plain-words label."""

    category: Category
    label: str


CLEARING: Final[dict[ClearingState, Shown]] = {
    ClearingState.IDLE: Shown("clear", "No snowfall pending"),
    ClearingState.SNOWING: Shown("snowing", "Snowing"),
    ClearingState.CLEARING_PERIOD: Shown(
        "clearing", "Snow stopped: the owner's time to clear is running"
    ),
    ClearingState.COMPLIED: Shown("clear", "Cleared in time"),
    ClearingState.VIOLATION: Shown("violation", "Not cleared by the deadline"),
    ClearingState.UNVERIFIED: Shown("unverified", "Deadline passed, not measured"),
    ClearingState.NEEDS_REVIEW: Shown("unverified", "Needs review: camera evidence missing"),
}
CASE: Final[dict[CaseState, Shown]] = {
    CaseState.NOTICE_ISSUED: Shown("violation", "Notice issued, not yet delivered"),
    CaseState.NOTICE_PERIOD: Shown(
        "violation", "Notice served: the owner's time to clear is running"
    ),
    CaseState.HAZARD_NOTICE_ISSUED: Shown("hazard", "Hazard notice issued, not yet delivered"),
    CaseState.HAZARD_PERIOD: Shown(
        "hazard", "Hazard notice served: the owner's time to remove it is running"
    ),
    CaseState.ABATEMENT_ORDERED: Shown("abatement", "Village removal ordered"),
    CaseState.ABATED: Shown("abatement", "Village removed it; costs incurred"),
    CaseState.BILLED: Shown("abatement", "Bill received by the owner"),
    CaseState.PAID: Shown("clear", "Bill paid"),
    CaseState.CURED: Shown("clear", "Cleared after the notice"),
    CaseState.TAX_ROLL: Shown("abatement", "Unpaid costs on the tax roll"),
}
SUBGRADE: Final[dict[SubgradeState, Shown]] = {
    SubgradeState.UNKNOWN: Shown("none", "No ground reading yet"),
    SubgradeState.FROZEN: Shown("frozen", "Ground frozen"),
    SubgradeState.THAWED: Shown("clear", "Ground thawed"),
}
KEEP_OFF: Final[dict[KeepOffState, Shown]] = {
    KeepOffState.IDLE: Shown("clear", "Pour not started"),
    KeepOffState.KEEP_OFF_NORMAL: Shown("work", "New concrete: keep traffic off"),
    KeepOffState.KEEP_OFF_COLD: Shown("work", "New concrete, cold weather: keep off longer"),
    KeepOffState.PROTECTED: Shown("work", "Street concrete protected from traffic"),
    KeepOffState.ENDED: Shown("clear", "Keep-off period over"),
}
PERMIT: Final[dict[PermitState, Shown]] = {
    PermitState.NONE: Shown("none", "No permit record yet"),
    PermitState.VALID: Shown("work", "Permit in force"),
    PermitState.EXPIRED: Shown("clear", "Permit ended"),
}
OBSTRUCTION: Final[dict[ObstructionState, Shown]] = {
    ObstructionState.NONE: Shown("none", "No obstruction record yet"),
    ObstructionState.COMPLIANT: Shown("clear", "Allowed: a permit, authorization or exception"),
    ObstructionState.OBSTRUCTED: Shown("violation", "Obstructed: written notice due"),
    ObstructionState.REMOVAL_PERIOD: Shown(
        "violation", "Notice served: the owner's time to remove it is running"
    ),
    ObstructionState.REMOVED: Shown("clear", "Obstruction removed"),
    ObstructionState.OVERDUE: Shown("abatement", "Not removed in time: village removes it"),
}
SWEEPING: Final[dict[SweepingState, Shown]] = {
    SweepingState.NONE: Shown("none", "No sweeping record yet"),
    SweepingState.SWEEPING_PERIOD: Shown("work", "Debris on the street: time to sweep it running"),
    SweepingState.SWEPT: Shown("clear", "Street swept"),
    SweepingState.OVERDUE: Shown("abatement", "Not swept in time: village sweeps and bills"),
}
INSPECTION: Final[dict[InspectionState, Shown]] = {
    InspectionState.NONE: Shown("none", "No inspection record yet"),
    InspectionState.PERIOD_RUNNING: Shown("work", "Period running (fill or close the excavation)"),
    InspectionState.COMPLIANT: Shown("clear", "Inspected: within the Code"),
    InspectionState.FOUND: Shown("violation", "Violation found: written notice due"),
    InspectionState.NOTICE_PERIOD: Shown(
        "violation", "Notice served: the owner's time to correct it is running"
    ),
    InspectionState.CORRECTED: Shown("clear", "Corrected"),
    InspectionState.OVERDUE: Shown("abatement", "Not corrected in time: Village acts"),
}

SHOWN: Final[dict[type[StrEnum], Mapping[Any, Shown]]] = {
    ClearingState: CLEARING,
    CaseState: CASE,
    SubgradeState: SUBGRADE,
    KeepOffState: KEEP_OFF,
    PermitState: PERMIT,
    ObstructionState: OBSTRUCTION,
    SweepingState: SWEEPING,
    InspectionState: INSPECTION,
}
"""Each clock-state enum's table (every one in ``states.STATE_ENUMS``)."""

# By the stored string: a name two kinds share (idle, none, overdue) shows the same.
_BY_STATE: Final[dict[str, Shown]] = {
    state.value: shown for table in SHOWN.values() for state, shown in table.items()
}


def category(state: str) -> Category:
    """The map category of a clock in ``state`` ("none" only for a state no clock has)."""
    shown = _BY_STATE.get(state)
    return "none" if shown is None else shown.category


# Each kind of clock's states (two kinds can share a state's name with different words:
# an inspection's "notice_period" is not the snow case's).
KIND_STATES: Final[dict[str, type[StrEnum]]] = {
    "clearing": ClearingState,
    "enforcement": CaseState,
    "frozen_subgrade": SubgradeState,
    "keep_off": KeepOffState,
    "opening_permit": PermitState,
    "street_privilege": PermitState,
    "obstruction": ObstructionState,
    "sweeping": SweepingState,
    "inspection": InspectionState,
}

STATE_WORDS: Final[dict[str, dict[str, str]]] = {
    kind: {state.value: shown.label for state, shown in SHOWN[enum].items()}
    for kind, enum in KIND_STATES.items()
}
"""kind -> state -> words: what the pages' scripts show for a clock (``/api/words``)."""


def label(state: str, kind: str | None = None) -> str:
    """A clock state in plain words: the kind's own words when the kind is known, else the
    words of any clock with that state, else the state's name with spaces."""
    said = STATE_WORDS.get(kind or "", {}).get(state)
    if said is not None:
        return said
    shown = _BY_STATE.get(state)
    return state.replace("_", " ").capitalize() if shown is None else shown.label


# Audit actions that deserve a place among the overview's "new alerts".
ALERT_ACTIONS: Final = frozenset(
    {
        "violation.recorded",
        "notice.issued",
        "hazard.candidate",
        "clearing.unverified",
        "clearing.needs_review",
        "abatement.ordered",
        "tax_roll.certified",
        "tax_roll.due_without_unpaid_bill",
        "tax_roll.held",
        "tax_roll.late",
    }
)
