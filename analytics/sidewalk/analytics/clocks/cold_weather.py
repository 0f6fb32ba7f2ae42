"""Cold weather: § 370-5 (9) pours and keep-off, § 370-7G street concrete, § 144-13 sump window.

Pure and event-time. ``pour_window`` and ``keep_off_until`` answer one
question each from a record and readings; ``ColdWeatherClocks`` is the engine
piece in the style of ``engine.ClockEngine``: ``observe(reading)`` takes the
ground probes' and air sensors' readings, ``record_pour``/``record_permit``
take staff-entered records, ``advance(to)`` moves event time, and each returns
the transitions it made. Every transition records the event time of what
caused it, so a replay gives what the live run gave.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Literal

from sidewalk.analytics.clocks.events import Cause, Transition
from sidewalk.analytics.clocks.permits import (
    Excavation,
    Finding,
    StreetOpeningPermit,
    done_at,
    permit_expiry,
    work_check,
    work_deadlines,
)
from sidewalk.analytics.clocks.states import KeepOffState, PermitState, SubgradeState
from sidewalk.core.calendar import Deadline, plus_elapsed
from sidewalk.core.clock import require_aware
from sidewalk.core.contract import AnyReading, WeatherReading
from sidewalk.core.profile import DateWindowRule, Profile, Rule
from sidewalk.core.units import c_to_f

FROZEN_SUBGRADE = "frozen_subgrade"
KEEP_OFF = "keep_off"
OPENING_PERMIT = "opening_permit"

NO_TEMPERATURE = "no air temperature measured since the pour: cold weather assumed"

PourKind = Literal["sidewalk", "street"]
# A pour's keep-off clock is running (its deadline is due) in these states.
KEEPING_OFF = frozenset(
    {KeepOffState.KEEP_OFF_NORMAL, KeepOffState.KEEP_OFF_COLD, KeepOffState.PROTECTED}
)
PourStatus = Literal["allowed", "prohibited", "unknown"]


@dataclass(frozen=True)
class Pour:
    """Concrete placed, as staff record it; ``site`` names the pole whose sensors cover it.

    ``frontage`` is the frontage whose case records carry the pour's clock, if staff named one.
    """

    id: str
    kind: PourKind
    at: datetime
    location: str
    site: str | None = None
    frontage: str | None = None


@dataclass(frozen=True)
class ForecastPoint:
    """One forecast air temperature (°F, as forecasts for the village are published)."""

    at: datetime
    temp_f: float


@dataclass(frozen=True)
class PourDecision:
    """Whether § 370-5 (9) lets concrete be poured at ``pour_at``, and every reason why not."""

    pour_at: datetime
    status: PourStatus
    reasons: tuple[Finding, ...]

    @property
    def unconfirmed(self) -> bool:
        return any(r.unconfirmed for r in self.reasons)


@dataclass(frozen=True)
class WindowStatus:
    """A yearly date window on one local date: active or not, and the occurrence it is in."""

    rule: str
    day: date
    active: bool
    first: date | None
    last: date | None
    citation: str | None
    unconfirmed: bool


def window_status(rule_name: str, rule: DateWindowRule, day: date) -> WindowStatus:
    """Where ``day`` falls in a yearly window (both ends included)."""
    occurrence = rule.window.occurrence(day)
    first, last = occurrence if occurrence else (None, None)
    return WindowStatus(
        rule_name, day, occurrence is not None, first, last, rule.citation, rule.unconfirmed
    )


def sump_discharge_window(day: date, profile: Profile) -> WindowStatus:
    """§ 144-13: sump discharge must go to the back yard on this date (Nov 15 – Apr 15)."""
    rule = profile.cold_weather.sump_discharge_window
    return window_status("cold_weather.sump_discharge_window", rule, day)


def sump_discharge_window_active(day: date, profile: Profile) -> bool:
    """§ 144-13: whether ``day`` is inside the back-yard discharge window."""
    return sump_discharge_window(day, profile).active


def subgrade_frozen(ground_temp_c: float, profile: Profile) -> bool:
    """§ 370-5 (9) "frozen subgrade": a probe at or below the profile's threshold (unconfirmed)."""
    return ground_temp_c <= profile.cold_weather.frozen_subgrade_at_or_below.deg_c


def thaw_above_c(profile: Profile) -> float:
    """The probe temperature (°C) a frozen subgrade must exceed to count as thawing.

    The deadband is a temperature difference: 1 °F of difference is 5/9 °C.
    """
    rules = profile.cold_weather
    band = rules.frozen_subgrade_deadband
    width = float(band.value) * (1.0 if band.unit == "degC" else 5 / 9)
    return rules.frozen_subgrade_at_or_below.deg_c + width


def next_subgrade_state(
    state: str, thawing_since: datetime | None, temp_c: float, at: datetime, profile: Profile
) -> tuple[SubgradeState, datetime | None]:
    """The debounced frozen/thawed reading after one probe reading (pure).

    Freezing counts at once (at or below the threshold: a pour upon frozen
    subgrade is prohibited, so the safe reading wins). Thawing needs every
    reading above threshold + deadband for the minimum dwell; a reading back
    inside the band restarts the dwell. Returns the state and, while a thaw is
    pending, when the run of warm readings began.
    """
    if subgrade_frozen(temp_c, profile):
        return SubgradeState.FROZEN, None
    if state != SubgradeState.FROZEN:
        return SubgradeState.THAWED, None
    if temp_c <= thaw_above_c(profile):
        return SubgradeState.FROZEN, None
    since = thawing_since or at
    if at - since >= profile.cold_weather.frozen_subgrade_min_dwell.duration:
        return SubgradeState.THAWED, None
    return SubgradeState.FROZEN, since


def pour_window(
    pour_at: datetime,
    forecast: Sequence[ForecastPoint],
    subgrade_temp_c: float | None,
    profile: Profile,
    *,
    subgrade_is_frozen: bool | None = None,
) -> PourDecision:
    """§ 370-5 (9): may concrete be poured at ``pour_at``?

    Prohibited when any forecast temperature in the 72 hours from the pour is
    below 35 °F (35 °F itself is allowed: the text says "below"), or when the
    subgrade probe reads frozen. Unknown when the forecast does not span the
    whole 72 hours or no subgrade temperature is known. ``subgrade_is_frozen``, if given,
    is the probes' debounced reading (``next_subgrade_state``); without it the
    temperature is compared with the threshold.
    """
    require_aware(pour_at)
    rules = profile.cold_weather
    horizon = rules.pour_forecast_window
    minimum = rules.pour_min_temp
    frozen = rules.frozen_subgrade_at_or_below
    end = plus_elapsed(pour_at, horizon.duration)
    prohibited: list[Finding] = []
    unknown: list[Finding] = []
    inside = [p for p in forecast if pour_at <= p.at <= end]
    covered = any(p.at <= pour_at for p in forecast) and any(p.at >= end for p in forecast)
    if not covered:
        unknown.append(
            Finding.of(
                "cold_weather.pour_forecast_window",
                "unknown",
                f"the forecast does not span {pour_at.isoformat()} to {end.isoformat()}",
                pour_at,
                horizon,
            )
        )
    cold = [p for p in inside if p.temp_f < minimum.deg_f]
    if cold:
        low = min(cold, key=lambda p: p.temp_f)
        prohibited.append(
            Finding.of(
                "cold_weather.pour_min_temp",
                "violation",
                f"forecast {low.temp_f:g} °F at {low.at.isoformat()}, below {minimum.deg_f:g} °F "
                f"within {horizon.describe()} of the pour",
                low.at,
                minimum,
                horizon,
            )
        )
    if subgrade_temp_c is None:
        unknown.append(
            Finding.of(
                "cold_weather.frozen_subgrade_at_or_below",
                "unknown",
                "no subgrade temperature from a ground probe",
                pour_at,
                frozen,
            )
        )
    elif (
        subgrade_is_frozen
        if subgrade_is_frozen is not None
        else subgrade_frozen(subgrade_temp_c, profile)
    ):
        message = f"subgrade {subgrade_temp_c:g} °C is frozen (at or below {frozen.deg_c:g} °C)"
        sources: tuple[Rule, ...] = (frozen,)
        if not subgrade_frozen(subgrade_temp_c, profile):
            # Above the threshold but inside the hysteresis: cite the band and dwell too.
            message = (
                f"subgrade {subgrade_temp_c:g} °C still counts as frozen: not yet above "
                f"{thaw_above_c(profile):g} °C for {rules.frozen_subgrade_min_dwell.describe()}"
            )
            sources += (rules.frozen_subgrade_deadband, rules.frozen_subgrade_min_dwell)
        prohibited.append(
            Finding.of(
                "cold_weather.frozen_subgrade_at_or_below", "violation", message, pour_at, *sources
            )
        )
    status: PourStatus = "prohibited" if prohibited else "unknown" if unknown else "allowed"
    return PourDecision(pour_at, status, tuple(prohibited + unknown))


def keep_off_until(pour: Pour, lowest_temp_f: float | None, profile: Profile) -> Deadline:
    """How long traffic stays off a pour.

    A walk (§ 370-5 (9)): 48 hours at normal temperatures, 96 hours in cold
    weather (below 50 °F; 50 °F itself is normal). ``lowest_temp_f`` is the
    lowest air temperature measured since the pour; with none measured the
    cold-weather period applies, as the safe reading. Street concrete
    (§ 370-7G): three days. All are elapsed time from the pour.
    """
    if pour.kind == "street":
        rule = profile.street_openings.street_concrete_protection
        return Deadline.of(
            "street_openings.street_concrete_protection",
            pour.at,
            plus_elapsed(pour.at, rule.duration),
            rule,
        )
    rules = profile.cold_weather
    threshold = rules.cold_weather_below
    if lowest_temp_f is None:
        notes: tuple[str, ...] = (NO_TEMPERATURE,)
        cold = True
    else:
        notes = ()
        cold = lowest_temp_f < threshold.deg_f
    name, rule = (
        ("cold_weather.keep_off_cold", rules.keep_off_cold)
        if cold
        else ("cold_weather.keep_off_normal", rules.keep_off_normal)
    )
    return Deadline.of(
        name, pour.at, plus_elapsed(pour.at, rule.duration), rule, threshold, notes=notes
    )


# -- the engine piece ------------------------------------------------------------


def _reported_key(finding: Finding) -> str:
    """A finding's identity among one permit's: its rule and the event time it is about."""
    return f"{finding.rule}@{finding.at.isoformat()}"


@dataclass
class _Probe:
    """One ground-probe reading and the debounced state after it."""

    at: datetime
    temp_c: float
    state: SubgradeState


@dataclass
class _Subgrade:
    site: str
    state: SubgradeState = SubgradeState.UNKNOWN
    ground_temp_c: float | None = None  # the latest probe reading
    # While frozen: when the current run of readings above the deadband began.
    thawing_since: datetime | None = None
    # The readings of the last forecast window (72 h), so a pour entered late is
    # judged on the ground as it was at the pour (event time); older ones drop.
    recent: list[_Probe] = field(default_factory=list)
    # The air temperatures (°F) of the same window, by event time: a pour entered
    # after the fact is judged on the air at and after it (§ 370-5 (9)'s cold weather).
    air: list[tuple[datetime, float]] = field(default_factory=list)

    def air_since(self, at: datetime, window: timedelta) -> list[float]:
        """The air as of ``at`` (the last reading at or before it, if within ``window``
        before it) and every reading since."""
        i = bisect.bisect_right(self.air, at, key=lambda r: r[0])
        before = [t for when, t in self.air[max(0, i - 1) : i] if when >= at - window]
        return before + [t for _, t in self.air[i:]]

    def as_of(self, at: datetime) -> _Probe | None:
        """The latest reading at or before ``at`` that is still kept."""
        i = bisect.bisect_right(self.recent, at, key=lambda p: p.at)
        return self.recent[i - 1] if i else None


@dataclass
class _KeepOff:
    pour: Pour
    deadline: Deadline
    state: KeepOffState
    lowest_temp_f: float | None = None
    cause: Cause | None = None


@dataclass
class _Permit:
    permit: StreetOpeningPermit
    expiry: Deadline
    state: PermitState = PermitState.VALID
    # A renewal after expiry starts a new case record (the old one closed): its suffix.
    record: str = ""
    # The opening and its work's dates as entered (§ 370-7 G, H, I), and the findings
    # already made about them (rule and event time), so each is made once.
    opening: Excavation | None = None
    reported: list[str] = field(default_factory=list)


@dataclass
class ColdState:
    """What ``ColdWeatherClocks`` must remember across a restart (its history is not kept).

    Bounded over a season of readings: probe readings older than the forecast
    window drop; pours and permits stay (a few per season, entered by staff).
    """

    now: datetime | None
    subgrade: dict[str, _Subgrade]
    keep_off: dict[str, _KeepOff]
    permits: dict[str, _Permit]


@dataclass
class ColdWeatherClocks:
    """Frozen-subgrade state per site, keep-off clocks per pour, expiry per opening permit.

    ``probes`` maps a device id to the site whose ground (and air) it reads.
    Transitions use the engine's ``Transition`` with the site, pour or permit
    id in its ``frontage`` field and ``clock`` one of ``frozen_subgrade``,
    ``keep_off``, ``opening_permit``.
    """

    profile: Profile
    probes: Mapping[str, str]
    now: datetime | None = None
    subgrade: dict[str, _Subgrade] = field(default_factory=dict)
    keep_off: dict[str, _KeepOff] = field(default_factory=dict)
    permits: dict[str, _Permit] = field(default_factory=dict)
    # The transitions of the last forecast window (72 h of event time), for inspection.
    history: list[Transition] = field(default_factory=list)
    # The profile's forecast window as a timedelta (the profile is frozen): read on
    # every advance, so converted once.
    _window: timedelta = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._window = self.profile.cold_weather.pour_forecast_window.duration
        for site in sorted(set(self.probes.values())):
            self.subgrade[site] = _Subgrade(site)

    # -- input -------------------------------------------------------------

    def observe(self, reading: AnyReading) -> list[Transition]:
        """Take one validated reading; returns the transitions it caused."""
        if not isinstance(reading, WeatherReading):
            return []
        site = self.probes.get(reading.device)
        if site is None:
            return []
        if reading.air_temp_c is not None:
            self.note_air(site, reading.event_time, reading.air_temp_c)
        return self.observe_weather(reading, reading.event_time, site, reading.air_temp_c)

    def observe_weather(
        self, reading: WeatherReading, at: datetime, site: str, air_temp_c: float | None
    ) -> list[Transition]:
        """``observe`` on a probe's weather reading, its event time, site and air
        temperature given (the engine reads each once)."""
        ground = reading.ground_temp_c
        if ground is None and (air_temp_c is None or not self.keep_off):
            return []  # nothing for a clock: no probe reading, no pour to judge the air for
        cause = Cause(kind="reading", at=at, device=reading.device, seq=reading.seq)
        out: list[Transition] = []
        if ground is not None:
            out += self._ground(self.subgrade[site], reading, cause)
        if air_temp_c is not None:
            out += self._air(site, c_to_f(air_temp_c), cause)
        return self._log(out)

    def note_air(self, site: str, at: datetime, air_temp_c: float) -> None:
        """Keep a site's air temperature for the forecast window, for pours entered late."""
        sub = self.subgrade.get(site)
        if sub is None:
            return
        if sub.air and at < sub.air[-1][0]:
            bisect.insort(sub.air, (at, c_to_f(air_temp_c)), key=lambda r: r[0])
        else:
            sub.air.append((at, c_to_f(air_temp_c)))
        # The window, and the reading just before it (the air as of its start).
        cutoff = sub.air[-1][0] - self._window
        drop = bisect.bisect_left(sub.air, cutoff, key=lambda r: r[0]) - 1
        if drop > 0:
            del sub.air[:drop]

    def subgrade_at(self, site: str | None, at: datetime) -> tuple[float | None, bool | None]:
        """The probe temperature and debounced frozen reading at ``site`` as of ``at``.

        (None, None) when no kept reading precedes ``at``: none yet, or older than
        the forecast window.
        """
        sub = self.subgrade.get(site or "")
        probe = None if sub is None else sub.as_of(at)
        if probe is None:
            return None, None
        return probe.temp_c, probe.state == SubgradeState.FROZEN

    def record_pour(self, pour: Pour, who: str | None = None) -> list[Transition]:
        """Start a pour's keep-off clock at the pour's own time (as entered by staff)."""
        require_aware(pour.at)
        cause = Cause(kind="person", at=pour.at, who=who)
        deadline = self._normal_or_street(pour)
        state = KeepOffState.PROTECTED if pour.kind == "street" else KeepOffState.KEEP_OFF_NORMAL
        clock = _KeepOff(pour, deadline, KeepOffState.IDLE)
        sub = self.subgrade.get(pour.site or "")
        air = [] if sub is None or pour.kind != "sidewalk" else sub.air_since(pour.at, self._window)
        if air:
            # The air at the pour (its last reading in the 72 hours before, the span the
            # Code looks at for a pour) and since, however late the pour is entered: cold
            # weather then calls for the cold period from the start.
            clock.lowest_temp_f = min(air)
            picked = keep_off_until(pour, clock.lowest_temp_f, self.profile)
            if picked.due > deadline.due:
                deadline, state = picked, KeepOffState.KEEP_OFF_COLD
                clock.deadline = deadline
        self.keep_off[pour.id] = clock
        # The ground as it was at the pour, however late the pour is entered.
        _temp, frozen = self.subgrade_at(pour.site, pour.at)
        detail: dict[str, object] = {
            "until": deadline.due.isoformat(),
            "rule": deadline.rule,
            "citation": deadline.citation,
            "kind": pour.kind,
            "subgrade": (
                SubgradeState.UNKNOWN
                if frozen is None
                else SubgradeState.FROZEN
                if frozen
                else SubgradeState.THAWED
            ).value,
        }
        if clock.lowest_temp_f is not None:
            detail["air_temp_f"] = clock.lowest_temp_f
        return self._log([self._move(clock, state, pour.at, cause, detail)])

    def record_permit(
        self, permit: StreetOpeningPermit, at: datetime | None = None, who: str | None = None
    ) -> list[Transition]:
        """Start a street-opening permit's validity clock, or extend it when renewed.

        ``at`` is the event time of the entry (the renewal's grant); it
        defaults to the permit's approval.
        """
        at = require_aware(at or permit.approved_at)
        expiry = permit_expiry(permit, self.profile)
        existing = self.permits.get(permit.id)
        from_state = existing.state if existing else PermitState.NONE
        record = existing.record if existing else ""
        if existing is not None and existing.state == PermitState.EXPIRED:
            # The expired permit's record closed; its renewal is a record of its own.
            record, from_state = f"renewal-{permit.renewals}", PermitState.NONE
        held = _Permit(permit, expiry, PermitState.VALID, record)
        if existing is not None:  # a renewal keeps the opening's work and what was found
            held.opening, held.reported = existing.opening, existing.reported
        self.permits[permit.id] = held
        detail: dict[str, object] = {
            "expires": expiry.due.isoformat(),
            "renewals": permit.renewals,
            "citation": expiry.citation,
            "unconfirmed": expiry.unconfirmed,
        }
        if record:
            detail["record"] = record
        transition = Transition(
            permit.id,
            OPENING_PERMIT,
            from_state,
            PermitState.VALID,
            at,
            Cause(kind="person", at=at, who=who),
            detail,
        )
        return self._log([transition])

    def record_work(self, permit_id: str, opening: Excavation) -> None:
        """The opening a recorded permit is for, with its work's dates and notices as
        entered so far (§§ 370-7 B, F, G, H, I)."""
        self.permits[permit_id].opening = opening

    def first_found(self, permit_id: str, findings: Iterable[Finding]) -> list[Finding]:
        """Those of ``findings`` about this permit not made before (each is made once)."""
        held = self.permits[permit_id]
        out: list[Finding] = []
        for finding in findings:
            key = _reported_key(finding)
            if key not in held.reported:
                held.reported.append(key)
                out.append(finding)
        return out

    def work_findings(self, at: datetime) -> list[tuple[str, Finding]]:
        """§ 370-7 G, H, I findings due by event time ``at`` not made before: a deadline
        passed with nothing on record, or work entered as done late. Each once."""
        out: list[tuple[str, Finding]] = []
        for permit_id, held in self.permits.items():
            if held.opening is None:
                continue
            found = work_check(held.opening, self.profile, at)
            out += [(permit_id, f) for f in self.first_found(permit_id, found)]
        return sorted(out, key=lambda pair: (pair[1].at, pair[0]))

    def advance(self, to: datetime) -> list[Transition]:
        """Move event time to ``to`` (never backwards); returns what came due, in time order."""
        require_aware(to)
        if self.now is not None and to <= self.now:
            return []
        self.now = to
        # Before deciding: what ends now is still here for the caller to name its records.
        self._forget_before(to)
        out: list[Transition] = []
        for clock in self.keep_off.values():
            out += self._keep_off_due(clock, to)
        for held in self.permits.values():
            if held.state == PermitState.VALID and held.expiry.passed(to):
                held.state = PermitState.EXPIRED
                detail: dict[str, object] = {
                    "citation": held.expiry.citation,
                    "cause": f"{held.expiry.rule} ended at {held.expiry.due.isoformat()}",
                }
                if held.record:
                    detail["record"] = held.record
                out.append(
                    Transition(
                        held.permit.id,
                        OPENING_PERMIT,
                        PermitState.VALID,
                        PermitState.EXPIRED,
                        held.expiry.due,
                        Cause(kind="deadline", at=held.expiry.due),
                        detail,
                    )
                )
        return self._log(sorted(out, key=lambda t: (t.at, t.frontage, t.clock)))

    def feed(self, readings: Iterable[AnyReading]) -> list[Transition]:
        """Replay: observe each reading and advance to its event time."""
        out: list[Transition] = []
        for reading in readings:
            out += self.advance(reading.event_time)
            out += self.observe(reading)
        return out

    def next_due(self) -> datetime | None:
        """The next instant at which ``advance`` would change something (for the scheduler)."""
        due = [c.deadline.due for c in self.keep_off.values() if c.state in KEEPING_OFF]
        due += [p.expiry.due for p in self.permits.values() if p.state == PermitState.VALID]
        due += [d for p in self.permits.values() for d in self._work_due(p)]
        return min(due, default=None)

    def _work_due(self, held: _Permit) -> list[datetime]:
        """The § 370-7 G, H, I deadlines still to be judged: nothing done on record yet,
        and not yet found missed."""
        if held.opening is None:
            return []
        return [
            d.due
            for d in work_deadlines(held.opening, self.profile)
            if done_at(held.opening, d.rule, self.profile) is None
            and f"{d.rule}@{d.due.isoformat()}" not in held.reported
        ]

    def state(self) -> ColdState:
        """The clocks' state for a snapshot."""
        return ColdState(self.now, self.subgrade, self.keep_off, self.permits)

    def load(self, state: ColdState) -> None:
        """Resume from ``state()``; sites no longer probed drop, new ones start unknown."""
        self.now = state.now
        for site, sub in state.subgrade.items():
            if site in self.subgrade:
                self.subgrade[site] = sub
        self.keep_off = dict(state.keep_off)
        self.permits = dict(state.permits)

    def _forget_before(self, now: datetime) -> None:
        """Drop transitions older than the forecast window from the in-memory history.

        Pours and permits are kept: they grow with staff entries, not readings,
        and a repeated id must still be refused after its clock ended.
        """
        cutoff = now - self._window
        if self.history and self.history[0].at < cutoff:
            self.history = [t for t in self.history if t.at >= cutoff]

    def subgrade_temp_c(self, site: str | None) -> float | None:
        """The latest ground-probe temperature at ``site``, if any probe has reported."""
        sub = self.subgrade.get(site or "")
        return None if sub is None else sub.ground_temp_c

    def frozen_sites(self) -> list[str]:
        """Sites whose subgrade the probes now read as frozen."""
        return [s.site for s in self.subgrade.values() if s.state == SubgradeState.FROZEN]

    # -- internals -----------------------------------------------------------

    def _ground(self, sub: _Subgrade, reading: WeatherReading, cause: Cause) -> list[Transition]:
        assert reading.ground_temp_c is not None
        temp, at = reading.ground_temp_c, cause.at
        sub.ground_temp_c = temp
        state, sub.thawing_since = next_subgrade_state(
            sub.state, sub.thawing_since, temp, at, self.profile
        )
        bisect.insort(sub.recent, _Probe(at, temp, state), key=lambda p: p.at)
        # Keep the forecast window, and the reading just before it (the ground as of its start).
        cutoff = sub.recent[-1].at - self._window
        del sub.recent[: max(0, bisect.bisect_left(sub.recent, cutoff, key=lambda p: p.at) - 1)]
        if state == sub.state:
            return []
        rule = self.profile.cold_weather.frozen_subgrade_at_or_below
        transition = Transition(
            sub.site,
            FROZEN_SUBGRADE,
            sub.state,
            state,
            cause.at,
            cause,
            {
                "ground_temp_c": reading.ground_temp_c,
                "probe_depth_mm": reading.ground_probe_depth_mm,
                "threshold_c": rule.deg_c,
                "thaw_above_c": thaw_above_c(self.profile),
                "citation": rule.citation,
                "unconfirmed": rule.unconfirmed,
            },
        )
        sub.state = state
        return [transition]

    def _air(self, site: str, temp_f: float, cause: Cause) -> list[Transition]:
        out: list[Transition] = []
        for clock in self.keep_off.values():
            pour = clock.pour
            if pour.site != site or pour.kind != "sidewalk" or cause.at < pour.at:
                continue
            if clock.state != KeepOffState.KEEP_OFF_NORMAL or clock.deadline.passed(cause.at):
                continue
            if clock.lowest_temp_f is None or temp_f < clock.lowest_temp_f:
                clock.lowest_temp_f = temp_f
            cold = keep_off_until(pour, clock.lowest_temp_f, self.profile)
            if cold.due > clock.deadline.due:
                clock.deadline = cold
                detail: dict[str, object] = {
                    "until": cold.due.isoformat(),
                    "rule": cold.rule,
                    "citation": cold.citation,
                    "air_temp_f": temp_f,
                }
                out.append(self._move(clock, KeepOffState.KEEP_OFF_COLD, cause.at, cause, detail))
        return out

    def _keep_off_due(self, clock: _KeepOff, to: datetime) -> list[Transition]:
        if clock.state not in KEEPING_OFF:
            return []
        if not clock.deadline.passed(to):
            return []
        due = clock.deadline.due
        cause = Cause(kind="deadline", at=due)
        if clock.state == KeepOffState.KEEP_OFF_NORMAL and clock.lowest_temp_f is None:
            # No temperature measured in the whole normal period: the cold period applies.
            clock.deadline = keep_off_until(clock.pour, None, self.profile)
            detail: dict[str, object] = {
                "until": clock.deadline.due.isoformat(),
                "rule": clock.deadline.rule,
                "note": NO_TEMPERATURE,
            }
            moved = self._move(clock, KeepOffState.KEEP_OFF_COLD, due, cause, detail)
            return [moved, *self._keep_off_due(clock, to)]
        return [self._move(clock, KeepOffState.ENDED, due, cause, {"rule": clock.deadline.rule})]

    def _normal_or_street(self, pour: Pour) -> Deadline:
        # A walk with no air reading yet starts on the normal period; the first cold one
        # lengthens it (and none in the whole period calls for the cold one).
        return keep_off_until(
            pour, self.profile.cold_weather.cold_weather_below.deg_f, self.profile
        )

    @staticmethod
    def _move(
        clock: _KeepOff,
        to_state: KeepOffState,
        at: datetime,
        cause: Cause,
        detail: dict[str, object],
    ) -> Transition:
        transition = Transition(clock.pour.id, KEEP_OFF, clock.state, to_state, at, cause, detail)
        clock.state = to_state
        return transition

    def _log(self, transitions: list[Transition]) -> list[Transition]:
        self.history += transitions
        return transitions
