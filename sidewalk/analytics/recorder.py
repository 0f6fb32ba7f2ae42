"""Writes the clock engine's events into the case records.

Every write is idempotent (clocks, transitions and violations have natural
keys), so replaying the same stream after a restart re-derives the same
events and stores nothing twice. A decided violation is handed to
``on_violation`` (the notice issuer in ``alerts/``): analytics decides,
alerts writes to people.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sidewalk.analytics.clocks.engine import CLEARING
from sidewalk.analytics.clocks.events import (
    Cause,
    ClearingUnverified,
    ClearingViolation,
    Event,
    Transition,
)
from sidewalk.core.clock import to_ms
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records

TERMINAL = {"complied", "violation", "unverified"}


def record_cause(cause: Cause) -> records.Cause:
    """The engine's cause in the case records' form (event time in ms)."""
    return records.Cause(
        kind=cause.kind, ts=to_ms(cause.at), device=cause.device, seq=cause.seq, who=cause.who
    )


@dataclass
class CaseRecorder:
    """Persists transitions and violations; remembers each frontage's open clearing clock."""

    cases: records.CaseStore
    profile: Profile
    on_violation: Callable[[ClearingViolation, records.ViolationRecord], Any] | None = None
    _open: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for clock in self.cases.list_clocks(active_only=True):
            if clock.kind == CLEARING:
                self._open[clock.frontage_id] = clock.id

    def record(self, events: Sequence[Event]) -> list[records.ViolationRecord]:
        """Store each event in order; returns the violations recorded."""
        found: list[records.ViolationRecord] = []
        for event in events:
            if isinstance(event, Transition):
                self._transition(event)
            elif isinstance(event, ClearingViolation):
                found.append(self._violation(event))
            elif isinstance(event, ClearingUnverified):
                self.cases.append_audit(
                    "analytics",
                    "clearing.unverified",
                    f"frontage:{event.frontage}",
                    {"key": event.key, "deadline": event.deadline.isoformat()},
                )
        return found

    def _rules(self) -> list[records.RuleUse]:
        rules = self.profile.snow_and_ice
        return [
            records.RuleUse.from_rule("snow_and_ice.clearing_deadline", rules.clearing_deadline),
            records.RuleUse.from_rule("snow_and_ice.clearing_min_width", rules.clearing_min_width),
        ]

    def _transition(self, t: Transition) -> None:
        cause = record_cause(t.cause)
        clock_id = self._open.get(t.frontage)
        if clock_id is None:
            clock = self.cases.open_clock(
                t.frontage,
                CLEARING,
                t.from_state,
                t.at,
                cause,
                citation=self.profile.snow_and_ice.clearing_deadline.citation,
                rules=self._rules(),
                key=f"{t.frontage}/{CLEARING}/{t.at.isoformat()}",
            )
            clock_id = clock.id
            self._open[t.frontage] = clock_id
        deadline_raw = t.detail.get("deadline")
        deadline: Any = records.KEEP
        if t.to_state == "clearing_period" and isinstance(deadline_raw, str):
            deadline = datetime.fromisoformat(deadline_raw)
        elif t.to_state == "snowing":
            deadline = None
        closes = t.to_state in TERMINAL
        self.cases.record_transition(
            clock_id, t.to_state, t.at, cause, detail=t.detail, deadline=deadline, closes=closes
        )
        if closes:
            self._open.pop(t.frontage, None)

    def _violation(self, v: ClearingViolation) -> records.ViolationRecord:
        clock_id = None
        for clock in self.cases.list_clocks(frontage_id=v.frontage, kind=CLEARING):
            if clock.state == "violation" and clock.deadline == v.deadline:
                clock_id = clock.id
        evidence = {
            "cessation_at": v.cessation_at.isoformat(),
            "deadline": v.deadline.isoformat(),
            "required_width_mm": v.required_width_mm,
            "measured_width_mm": v.measured_width_mm,
            "measured_at": v.measured_at.isoformat() if v.measured_at else None,
            "measured_by": v.measured_by,
            "measured_seq": v.measured_seq,
            "snow_depth_peak_mm": v.snow_depth_peak_mm,
        }
        violation = self.cases.record_violation(
            v.key,
            v.frontage,
            v.rule,
            v.decided_at,
            clock_id=clock_id,
            citation=v.citation,
            evidence=evidence,
        )
        if self.on_violation is not None:
            self.on_violation(v, violation)
        return violation
