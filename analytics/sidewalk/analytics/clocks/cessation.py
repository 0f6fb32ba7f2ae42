"""When does "snow cease to accumulate" (§ 370-10 A)? Decided from one pole's stream.

Signals of accumulation (docs/cessation.md has the measurements behind the defaults):

* depth: the *filtered* depth (median of the readings in the last
  ``depth_median_window``, at least ``depth_min_readings`` of them) rose at
  least ``depth_rise_mm`` above a reference level. The reference is the
  filtered depth at the last signal, lowered when snow settles, melts or is
  cleared under the sensor. The median removes what an ultrasonic sensor does
  on its own: ±10 mm noise, echoes off falling flakes, short wind-drift bumps
  and missing values;
* precipitation: the gauge tipped at least ``precip_min_mm`` while the air was at
  or below ``snow_max_air_temp_c`` (warmer precipitation is rain), or, during a
  snowfall, at or below ``mixed_max_air_temp_c`` (wet snow or a changeover: it
  may still be snow, so it keeps the snowfall open);
* camera (optional, ``observe_camera``): a frontage's snow cover rose by at
  least ``camera_cover_rise`` within ``camera_window`` while the air was at or
  below ``snow_max_air_temp_c``: fresh snow covering a cleared walk.

A snowfall begins when ``onset_signals`` signals, at least one from the gauge or
camera, fall within ``onset_window``; or when that many depth signals fall
within ``depth_onset_window`` spanning at least ``depth_onset_span``. Its onset
is the first of them. One stray signal (a drift bump, a knock on the gauge)
starts nothing. It has ceased once ``quiet_period`` of event time passes
with no signal, so a lull shorter than that stays inside one storm. The
cessation time, decided in hindsight, is the later of the last gauge/camera
signal and the break where the depth stopped rising (a least-squares hinge
fit on the raw depths, outliers dropped; ``_depth_break``), which carries no
filter delay; a break less than ``break_margin`` after the last tip counts as
the same end. Later rather than earlier is the owner's side: when the gauge's
tips are too far apart to place the end to ``end_resolution`` (10 min), the end
is the latest the gauge allows, one tip spacing after the last tip. Each
cessation says how it was determined (``SnowfallChange.basis``) and the
earliest the evidence allows (``earliest``), for the notice's words.

A camera measurement reaches the detector only if the engine passes it on:
``ClockEngine.observe`` would call ``observe_camera`` on the detector of the
frontage's weather device and apply the changes, as it does for weather.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise
from operator import itemgetter
from typing import Literal

import numpy as np

from sidewalk.analytics.clocks.events import Cause
from sidewalk.core.contract import SnowMeasurement, WeatherReading


@dataclass(frozen=True)
class DetectionParams:
    """Sensor-fusion parameters (engineering choices, not ordinance values)."""

    depth_rise_mm: float = 8.0
    precip_min_mm: float = 0.2
    snow_max_air_temp_c: float = 1.5
    quiet_period: timedelta = timedelta(hours=2, minutes=30)
    depth_median_window: timedelta = timedelta(minutes=30)
    depth_min_readings: int = 3
    # Hindsight: the depth's end is fitted over this much record before the
    # quiet period, after dropping readings this far from their centred median.
    fit_span: timedelta = timedelta(hours=3)
    hindsight_window: timedelta = timedelta(hours=1)
    outlier_mm: float = 15.0
    # A break this close after the last tip is the same end seen through noise
    # (about the fit's resolution); the gauge, a direct measure, then decides.
    break_margin: timedelta = timedelta(minutes=15)
    # A tipping bucket tips once per ``precip_min_mm``: snow that goes on after
    # the last tip at the storm's rate leaves less than one tip in the bucket,
    # so the last tip places the end only to the storm's spacing of tips (its
    # median; spacings over ``onset_window`` are lulls, not one snowfall by the
    # onset rule, and are left out). When that spacing is wider than
    # ``end_resolution`` the end is taken at the latest the gauge allows:
    # ``tip_interval_share`` of that spacing after the last tip (less than
    # one: the heated funnel's melt delay puts the last tip after the snow it
    # holds). None: the last tip always decides. docs/cessation.md has the
    # measurements (the share was chosen on one station-winter only).
    end_resolution: timedelta | None = timedelta(minutes=10)
    tip_interval_share: float = 1.0
    # The spacing is the wider of the storm's median and the median of its last
    # this many spacings: a storm that tapers off tips ever wider apart, and its
    # rate at the end, not over the storm, says how long snow may go on unseen
    # after the last tip (0: the storm's median alone).
    recent_spacings: int = 3
    # Precipitation with the air between ``snow_max_air_temp_c`` and this,
    # during a snowfall, may still be snow (wet snow, a changeover): it keeps
    # the snowfall open and the end after it. It never starts one.
    mixed_max_air_temp_c: float = 3.0
    onset_signals: int = 2
    onset_window: timedelta = timedelta(hours=1)
    # Depth alone starts a snowfall only if its signals span this long (a gust
    # of drifting snow under the sensor passes sooner), within a longer window
    # than the gauge's: light snow takes hours to show against sensor noise.
    depth_onset_span: timedelta = timedelta(minutes=30)
    depth_onset_window: timedelta = timedelta(hours=3)
    camera_cover_rise: float = 0.3
    camera_window: timedelta = timedelta(hours=2)
    # A camera measurement older than this at the deadline is not evidence.
    evidence_max_age: timedelta = timedelta(hours=2)
    # Decide a deadline only after this much more event time, so readings
    # buffered on a pole during a short outage still count.
    decision_grace: timedelta = timedelta(minutes=10)
    # If the frontage's camera has sent nothing from the deadline on (a pole
    # still buffering through an outage), wait this long for it before
    # deciding on what has arrived.
    evidence_wait: timedelta = timedelta(hours=2)

    def __post_init__(self) -> None:
        if self.depth_rise_mm <= 0 or self.precip_min_mm <= 0 or self.outlier_mm <= 0:
            raise ValueError("thresholds must be positive")
        if self.evidence_wait < self.decision_grace:
            raise ValueError("evidence_wait must be at least decision_grace")
        if self.quiet_period <= timedelta(0) or self.decision_grace < timedelta(0):
            raise ValueError("quiet_period must be positive and decision_grace not negative")
        if self.depth_min_readings < 1 or self.onset_signals < 1:
            raise ValueError("depth_min_readings and onset_signals must be at least 1")
        if self.recent_spacings < 0:
            raise ValueError("recent_spacings is a count of tip spacings, at least 0")
        if not 0 <= self.tip_interval_share <= 2:
            raise ValueError("tip_interval_share is a share of the tip spacing, in [0, 2]")
        if self.mixed_max_air_temp_c < self.snow_max_air_temp_c:
            raise ValueError("mixed_max_air_temp_c must be at least snow_max_air_temp_c")
        if not 0 < self.camera_cover_rise <= 1:
            raise ValueError("camera_cover_rise is a fraction of the walk, in (0, 1]")


# How a cessation time was determined (``SnowfallChange.basis``), for the notice's words:
# * ``gauge``: the gauge's last tip, the tips close enough to place it (``end_resolution``);
# * ``gauge_latest``: the tips too far apart to place it, so the latest the gauge allows;
# * ``depth``: where the measured snow depth stopped rising (a fit in hindsight);
# * ``camera``: the last camera frame that showed fresh snow on a walk;
# * ``last_signal``: the last reading that showed snow (no fit, no gauge).
Basis = Literal["gauge", "gauge_latest", "depth", "camera", "last_signal"]


@dataclass(frozen=True)
class SnowfallChange:
    kind: Literal["onset", "cessation"]
    at: datetime
    cause: Cause
    peak_depth_mm: float | None = None
    # Cessations only: how ``at`` was determined, and the earliest the evidence allows
    # (``at`` is the latest, the owner's side, when they differ).
    basis: Basis | None = None
    earliest: datetime | None = None


@dataclass(slots=True)
class SnowfallDetector:
    """Onset and cessation of snowfall at one weather device. Event-time, deterministic."""

    device: str
    params: DetectionParams = field(default_factory=DetectionParams)
    accumulating: bool = False
    last_ts: datetime | None = None
    ref_depth_mm: float | None = None
    onset_at: datetime | None = None
    last_signal_at: datetime | None = None
    last_signal_cause: Cause | None = None
    peak_depth_mm: float | None = None
    last_air_temp_c: float | None = None
    # Raw depths inside the median window.
    recent: deque[tuple[datetime, float]] = field(default_factory=deque)
    # Raw (ts, depth) since onset: the cessation estimate looks back over it.
    depths: list[tuple[datetime, float]] = field(default_factory=list)
    # Signals not yet enough for an onset, each marked True if not from depth.
    pending: list[tuple[Cause, bool]] = field(default_factory=list)
    last_other_cause: Cause | None = None
    # Gauge tips (time) of the snowfall under way, for the tip-interval end.
    tips: list[datetime] = field(default_factory=list)
    covers: dict[str, tuple[datetime, float]] = field(default_factory=dict)
    # Readings skipped as out of order (counted, shown by the runner's metrics).
    late_readings: int = 0
    late_camera: int = 0

    def observe(self, reading: WeatherReading) -> list[SnowfallChange]:
        """Take one reading; returns the onset/cessation it reveals, in order."""
        return self.observe_weather(
            reading.event_time, reading.device, reading.seq,
            reading.snow_depth_mm, reading.precip_mm, reading.air_temp_c,
        )  # fmt: skip

    def observe_weather(  # noqa: PLR0917 (a reading's fields, read once by the engine)
        self,
        at: datetime,
        device: str,
        seq: int,
        depth_mm: float | None,
        precip_mm: float | None,
        air_temp_c: float | None,
    ) -> list[SnowfallChange]:
        """``observe`` on a weather reading's fields (the engine reads each once)."""
        last_ts = self.last_ts
        if last_ts is not None and at <= last_ts:
            # Out of order or repeated: a trend cannot move backwards.
            self.late_readings += 1
            return []
        changes = self.advance(at) if self.accumulating else []
        self.last_ts = at
        if air_temp_c is not None:
            self.last_air_temp_c = air_temp_c
        # Called for every weather reading: ``_depth_signal(_filter(...))`` and
        # ``_precip_signal`` written out here (their calls cost more than their work).
        p = self.params
        recent = self.recent
        if depth_mm is not None:
            recent.append((at, depth_mm))
        start = at - p.depth_median_window
        while recent and recent[0][0] < start:
            recent.popleft()
        depth_signal = False
        if depth_mm is not None and len(recent) >= p.depth_min_readings:
            # ``_median``, written out (a call per reading costs more than its work).
            values = sorted(map(_depth_of, recent))
            half = len(values) // 2
            depth = values[half] if len(values) % 2 else (values[half - 1] + values[half]) / 2
            ref = self.ref_depth_mm
            if ref is None:
                self.ref_depth_mm = depth
            elif depth >= ref + p.depth_rise_mm:
                self.ref_depth_mm = depth
                depth_signal = True
            elif depth <= ref - p.depth_rise_mm:
                self.ref_depth_mm = depth  # settling, melt or clearing under the sensor
        gauge_signal = (
            precip_mm is not None
            and precip_mm >= p.precip_min_mm
            and (
                air_temp_c is None
                or air_temp_c <= p.snow_max_air_temp_c
                or (self.accumulating and air_temp_c <= p.mixed_max_air_temp_c)
            )
        )
        if depth_mm is not None and self.accumulating:
            self.depths.append((at, depth_mm))
        if gauge_signal:
            if not self.accumulating:
                keep = at - max(self.params.onset_window, self.params.depth_onset_window)
                self.tips = [t for t in self.tips if t >= keep]
            self.tips.append(at)
        if depth_signal or gauge_signal:
            # Built only for a signal: most readings are none (a dry spell, a steady depth).
            cause = Cause(kind="reading", at=at, device=device, seq=seq)
            changes += self._signal(cause, gauge=gauge_signal)
        return changes

    def observe_camera(self, measurement: SnowMeasurement) -> list[SnowfallChange]:
        """Take one camera measurement of a frontage this pole's weather covers.

        Fresh cover on a walk that was clearer within ``camera_window`` is a
        signal of accumulation when the air is cold enough for snow.
        """
        return self.observe_cover(
            measurement.event_time, measurement.frontage, measurement.device,
            measurement.seq, measurement.snow_cover_fraction,
        )  # fmt: skip

    def observe_cover(
        self, at: datetime, frontage: str, device: str, seq: int, cover: float
    ) -> list[SnowfallChange]:
        """``observe_camera`` on a measurement's fields (the engine reads each once)."""
        changes = self.advance(at) if self.accumulating else []
        before = self.covers.get(frontage)
        if before is not None and at <= before[0]:
            self.late_camera += 1
            return changes
        self.covers[frontage] = (at, cover)
        if before is None or at - before[0] > self.params.camera_window:
            return changes
        cold = (
            self.last_air_temp_c is not None
            and self.last_air_temp_c <= self.params.snow_max_air_temp_c
        )
        if cold and cover - before[1] >= self.params.camera_cover_rise:
            cause = Cause(kind="frame", at=at, device=device, seq=seq)
            changes += self._signal(cause, gauge=True)
        return changes

    def advance(self, to: datetime) -> list[SnowfallChange]:
        """Declare cessation once the quiet period has passed by ``to``."""
        if not self.accumulating or self.last_signal_at is None:
            return []
        if to < self.last_signal_at + self.params.quiet_period:
            return []
        ceased_at, cause, basis, earliest = self._cessation_estimate()
        change = SnowfallChange(
            "cessation", ceased_at, cause, self.peak_depth_mm, basis=basis, earliest=earliest
        )
        self.accumulating = False
        self.depths = []
        self.pending = []
        self.last_other_cause = None
        self.tips = []
        return [change]

    def _signal(self, cause: Cause, gauge: bool) -> list[SnowfallChange]:
        """Record a signal; ``gauge`` marks one not from depth (precipitation or camera)."""
        if self.last_signal_at is not None and cause.at < self.last_signal_at:
            return []  # a late camera frame cannot pull a storm back
        self.last_signal_at = cause.at
        self.last_signal_cause = cause
        if self.accumulating:
            if gauge:
                self.last_other_cause = cause
            return []
        keep_from = cause.at - max(self.params.onset_window, self.params.depth_onset_window)
        self.pending = [p for p in self.pending if p[0].at >= keep_from] + [(cause, gauge)]
        recent = [p for p in self.pending if p[0].at >= cause.at - self.params.onset_window]
        depth_only = [c for c, g in self.pending if not g]
        if len(recent) >= self.params.onset_signals and any(g for _, g in recent):
            first = recent[0][0]
        elif (
            len(depth_only) >= self.params.onset_signals
            and cause.at - depth_only[0].at >= self.params.depth_onset_span
        ):
            first = depth_only[0]
        else:
            return []
        self.last_other_cause = next((c for c, g in reversed(self.pending) if g), None)
        self.pending = []
        self.accumulating = True
        self.onset_at = first.at
        # The window before the onset is part of the depth record the estimate reads.
        self.depths = list(self.recent)
        return [SnowfallChange("onset", first.at, first)]

    def _cessation_estimate(self) -> tuple[datetime, Cause, Basis, datetime]:
        """The later of the last gauge/camera signal and the end of the depth's rise:
        (the end, its cause, how it was determined, the earliest the evidence allows).

        Decided in hindsight, a quiet period later, so the depth's end is a
        fitted break (``_depth_break``), free of any filter delay. Without a
        gauge or camera signal, the break alone decides. A last tip that
        cannot place the end to ``end_resolution`` gives the latest the gauge
        allows (``_tip_interval``).
        """
        assert self.last_signal_at is not None
        assert self.last_signal_cause is not None
        ceased_at, cause = self.last_signal_at, self.last_signal_cause
        basis: Basis = "last_signal"
        gauge_end = None
        if self.last_other_cause is not None:
            ceased_at, cause = self.last_other_cause.at, self.last_other_cause
            basis = "camera" if cause.kind == "frame" else "gauge"
            extra = self._tip_interval(ceased_at)
            if extra > timedelta(0):
                gauge_end = ceased_at + extra
        fitted = self._depth_break()
        if fitted is None:
            if gauge_end is not None:
                return gauge_end, cause, "gauge_latest", ceased_at
            return ceased_at, cause, basis, ceased_at
        broke_at, self.peak_depth_mm = fitted
        broke_at = max(broke_at, self.onset_at or broke_at)
        if self.last_other_cause is None or broke_at > ceased_at + self.params.break_margin:
            if gauge_end is not None and gauge_end > broke_at:
                return gauge_end, cause, "gauge_latest", broke_at
            cause = Cause(kind="reading", at=broke_at, device=self.device)
            return broke_at, cause, "depth", broke_at
        if gauge_end is not None:
            return gauge_end, cause, "gauge_latest", ceased_at
        return ceased_at, cause, basis, ceased_at

    def _tip_interval(self, last_at: datetime) -> timedelta:
        """How much later than the deciding signal at ``last_at`` the snow may have
        gone on unseen: a share of one tip interval when that signal is the gauge's
        last tip and the tips are too far apart to place the end.

        The bucket holds up to one tip's worth when the snow stops, so snow at
        the storm's rate can go on for up to one spacing of tips without another
        tip. The storm's median spacing, not the last one (after the snow stops
        a heated gauge's funnel melts out in ever wider tips), or, when wider,
        the median of its last ``recent_spacings`` spacings: a storm that tapers
        off ends at its last rate, not its average one. Zero for a camera
        signal (it sees the cover itself), a storm with one tip, tips within
        ``end_resolution`` of each other, or when ``end_resolution`` is None.
        """
        p = self.params
        if p.end_resolution is None or not self.tips or self.tips[-1] != last_at:
            return timedelta(0)
        gaps = [b - a for a, b in pairwise(self.tips) if b - a <= p.onset_window]
        if not gaps:
            return timedelta(0)
        spacing = sorted(gaps)[(len(gaps) - 1) // 2]
        if p.recent_spacings:
            recent = sorted(gaps[-p.recent_spacings :])
            spacing = max(spacing, recent[(len(recent) - 1) // 2])
        if spacing <= p.end_resolution:
            return timedelta(0)
        return spacing * p.tip_interval_share

    def _depth_break(self) -> tuple[datetime, float] | None:
        """When the depth stopped rising, and the level it stopped at.

        The raw depths of the last ``quiet_period + fit_span`` since the onset (outliers more than
        ``outlier_mm`` from their centred ``hindsight_window`` median dropped) are
        fitted by least squares with a hinge: a line rising into a flat level
        ``P`` at the break ``b``, ``y = P + s * min(t - b, 0)``; ``b`` is the
        reading that fits best. None when the best fit does not rise at least
        ``depth_rise_mm`` over the ``fit_span`` before its break.
        """
        if not self.depths:
            return None
        since = self.depths[-1][0] - self.params.quiet_period - self.params.fit_span
        if self.onset_at is not None:
            since = max(since, self.onset_at)  # before the onset the depth was flat, not rising
        levels = _centred_medians(self.depths, self.params.hindsight_window / 2, since)
        points = [
            ((ts - since).total_seconds() / 3600, depth)
            for (ts, depth), level in zip(self.depths, levels, strict=True)
            if level is not None and abs(depth - level) <= self.params.outlier_mm
        ]
        best = _best_hinge(points)
        span_h = self.params.fit_span.total_seconds() / 3600
        if (
            best is None
            or best[3] * min(span_h, best[1] - points[0][0]) < self.params.depth_rise_mm
        ):
            return None
        return since + timedelta(hours=best[1]), best[2]

    def _filter(self, at: datetime, depth: float | None) -> float | None:
        """Median of the raw depths in the window ending at ``at``, if there are enough."""
        recent = self.recent
        if depth is not None:
            recent.append((at, depth))
        start = at - self.params.depth_median_window
        while recent and recent[0][0] < start:
            recent.popleft()
        if depth is None or len(recent) < self.params.depth_min_readings:
            return None
        return _median([d for _, d in recent])

    def _depth_signal(self, depth: float | None) -> bool:
        if depth is None:
            return False
        if self.ref_depth_mm is None:
            self.ref_depth_mm = depth
            return False
        if depth >= self.ref_depth_mm + self.params.depth_rise_mm:
            self.ref_depth_mm = depth
            return True
        if depth <= self.ref_depth_mm - self.params.depth_rise_mm:
            self.ref_depth_mm = depth  # settling, melt or clearing under the sensor
        return False

    def _precip_signal(self, precip_mm: float | None, air_temp_c: float | None) -> bool:
        if precip_mm is None or precip_mm < self.params.precip_min_mm:
            return False
        return air_temp_c is None or air_temp_c <= self.params.snow_max_air_temp_c


_depth_of = itemgetter(1)  # (ts, depth) -> depth, without a Python frame per reading


def _median(values: list[float]) -> float:
    """``statistics.median`` (the same arithmetic) without its generality: a few floats."""
    values.sort()
    n = len(values)
    if n % 2:
        return values[n // 2]
    return (values[n // 2 - 1] + values[n // 2]) / 2


def _centred_medians(
    depths: list[tuple[datetime, float]], half: timedelta, since: datetime
) -> list[float | None]:
    """Median of the raw depths within ``half`` either side of each reading from
    ``since`` on (None before it: not fitted)."""
    out: list[float | None] = []
    lo = hi = 0
    for ts, _ in depths:
        while depths[lo][0] < ts - half:
            lo += 1
        while hi < len(depths) and depths[hi][0] <= ts + half:
            hi += 1
        out.append(_median([d for _, d in depths[lo:hi]]) if ts >= since else None)
    return out


# Fits within this of the least squared error (mm², plus this fraction of it) are
# refitted exactly: far above numpy's rounding (~1e-10 mm² at these depths), far
# below any real difference between two breaks.
_SSE_TIE = 1e-6


def _best_hinge(points: list[tuple[float, float]]) -> tuple[float, float, float, float] | None:
    """The break that fits best, ``_hinge_fit`` on each of ``points[2:]``: (sse, break,
    level, slope) of the first least-squares fit, or None if every fit is degenerate.

    Every break's fit at once with numpy (a storm's fit is ~60 breaks of ~60
    points: a Python loop over both cost most of a winter's replay); numpy sums in
    another order, so the few breaks whose error is within ``_SSE_TIE`` of the
    least (and any near-degenerate one) are fitted again by ``_hinge_fit``, and
    the choice and its numbers are exactly the loop's.
    """
    if len(points) < 3:
        return None
    sy = 0.0  # the same for every break: summed once, in order, as the fit would
    for _, y in points:
        sy += y
    xy = np.array(points)
    xs, ys = xy[:, 0], xy[:, 1]
    n = len(points)
    u = np.minimum(xs[None, :] - xs[2:, None], 0.0)  # row k: the hinge at break points[k + 2]
    sx, sxx, sxy = u.sum(axis=1), (u * u).sum(axis=1), u @ ys
    det = n * sxx - sx * sx
    with np.errstate(divide="ignore", invalid="ignore"):
        slope = (n * sxy - sx * sy) / det
        level = (sy - slope * sx) / n
        r = ys[None, :] - level[:, None] - slope[:, None] * u
        sse = (r * r).sum(axis=1)
    sure = det > 1e-9
    near = ~sure  # too close to degenerate for numpy's word: refitted exactly
    if sure.any():
        least = float(sse[sure].min())
        near |= sure & (sse <= least + _SSE_TIE * (1.0 + least))
    best: tuple[float, float, float, float] | None = None
    for k in np.flatnonzero(near).tolist():
        b = points[k + 2][0]
        fit = _hinge_fit(points, b, sy)
        if fit is not None and (best is None or fit[0] < best[0]):
            best = (fit[0], b, fit[1], fit[2])
    return best


def _hinge_fit(
    points: list[tuple[float, float]], b: float, sy: float
) -> tuple[float, float, float] | None:
    """Least squares of ``y = P + s * min(x - b, 0)``: (sse, P, s), or None if degenerate.

    ``sy`` is the sum of the ys. From the break on ``min(x - b, 0)`` is 0, whose
    terms add exactly nothing to the sums (none is ever -0.0): only the points
    before it are summed, with the same floating-point result as summing all.
    """
    n = len(points)
    sx = sxx = sxy = 0.0
    for x, y in points:
        if x < b:
            u = x - b
            sx += u
            sxx += u * u
            sxy += u * y
    det = n * sxx - sx * sx
    if det <= 1e-12:
        return None
    slope = (n * sxy - sx * sy) / det
    level = (sy - slope * sx) / n
    # From the break on the residual is y - level (``slope * 0.0`` subtracts a zero).
    sse = sum([(y - level - slope * (x - b) if x < b else y - level) ** 2 for x, y in points])
    return sse, level, slope
