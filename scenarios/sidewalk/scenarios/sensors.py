"""A seeded pole-sensor simulator: real weather hours in, 5-minute pole readings out.

The real records have labels and temperatures but no ultrasonic depth sensor,
so this module plays the sensors a pole would carry through each hour:

* Snowfall timing: an hour labelled snow (observed at ``hour.start``) snows from
  30 min before to 30 min after the observation; with probability
  ``lull_prob`` the hour holds one brief lull of 10-25 min. Intensity is the
  label's water equivalent (``weather.SNOW_WATER_MM_H``) scaled by a seeded
  lognormal factor per hour (σ = 0.4).
* Snowpack (true, noise-free): new snow adds water × snow-to-liquid ratio
  (15 at ≤ -10 °C falling to 10 at -2 °C and 5 at +1 °C; above
  ``SensorModel.melt_on_contact_c`` snow melts on contact and adds nothing).
  The pack settles by ``settle_per_hour`` of its depth and melts by
  ``melt_mm_per_degc_hour`` per °C above 0 and 2 mm per mm of rain.
* Tipping bucket (heated, 0.2 mm tips): catches ``catch_efficiency`` of the
  snow's water (wind under-catch); snow melts in the funnel with time constant
  ``funnel_melt_minutes``, so tips go on a little after the snow stops; rain
  passes straight through.
* Ultrasonic depth (SR50A class): the true depth plus Gaussian noise with
  σ = ``depth_noise_mm`` / 2.5 clipped to ±``depth_noise_mm``; while snow falls,
  echoes off flakes read high (``echo_outlier_prob``, +30..+200 mm); wind drift
  passes under the sensor (``drift_spike_prob`` per reading when at least 10 mm
  lies on the ground, +15..+60 mm for 1-6 readings); single missing values
  (``depth_dropout_prob``) and iced-
  transducer bursts (``iced_prob`` per reading, 30-120 min with no depth).
* Pole outages: ``outage_prob_per_hour`` per hour, 15-90 min with no reading
  at all (power or radio; the disk buffer cannot keep what was never measured).
* Air temperature: the record's, interpolated between hours, ±0.1 °C noise.

Everything draws from one ``random.Random(seed)``, so a stream is reproducible.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sidewalk.core.clock import to_ms
from sidewalk.core.contract import WeatherReading
from sidewalk.scenarios.weather import WeatherHour

HALF_HOUR = timedelta(minutes=30)
DRIFT_MIN_DEPTH_MM = 10.0  # no snow on the ground, nothing for the wind to drift


@dataclass(frozen=True)
class SensorModel:
    """The simulated pole's sensors and snowpack; every value is documented in the module."""

    step: timedelta = timedelta(minutes=5)
    tip_mm: float = 0.2
    catch_efficiency: float = 0.8
    funnel_melt_minutes: float = 20.0
    depth_noise_mm: float = 10.0
    echo_outlier_prob: float = 0.03
    drift_spike_prob: float = 0.003
    depth_dropout_prob: float = 0.02
    iced_prob: float = 0.0005
    outage_prob_per_hour: float = 0.004
    lull_prob: float = 0.15
    settle_per_hour: float = 0.005
    melt_mm_per_degc_hour: float = 0.8
    melt_on_contact_c: float = 1.5


@dataclass(frozen=True)
class SimulatedStep:
    """The truth behind one 5-minute step (for scoring and for simulated owners)."""

    at: datetime
    snowing: bool
    new_snow_mm: float
    true_depth_mm: float
    air_temp_c: float


@dataclass
class SimulatedStream:
    """What one pole published and the truth behind it."""

    readings: list[WeatherReading] = field(default_factory=list)
    truth: list[SimulatedStep] = field(default_factory=list)


def snow_ratio(air_temp_c: float, melt_on_contact_c: float) -> float:
    """Snow-to-liquid ratio (mm of new snow per mm of water) at this air temperature."""
    if air_temp_c > melt_on_contact_c:
        return 0.0
    if air_temp_c <= -10.0:
        return 15.0
    if air_temp_c <= -2.0:
        return 10.0 + 5.0 * (-2.0 - air_temp_c) / 8.0
    return max(0.0, 10.0 - 5.0 * (air_temp_c + 2.0) / 3.0)


def _falling_minutes(
    hours: Sequence[WeatherHour], rng: random.Random, lull_prob: float
) -> dict[int, tuple[float, int, int]]:
    """Per snowing hour index: (water mm/h, lull start minute, lull length in minutes)."""
    plan: dict[int, tuple[float, int, int]] = {}
    for i, hour in enumerate(hours):
        if not hour.snowing:
            continue
        rate = hour.snow_water_mm_h * math.exp(rng.gauss(0.0, 0.4))
        lull = rng.randrange(10, 26) if rng.random() < lull_prob else 0
        plan[i] = (rate, rng.randrange(0, 60 - lull + 1), lull)
    return plan


@dataclass
class _Faults:
    """The ultrasonic sensor's and the pole's misbehaviour, step by step."""

    model: SensorModel
    spike_left: int = 0
    spike_mm: float = 0.0
    iced_left: int = 0
    outage_left: int = 0

    def measure(
        self, depth: float, snowing: bool, dt_h: float, rng: random.Random
    ) -> tuple[bool, float | None]:
        """(the pole published this step, the depth it read or None)."""
        m = self.model
        # Drawn in a fixed order every step so streams stay reproducible.
        draw = rng.random
        r_outage, r_iced, r_drop, r_echo, r_spike = draw(), draw(), draw(), draw(), draw()
        noise = max(
            -m.depth_noise_mm, min(m.depth_noise_mm, rng.gauss(0.0, m.depth_noise_mm / 2.5))
        )
        magnitude = rng.random()
        if self.outage_left == 0 and r_outage < m.outage_prob_per_hour * dt_h:
            self.outage_left = 3 + int(magnitude * 15)
        if self.outage_left:
            self.outage_left -= 1
            return False, None
        if self.iced_left == 0 and r_iced < m.iced_prob:
            self.iced_left = 6 + int(magnitude * 18)
        if self.spike_left == 0 and depth >= DRIFT_MIN_DEPTH_MM and r_spike < m.drift_spike_prob:
            self.spike_left, self.spike_mm = 1 + int(magnitude * 6), 15 + 45 * magnitude
        measured: float | None = depth + noise
        if self.spike_left:
            self.spike_left -= 1
            measured = depth + noise + self.spike_mm
        if snowing and r_echo < m.echo_outlier_prob:
            measured = depth + 30 + 170 * magnitude
        if self.iced_left:
            self.iced_left -= 1
            measured = None
        elif r_drop < m.depth_dropout_prob:
            measured = None
        return True, measured


def simulate_pole(
    hours: Sequence[WeatherHour],
    device: str,
    seed: int,
    model: SensorModel | None = None,
    first_seq: int = 1,
) -> SimulatedStream:
    """Readings every ``model.step`` from 30 min before the first hour to 30 min after the last."""
    m = model or SensorModel()
    rng = random.Random(seed)
    plan = _falling_minutes(hours, rng, m.lull_prob)
    out = SimulatedStream()
    if not hours:
        return out
    dt_h = m.step.total_seconds() / 3600
    depth = 0.0
    funnel = bucket = 0.0
    faults = _Faults(m)
    seq = first_seq
    # ``ts`` by whole steps from the first (exactly ``to_ms(at)``, without its cost per step).
    first_ms, step_ms = to_ms(hours[0].start - HALF_HOUR), _whole_ms(m.step)
    for k, (at, index, minute) in enumerate(_steps(hours, m.step)):
        hour = hours[index]
        temp = _temperature(hours, index, at)
        rate, lull_at, lull_len = plan.get(_snow_hour(hours, at, index), (0.0, 0, 0))
        in_lull = lull_at <= minute < lull_at + lull_len if lull_len else False
        water = 0.0 if in_lull else rate * dt_h
        new_snow = water * snow_ratio(temp, m.melt_on_contact_c)
        melt = max(0.0, temp) * m.melt_mm_per_degc_hour * dt_h + 2.0 * hour.rain_mm_h * dt_h
        depth = max(0.0, depth * (1 - m.settle_per_hour * dt_h) + new_snow - melt)
        funnel += water * m.catch_efficiency
        melted = funnel * (1 - math.exp(-m.step.total_seconds() / 60 / m.funnel_melt_minutes))
        funnel -= melted
        bucket += melted + hour.rain_mm_h * dt_h
        tips = int(round(bucket, 9) // m.tip_mm)
        bucket -= tips * m.tip_mm
        out.truth.append(SimulatedStep(at, water > 0, new_snow, depth, temp))
        present, measured = faults.measure(depth, water > 0, dt_h, rng)
        if not present:
            continue
        out.readings.append(
            WeatherReading(
                device=device,
                seq=seq,
                ts=first_ms + k * step_ms,
                snow_depth_mm=None
                if measured is None
                else round(min(5000.0, max(0.0, measured)), 1),
                precip_mm=round(tips * m.tip_mm, 1),
                air_temp_c=round(max(-60.0, min(60.0, temp + rng.gauss(0.0, 0.1))), 2),
            )
        )
        seq += 1
    return out


def _whole_ms(step: timedelta) -> int:
    """A step in whole milliseconds; refuses one that is not (``ts`` must stay exact)."""
    ms, rest = divmod(step // timedelta(microseconds=1), 1000)
    if rest:
        raise ValueError(f"step {step} is not a whole number of milliseconds")
    return ms


def _steps(hours: Sequence[WeatherHour], step: timedelta) -> Iterator[tuple[datetime, int, int]]:
    """(time, index of the hour whose observation is nearest, minute into the snow hour)."""
    t = hours[0].start - HALF_HOUR
    end = hours[-1].start + HALF_HOUR
    index = 0
    while t < end:
        while index + 1 < len(hours) and hours[index + 1].start - HALF_HOUR <= t:
            index += 1
        minute = int((t - (hours[index].start - HALF_HOUR)).total_seconds() // 60)
        yield t, index, minute
        t += step


def _snow_hour(hours: Sequence[WeatherHour], at: datetime, index: int) -> int:
    """The hour whose snow covers ``at``: only the nearest one, and only if the record has it."""
    if abs(at - hours[index].start) <= HALF_HOUR:
        return index
    return -1  # a gap in the record is dry


def _temperature(hours: Sequence[WeatherHour], index: int, at: datetime) -> float:
    here = hours[index]
    if at >= here.start and index + 1 < len(hours):
        nxt = hours[index + 1]
        span = (nxt.start - here.start).total_seconds()
        frac = min(1.0, (at - here.start).total_seconds() / span)
        return here.air_temp_c + (nxt.air_temp_c - here.air_temp_c) * frac
    if at < here.start and index > 0:
        prev = hours[index - 1]
        span = (here.start - prev.start).total_seconds()
        frac = min(1.0, (here.start - at).total_seconds() / span)
        return here.air_temp_c + (prev.air_temp_c - here.air_temp_c) * frac
    return here.air_temp_c
