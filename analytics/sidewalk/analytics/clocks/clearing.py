"""The § 370-10 A clearing clock: snow and ice off the walk within 24 hours.

Per frontage::

    idle ──onset──▶ snowing ──cessation──▶ clearing_period ──deadline──▶ complied
                       ▲                        │                  ├──▶ violation
                       └────── new snow ────────┘                  ├──▶ unverified
                                                                   └──▶ needs_review

The deadline is ``clearing_deadline`` (24 h) after cessation in real elapsed
time; new snow before the deadline restarts the clock from the next
cessation. At the deadline the latest camera measurement taken since
cessation must show a clear path at least ``clearing_min_width`` (4 ft) along
the whole frontage; ice the camera, the pole's pavement temperature or an
inspector saw must be gone or sanded/salted (``ice``).

A deadline is decided only once the pole's own readings have passed it (its
evidence up to it is in); until then it waits, at most ``evidence_wait`` after
the deadline or after the pole was last heard (the runner names the poles whose
readings are queued: ``ClockEngine.advance(to, behind=…)``), and then goes to a
person (``needs_review``), which the pole's readings still decide when they come
(or a person does: ``review.decide_review``).

``ClearingClocks`` holds every frontage's clock and what their decisions need
(each pole's progress, its pavement temperatures); the engine (``engine``)
routes readings and person actions to it and keeps event time and the snapshot.
Snowfall onset and cessation come from ``cessation.SnowfallDetector``; a
violation opens its case in ``enforcement.Enforcement``.
"""

from __future__ import annotations

import bisect
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Annotated, Any

from pydantic import Field

from sidewalk.analytics.clocks.actions import DecideReview, RecordIce, RecordTreated
from sidewalk.analytics.clocks.cessation import DetectionParams, SnowfallChange, SnowfallDetector
from sidewalk.analytics.clocks.enforcement import (
    WIDTH_TOLERANCE_MM,
    Enforcement,
    stated_uncertainty,
)
from sidewalk.analytics.clocks.events import (
    Cause,
    ClearingNeedsReview,
    ClearingUnverified,
    ClearingViolation,
    Event,
    HazardCandidate,
    Transition,
)
from sidewalk.analytics.clocks.ice import (
    SurfaceSeen,
    SurfaceTemp,
    camera_surface,
    ice_at,
    person_surface,
    pole_temp_at,
)
from sidewalk.analytics.clocks.review import decide_review
from sidewalk.analytics.clocks.states import ClearingState
from sidewalk.core.calendar import plus_elapsed
from sidewalk.core.contract import WeatherReading
from sidewalk.core.profile import Profile

CLEARING = "clearing"
# The clearing clock's decisions: each ends a snowfall's cycle.
DECIDED = frozenset({ClearingState.COMPLIED, ClearingState.VIOLATION, ClearingState.UNVERIFIED})
# A decision is pending: measurements since the cessation are kept for it.
PENDING = frozenset(
    {ClearingState.SNOWING, ClearingState.CLEARING_PERIOD, ClearingState.NEEDS_REVIEW}
)
# Past its deadline and not decided: waiting for the pole's evidence (or a person's review).
AWAITING = frozenset({ClearingState.CLEARING_PERIOD, ClearingState.NEEDS_REVIEW})
# Measurements kept for late arrivals while no decision is pending.
KEPT = 8


def _at(x: Measurement | SurfaceTemp) -> datetime:
    return x.at


def _is_none(value: object) -> bool:
    return value is None


@dataclass(slots=True)
class Measurement:
    """One camera measurement of a frontage, as the clock keeps it (and snapshots it)."""

    at: datetime
    device: str
    seq: int
    cleared_width_mm: float
    snow_cover_fraction: float
    ice_suspected: bool = False
    # § 370-10 A's ice (``SnowMeasurement``): absent in snapshots of older engines.
    surface_state: str | None = None
    surface_temp_c: float | None = None
    # The camera's stated one sigma of the width (``SnowMeasurement``); None: none
    # stated (older poles, older snapshots). Left out of a snapshot when None, so a
    # replay without it snapshots byte for byte as before.
    width_uncertainty_mm: Annotated[float | None, Field(exclude_if=_is_none)] = None


@dataclass(slots=True)
class ClearingClock:
    """§ 370-10 A for one frontage."""

    frontage: str
    state: ClearingState = ClearingState.IDLE
    onset_at: datetime | None = None
    cessation_at: datetime | None = None
    deadline: datetime | None = None
    peak_depth_mm: float | None = None
    # How the cessation was determined (``SnowfallChange.basis``) and the earliest end
    # the evidence allows: the letter says so. Absent from older snapshots: None.
    cessation_basis: str | None = None
    cessation_earliest: datetime | None = None
    history: list[Transition] = field(default_factory=list)
    measurements: list[Measurement] = field(default_factory=list)
    # When a person (or a sensor) recorded ice as sanded/salted: A's alternative to removal.
    treated: list[tuple[datetime, Cause]] = field(default_factory=list)
    # When an inspector recorded untreated ice on the walk (``record_ice``).
    iced: list[tuple[datetime, Cause]] = field(default_factory=list)

    def move(
        self, to_state: ClearingState, at: datetime, cause: Cause, **detail: object
    ) -> Transition:
        # ``cycle`` (the onset) names this snowfall's obligation: its clock record's key.
        cycle = self.onset_at.isoformat() if self.onset_at else at.isoformat()
        transition = Transition(
            self.frontage, CLEARING, self.state, to_state, at, cause, {"cycle": cycle, **detail}
        )
        self.state = to_state
        self.history.append(transition)
        return transition


class ClearingClocks:
    """Every frontage's § 370-10 A clock, and what their decisions need.

    ``weather_device`` names each frontage's pole (whose snowfall starts its clock
    and whose readings are its evidence); ``unwatched`` frontages open no clock on
    snowfall (the Village inspects them by hand). Pure: the engine gives each
    reading's event time and its own time (``now``) where a decision may be due.
    """

    def __init__(
        self,
        profile: Profile,
        weather_device: Mapping[str, str],
        unwatched: frozenset[str],
        params: DetectionParams,
        enforcement: Enforcement,
    ) -> None:
        self.profile = profile
        self.enforcement = enforcement
        self.clocks = {f: ClearingClock(f) for f in sorted(weather_device)}
        self.weather_device = dict(weather_device)
        self.unwatched = unwatched
        self.by_device: dict[str, list[str]] = {}
        for frontage, device in weather_device.items():
            self.by_device.setdefault(device, []).append(frontage)
        # Each pole's snowfall (onset, cessation): the start and the deadline's origin.
        self.detectors = {d: SnowfallDetector(d, params) for d in sorted(self.by_device)}
        # Pavement temperatures per weather pole, kept as long as a decision may need them.
        self.surface_temps: dict[str, list[SurfaceTemp]] = {}
        # Per pole: the event time its processed readings have reached (its evidence is
        # in up to there), and the engine time it was last heard from or known to have
        # readings queued for analytics (the bounded wait counts from there).
        self.progress: dict[str, datetime] = {}
        self.heard: dict[str, datetime] = {}
        # The clocks past their deadline and undecided (state in AWAITING), each with
        # the first instant it can be decided (deadline + decision_grace), and the
        # earliest of those (None: to be found again). Nothing is due before it, so
        # time and readings pass the other clocks by (``track`` keeps it true).
        self.awaiting: dict[str, datetime] = {}
        self.awaiting_from: datetime | None = None
        self.retune(params)

    def retune(self, params: DetectionParams) -> None:
        """Use ``params`` from now on: in every detector, the decision's grace and wait,
        and the horizon of the pavement temperatures kept (a clock's grace or wait set
        only on the detectors would leave its decision on the old ones)."""
        self.params = params
        for detector in self.detectors.values():
            detector.params = params
        # How long a pole's pavement temperatures are kept (``keep_surface_temp``).
        self._surface_horizon = (
            self.profile.snow_and_ice.clearing_deadline.duration
            + params.evidence_wait
            + 2 * params.evidence_max_age
        )
        # The first instant each waiting clock can be decided moves with the grace.
        self.awaiting, self.awaiting_from = {}, None
        for clock in self.clocks.values():
            self.track(clock)

    # -- readings --------------------------------------------------------------------

    def heard_from(self, device: str, at: datetime, now: datetime | None) -> None:
        """A reading of ``device`` at ``at`` came in (``progress``, ``heard``)."""
        through = self.progress.get(device)
        if through is None or at > through:
            self.progress[device] = at
        when = now or at
        heard = self.heard.get(device)
        if heard is None or when > heard:
            self.heard[device] = when

    def camera(
        self, fields: Mapping[str, Any], device: str, at: datetime, now: datetime | None
    ) -> list[Event]:
        """A camera measurement's fields (a model's dict or a stored row)."""
        frontage: str = fields["frontage"]
        clock = self.clocks.get(frontage)
        if clock is None:
            return []
        seq: int = fields["seq"]
        get = fields.get  # a stored row leaves out the fields not measured
        m = Measurement(
            at, device, seq, fields["cleared_width_mm"], fields["snow_cover_fraction"],
            get("ice_suspected", False), get("surface_state"), get("surface_temp_c"),
            get("width_uncertainty_mm"),
        )  # fmt: skip
        measurements = clock.measurements
        if not measurements or measurements[-1].at <= at:
            measurements.append(m)  # in order, as they nearly always come: insort's place
        else:
            bisect.insort(measurements, m, key=_at)
        if clock.state not in PENDING:
            # Only a pending decision needs history; keep a few for late arrivals.
            del measurements[:-KEPT]
        events: list[Event] = []
        if self.enforcement.watching(frontage):  # else ``measured`` has no case to cure
            cause = Cause(kind="reading", at=at, device=device, seq=seq)
            seen = self.surface(frontage, m)
            events += self.enforcement.measured(
                frontage, at, m.cleared_width_mm, cause,
                icy=seen is not None and seen.seen in ("untreated", "ice", "suspected"),
                ice_free=seen is not None and seen.seen in ("clear", "treated"),
                sigma_mm=m.width_uncertainty_mm,
            )  # fmt: skip
        pole = self.weather_device[frontage]
        changes = self.detectors[pole].observe_cover(
            at, frontage, device, seq, m.snow_cover_fraction
        )
        if changes:
            events += self.apply(pole, changes)
        if now is not None and clock.state in AWAITING:
            events += self.due(clock, now)  # the evidence past the deadline came in
        return events

    def keep_surface_temp(self, reading: WeatherReading) -> None:
        """A pole's pavement temperature (§ 370-10 A's ice), kept for the decisions."""
        assert reading.surface_temp_c is not None
        temps = self.surface_temps.setdefault(reading.device, [])
        t = SurfaceTemp(reading.event_time, reading.device, reading.seq, reading.surface_temp_c)
        bisect.insort(temps, t, key=_at)
        # A decision looks back from its deadline to the cessation: keep that long.
        horizon = self._surface_horizon
        newest = temps[-1].at
        if temps[0].at < newest - horizon:
            temps[:] = [x for x in temps if x.at >= newest - horizon]

    def apply(self, device: str, changes: list[SnowfallChange]) -> list[Event]:
        """The pole's snowfall began or ceased: every frontage of it, in order."""
        events: list[Event] = []
        rule = self.profile.snow_and_ice.clearing_deadline
        for change in changes:
            for frontage in sorted(self.by_device.get(device, [])):
                if frontage in self.unwatched:
                    continue
                clock = self.clocks[frontage]
                if (
                    change.kind == "onset"
                    and clock.state in AWAITING
                    and clock.deadline is not None
                    and change.at >= clock.deadline
                ):
                    # New snow after the deadline: the pole's readings are through it, so
                    # the cycle is decided on them before the next one starts.
                    events += self.decide(clock)
                if change.kind == "onset" and clock.state != ClearingState.SNOWING:
                    if clock.state in DECIDED or clock.state == ClearingState.IDLE:
                        clock.history = []
                    restarted = clock.state in AWAITING
                    if not restarted:
                        clock.onset_at = change.at  # a restart continues the same cycle
                    events.append(
                        clock.move(
                            ClearingState.SNOWING, change.at, change.cause, restarted=restarted
                        )
                    )
                elif change.kind == "cessation" and clock.state == ClearingState.SNOWING:
                    clock.cessation_at = change.at
                    clock.deadline = plus_elapsed(change.at, rule.duration)
                    clock.peak_depth_mm = change.peak_depth_mm
                    clock.cessation_basis = change.basis
                    clock.cessation_earliest = change.earliest
                    events.append(
                        clock.move(
                            ClearingState.CLEARING_PERIOD,
                            change.at,
                            change.cause,
                            deadline=clock.deadline.isoformat(),
                            citation=rule.citation,
                        )
                    )
                self.track(clock)
        return events

    # -- person actions ------------------------------------------------------------------

    def record_treated(self, action: RecordTreated) -> list[Event]:
        clock = self.clocks.get(action.target)
        if clock is None:
            raise KeyError(f"no frontage {action.target!r}")
        clock.treated.append((action.at, action.cause))
        # A: ice sanded or salted after a missed deadline remedies an ice violation.
        return self.enforcement.treated(action.target, action.at, action.cause)

    def record_ice(self, action: RecordIce) -> list[Event]:
        clock = self.clocks.get(action.target)
        if clock is None:
            raise KeyError(f"no frontage {action.target!r}")
        if clock.state not in PENDING:
            raise ValueError(
                f"{action.target}: no clearing period is running ({clock.state}); untreated"
                " ice is recorded against the 24 hours after a snowfall"
            )
        clock.iced.append((action.at, action.cause))
        return []

    def decide_review(self, action: DecideReview) -> list[Event]:
        clock = self.clocks.get(action.target)
        if clock is None:
            raise KeyError(f"no frontage {action.target!r}")
        grace = self.params.decision_grace
        events = decide_review(clock, action, self.profile, self.enforcement, grace)
        self.track(clock)
        assert clock.deadline is not None
        self.forget_until(clock, clock.deadline)  # its evidence is in the decision
        return events

    # -- time ------------------------------------------------------------------------

    def advance(self, to: datetime) -> list[Event]:
        """Every decision due at ``to``, in frontage order."""
        events: list[Event] = []
        if self.awaiting and to >= self.first_awaiting():
            # In frontage order, as ``clocks``; ``due`` of any other clock is empty.
            due = sorted(f for f, first in self.awaiting.items() if first <= to)
            for frontage in due:
                events += self.due(self.clocks[frontage], to)
        return events

    def pole_due(self, device: str, now: datetime) -> list[Event]:
        """The pole's readings may now be through a deadline: decide on them.
        (Only a clock past its deadline can be due: the rest are skipped here.)"""
        events: list[Event] = []
        clocks = self.clocks
        waiting = [f for f in self.by_device[device] if clocks[f].state in AWAITING]
        for frontage in sorted(waiting):
            events += self.due(clocks[frontage], now)
        return events

    def next_due(self) -> datetime | None:
        """The next instant a decision or a review is due."""
        # Only a clock past its deadline, undecided (``awaiting``), has a decision due.
        clocks = self.clocks
        due = [d for f in self.awaiting if (d := self.decision_due(clocks[f])) is not None]
        return min(due, default=None)

    def evidence_watch(self) -> datetime | None:
        """The earliest deadline still waiting for its pole's evidence, or None."""
        clocks = (self.clocks[f] for f in self.awaiting)
        waiting = [
            c.deadline
            for c in clocks
            if c.state in AWAITING and c.deadline is not None and not self.evidence_in(c)
        ]
        return min(waiting, default=None)

    def camera_caught_up(self, clock: ClearingClock) -> bool:
        # ``measurements`` is kept in event-time order: its last is the latest.
        return (
            clock.deadline is not None
            and bool(clock.measurements)
            and clock.measurements[-1].at >= clock.deadline
        )

    def evidence_in(self, clock: ClearingClock) -> bool:
        """The pole's readings up to the deadline have been processed: the frontage's
        camera reported from the deadline on, or the pole's own readings (any stream,
        sent in seq order) reached ``decision_grace`` past it."""
        if clock.deadline is None:
            return False
        through = self.progress.get(self.weather_device[clock.frontage])
        return self.camera_caught_up(clock) or (
            through is not None and through >= clock.deadline + self.params.decision_grace
        )

    def decision_due(self, clock: ClearingClock) -> datetime | None:
        """When ``advance`` next acts on the clock: the decision, grace after the
        deadline, once the pole's evidence up to it is in; else the review,
        ``evidence_wait`` after the deadline or after the pole was last heard (or known
        queued), whichever is later. Under review, only the evidence decides."""
        due = self.decision(clock)
        return None if due is None else due[0]

    def decision(self, clock: ClearingClock) -> tuple[datetime, bool] | None:
        """``decision_due``, and whether it is the decision (the evidence is in)."""
        if clock.state not in AWAITING or clock.deadline is None:
            return None
        if self.evidence_in(clock):
            return clock.deadline + self.params.decision_grace, True
        if clock.state == ClearingState.NEEDS_REVIEW:
            return None
        heard = self.heard.get(self.weather_device[clock.frontage], clock.deadline)
        return max(clock.deadline, heard) + self.params.evidence_wait, False

    def due(self, clock: ClearingClock, to: datetime) -> list[Event]:
        """Decide the clock, or send it for review, if that is due at ``to``."""
        # Nothing is due before the grace after the deadline (``evidence_wait`` is at
        # least ``decision_grace``): the common case, answered without the evidence.
        if clock.deadline is None or to < clock.deadline + self.params.decision_grace:
            return []
        decision = self.decision(clock)
        if decision is None or to < decision[0]:
            return []
        due, evidence_in = decision
        # The review happens when the wait ended: the same on a re-run.
        events = self.decide(clock) if evidence_in else self.review(clock, due)
        self.track(clock)
        return events

    def track(self, clock: ClearingClock) -> None:
        """Keep ``awaiting`` true for ``clock``, whose state or deadline may have moved."""
        if clock.state in AWAITING and clock.deadline is not None:
            first = clock.deadline + self.params.decision_grace
            self.awaiting[clock.frontage] = first
            if self.awaiting_from is not None and first < self.awaiting_from:
                self.awaiting_from = first
        elif self.awaiting.pop(clock.frontage, None) is not None:
            self.awaiting_from = None  # found again when next needed

    def first_awaiting(self) -> datetime:
        """The earliest instant any clock in ``awaiting`` (not empty) can be decided."""
        if self.awaiting_from is None:
            self.awaiting_from = min(self.awaiting.values())
        return self.awaiting_from

    # -- the decision at the deadline ------------------------------------------------

    def review(self, clock: ClearingClock, at: datetime) -> list[Event]:
        """The pole's evidence did not come within the wait: a person's review queue."""
        assert clock.deadline is not None
        assert clock.cessation_at is not None
        device = self.weather_device[clock.frontage]
        key = f"{clock.frontage}:{CLEARING}:{clock.cessation_at.isoformat()}"
        through, heard = self.progress.get(device), self.heard.get(device)
        move = clock.move(
            ClearingState.NEEDS_REVIEW, at, Cause(kind="deadline", at=clock.deadline),
            reason="camera evidence missing", device=device,
            evidence_through=None if through is None else through.isoformat(),
            last_heard=None if heard is None else heard.isoformat(),
        )  # fmt: skip
        return [
            move,
            ClearingNeedsReview(key, clock.frontage, clock.deadline, at, device, through, heard),
        ]

    def decide(self, clock: ClearingClock) -> list[Event]:
        """A: the walk at the deadline, on the latest fresh measurement and the ice seen."""
        assert clock.deadline is not None
        assert clock.cessation_at is not None
        width_rule = self.profile.snow_and_ice.clearing_min_width
        required = width_rule.length_mm
        deadline = clock.deadline
        cause = Cause(kind="deadline", at=deadline)
        key = f"{clock.frontage}:{CLEARING}:{clock.cessation_at.isoformat()}"
        evidence = self.evidence(clock, clock.cessation_at, deadline)
        if evidence is None:
            last = clock.measurements[-1].at if clock.measurements else None
            move = clock.move(
                ClearingState.UNVERIFIED, deadline, cause, reason="no fresh camera measurement"
            )
            self.forget_until(clock, deadline)
            return [move, ClearingUnverified(key, clock.frontage, deadline, last)]
        # The measurement's stated uncertainty: the profile's tolerance with twice the
        # camera's sigma for it (when the pole stated one); short only by more than it
        # (A's four feet), and the letter states it.
        tolerance = stated_uncertainty(
            self.profile.snow_and_ice.width_tolerance.length_mm, evidence.width_uncertainty_mm
        )
        # A: "kept clear of snow and ice … four feet in width"; ice that cannot be
        # removed kept "sprinkled with sand and/or salt". Width alone never decides.
        ice, ice_seen = ice_at(self.surface_seen(clock, clock.cessation_at, deadline))
        detail: dict[str, object] = {
            "measured_width_mm": evidence.cleared_width_mm,
            "width_uncertainty_mm": tolerance,
            "required_width_mm": required,
            "measured_at": evidence.at.isoformat(),
            "device": evidence.device,
            "seq": evidence.seq,
        }
        if ice is not None:
            detail["ice"] = ice.as_dict()
        self.forget_until(clock, deadline)
        wide = required - evidence.cleared_width_mm <= tolerance + WIDTH_TOLERANCE_MM
        if ice is not None and ice.status == "treated" and (wide or ice_seen):
            # A: ice that cannot be removed complies when kept sanded or salted.
            return [clock.move(ClearingState.COMPLIED, deadline, ice.cause, treated=True, **detail)]
        if wide and ice is None:
            return [clock.move(ClearingState.COMPLIED, deadline, cause, **detail)]
        if wide and ice is not None and ice.status == "suspected":
            # Cleared to width, ice suspected, no freezing surface measured: a person looks.
            reason = "ice suspected by the camera, surface temperature not measured below freezing"
            move = clock.move(ClearingState.UNVERIFIED, deadline, cause, reason=reason, **detail)
            return [move, ClearingUnverified(key, clock.frontage, deadline, evidence.at, reason)]
        untreated = ice is not None and ice.status == "untreated"
        move = clock.move(
            ClearingState.VIOLATION,
            deadline,
            cause,
            ice_suspected=ice is not None,
            **detail,
        )
        deadline_rule = self.profile.snow_and_ice.clearing_deadline
        violation = ClearingViolation(
            key=key,
            frontage=clock.frontage,
            rule="snow_and_ice.clearing_deadline",
            # One section for both values (A): cited once.
            citation="; ".join(
                dict.fromkeys(c for c in (deadline_rule.citation, width_rule.citation) if c)
            ),
            cessation_at=clock.cessation_at,
            deadline=deadline,
            decided_at=deadline + self.params.decision_grace,
            required_width_mm=required,
            measured_width_mm=evidence.cleared_width_mm,
            width_uncertainty_mm=tolerance,
            measured_at=evidence.at,
            measured_by=evidence.device,
            measured_seq=evidence.seq,
            snow_depth_peak_mm=clock.peak_depth_mm,
            cessation_basis=clock.cessation_basis,
            cessation_earliest=clock.cessation_earliest,
            unconfirmed=deadline_rule.unconfirmed or width_rule.unconfirmed,
            history=tuple(clock.history),
            ice=None if ice is None else ice.as_dict(),
        )
        events: list[Event] = [move, violation]
        events += self.enforcement.open(
            key, clock.frontage, deadline, required, violation.decided_at, ice=untreated
        )
        reasons = []
        if ice is not None:
            reasons.append(ice.reason())
        if evidence.cleared_width_mm < 0.01 * required:
            reasons.append("no path cleared at all")
        if reasons:
            events.append(
                HazardCandidate(key, clock.frontage, violation.decided_at, tuple(reasons))
            )
        return events

    def forget_until(self, clock: ClearingClock, deadline: datetime) -> None:
        """A decided cycle's evidence is in its record: keep only what came after it."""
        clock.measurements = [m for m in clock.measurements if m.at > deadline]
        clock.treated = [(at, c) for at, c in clock.treated if at > deadline]
        clock.iced = [(at, c) for at, c in clock.iced if at > deadline]

    # -- § 370-10 A's ice ------------------------------------------------------------

    def surface(self, frontage: str, m: Measurement) -> SurfaceSeen | None:
        """What one camera measurement says of the walk's surface (with its temperature)."""
        if m.surface_state is None and not m.ice_suspected:
            return None  # the camera said nothing of the surface (``camera_surface``)
        pole = self.surface_temps.get(self.weather_device[frontage], [])
        # In event-time order: only the latest at or before the measurement can be it.
        i = bisect.bisect_right(pole, m.at, key=_at)
        pole = pole[i - 1 : i] if i else []
        return camera_surface(
            m.at, m.device, m.seq,
            surface_state=m.surface_state, surface_temp_c=m.surface_temp_c,
            ice_suspected=m.ice_suspected,
            pole_temp=pole_temp_at(pole, m.at, self.params.evidence_max_age),
        )  # fmt: skip

    def surface_seen(
        self, clock: ClearingClock, since: datetime, until: datetime
    ) -> list[SurfaceSeen]:
        """Every observation of the surface in [since, until]: camera, sensors, inspectors."""
        seen = [
            o
            for m in clock.measurements
            if since <= m.at <= until and (o := self.surface(clock.frontage, m)) is not None
        ]
        seen += [person_surface(at, c, treated=True) for at, c in clock.treated
                 if since <= at <= until]  # fmt: skip
        seen += [person_surface(at, c, treated=False) for at, c in clock.iced
                 if since <= at <= until]  # fmt: skip
        return seen

    def evidence(
        self, clock: ClearingClock, since: datetime, until: datetime
    ) -> Measurement | None:
        """The latest measurement in [since, until], if fresh enough to decide on."""
        candidates = [m for m in clock.measurements if since <= m.at <= until]
        if not candidates:
            return None
        latest = candidates[-1]
        if until - latest.at > self.params.evidence_max_age:
            return None
        return latest

    # -- restart -------------------------------------------------------------------------

    def load(
        self,
        detectors: Mapping[str, SnowfallDetector],
        clocks: Mapping[str, ClearingClock],
        surface_temps: Mapping[str, list[SurfaceTemp]] | None,
        progress: Mapping[str, datetime] | None,
        heard: Mapping[str, datetime] | None,
    ) -> None:
        """Resume from a snapshot's parts: frontages added since start fresh, removed drop."""
        for device, detector in detectors.items():
            if device in self.detectors:
                detector.params = self.params
                self.detectors[device] = detector
        for frontage, clock in clocks.items():
            if frontage in self.clocks:
                self.clocks[frontage] = clock
        self.awaiting, self.awaiting_from = {}, None
        for clock in self.clocks.values():
            self.track(clock)
        self.surface_temps = {
            d: temps for d, temps in (surface_temps or {}).items() if d in self.by_device
        }
        self.progress = dict(progress or {})
        self.heard = dict(heard or {})
