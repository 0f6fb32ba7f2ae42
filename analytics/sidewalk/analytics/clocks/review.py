"""A person decides a clearing deadline waiting in review.

A deadline whose pole's readings did not come within ``evidence_wait`` goes to
``needs_review`` (``engine``). A person (an inspector who looked at the walk, or
staff with other evidence) then closes it with ``actions.DecideReview``:

* ``cleared``: the walk was cleared in time; the clock closes ``complied``, no notice.
* ``not_cleared``: the clock closes ``violation`` and the case takes the notice
  path exactly as a violation the pole found would (``enforcement.open``: the
  written notice, offenses from the missed deadline, abatement, bill, tax roll),
  with the person's name and reason in place of the camera's measurement.

The decision is final for that deadline: readings that come after it change
nothing (the clock is no longer waiting). A decision on a frontage with no item
waiting, or meant for another deadline, is refused and changes nothing.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Protocol

from sidewalk.analytics.clocks.events import Cause, ClearingViolation, Event, Transition
from sidewalk.analytics.clocks.states import ClearingState

if TYPE_CHECKING:
    from sidewalk.analytics.clocks.actions import DecideReview
    from sidewalk.analytics.clocks.enforcement import Enforcement
    from sidewalk.core.profile import Profile

CLEARING = "clearing"


class ReviewedClock(Protocol):
    """What a decision needs of the engine's clearing clock (``engine.ClearingClock``);
    the engine forgets the decided deadline's evidence afterwards."""

    frontage: str
    state: ClearingState
    cessation_at: datetime | None
    deadline: datetime | None
    peak_depth_mm: float | None
    cessation_basis: str | None
    cessation_earliest: datetime | None
    history: list[Transition]

    def move(
        self, to_state: ClearingState, at: datetime, cause: Cause, **detail: object
    ) -> Transition: ...


def decide_review(
    clock: ReviewedClock,
    action: DecideReview,
    profile: Profile,
    enforcement: Enforcement,
    decision_grace: timedelta,
) -> list[Event]:
    """Apply a person's decision to ``clock`` (in ``needs_review``); ``ValueError`` if
    no item waits there, or the decision names another deadline or predates this one."""
    if clock.state != ClearingState.NEEDS_REVIEW:
        raise ValueError(
            f"{clock.frontage}: no clearing deadline is waiting for review there"
            f" (its clock is {clock.state.replace('_', ' ')})"
        )
    assert clock.deadline is not None
    assert clock.cessation_at is not None
    deadline = clock.deadline
    detail = action.detail
    if detail.deadline is not None and detail.deadline != deadline:
        raise ValueError(
            f"{clock.frontage}: the deadline waiting for review is {deadline.isoformat()},"
            f" not {detail.deadline.isoformat()}"
        )
    if action.at < deadline:
        raise ValueError(
            f"{clock.frontage}: a decision at {action.at.isoformat()} precedes the deadline"
            f" {deadline.isoformat()} it decides"
        )
    said: dict[str, object] = {
        "review": detail.decision,
        "reason": detail.reason,
        "decided_by": action.who,
        "decided_at": action.at.isoformat(),
    }
    if detail.decision == "cleared":
        return [clock.move(ClearingState.COMPLIED, deadline, action.cause, **said)]
    rules = profile.snow_and_ice
    width, period = rules.clearing_min_width, rules.clearing_deadline
    move = clock.move(ClearingState.VIOLATION, deadline, action.cause, **said)
    key = f"{clock.frontage}:{CLEARING}:{clock.cessation_at.isoformat()}"
    # Decided when the person decided it, never before the pole's decision would have been.
    decided_at = max(action.at, deadline + decision_grace)
    violation = ClearingViolation(
        key=key,
        frontage=clock.frontage,
        rule="snow_and_ice.clearing_deadline",
        # One section for both values (A): cited once, as the engine's own decision.
        citation="; ".join(dict.fromkeys(c for c in (period.citation, width.citation) if c)),
        cessation_at=clock.cessation_at,
        deadline=deadline,
        decided_at=decided_at,
        required_width_mm=width.length_mm,
        measured_width_mm=None,
        measured_at=None,
        measured_by=None,
        measured_seq=None,
        snow_depth_peak_mm=clock.peak_depth_mm,
        cessation_basis=clock.cessation_basis,
        cessation_earliest=clock.cessation_earliest,
        unconfirmed=period.unconfirmed or width.unconfirmed,
        history=tuple(clock.history),
        review={"decision": detail.decision, "by": action.who, "reason": detail.reason,
                "at": action.at.isoformat()},
    )  # fmt: skip
    events: list[Event] = [move, violation]
    events += enforcement.open(key, clock.frontage, deadline, width.length_mm, decided_at)
    return events
