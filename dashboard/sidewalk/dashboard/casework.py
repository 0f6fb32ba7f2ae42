"""Which steps a § 370-10 case can take now, and the owner's deadline, from the engine itself.

The dashboard holds no rule: it rebuilds a copy of the case in the state the
analytics runner last recorded, plays the person actions not yet applied on it
(so a delivery recorded a second ago already counts), and asks the clock
engine's ``Enforcement`` whether each step would be accepted, exactly as
``sidewalk act`` does before it records one. The owner's deadline after service
is the engine's too (the copy computes it from the recorded delivery).

Everything here is pure: it takes the records already read (one query per kind
in the route) and returns plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Final

from sidewalk.analytics.clocks.actions import (
    ActionError,
    EnforcementAction,
    parse_action,
)
from sidewalk.analytics.clocks.enforcement import (
    ENFORCEMENT,
    PERIOD_STATES,
    Enforcement,
    EnforcementCase,
)
from sidewalk.analytics.clocks.states import CaseState
from sidewalk.core.profile import Profile
from sidewalk.dashboard.states import CASE
from sidewalk.storage.cases import ActionRecord, ClockRecord, ViolationRecord

# The § 370-10 B–G steps a person records on a case, in the order a case meets them.
CASE_STEPS: Final = (
    "record_delivery",
    "confirm_hazard",
    "owner_unavailable",
    "inspected_clear",
    "abatement_done",
    "bill_received",
    "paid_in_full",
)
# The notice whose delivery a case waits for, by the state it waits in (record_delivery
# on any other notice of the case would start the wrong period).
AWAITS_DELIVERY: Final = {
    CaseState.NOTICE_ISSUED: "clearing_violation",
    CaseState.HAZARD_NOTICE_ISSUED: "hazard_notice",
}
# The notice whose period runs, by the period state.
PERIOD_OF: Final = {
    CaseState.NOTICE_PERIOD: "clearing_violation",
    CaseState.HAZARD_PERIOD: "hazard_notice",
}


def case_clock_key(violation: ViolationRecord) -> str:
    """The key the recorder gives a case's clock record."""
    return f"{violation.frontage_id}/{ENFORCEMENT}/{violation.key}"


@dataclass(frozen=True)
class CaseNow:
    """A § 370-10 case as it stands with every recorded action counted."""

    violation_key: str
    state: CaseState
    # The owner's deadline while a notice period runs (from the recorded delivery).
    owner_deadline: datetime | None
    # Steps the engine would accept now (before the notice and the role are considered).
    steps: tuple[str, ...]
    # Actions recorded but not yet applied by the runner.
    pending: int


def enforcement_clocks(clocks: Iterable[ClockRecord]) -> dict[str, ClockRecord]:
    """The enforcement clock records by key (the latest wins)."""
    return {c.key: c for c in clocks if c.kind == ENFORCEMENT}


def pending_by_target(actions: Iterable[ActionRecord]) -> dict[str, list[ActionRecord]]:
    """Actions the runner has not applied yet, by target, in recorded order."""
    out: dict[str, list[ActionRecord]] = {}
    for a in actions:
        if a.applied_at is None:
            out.setdefault(a.target, []).append(a)
    return out


def _engine(profile: Profile, case: EnforcementCase) -> Enforcement:
    engine = Enforcement(profile)
    engine.load({case.key: replace(case, history=[])})
    return engine


def _try(engine: Enforcement, kind: str, target: str, at: datetime, who: str) -> str | None:
    """None if the engine accepts the step on its copy, else why not (the engine's words)."""
    try:
        action = parse_action(kind, target, None, at=at, who=who)
        assert isinstance(action, EnforcementAction)
        engine.act(action)
    except (ActionError, KeyError, ValueError) as exc:
        return str(exc)
    return None


def case_now(
    profile: Profile,
    violation: ViolationRecord,
    clock: ClockRecord | None,
    pending: Sequence[ActionRecord],
    at: datetime,
) -> CaseNow:
    """The case with its pending actions played on a copy, and the steps it accepts at ``at``."""
    state = CaseState(clock.state) if clock is not None else CaseState.NOTICE_ISSUED
    missed = violation.evidence.get("deadline")
    case = EnforcementCase(
        violation.key,
        violation.frontage_id,
        datetime.fromisoformat(missed) if isinstance(missed, str) else violation.detected_at,
        float(violation.evidence.get("required_width_mm") or 0.0),
        state=state,
    )
    engine = _engine(profile, case)
    for a in pending:  # what people recorded since the runner last ran, in order
        try:
            action = parse_action(a.kind, a.target, a.detail, at=a.at, who=a.who)
            if isinstance(action, EnforcementAction):
                engine.act(action)
        except (ActionError, KeyError, ValueError):
            continue  # the runner will refuse it too, and say why on the notice
    played = engine.cases[violation.key]
    deadline = played.notice_deadline
    if deadline is None and played.state in PERIOD_STATES and clock is not None:
        deadline = clock.deadline
    steps = tuple(
        kind
        for kind in CASE_STEPS
        if _try(_engine(profile, played), kind, violation.key, at, "dashboard") is None
    )
    return CaseNow(violation.key, played.state, deadline, steps, len(pending))


def refusal(kind: str, state: CaseState, labels: Mapping[str, str]) -> str:
    """Why a step cannot be taken, in the clerk's words (never the engine's key or state)."""
    step = labels.get(kind, kind.replace("_", " "))
    return f"“{step}” cannot be recorded now: the case is at “{CASE[state].label}”."
