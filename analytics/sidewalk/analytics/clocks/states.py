"""Every state a clock can be in, one enum per kind of clock.

``StrEnum`` members are ``str``s: a member equals its value (``ClearingState.IDLE ==
"idle"``), formats as its value, and is written as its value to JSON, engine
snapshots and the case records, so what is stored stays exactly what it was before
the states were typed, and stored snapshots and rows load unchanged.

A state name may recur in two kinds (``idle``, ``none``, ``valid``, ``expired``,
``overdue``); it means the same there (``none``: the clock's record did not exist).
"""

from __future__ import annotations

from enum import StrEnum, unique
from typing import Final


@unique
class ClearingState(StrEnum):
    """§ 370-10 A, per frontage (``clearing.ClearingClock``)."""

    IDLE = "idle"
    SNOWING = "snowing"
    CLEARING_PERIOD = "clearing_period"
    COMPLIED = "complied"
    VIOLATION = "violation"
    UNVERIFIED = "unverified"
    # The deadline passed and the pole's readings up to it have not come in within
    # ``evidence_wait``: a person's review queue. Not final: the evidence, when it
    # comes, still decides.
    NEEDS_REVIEW = "needs_review"


@unique
class CaseState(StrEnum):
    """§ 370-10 B–G, one case per violation (``enforcement.EnforcementCase``)."""

    NOTICE_ISSUED = "notice_issued"
    NOTICE_PERIOD = "notice_period"
    HAZARD_NOTICE_ISSUED = "hazard_notice_issued"
    HAZARD_PERIOD = "hazard_period"
    ABATEMENT_ORDERED = "abatement_ordered"
    ABATED = "abated"
    BILLED = "billed"
    PAID = "paid"
    CURED = "cured"
    TAX_ROLL = "tax_roll"


@unique
class SubgradeState(StrEnum):
    """§ 370-5 (9) frozen subgrade, per site (``cold_weather``); debounced probe readings."""

    UNKNOWN = "unknown"
    FROZEN = "frozen"
    THAWED = "thawed"


@unique
class KeepOffState(StrEnum):
    """§ 370-5 (9) / § 370-7 G keep traffic off a pour (``cold_weather``)."""

    IDLE = "idle"
    KEEP_OFF_NORMAL = "keep_off_normal"
    KEEP_OFF_COLD = "keep_off_cold"
    PROTECTED = "protected"
    ENDED = "ended"


@unique
class PermitState(StrEnum):
    """A § 370-6 street-opening permit or a § 370-9 street privilege permit."""

    NONE = "none"
    VALID = "valid"
    EXPIRED = "expired"


@unique
class ObstructionState(StrEnum):
    """§ 370-8, per obstruction (``obstructions``)."""

    NONE = "none"
    COMPLIANT = "compliant"
    OBSTRUCTED = "obstructed"
    REMOVAL_PERIOD = "removal_period"
    REMOVED = "removed"
    OVERDUE = "overdue"


@unique
class SweepingState(StrEnum):
    """§ 144-17, per incident of construction debris on a street (``obstructions``)."""

    NONE = "none"
    SWEEPING_PERIOD = "sweeping_period"
    SWEPT = "swept"
    OVERDUE = "overdue"


@unique
class InspectionState(StrEnum):
    """An inspector-entered rule (``inspections``): § 370-10 C, § 370-11 C, § 370-14,
    § 144-11, § 144-12 B and C, per finding or per demolition/excavation."""

    NONE = "none"
    PERIOD_RUNNING = "period_running"  # § 144-11's 30 days, § 144-12 C's 3 months
    COMPLIANT = "compliant"
    FOUND = "found"  # a violation: the written notice is due
    NOTICE_PERIOD = "notice_period"
    CORRECTED = "corrected"
    OVERDUE = "overdue"


ClockState = (
    ClearingState
    | CaseState
    | SubgradeState
    | KeepOffState
    | PermitState
    | ObstructionState
    | SweepingState
    | InspectionState
)
"""A state of any clock: what ``Transition.from_state``/``to_state`` hold."""

STATE_ENUMS: Final[tuple[type[StrEnum], ...]] = (
    ClearingState,
    CaseState,
    SubgradeState,
    KeepOffState,
    PermitState,
    ObstructionState,
    SweepingState,
    InspectionState,
)
"""Every clock-state enum (for checks that each state is shown, e.g. the dashboard's)."""
