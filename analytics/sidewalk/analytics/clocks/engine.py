"""The ordinance clock engine: pure, event-time, deterministic.

``observe(reading)`` takes one validated reading, ``advance(to)`` moves event
time forward; both return what changed. The live runner, replays and tests all
drive this same code; nothing here reads a wall clock or does I/O.

The § 370-10 A clearing clock, per frontage::

    idle ──onset──▶ snowing ──cessation──▶ clearing_period ──deadline──▶ complied
                       ▲                        │                  ├──▶ violation
                       └────── new snow ────────┘                  ├──▶ unverified
                                                                   └──▶ needs_review

A deadline is decided only once the pole's own readings have passed it (its
evidence up to it is in); until then it waits, at most ``evidence_wait`` after
the deadline or after the pole was last heard (the runner names the poles whose
readings are queued: ``advance(to, behind=…)``), and then goes to a person
(``needs_review``), which the pole's readings still decide when they come.

The deadline is ``clearing_deadline`` (24 h) after cessation in real elapsed
time; new snow before the deadline restarts the clock from the next
cessation. At the deadline the latest camera measurement taken since
cessation must show a clear path at least ``clearing_min_width`` (4 ft) along
the whole frontage.

The engine also runs the cold-weather clocks (``cold_weather.ColdWeatherClocks``:
frozen subgrade per site, keep-off per pour, validity per street-opening
permit) on the same readings and on the pours and permits staff record, and
the § 370-8 obstruction, § 370-9 street-privilege and § 144-17 sweeping clocks
(``obstructions.StreetClocks``) on what inspectors and the Clerk-Treasurer record.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from functools import cache
from itertools import repeat
from typing import Annotated, Any, cast

from pydantic import Field, TypeAdapter

from sidewalk.analytics.clocks.actions import (
    Action,
    DecideReview,
    EnforcementAction,
    InspectionCorrected,
    InspectionNoticeDelivered,
    PermitDetail,
    RecordDemolitionCompleted,
    RecordExcavationOpened,
    RecordIce,
    RecordInspectionFinding,
    RecordMaterialsAuthorization,
    RecordObstruction,
    RecordPermit,
    RecordPour,
    RecordStreetPrivilege,
    RecordSweepingIncident,
    RecordTreated,
    StreetAction,
    StreetPrivilegeInspected,
)
from sidewalk.analytics.clocks.bill_terms import kind_of
from sidewalk.analytics.clocks.cessation import DetectionParams, SnowfallChange, SnowfallDetector
from sidewalk.analytics.clocks.cold_weather import (
    FROZEN_SUBGRADE,
    KEEP_OFF,
    ColdState,
    ColdWeatherClocks,
    ForecastPoint,
    Pour,
    pour_window,
)
from sidewalk.analytics.clocks.enforcement import (
    WIDTH_TOLERANCE_MM,
    Enforcement,
    EnforcementCase,
    ordered_abatement,
    stated_uncertainty,
)
from sidewalk.analytics.clocks.events import (
    Cause,
    ClearingNeedsReview,
    ClearingUnverified,
    ClearingViolation,
    Event,
    HazardCandidate,
    RuleFinding,
    Transition,
)
from sidewalk.analytics.clocks.gate import GateState, ReadingGate
from sidewalk.analytics.clocks.ice import (
    SurfaceSeen,
    SurfaceTemp,
    camera_surface,
    ice_at,
    person_surface,
    pole_temp_at,
)
from sidewalk.analytics.clocks.inspections import (
    Inspection,
    InspectionClocks,
    InspectionRule,
    InspectionStateSnapshot,
)
from sidewalk.analytics.clocks.obstructions import (
    MaterialsAuthorization,
    Obstruction,
    StreetClocks,
    StreetPrivilegePermit,
    StreetState,
    SweepingIncident,
)
from sidewalk.analytics.clocks.permits import (
    Excavation,
    Finding,
    Repaving,
    StreetOpeningPermit,
    street_opening_check,
    work_check,
)
from sidewalk.analytics.clocks.review import decide_review
from sidewalk.analytics.clocks.states import ClearingState
from sidewalk.core.calendar import plus_elapsed
from sidewalk.core.clock import require_aware
from sidewalk.core.contract import AnyReading, SnowMeasurement, WeatherReading
from sidewalk.core.profile import Profile

CLEARING = "clearing"
SNAPSHOT_VERSION = 1
# The clearing clock's decisions: each ends a snowfall's cycle.
DECIDED = frozenset({ClearingState.COMPLIED, ClearingState.VIOLATION, ClearingState.UNVERIFIED})
# A decision is pending: measurements since the cessation are kept for it.
PENDING = frozenset(
    {ClearingState.SNOWING, ClearingState.CLEARING_PERIOD, ClearingState.NEEDS_REVIEW}
)
# Past its deadline and not decided: waiting for the pole's evidence (or a person's review).
AWAITING = frozenset({ClearingState.CLEARING_PERIOD, ClearingState.NEEDS_REVIEW})


def _at(x: _Measurement | SurfaceTemp) -> datetime:
    return x.at


# A reading's kind by its class (``isinstance`` on a model class runs pydantic's
# Python-level ``__instancecheck__``; once per class is enough).
_KINDS: dict[type, str] = {WeatherReading: "weather", SnowMeasurement: "snow"}


def _kind(reading: AnyReading) -> str:
    kind = _KINDS.get(type(reading))
    if kind is None:
        kind = (
            "weather"
            if isinstance(reading, WeatherReading)
            else "snow"
            if isinstance(reading, SnowMeasurement)
            else ""
        )
        _KINDS[type(reading)] = kind
    return kind


def _weather_model(reading: AnyReading | None, fields: Mapping[str, Any]) -> WeatherReading:
    """The model of a weather reading: given, or validated from its stored row."""
    if reading is None:
        return WeatherReading.model_validate(fields)
    return cast(WeatherReading, reading)


@dataclass(frozen=True)
class FrontageSpec:
    """A frontage as the engine sees it: which pole's weather tells its snowfall.

    ``site`` names where its ground probe and air sensor are for the cold-weather
    clocks; by default the frontage's own weather pole.
    """

    id: str
    weather_device: str
    site: str | None = None
    # From the registry: the zone (§ 370-8 C: fixtures only in commercial areas) and
    # whether snow from this walk may go onto the street (§ 370-10 C's exception).
    zone: str | None = None
    may_deposit_on_street: bool = False
    # False: "not watched yet": the pole's snowfall opens no clock on it (the Village
    # inspects it by hand); the cases a person enters on it run as on any other.
    watched: bool = True

    @property
    def cold_site(self) -> str:
        """The site whose ground and air readings cover this frontage."""
        return self.site or self.weather_device


def _is_none(value: object) -> bool:
    return value is None


@dataclass(slots=True)
class _Measurement:
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
    measurements: list[_Measurement] = field(default_factory=list)
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


@dataclass
class EngineState:
    """Everything the engine remembers, for a snapshot in the case records."""

    version: int
    now: datetime | None
    detectors: dict[str, SnowfallDetector]
    clocks: dict[str, ClearingClock]
    cases: dict[str, EnforcementCase]
    # Absent from snapshots written before the cold-weather clocks ran live: starts empty.
    cold: ColdState | None = None
    # The last person action (case-record id) whose effects this state includes.
    applied_action_id: int = 0
    # Absent from snapshots written before the obstruction and sweeping clocks: starts empty.
    street: StreetState | None = None
    # The live runner's (device, epoch, seq) and time verdicts (``gate.ReadingGate``).
    gate: GateState | None = None
    # Absent from snapshots written before the inspector-entered rules: starts empty.
    inspections: InspectionStateSnapshot | None = None
    # Each weather pole's recent pavement temperatures (§ 370-10 A's ice); older: none.
    surface_temps: dict[str, list[SurfaceTemp]] | None = None
    # Each pole's own progress (latest event time of its readings processed) and when
    # (engine time) it was last heard or known queued, so a deadline waits for its
    # evidence. Older: none.
    progress: dict[str, datetime] | None = None
    heard: dict[str, datetime] | None = None


@cache
def _state_codec() -> TypeAdapter[EngineState]:
    return TypeAdapter(EngineState)


class ClockEngine:
    """Runs every frontage's clocks from the reading stream."""

    def __init__(
        self,
        profile: Profile,
        frontages: Sequence[FrontageSpec],
        params: DetectionParams | None = None,
        probes: Mapping[str, str] | None = None,
    ) -> None:
        """``probes`` maps a weather device to the site it reads for the cold-weather
        clocks; by default every frontage's weather pole is a probe of its site."""
        self.profile = profile
        self._probes_given = None if probes is None else dict(probes)
        self.params = params or DetectionParams()
        self.now: datetime | None = None
        self.clocks = {f.id: ClearingClock(f.id) for f in sorted(frontages, key=lambda f: f.id)}
        self._by_device: dict[str, list[str]] = {}
        self._weather_device = {f.id: f.weather_device for f in frontages}
        self._spec = {f.id: f for f in frontages}
        for f in frontages:
            self._by_device.setdefault(f.weather_device, []).append(f.id)
        self.detectors = {d: SnowfallDetector(d, self.params) for d in sorted(self._by_device)}
        self.enforcement = Enforcement(profile)
        # Saved with the state, so a restart applies each person's action exactly once.
        self.applied_action_id = 0
        ordered = sorted(frontages, key=lambda f: f.id)
        if probes is None:
            probes = {f.weather_device: f.cold_site for f in ordered}
        self._site_of = {f.id: f.cold_site for f in ordered}
        self._site_frontages: dict[str, list[str]] = {}
        for f in ordered:
            self._site_frontages.setdefault(f.cold_site, []).append(f.id)
        self.cold = ColdWeatherClocks(profile, dict(probes))
        self.street = StreetClocks(profile)
        self.inspections = InspectionClocks(profile)
        # Applied by the live runner before ``observe`` (saved with the state).
        self.gate = ReadingGate()
        # Pavement temperatures per weather pole, kept as long as a decision may need them.
        self.surface_temps: dict[str, list[SurfaceTemp]] = {}
        # Per pole: the event time its processed readings have reached (its evidence is
        # in up to there), and the engine time it was last heard from or known to have
        # readings queued for analytics (the bounded wait counts from there).
        self.progress: dict[str, datetime] = {}
        self.heard: dict[str, datetime] = {}
        # The clearing clocks past their deadline and undecided (state in AWAITING),
        # each with the first instant it can be decided (deadline + decision_grace), and
        # the earliest of those (None: to be found again). Nothing is due before it, so
        # time and readings pass the other clocks by (``_track`` keeps it true).
        self._awaiting: dict[str, datetime] = {}
        self._awaiting_from: datetime | None = None
        # The last reading's ts and event time: readings come many to a timestamp.
        self._last_time: tuple[int, datetime] | None = None
        # How long a pole's pavement temperatures are kept (``_keep_surface_temp``).
        self._surface_horizon = (
            profile.snow_and_ice.clearing_deadline.duration
            + self.params.evidence_wait
            + 2 * self.params.evidence_max_age
        )

    @property
    def devices(self) -> list[str]:
        """The poles whose readings tell the clearing clocks (the runner's ``behind``)."""
        return sorted(self._by_device)

    # -- input -------------------------------------------------------------

    def observe(self, reading: AnyReading) -> list[Event]:
        """Take one validated reading; returns the transitions it caused."""
        return self._observe(reading, self._event_time(reading))

    def step(self, reading: AnyReading) -> list[Event]:
        """Observe one reading, then advance to its event time (a replay's step)."""
        at = self._event_time(reading)
        events = self._observe(reading, at)
        events += self.advance(at)
        return events

    def step_many(self, readings: Iterable[AnyReading], *, advance: bool = True) -> list[Event]:
        """``step`` each reading in turn (``observe`` each with ``advance=False``, as the
        live runner does): the same events in the same order, the same state.

        Readings come hundreds to an instant (each pole's weather, then every
        frontage's camera). Handed over together, time is converted once per
        instant and advanced only when it moves, and a reading that changes no
        clock (most of them) takes a short path (``_batch``)."""
        return self._batch(((r.__dict__, r) for r in readings), advance)

    def replay_rows(self, rows: Iterable[Mapping[str, Any]]) -> list[Event]:
        """``step_many`` on stored readings, not validated again: each row the contract's
        payload as ingest validated and stored it (its canonical JSON parsed: optional
        fields not measured are absent). A replay from the store reads trusted rows;
        the rare reading that needs the model itself (a ground probe's, a pavement
        temperature) is validated where it does."""
        return self._batch(zip(rows, repeat(None)), True)  # pairs made in C, not a generator

    def _batch(  # noqa: PLR0912, PLR0915 (one flat loop: a call costs more than its work)
        self, items: Iterable[tuple[Mapping[str, Any], AnyReading | None]], advance: bool
    ) -> list[Event]:
        """``step`` (or ``observe``) on each item: a reading's fields and the model they
        come from, or None for a stored row (``replay_rows``).

        What ``_observe`` does, with the calls that cost more than their work taken
        out of the loop. A camera measurement of a frontage with no decision pending,
        no case open and no storm under way at its pole, that shows no rise in cover,
        only keeps the measurement and the cover (what ``_camera`` would do for it);
        every other reading goes through ``_camera``/``_weather`` as one by one."""
        events: list[Event] = []
        clocks = self.clocks
        detectors = self.detectors
        pole_of = self._weather_device
        live = self.enforcement.watching
        progress, heard = self.progress, self.heard
        rise, quiet = self.params.camera_cover_rise, self.params.quiet_period
        # Each clock past its deadline and undecided, with the first instant it can be
        # decided (``_track``): before that ``_due`` has nothing to do.
        awaiting = self._awaiting
        cold = self.cold
        probes = cold.probes
        last = self._last_time
        last_ts: int | None = None
        at: datetime | None = None
        if last is not None:
            last_ts, at = last
        # The device, instant and engine time ``_heard_from`` last ran for: a pole's
        # camera measurements come one after another at one instant, and for the
        # second on it has nothing to change.
        heard_for: tuple[str, datetime | None, datetime | None] | None = None
        for fields, reading in items:
            ts: int = fields["ts"]
            if ts != last_ts or at is None:
                at = datetime.fromtimestamp(ts / 1000, tz=UTC)  # ``Reading.event_time``
                last_ts = ts
                self._last_time = (ts, at)
            device: str = fields["device"]
            now = self.now
            if (
                heard_for is None
                or device != heard_for[0]
                or at is not heard_for[1]
                or now is not heard_for[2]
            ):
                # ``_heard_from``
                through = progress.get(device)
                if through is None or at > through:
                    progress[device] = at
                when = now or at
                was = heard.get(device)
                if was is None or when > was:
                    heard[device] = when
                heard_for = (device, at, now)
            stream = fields["stream"] if reading is None else _kind(reading)
            if stream == "snow":
                frontage: str = fields["frontage"]
                clock = clocks.get(frontage)
                if clock is not None:
                    measurements = clock.measurements
                    detector = detectors[pole_of[frontage]]
                    cover: float = fields["snow_cover_fraction"]
                    before = detector.covers.get(frontage)
                    signal_at = detector.last_signal_at
                    if (
                        # the cover did not rise: no signal for the detector ...
                        before is not None
                        and at > before[0]
                        and cover - before[1] < rise
                        # ... whose storm (if any) has not gone quiet by now ...
                        and (
                            not detector.accumulating or signal_at is None or at < signal_at + quiet
                        )
                        # ... in event-time order, no case to cure, no decision due.
                        and (not measurements or measurements[-1].at <= at)
                        and not live(frontage)
                        and (now is None or frontage not in awaiting or now < awaiting[frontage])
                    ):
                        measurements.append(
                            _Measurement(
                                at, device, fields["seq"], fields["cleared_width_mm"], cover,
                                fields.get("ice_suspected", False), fields.get("surface_state"),
                                fields.get("surface_temp_c"), fields.get("width_uncertainty_mm"),
                            )
                        )  # fmt: skip
                        if len(measurements) > 8 and clock.state not in PENDING:
                            del measurements[:-8]
                        detector.covers[frontage] = (at, cover)
                    else:
                        events += self._camera(fields, device, at)
            elif stream == "weather":
                get = fields.get
                own = detectors.get(device)
                if (
                    own is not None
                    and get("surface_temp_c") is None
                    and (device not in probes or get("ground_temp_c") is None)
                    and not cold.keep_off
                ):
                    # Nothing for the cold-weather clocks or the ice: the detector only
                    # (and the probe site's air kept, for a pour entered later).
                    air = get("air_temp_c")
                    if air is not None and device in probes:
                        cold.note_air(probes[device], at, air)
                    changes = own.observe_weather(
                        at, device, fields["seq"], get("snow_depth_mm"), get("precip_mm"),
                        get("air_temp_c"),
                    )  # fmt: skip
                    if changes:
                        events += self._apply(device, changes)
                    if now is not None and awaiting and now >= self._first_awaiting():
                        events += self._pole_due(device, now)
                else:
                    events += self._weather(reading, fields, device, at)
            if advance and (now is None or at > now):
                events += self.advance(at)
        return events

    def _event_time(self, reading: AnyReading) -> datetime:
        """``reading.event_time``, converted once for the many readings of one instant."""
        ts = reading.ts
        last = self._last_time
        if last is not None and last[0] == ts:
            return last[1]
        at = reading.event_time
        self._last_time = (ts, at)
        return at

    def _observe(self, reading: AnyReading, at: datetime) -> list[Event]:
        # Most readings change nothing (a dry spell's weather, a frame agreeing with the
        # last): this path reads each field once and builds nothing it does not need.
        # An attribute read on a model passes pydantic's ``__getattr__`` hook (several
        # plain reads' cost): the fields are read from its dict.
        fields = reading.__dict__
        device: str = fields["device"]
        self._heard_from(device, at)
        kind = _kind(reading)
        if kind == "weather":
            return self._weather(reading, fields, device, at)
        if kind == "snow":
            return self._camera(fields, device, at)
        return []

    def _weather(
        self, reading: AnyReading | None, fields: Mapping[str, Any], device: str, at: datetime
    ) -> list[Event]:
        """A weather reading's fields (``reading``: its model, None for a stored row)."""
        get = fields.get
        air = get("air_temp_c")
        site = self.cold.probes.get(device)
        events: list[Event] = []
        if site is not None and air is not None:
            self.cold.note_air(site, at, air)  # a pour entered later is judged on it
        if site is not None and (
            get("ground_temp_c") is not None or (air is not None and self.cold.keep_off)
        ):
            # (``observe_weather`` returns nothing for any other reading.)
            model = _weather_model(reading, fields)
            events += self._cold(self.cold.observe_weather(model, at, site, air))
        if get("surface_temp_c") is not None and device in self._by_device:
            self._keep_surface_temp(_weather_model(reading, fields))
        detector = self.detectors.get(device)
        if detector is None:
            return events
        changes = detector.observe_weather(
            at, device, fields["seq"], get("snow_depth_mm"), get("precip_mm"), air
        )
        if changes:
            events += self._apply(device, changes)
        now = self.now
        if now is not None and self._awaiting and now >= self._first_awaiting():
            events += self._pole_due(device, now)
        return events

    def _pole_due(self, device: str, now: datetime) -> list[Event]:
        """The pole's readings may now be through a deadline: decide on them.
        (Only a clock past its deadline can be due: the rest are skipped here.)"""
        events: list[Event] = []
        clocks = self.clocks
        waiting = [f for f in self._by_device[device] if clocks[f].state in AWAITING]
        for frontage in sorted(waiting):
            events += self._due(clocks[frontage], now)
        return events

    def _camera(self, fields: Mapping[str, Any], device: str, at: datetime) -> list[Event]:
        frontage: str = fields["frontage"]
        clock = self.clocks.get(frontage)
        if clock is None:
            return []
        seq: int = fields["seq"]
        get = fields.get  # a stored row leaves out the fields not measured
        m = _Measurement(
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
            del measurements[:-8]
        events: list[Event] = []
        if self.enforcement.watching(frontage):  # else ``measured`` has no case to cure
            cause = Cause(kind="reading", at=at, device=device, seq=seq)
            seen = self._surface(frontage, m)
            events += self.enforcement.measured(
                frontage, at, m.cleared_width_mm, cause,
                icy=seen is not None and seen.seen in ("untreated", "ice", "suspected"),
                ice_free=seen is not None and seen.seen in ("clear", "treated"),
                sigma_mm=m.width_uncertainty_mm,
            )  # fmt: skip
        pole = self._weather_device[frontage]
        changes = self.detectors[pole].observe_cover(
            at, frontage, device, seq, m.snow_cover_fraction
        )
        if changes:
            events += self._apply(pole, changes)
        if self.now is not None and clock.state in AWAITING:
            events += self._due(clock, self.now)  # the evidence past the deadline came in
        return events

    def act(self, action: Action) -> list[Event]:  # noqa: PLR0911 (one per kind of action)
        """Apply what a person recorded (hazard confirmed, notice delivered, bill paid, …).

        ``action`` is already valid in itself (``actions.parse_action``); what needs
        the engine's state is checked here: a known frontage, site or case, a step in
        order. A refused action raises ``KeyError`` or ``ValueError`` and changes nothing.
        """
        if isinstance(action, RecordTreated):
            clock = self.clocks.get(action.target)
            if clock is None:
                raise KeyError(f"no frontage {action.target!r}")
            clock.treated.append((action.at, action.cause))
            # A: ice sanded or salted after a missed deadline remedies an ice violation.
            return self.enforcement.treated(action.target, action.at, action.cause)
        if isinstance(action, RecordIce):
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
        if isinstance(action, DecideReview):
            clock = self.clocks.get(action.target)
            if clock is None:
                raise KeyError(f"no frontage {action.target!r}")
            grace = self.params.decision_grace
            events = decide_review(clock, action, self.profile, self.enforcement, grace)
            self._track(clock)
            assert clock.deadline is not None
            self._forget_until(clock, clock.deadline)  # its evidence is in the decision
            return events
        if isinstance(action, RecordPour):
            return self._record_pour(action)
        if isinstance(action, RecordPermit):
            return self._record_permit(action)
        if isinstance(action, EnforcementAction):
            if action.kind == "abatement_done" and action.target not in self.enforcement.cases:
                # An abatement the § 370-8 or an inspector-entered rule's clock ordered:
                # its bill's case, on its section's terms, to the tax roll (G, § 370-8 F).
                ordered = ordered_abatement(action.target, self.street, self.inspections)
                if ordered is not None:
                    frontage, rule, at = ordered
                    section = kind_of(action.target, rule)
                    self.enforcement.open_billing(action.target, frontage, section, at)
            return self.enforcement.act(action)
        return self._street_action(action)

    def advance(self, to: datetime, *, behind: Iterable[str] = ()) -> list[Event]:
        """Move event time to ``to`` (never backwards); returns what came due.

        ``behind``: poles whose readings the runner knows are at the server but not yet
        processed here (queued at the broker, a restart not yet caught up). Their wait
        for evidence does not count meanwhile: they are behind, not silent. A replay
        passes none (its readings come in order)."""
        now = self.now
        if to == now:
            return []  # the usual call: another reading of the same instant (never naive)
        require_aware(to)
        if now is not None and to < now:
            return []
        self.now = to
        for device in behind:
            if device in self._by_device:
                self.heard[device] = max(self.heard.get(device, to), to)
        events: list[Event] = []
        # Snowfall detectors move only on their own pole's readings (observe):
        # a pole still buffering through an outage must not have its storm
        # declared over by the server's clock.
        if self._awaiting and to >= self._first_awaiting():
            # In frontage order, as ``clocks``; ``_due`` of any other clock is empty.
            due = sorted(f for f, first in self._awaiting.items() if first <= to)
            for frontage in due:
                events += self._due(self.clocks[frontage], to)
        events += self.enforcement.advance(to)
        events += self._cold(self.cold.advance(to))
        events += [_finding(f"permit:{p}", f) for p, f in self.cold.work_findings(to)]
        events += self.street.advance(to)
        events += self.inspections.advance(to)
        return events

    def _camera_caught_up(self, clock: ClearingClock) -> bool:
        # ``measurements`` is kept in event-time order: its last is the latest.
        return (
            clock.deadline is not None
            and bool(clock.measurements)
            and clock.measurements[-1].at >= clock.deadline
        )

    def _evidence_in(self, clock: ClearingClock) -> bool:
        """The pole's readings up to the deadline have been processed: the frontage's
        camera reported from the deadline on, or the pole's own readings (any stream,
        sent in seq order) reached ``decision_grace`` past it."""
        if clock.deadline is None:
            return False
        through = self.progress.get(self._weather_device[clock.frontage])
        return self._camera_caught_up(clock) or (
            through is not None and through >= clock.deadline + self.params.decision_grace
        )

    def _decision_due(self, clock: ClearingClock) -> datetime | None:
        """When ``advance`` next acts on the clearing clock: the decision, grace after
        the deadline, once the pole's evidence up to it is in; else the review,
        ``evidence_wait`` after the deadline or after the pole was last heard (or known
        queued), whichever is later. Under review, only the evidence decides."""
        due = self._decision(clock)
        return None if due is None else due[0]

    def _decision(self, clock: ClearingClock) -> tuple[datetime, bool] | None:
        """``_decision_due``, and whether it is the decision (the evidence is in)."""
        if clock.state not in AWAITING or clock.deadline is None:
            return None
        if self._evidence_in(clock):
            return clock.deadline + self.params.decision_grace, True
        if clock.state == ClearingState.NEEDS_REVIEW:
            return None
        heard = self.heard.get(self._weather_device[clock.frontage], clock.deadline)
        return max(clock.deadline, heard) + self.params.evidence_wait, False

    def _due(self, clock: ClearingClock, to: datetime) -> list[Event]:
        """Decide the clock, or send it for review, if that is due at ``to``."""
        # Nothing is due before the grace after the deadline (``evidence_wait`` is at
        # least ``decision_grace``): the common case, answered without the evidence.
        if clock.deadline is None or to < clock.deadline + self.params.decision_grace:
            return []
        decision = self._decision(clock)
        if decision is None or to < decision[0]:
            return []
        due, evidence_in = decision
        # The review happens when the wait ended: the same on a re-run.
        events = self._decide(clock) if evidence_in else self._review(clock, due)
        self._track(clock)
        return events

    def _track(self, clock: ClearingClock) -> None:
        """Keep ``_awaiting`` true for ``clock``, whose state or deadline may have moved."""
        if clock.state in AWAITING and clock.deadline is not None:
            first = clock.deadline + self.params.decision_grace
            self._awaiting[clock.frontage] = first
            if self._awaiting_from is not None and first < self._awaiting_from:
                self._awaiting_from = first
        elif self._awaiting.pop(clock.frontage, None) is not None:
            self._awaiting_from = None  # found again when next needed

    def _first_awaiting(self) -> datetime:
        """The earliest instant any clock in ``_awaiting`` (not empty) can be decided."""
        if self._awaiting_from is None:
            self._awaiting_from = min(self._awaiting.values())
        return self._awaiting_from

    def _heard_from(self, device: str, at: datetime) -> None:
        """A reading of ``device`` at ``at`` came in (``progress``, ``heard``)."""
        through = self.progress.get(device)
        if through is None or at > through:
            self.progress[device] = at
        when = self.now or at
        heard = self.heard.get(device)
        if heard is None or when > heard:
            self.heard[device] = when

    def _review(self, clock: ClearingClock, at: datetime) -> list[Event]:
        """The pole's evidence did not come within the wait: a person's review queue."""
        assert clock.deadline is not None
        assert clock.cessation_at is not None
        device = self._weather_device[clock.frontage]
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

    def feed(self, readings: Iterable[AnyReading]) -> list[Event]:
        """Replay: observe each reading and advance to its event time."""
        events: list[Event] = []
        for reading in readings:
            events += self.step(reading)
        return events

    def next_due(self) -> datetime | None:
        """The next instant at which ``advance`` would decide something (for the scheduler)."""
        # Only a clock past its deadline, undecided (``_awaiting``), has a decision due.
        clocks = self.clocks
        due = [d for f in self._awaiting if (d := self._decision_due(clocks[f])) is not None]
        enforcement_due = self.enforcement.next_due()
        if enforcement_due is not None:
            due.append(enforcement_due)
        cold_due = self.cold.next_due()
        if cold_due is not None:
            due.append(cold_due)
        street_due = self.street.next_due()
        if street_due is not None:
            due.append(street_due)
        inspection_due = self.inspections.next_due()
        if inspection_due is not None:
            due.append(inspection_due)
        return min(due, default=None)

    def evidence_watch(self) -> datetime | None:
        """The earliest deadline still waiting for its pole's evidence, or None.

        ``next_due`` can move earlier without an event: once a reading brings the
        evidence in, the decision is due ``decision_grace`` after the deadline
        instead of after the wait. A caller that advances only when ``next_due``
        comes (the season replay) asks again for readings from this instant on.
        """
        clocks = (self.clocks[f] for f in self._awaiting)
        waiting = [
            c.deadline
            for c in clocks
            if c.state in AWAITING and c.deadline is not None and not self._evidence_in(c)
        ]
        return min(waiting, default=None)

    # -- restart ---------------------------------------------------------------

    def snapshot(self) -> bytes:
        """The engine's whole state as JSON: restoring it resumes every clock exactly."""
        state = EngineState(
            SNAPSHOT_VERSION,
            self.now,
            self.detectors,
            self.clocks,
            self.enforcement.cases,
            self.cold.state(),
            self.applied_action_id,
            self.street.state(),
            self.gate.state,
            surface_temps=self.surface_temps,
            inspections=self.inspections.state(),
            progress=self.progress,
            heard=self.heard,
        )
        return _state_codec().dump_json(state)

    def restore(self, data: bytes) -> None:
        """Resume from ``snapshot()``; frontages added since start fresh, removed ones drop."""
        state = _state_codec().validate_json(data)
        if state.version != SNAPSHOT_VERSION:
            raise ValueError(
                f"engine snapshot version {state.version}; this engine reads {SNAPSHOT_VERSION}"
            )
        self.now = state.now
        self.applied_action_id = state.applied_action_id
        for device, detector in state.detectors.items():
            if device in self.detectors:
                detector.params = self.params
                self.detectors[device] = detector
        for frontage, clock in state.clocks.items():
            if frontage in self.clocks:
                self.clocks[frontage] = clock
        self._awaiting, self._awaiting_from = {}, None
        for clock in self.clocks.values():
            self._track(clock)
        self.enforcement.load({k: c for k, c in state.cases.items() if c.frontage in self.clocks})
        if state.cold is not None:
            self.cold.load(state.cold)
        if state.street is not None:
            self.street.load(state.street)
        self.gate.state = state.gate or GateState()
        if state.inspections is not None:
            self.inspections.load(state.inspections)
        self.surface_temps = {
            d: temps for d, temps in (state.surface_temps or {}).items() if d in self._by_device
        }
        self.progress = dict(state.progress or {})
        self.heard = dict(state.heard or {})

    def frontages(self) -> list[FrontageSpec]:
        """The frontages watched now, by id."""
        return [self._spec[f] for f in sorted(self._spec)]

    def set_frontages(self, frontages: Sequence[FrontageSpec]) -> bool:
        """Watch exactly ``frontages`` from now on (a registry change); False if unchanged.

        A frontage kept goes on with its clock and case exactly as it was (its
        pole may change: its snowfall comes from the new pole's detector from
        now); an added one starts idle; a retired one stops (its records stay in
        the case database). Built as a restart with the new set: the same
        ``restore`` that resumes every clock after a crash."""
        if sorted(frontages, key=lambda f: f.id) == self.frontages():
            return False
        state = self.snapshot()
        fresh = ClockEngine(self.profile, frontages, self.params, self._probes_given)
        fresh.gate.policy = self.gate.policy
        fresh.restore(state)
        self.__dict__.update(fresh.__dict__)
        return True

    # -- cold weather: pours and permits staff record ----------------------------

    def _record_pour(self, action: RecordPour) -> list[Event]:
        detail = action.detail
        if action.target in self.cold.keep_off:
            raise ValueError(f"pour {action.target!r} is already recorded")
        at = detail.at
        frontage = self._known_frontage(detail.frontage)
        site = detail.site or (self._site_of[frontage] if frontage else None)
        if site not in self.cold.subgrade:
            known = ", ".join(self.cold.subgrade) or "none"
            raise ValueError(f"a pour needs a known site (one of {known}), not {site!r}")
        assert site is not None  # every known site is a name
        forecast = [ForecastPoint(p.at, p.temp_f) for p in detail.forecast]
        location = detail.location or site
        pour = Pour(action.target, detail.kind, at, location, site, frontage)
        events = self._cold(self.cold.record_pour(pour, who=action.who))
        if detail.kind == "sidewalk":
            # § 370-5 (9) judges the pour at its own instant (event time): the probes'
            # reading as of the pour, however late the pour is entered, and the forecast given.
            temp, frozen = self.cold.subgrade_at(site, at)
            decision = pour_window(at, forecast, temp, self.profile, subgrade_is_frozen=frozen)
            events += [_finding(f"pour:{pour.id}", f) for f in decision.reasons]
        return events

    def _record_permit(self, action: RecordPermit) -> list[Event]:
        detail = action.detail
        opened_at = detail.opened_at
        approved_at = detail.approved_at or opened_at
        held = self.cold.permits.get(action.target)
        if held is not None and detail.renewals == held.permit.renewals:
            return self._permit_work(action)  # the work's dates, entered as they happen
        if held is not None and detail.renewals < held.permit.renewals:
            raise ValueError(
                f"permit {action.target!r} is already recorded; a renewal must raise renewals"
            )
        frontage = self._known_frontage(detail.frontage)
        permit = StreetOpeningPermit(
            action.target, detail.street, approved_at, detail.renewals, frontage
        )
        # A renewal is granted when it is recorded; a first entry runs from its approval.
        at = action.at if held is not None else None
        events = self._cold(self.cold.record_permit(permit, at=at, who=action.who))
        if held is not None:  # a renewal may bring the work's dates too
            return events + self._permit_work(action, renewal=True)
        opening = _opening(action.target, detail, permit)
        self.cold.record_work(permit.id, opening)
        findings = street_opening_check(opening, self.profile, opened_at, _repaved(detail))
        # Entered after a deadline passed (the engine's time is on): found now.
        findings += work_check(opening, self.profile, self.now or opened_at)
        return events + [
            _finding(f"permit:{permit.id}", f) for f in self.cold.first_found(permit.id, findings)
        ]

    def _permit_work(self, action: RecordPermit, *, renewal: bool = False) -> list[Event]:
        """§§ 370-7 B, F, G, H, I: dates entered for a recorded permit's work and notices
        (the same permit, street and opening); what they show late is a finding now."""
        held = self.cold.permits[action.target]
        detail = action.detail
        # A permit held from before its work was kept: the opening as this entry gives it.
        previous = held.opening or _opening(action.target, detail, held.permit)
        if (detail.street, detail.opened_at) != (
            previous.segment, previous.starts_at,
        ):  # fmt: skip
            if renewal:
                return []  # renewed as entered; its work is the recorded opening's
            raise ValueError(
                f"permit {action.target!r} is already recorded for another street or opening; "
                "a renewal must raise renewals"
            )
        given = detail.model_dump(exclude_unset=True)
        changes = {mine: given[theirs] for mine, theirs in _WORK_FIELDS.items() if theirs in given}
        if not changes:
            if renewal:
                return []
            raise ValueError(f"permit {action.target!r} is already recorded; nothing new given")
        opening = replace(previous, **changes)
        self.cold.record_work(action.target, opening)
        now = self.now or action.at
        findings = street_opening_check(opening, self.profile, now, _repaved(detail))
        return [
            _finding(f"permit:{action.target}", f)
            for f in self.cold.first_found(action.target, findings)
        ]

    def _known_frontage(self, frontage: str | None) -> str | None:
        if frontage is None:
            return None
        if frontage not in self.clocks:
            raise ValueError(f"unknown frontage {frontage!r}")
        return frontage

    def _cold(self, transitions: list[Transition]) -> list[Event]:
        """Name the frontages whose case records carry each cold-weather transition."""
        return [
            replace(t, detail={**t.detail, "frontages": self._cold_frontages(t)})
            for t in transitions
        ]

    def _cold_frontages(self, t: Transition) -> list[str]:
        if t.clock == FROZEN_SUBGRADE:
            return list(self._site_frontages.get(t.frontage, []))
        if t.clock == KEEP_OFF:
            pour = self.cold.keep_off[t.frontage].pour
            if pour.frontage:
                return [pour.frontage]
            return list(self._site_frontages.get(pour.site or "", []))
        permit = self.cold.permits[t.frontage].permit
        return [permit.frontage] if permit.frontage else []

    # -- obstructions (§ 370-8) and street sweeping (§ 144-17) ------------------------

    def _street_action(self, action: StreetAction) -> list[Event]:  # noqa: PLR0911
        inspected = self._inspection_action(action)
        if inspected is not None:
            return inspected
        if isinstance(action, RecordObstruction):
            return self._record_obstruction(action)
        if isinstance(action, RecordSweepingIncident):
            return self._record_sweeping(action)
        if isinstance(action, RecordStreetPrivilege):
            return self._record_privilege(action)
        if isinstance(action, RecordMaterialsAuthorization):
            auth = action.detail
            frontage = self._required_frontage(auth.frontage)
            return list(
                self.street.record_authorization(
                    MaterialsAuthorization(
                        action.target, frontage, auth.authorized_from, auth.authorized_until,
                        by=auth.by or action.who, location=auth.location or frontage,
                    )
                )
            )  # fmt: skip
        if isinstance(action, StreetPrivilegeInspected):
            seen = action.detail
            return list(
                self.street.privilege_inspected(
                    action.target, action.at, action.cause, present=seen.present,
                    temporary_walk_width_mm=seen.temporary_walk_width_mm,
                    street_width_mm=seen.street_width_mm,
                    street_occupied_mm=seen.street_occupied_mm,
                )
            )  # fmt: skip
        step = {
            "obstruction_notice_delivered": self.street.notice_delivered,
            "obstruction_removed": self.street.removed,
            "sweeping_done": self.street.swept,
        }[action.kind]
        return list(step(action.target, action.at, action.cause))

    def _inspection_action(self, action: StreetAction) -> list[Event] | None:
        """§ 370-10 C, § 370-11 C, § 370-14, §§ 144-11, 144-12 B, C (``inspections``)."""
        if isinstance(action, RecordInspectionFinding):
            found = action.detail
            frontage = self._required_frontage(found.frontage)
            inspection = Inspection(
                action.target, found.rule, found.location or frontage,
                found.observed_at or action.at, found.description or "",
                onto=found.onto, from_own_walk=found.from_own_walk,
                may_deposit=self._spec[frontage].may_deposit_on_street,
                fence_height_mm=found.fence_height,
            )  # fmt: skip
            return list(self.inspections.record(inspection, frontage, action.cause))
        if isinstance(action, RecordDemolitionCompleted | RecordExcavationOpened):
            work = action.detail
            frontage = self._required_frontage(work.frontage)
            rule: InspectionRule = (
                "demolition_fill"
                if isinstance(action, RecordDemolitionCompleted)
                else "abandoned_excavation"
            )
            inspection = Inspection(
                action.target, rule, work.location or frontage, work.at,
                work.description or "", started_at=work.at,
            )  # fmt: skip
            return list(self.inspections.record(inspection, frontage, action.cause))
        if isinstance(action, InspectionNoticeDelivered):
            return list(self.inspections.notice_delivered(action.target, action.at, action.cause))
        if isinstance(action, InspectionCorrected):
            return list(self.inspections.corrected(action.target, action.at, action.cause))
        return None

    def _record_obstruction(self, action: RecordObstruction) -> list[Event]:
        detail = action.detail
        frontage = self._required_frontage(detail.frontage)
        observed = detail.observed_at or action.at
        obstruction = Obstruction(
            action.target,
            detail.location or frontage,
            detail.area,
            observed,
            clear_width_mm=detail.clear_width,
            kind=detail.kind,
            sidewalk_width_mm=detail.sidewalk_width_mm,
            street_width_mm=detail.street_width_mm,
            street_occupied_mm=detail.street_occupied_mm,
            gutters_clear=detail.gutters_clear,
            privilege_permit=detail.privilege_permit,
            opening_permit=detail.opening_permit,
            materials_authorization=detail.materials_authorization,
        )
        opening_valid: bool | None = None
        if detail.opening_permit is not None:
            held = self.cold.permits.get(detail.opening_permit)
            if held is not None:
                # §§ 370-6/370-7: approved before the sighting and not yet expired.
                opening_valid = held.expiry.start <= observed < held.expiry.due
        description = detail.description or ""
        return list(
            self.street.observe_obstruction(
                obstruction, frontage, description, action.cause,
                commercial=self._spec[frontage].zone == "commercial",
                opening_permit_valid=opening_valid,
            )
        )  # fmt: skip

    def _record_sweeping(self, action: RecordSweepingIncident) -> list[Event]:
        detail = action.detail
        frontage = self._required_frontage(detail.frontage)
        incident = SweepingIncident(
            action.target, detail.location or frontage, detail.occurred_at or action.at,
            contractor=detail.contractor, contractor_address=detail.contractor_address,
        )  # fmt: skip
        description = detail.description or ""
        return list(self.street.record_sweeping(incident, frontage, description, action.cause))

    def _record_privilege(self, action: RecordStreetPrivilege) -> list[Event]:
        detail = action.detail
        frontage = self._required_frontage(detail.frontage)
        permit = StreetPrivilegePermit(
            action.target,
            detail.issued_on,
            earlier_termination_on=detail.earlier_termination_on,
            temporary_walk_width_mm=detail.temporary_walk_width_mm,
            street_width_mm=detail.street_width_mm,
            street_occupied_mm=detail.street_occupied_mm,
            holder=detail.holder or "",
            location=detail.location or frontage,
            placed=detail.placed or "",
            area=detail.area,
        )
        return list(self.street.record_privilege(permit, frontage, action.cause))

    def _required_frontage(self, frontage: str) -> str:
        """A frontage the case's records hang on: one of this engine's."""
        known = self._known_frontage(frontage)
        assert known is not None
        return known

    # -- the § 370-10 A sequence ------------------------------------------------

    def _apply(self, device: str, changes: list[SnowfallChange]) -> list[Event]:
        events: list[Event] = []
        rule = self.profile.snow_and_ice.clearing_deadline
        for change in changes:
            for frontage in sorted(self._by_device.get(device, [])):
                if not self._spec[frontage].watched:
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
                    events += self._decide(clock)
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
                self._track(clock)
        return events

    def _decide(self, clock: ClearingClock) -> list[Event]:
        assert clock.deadline is not None
        assert clock.cessation_at is not None
        width_rule = self.profile.snow_and_ice.clearing_min_width
        required = width_rule.length_mm
        deadline = clock.deadline
        cause = Cause(kind="deadline", at=deadline)
        key = f"{clock.frontage}:{CLEARING}:{clock.cessation_at.isoformat()}"
        evidence = self._evidence(clock, clock.cessation_at, deadline)
        if evidence is None:
            last = clock.measurements[-1].at if clock.measurements else None
            move = clock.move(
                ClearingState.UNVERIFIED, deadline, cause, reason="no fresh camera measurement"
            )
            self._forget_until(clock, deadline)
            return [move, ClearingUnverified(key, clock.frontage, deadline, last)]
        # The measurement's stated uncertainty: the profile's tolerance with twice the
        # camera's sigma for it (when the pole stated one); short only by more than it
        # (A's four feet), and the letter states it.
        tolerance = stated_uncertainty(
            self.profile.snow_and_ice.width_tolerance.length_mm, evidence.width_uncertainty_mm
        )
        # A: "kept clear of snow and ice … four feet in width"; ice that cannot be
        # removed kept "sprinkled with sand and/or salt". Width alone never decides.
        ice, ice_seen = ice_at(self._surface_seen(clock, clock.cessation_at, deadline))
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
        self._forget_until(clock, deadline)
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

    def _forget_until(self, clock: ClearingClock, deadline: datetime) -> None:
        """A decided cycle's evidence is in its record: keep only what came after it."""
        clock.measurements = [m for m in clock.measurements if m.at > deadline]
        clock.treated = [(at, c) for at, c in clock.treated if at > deadline]
        clock.iced = [(at, c) for at, c in clock.iced if at > deadline]

    # -- § 370-10 A's ice ----------------------------------------------------------

    def _keep_surface_temp(self, reading: WeatherReading) -> None:
        assert reading.surface_temp_c is not None
        temps = self.surface_temps.setdefault(reading.device, [])
        t = SurfaceTemp(reading.event_time, reading.device, reading.seq, reading.surface_temp_c)
        bisect.insort(temps, t, key=_at)
        # A decision looks back from its deadline to the cessation: keep that long.
        horizon = self._surface_horizon
        newest = temps[-1].at
        if temps[0].at < newest - horizon:
            temps[:] = [x for x in temps if x.at >= newest - horizon]

    def _surface(self, frontage: str, m: _Measurement) -> SurfaceSeen | None:
        """What one camera measurement says of the walk's surface (with its temperature)."""
        if m.surface_state is None and not m.ice_suspected:
            return None  # the camera said nothing of the surface (``camera_surface``)
        pole = self.surface_temps.get(self._weather_device[frontage], [])
        # In event-time order: only the latest at or before the measurement can be it.
        i = bisect.bisect_right(pole, m.at, key=_at)
        pole = pole[i - 1 : i] if i else []
        return camera_surface(
            m.at, m.device, m.seq,
            surface_state=m.surface_state, surface_temp_c=m.surface_temp_c,
            ice_suspected=m.ice_suspected,
            pole_temp=pole_temp_at(pole, m.at, self.params.evidence_max_age),
        )  # fmt: skip

    def _surface_seen(
        self, clock: ClearingClock, since: datetime, until: datetime
    ) -> list[SurfaceSeen]:
        """Every observation of the surface in [since, until]: camera, sensors, inspectors."""
        seen = [
            o
            for m in clock.measurements
            if since <= m.at <= until and (o := self._surface(clock.frontage, m)) is not None
        ]
        seen += [person_surface(at, c, treated=True) for at, c in clock.treated
                 if since <= at <= until]  # fmt: skip
        seen += [person_surface(at, c, treated=False) for at, c in clock.iced
                 if since <= at <= until]  # fmt: skip
        return seen

    def _evidence(
        self, clock: ClearingClock, since: datetime, until: datetime
    ) -> _Measurement | None:
        """The latest measurement in [since, until], if fresh enough to decide on."""
        candidates = [m for m in clock.measurements if since <= m.at <= until]
        if not candidates:
            return None
        latest = candidates[-1]
        if until - latest.at > self.params.evidence_max_age:
            return None
        return latest


# An opening's field, and the permit entry's that gives it (the work and the notices).
_WORK_FIELDS = {
    "permit_applied_at": "applied_at", "board_found_essential": "essential",
    "pavement_removed": "pavement_removed", "cold_mix_on": "cold_mix_on",
    "permanent_pavement_on": "permanent_pavement_on",
    "repaving_notice_on": "repaving_notice_on", "work_completed_on": "work_completed_on",
    "dpw_notified_at": "dpw_notified_at", "parties_notified_at": "parties_notified_at",
    "backfill_at": "backfill_at", "backfill_notified_at": "backfill_notified_at",
    "utility_loss_at": "utility_loss_at", "utility_loss_notified_at": "utility_loss_notified_at",
}  # fmt: skip


def _opening(target: str, detail: PermitDetail, permit: StreetOpeningPermit) -> Excavation:
    """The opening a permit entry records, with the work's dates and notices given so far."""
    given = {mine: getattr(detail, theirs) for mine, theirs in _WORK_FIELDS.items()}
    return Excavation(target, detail.street, detail.opened_at, detail.emergency, permit, **given)


def _repaved(detail: PermitDetail) -> list[Repaving]:
    """§ 370-7 I: the street's last repaving, as the permit entry gives it."""
    on = detail.street_repaved_on
    return [] if on is None else [Repaving(detail.street, on)]


def _finding(subject: str, f: Finding) -> RuleFinding:
    return RuleFinding(
        subject, f.rule, f.citation, f.severity, f.message, f.at, f.unconfirmed, f.notes
    )
