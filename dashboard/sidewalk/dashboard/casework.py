"""Which steps a § 370-10 case can take now, and the owner's deadline, from the engine itself.

The dashboard holds no rule: the copy of the case and the steps it accepts are
``sidewalk.analytics.casework``'s, the same ``sidewalk act`` asks before it
records a step (re-exported here for the routes). What is the dashboard's own
is the words: why a step cannot be taken, in the clerk's terms.
"""

from __future__ import annotations

from collections.abc import Mapping

from sidewalk.analytics.casework import (
    AWAITS_DELIVERY,
    CASE_STEPS,
    PERIOD_OF,
    CaseNow,
    Entry,
    case_clock_key,
    case_copy,
    case_now,
    enforcement_clocks,
    entries,
    pending_by_target,
)
from sidewalk.analytics.clocks.states import CaseState
from sidewalk.dashboard.states import CASE

__all__ = [
    "AWAITS_DELIVERY",
    "CASE_STEPS",
    "PERIOD_OF",
    "CaseNow",
    "Entry",
    "case_clock_key",
    "case_copy",
    "case_now",
    "enforcement_clocks",
    "entries",
    "pending_by_target",
    "refusal",
]


def refusal(kind: str, state: CaseState, labels: Mapping[str, str]) -> str:
    """Why a step cannot be taken, in the clerk's words (never the engine's key or state)."""
    step = labels.get(kind, kind.replace("_", " "))
    return f"“{step}” cannot be recorded now: the case is at “{CASE[state].label}”."
