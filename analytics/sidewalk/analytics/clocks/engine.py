"""The ordinance clock engine: pure, event-time, deterministic; a router.

``observe(reading)`` takes one validated reading, ``advance(to)`` moves event
time forward, ``act(action)`` applies what a person recorded; each returns what
changed. The live runner, replays and tests all drive this same code; nothing
here reads a wall clock or does I/O.

The engine keeps event time, routes each reading and each person's action to
the clocks it concerns, and keeps their combined snapshot (``EngineState``).
The clocks themselves live in a module each:

* § 370-10 A clearing (snow and ice off the walk in 24 hours):
  ``clearing.ClearingClocks``, with the snowfall detector (``cessation``), the
  ice (``ice``) and a person's review (``review``);
* § 370-10 B–G notices, abatement, bill and tax roll: ``enforcement.Enforcement``;
* cold weather (``cold_weather.ColdWeatherClocks``: frozen subgrade per site,
  keep-off per pour, validity per street-opening permit) and §§ 370-6/370-7
  street openings (``permits``), with the pours and permits staff record
  (``cold_entries``);
* § 370-8 obstructions, § 370-9 street privilege and § 144-17 sweeping:
  ``obstructions.StreetClocks``, with what staff record for them
  (``street_entries``);
* the inspector-entered rules (§ 370-10 C, § 370-11 C, § 370-14, §§ 144-11,
  144-12 B, C): ``inspections.InspectionClocks``, with the findings inspectors
  enter (``inspection_entries``).

A person's action goes to its handler by its type (``HANDLERS``, one entry per
action kind; ``handles`` registers one).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from itertools import repeat
from typing import Any, Final, TypeVar, cast, get_args

from pydantic import TypeAdapter

from sidewalk.analytics.clocks.actions import (
    Action,
    AnyAction,
    DecideReview,
    EnforcementAction,
    InspectionCorrected,
    InspectionNoticeDelivered,
    ObstructionNoticeDelivered,
    ObstructionRemoved,
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
    StreetPrivilegeInspected,
    SweepingDone,
)
from sidewalk.analytics.clocks.bill_terms import kind_of
from sidewalk.analytics.clocks.cessation import DetectionParams, SnowfallDetector
from sidewalk.analytics.clocks.clearing import (
    AWAITING,
    CLEARING,
    DECIDED,
    KEPT,
    PENDING,
    ClearingClock,
    ClearingClocks,
    Measurement,
)
from sidewalk.analytics.clocks.cold_entries import ColdEntries
from sidewalk.analytics.clocks.cold_weather import ColdState, ColdWeatherClocks
from sidewalk.analytics.clocks.enforcement import (
    Enforcement,
    EnforcementCase,
    ordered_abatement,
)
from sidewalk.analytics.clocks.events import Event
from sidewalk.analytics.clocks.gate import GateState, ReadingGate
from sidewalk.analytics.clocks.ice import SurfaceTemp
from sidewalk.analytics.clocks.inspection_entries import InspectionEntries
from sidewalk.analytics.clocks.inspections import InspectionClocks, InspectionStateSnapshot
from sidewalk.analytics.clocks.obstructions import StreetClocks, StreetState
from sidewalk.analytics.clocks.street_entries import StreetEntries
from sidewalk.core.clock import require_aware
from sidewalk.core.contract import AnyReading, SnowMeasurement, WeatherReading
from sidewalk.core.profile import Profile

__all__ = [
    "AWAITING",
    "CLEARING",
    "DECIDED",
    "HANDLERS",
    "PENDING",
    "SNAPSHOT_VERSION",
    "ClearingClock",
    "ClockEngine",
    "EngineState",
    "FrontageSpec",
]

SNAPSHOT_VERSION = 1
# The clearing clock's measurement kept its old name in this module (nothing reads it
# by name: a snapshot is JSON of its fields).
_Measurement = Measurement


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


_Handler = TypeVar("_Handler", bound=Callable[..., list[Event]])

HANDLERS: Final[dict[type[AnyAction], Callable[[ClockEngine, Any], list[Event]]]] = {}
"""Each person's action, by its type, and the engine's handler for it (``ClockEngine.act``)."""


def handles(*kinds: type[AnyAction]) -> Callable[[_Handler], _Handler]:
    """Register the decorated ``ClockEngine`` method as the handler of ``kinds``."""

    def register(handler: _Handler) -> _Handler:
        for kind in kinds:
            if kind in HANDLERS:
                raise TypeError(f"{kind.__name__} is handled twice")
            HANDLERS[kind] = handler
        return handler

    return register


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
        self._params = params or DetectionParams()
        self.now: datetime | None = None
        self._spec = {f.id: f for f in frontages}
        self.enforcement = Enforcement(profile)
        # § 370-10 A, with each pole's snowfall detector and evidence.
        self.clearing = ClearingClocks(
            profile,
            {f.id: f.weather_device for f in frontages},
            frozenset(f.id for f in frontages if not f.watched),
            self._params,
            self.enforcement,
        )
        # Saved with the state, so a restart applies each person's action exactly once.
        self.applied_action_id = 0
        ordered = sorted(frontages, key=lambda f: f.id)
        if probes is None:
            probes = {f.weather_device: f.cold_site for f in ordered}
        self.cold = ColdWeatherClocks(profile, dict(probes))
        # The pours and permits staff record, checked and judged for the cold clocks.
        self.cold_entries = ColdEntries(
            profile, self.cold, self._spec, {f.id: f.cold_site for f in ordered}
        )
        self.street = StreetClocks(profile)
        self.inspections = InspectionClocks(profile)
        # What staff and inspectors record for them, checked against the frontages.
        self.street_entries = StreetEntries(self.street, self.cold, self._spec)
        self.inspection_entries = InspectionEntries(self.inspections, self._spec)
        # Applied by the live runner before ``observe`` (saved with the state).
        self.gate = ReadingGate()
        # The last reading's ts and event time: readings come many to a timestamp.
        self._last_time: tuple[int, datetime] | None = None

    # The clearing clocks' state, as the engine has always shown it.

    @property
    def params(self) -> DetectionParams:
        """The snowfall detection and decision parameters, one set for every clock."""
        return self._params

    @params.setter
    def params(self, params: DetectionParams) -> None:
        self._params = params
        self.clearing.retune(params)

    @property
    def clocks(self) -> dict[str, ClearingClock]:
        """Each frontage's § 370-10 A clock, by frontage id."""
        return self.clearing.clocks

    @property
    def detectors(self) -> dict[str, SnowfallDetector]:
        """Each weather pole's snowfall detector."""
        return self.clearing.detectors

    @property
    def surface_temps(self) -> dict[str, list[SurfaceTemp]]:
        """Each weather pole's recent pavement temperatures."""
        return self.clearing.surface_temps

    @property
    def progress(self) -> dict[str, datetime]:
        """Each pole's latest event time processed (its evidence is in up to there)."""
        return self.clearing.progress

    @property
    def heard(self) -> dict[str, datetime]:
        """When (engine time) each pole was last heard or known queued."""
        return self.clearing.heard

    @property
    def _awaiting(self) -> dict[str, datetime]:
        return self.clearing.awaiting

    @property
    def devices(self) -> list[str]:
        """The poles whose readings tell the clearing clocks (the runner's ``behind``)."""
        return sorted(self.clearing.by_device)

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
        only keeps the measurement and the cover (what ``clearing.camera`` would do for
        it); every other reading goes through ``clearing.camera``/``_weather`` as one by one."""
        events: list[Event] = []
        clearing = self.clearing
        clocks = clearing.clocks
        detectors = clearing.detectors
        pole_of = clearing.weather_device
        live = self.enforcement.watching
        progress, heard = clearing.progress, clearing.heard
        rise, quiet = self.params.camera_cover_rise, self.params.quiet_period
        # Each clock past its deadline and undecided, with the first instant it can be
        # decided (``clearing.track``): before that ``due`` has nothing to do.
        awaiting = clearing.awaiting
        cold = self.cold
        probes = cold.probes
        last = self._last_time
        last_ts: int | None = None
        at: datetime | None = None
        if last is not None:
            last_ts, at = last
        # The device, instant and engine time ``clearing.heard_from`` last ran for: a pole's
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
                # ``clearing.heard_from``
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
                            Measurement(
                                at, device, fields["seq"], fields["cleared_width_mm"], cover,
                                fields.get("ice_suspected", False), fields.get("surface_state"),
                                fields.get("surface_temp_c"), fields.get("width_uncertainty_mm"),
                            )
                        )  # fmt: skip
                        if len(measurements) > KEPT and clock.state not in PENDING:
                            del measurements[:-KEPT]
                        detector.covers[frontage] = (at, cover)
                    else:
                        events += clearing.camera(fields, device, at, self.now)
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
                        events += clearing.apply(device, changes)
                    if now is not None and awaiting and now >= clearing.first_awaiting():
                        events += clearing.pole_due(device, now)
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
        self.clearing.heard_from(device, at, self.now)
        kind = _kind(reading)
        if kind == "weather":
            return self._weather(reading, fields, device, at)
        if kind == "snow":
            return self.clearing.camera(fields, device, at, self.now)
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
            events += self.cold_entries.named(self.cold.observe_weather(model, at, site, air))
        clearing = self.clearing
        if get("surface_temp_c") is not None and device in clearing.by_device:
            clearing.keep_surface_temp(_weather_model(reading, fields))
        detector = clearing.detectors.get(device)
        if detector is None:
            return events
        changes = detector.observe_weather(
            at, device, fields["seq"], get("snow_depth_mm"), get("precip_mm"), air
        )
        if changes:
            events += clearing.apply(device, changes)
        now = self.now
        if now is not None and clearing.awaiting and now >= clearing.first_awaiting():
            events += clearing.pole_due(device, now)
        return events


    def act(self, action: Action) -> list[Event]:
        """Apply what a person recorded (hazard confirmed, notice delivered, bill paid, …).

        ``action`` is already valid in itself (``actions.parse_action``); what needs
        the engine's state is checked here: a known frontage, site or case, a step in
        order. A refused action raises ``KeyError`` or ``ValueError`` and changes nothing.
        Each kind goes to its clock by ``HANDLERS``.
        """
        handler = HANDLERS.get(type(action))
        if handler is None:
            raise KeyError(f"no clock takes an action of kind {action.kind!r}")
        return handler(self, action)

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
        clearing = self.clearing
        heard = clearing.heard
        for device in behind:
            if device in clearing.by_device:
                heard[device] = max(heard.get(device, to), to)
        # Snowfall detectors move only on their own pole's readings (observe):
        # a pole still buffering through an outage must not have its storm
        # declared over by the server's clock.
        events = clearing.advance(to)
        events += self.enforcement.advance(to)
        events += self.cold_entries.advance(to)
        events += self.street.advance(to)
        events += self.inspections.advance(to)
        return events

    def feed(self, readings: Iterable[AnyReading]) -> list[Event]:
        """Replay: observe each reading and advance to its event time."""
        events: list[Event] = []
        for reading in readings:
            events += self.step(reading)
        return events

    def next_due(self) -> datetime | None:
        """The next instant at which ``advance`` would decide something (for the scheduler)."""
        due = [
            d
            for d in (
                self.clearing.next_due(),
                self.enforcement.next_due(),
                self.cold.next_due(),
                self.street.next_due(),
                self.inspections.next_due(),
            )
            if d is not None
        ]
        return min(due, default=None)

    def evidence_watch(self) -> datetime | None:
        """The earliest deadline still waiting for its pole's evidence, or None.

        ``next_due`` can move earlier without an event: once a reading brings the
        evidence in, the decision is due ``decision_grace`` after the deadline
        instead of after the wait. A caller that advances only when ``next_due``
        comes (the season replay) asks again for readings from this instant on.
        """
        return self.clearing.evidence_watch()

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
        self.clearing.load(
            state.detectors, state.clocks, state.surface_temps, state.progress, state.heard
        )
        self.enforcement.load({k: c for k, c in state.cases.items() if c.frontage in self.clocks})
        if state.cold is not None:
            self.cold.load(state.cold)
        if state.street is not None:
            self.street.load(state.street)
        self.gate.state = state.gate or GateState()
        if state.inspections is not None:
            self.inspections.load(state.inspections)

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

    # -- cold weather: pours and permits staff record (``cold_entries``) ---------------

    @handles(RecordPour)
    def _record_pour(self, action: RecordPour) -> list[Event]:
        return self.cold_entries.record_pour(action)

    @handles(RecordPermit)
    def _record_permit(self, action: RecordPermit) -> list[Event]:
        return self.cold_entries.record_permit(action, self.now)

    # -- person actions, by kind (``HANDLERS``) ------------------------------------

    # § 370-10 A (``clearing``)

    @handles(RecordTreated)
    def _record_treated(self, action: RecordTreated) -> list[Event]:
        return self.clearing.record_treated(action)

    @handles(RecordIce)
    def _record_ice(self, action: RecordIce) -> list[Event]:
        return self.clearing.record_ice(action)

    @handles(DecideReview)
    def _decide_review(self, action: DecideReview) -> list[Event]:
        return self.clearing.decide_review(action)

    # § 370-10 B–G (``enforcement``)

    @handles(*get_args(EnforcementAction))
    def _case_step(self, action: EnforcementAction) -> list[Event]:
        if action.kind == "abatement_done" and action.target not in self.enforcement.cases:
            # An abatement the § 370-8 or an inspector-entered rule's clock ordered:
            # its bill's case, on its section's terms, to the tax roll (G, § 370-8 F).
            ordered = ordered_abatement(action.target, self.street, self.inspections)
            if ordered is not None:
                frontage, rule, at = ordered
                section = kind_of(action.target, rule)
                self.enforcement.open_billing(action.target, frontage, section, at)
        return self.enforcement.act(action)

    # -- obstructions (§ 370-8), street sweeping (§ 144-17), street privilege (§ 370-9):
    # ``street_entries`` --

    @handles(RecordMaterialsAuthorization)
    def _record_authorization(self, action: RecordMaterialsAuthorization) -> list[Event]:
        return self.street_entries.record_authorization(action)

    @handles(StreetPrivilegeInspected)
    def _privilege_inspected(self, action: StreetPrivilegeInspected) -> list[Event]:
        return self.street_entries.privilege_inspected(action)

    @handles(ObstructionNoticeDelivered)
    def _obstruction_notice_delivered(self, action: ObstructionNoticeDelivered) -> list[Event]:
        return self.street_entries.notice_delivered(action)

    @handles(ObstructionRemoved)
    def _obstruction_removed(self, action: ObstructionRemoved) -> list[Event]:
        return self.street_entries.removed(action)

    @handles(SweepingDone)
    def _sweeping_done(self, action: SweepingDone) -> list[Event]:
        return self.street_entries.swept(action)

    @handles(RecordObstruction)
    def _record_obstruction(self, action: RecordObstruction) -> list[Event]:
        return self.street_entries.record_obstruction(action)

    @handles(RecordSweepingIncident)
    def _record_sweeping(self, action: RecordSweepingIncident) -> list[Event]:
        return self.street_entries.record_sweeping(action)

    @handles(RecordStreetPrivilege)
    def _record_privilege(self, action: RecordStreetPrivilege) -> list[Event]:
        return self.street_entries.record_privilege(action)

    # -- the inspector-entered rules (§ 370-10 C, § 370-11 C, § 370-14, §§ 144-11,
    # 144-12 B, C: ``inspection_entries``)

    @handles(RecordInspectionFinding)
    def _record_finding(self, action: RecordInspectionFinding) -> list[Event]:
        return self.inspection_entries.record_finding(action)

    @handles(RecordDemolitionCompleted, RecordExcavationOpened)
    def _record_work(
        self, action: RecordDemolitionCompleted | RecordExcavationOpened
    ) -> list[Event]:
        return self.inspection_entries.record_work(action)

    @handles(InspectionNoticeDelivered)
    def _inspection_notice_delivered(self, action: InspectionNoticeDelivered) -> list[Event]:
        return self.inspection_entries.notice_delivered(action)

    @handles(InspectionCorrected)
    def _inspection_corrected(self, action: InspectionCorrected) -> list[Event]:
        return self.inspection_entries.corrected(action)
