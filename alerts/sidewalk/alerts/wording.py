"""Plain words for letters: internal names, rule values and measurements as the
Village writes them (feet and inches, dollars, dates), never field or state names."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Final

from sidewalk.core.profile import Rule

STATE_WORDS: Final = {
    "idle": "no snow",
    "snowing": "snow accumulating",
    "clearing_period": "the owner's time to clear running",
    "complied": "sidewalk cleared in time",
    "violation": "not cleared by the deadline",
    "unverified": "not verified, sent for review",
    "notice_issued": "written notice issued",
    "notice_period": "period after the notice running",
    "hazard_notice_issued": "hazard notice issued",
    "hazard_period": "the owner's time to remove the hazard running",
    "abatement_ordered": "removal by the Village ordered",
    "abated": "removed by the Village",
    "billed": "bill sent",
    "paid": "bill paid",
    "cured": "cleared by the owner",
    "tax_roll": "entered on the tax roll",
    "none": "nothing recorded",
    "obstructed": "obstruction found",
    "removal_period": "the time to remove the obstruction running",
    "removed": "obstruction removed",
    "overdue": "past its deadline",
    "compliant": "within the Code",
}
CAUSE_WORDS: Final = {
    "deadline": "the deadline passed",
    "tick": "the deadline passed",
    "registry": "a change in the Village's property records",
}
QUANTITY_WORDS: Final = {
    "cleared_width_mm": "narrowest cleared width (mm)",
    "snow_depth_mm": "snow depth (mm)",
    "air_temp_c": "air temperature (°C)",
    "surface_temp_c": "pavement temperature (°C)",
    "precip_rate_mm_h": "precipitation (mm per hour)",
}


def words(name: object) -> str:
    """An internal name (``clearing_period``, ``violation:main-st-103``) as words."""
    text = str(name)
    if text in STATE_WORDS:
        return STATE_WORDS[text]
    head, _, rest = text.partition(":")
    if rest and head in STATE_WORDS:
        return STATE_WORDS[head]
    return text.replace("_", " ").replace(":", ": ")


def quantity_words(name: str) -> str:
    return QUANTITY_WORDS.get(name, name.replace("_", " "))


# The profile's temperature units, as a letter writes them.
DEGREES: Final = {"degC": "°C", "degF": "°F"}


def amount(rule: Rule) -> str:
    """``24 hours``, ``10 calendar days``, ``3/4 inch``, ``0 °C``: a rule's value without
    marks."""
    if rule.unit == "fraction":
        return str(Fraction(rule.value).limit_denominator(100))
    if rule.unit == "percent":
        return f"{rule.value.normalize():f}%"
    if rule.unit == "inches":
        whole, part = divmod(Fraction(rule.value).limit_denominator(64), 1)
        number = " ".join(x for x in (str(whole) if whole else "", str(part) if part else "") if x)
        return f"{number or '0'} {'inch' if rule.value <= 1 else 'inches'}"
    number = f"{rule.value.normalize():f}"
    if rule.unit in DEGREES:  # a temperature as paper writes it: 0 °C, 35 °F (never degC)
        return f"{number} {DEGREES[rule.unit]}"
    unit = {"in_per_ft": "inch per foot", "usd": "dollars"}.get(rule.unit)
    if unit is None:
        unit = rule.unit.replace("_", " ")
        if rule.value == 1 and unit.endswith("s"):
            unit = unit[:-1]
    return f"{number} {unit}"


# A measured width is written to the quarter inch (the camera's and the tape's
# precision in a letter); a defect's height or gap, which the Code limits in
# fractions of an inch, to the sixteenth.
QUARTER_INCH: Final = Fraction(1, 4)
SIXTEENTH_INCH: Final = Fraction(1, 16)
_MM_PER_INCH: Final = Fraction(254, 10)


def _inches_of(mm: float) -> Fraction:
    # Through the float's shortest decimal form, so 1219.2 mm is exactly 48 inches.
    return Fraction(Decimal(repr(float(mm)))) / _MM_PER_INCH


def _stepped(
    mm: float, step: Fraction, *, short_of_mm: float | None = None, at_least_mm: float | None = None
) -> Fraction:
    """``mm`` in inches, to the nearest ``step``; but a value under ``short_of_mm`` is
    never written as reaching it, nor one at or over ``at_least_mm`` as falling short:
    the printed figure never contradicts the comparison it supports."""
    exact = _inches_of(mm)
    n = round(exact / step)
    if short_of_mm is not None and exact < (bound := _inches_of(short_of_mm)):
        while n * step >= bound:
            n -= 1
    if at_least_mm is not None and exact >= (bound := _inches_of(at_least_mm)):
        while n * step < bound:
            n += 1
    return max(n, 0) * step


def _up_to_step(mm: float, step: Fraction) -> Fraction:
    """An uncertainty in inches, rounded up to ``step`` (never stated smaller than it is)."""
    exact = _inches_of(mm)
    n = -(-exact // step)
    return max(int(n), 1) * step


def _fraction_text(inches: Fraction) -> str:
    """``11 3/4``, ``3/16``, ``0``."""
    whole, part = divmod(inches, 1)
    text = " ".join(x for x in (str(whole) if whole else "", str(part) if part else "") if x)
    return text or "0"


def _ft_in(inches: Fraction) -> str:
    """``3 ft 11 3/4 in``; under a foot, ``7 1/2 in``."""
    ft, rest = divmod(inches, 12)
    if not ft:
        return f"{_fraction_text(rest)} in"
    return f"{ft} ft {_fraction_text(rest)} in"


def feet_and_inches(
    mm: float, uncertainty_mm: float | None = None, *, short_of_mm: float | None = None
) -> str:
    """``3 ft 11 3/4 in ± 2 in (1210.0 mm ± 50.8 mm)``: a measured width to the quarter
    inch, with its uncertainty, and the value measured, for the evidence record."""
    shown = _ft_in(_stepped(mm, QUARTER_INCH, short_of_mm=short_of_mm))
    if uncertainty_mm is None:
        return f"{shown} ({mm:.1f} mm)"
    plus = _fraction_text(_up_to_step(uncertainty_mm, QUARTER_INCH))
    return f"{shown} ± {plus} in ({mm:.1f} mm ± {uncertainty_mm:.1f} mm)"


def feet_short(
    mm: float, uncertainty_mm: float | None = None, *, short_of_mm: float | None = None
) -> str:
    """``3 ft 11 3/4 in (± 2 in)``: a measured width as a letter says it, to the quarter
    inch; a width under ``short_of_mm`` is never written as reaching it."""
    shown = _ft_in(_stepped(mm, QUARTER_INCH, short_of_mm=short_of_mm))
    if uncertainty_mm is None:
        return shown
    return f"{shown} (± {_fraction_text(_up_to_step(uncertainty_mm, QUARTER_INCH))} in)"


def feet_bound(mm: float, *, up: bool) -> str:
    """An uncertainty as a bound a sentence relies on, to the quarter inch: rounded up
    where the letter says a figure lies within it, down where it says a shortfall
    exceeds it, so the sentence holds whatever the exact figure (``2 3/4 in``)."""
    step = QUARTER_INCH
    if up:
        return f"{_fraction_text(_up_to_step(mm, step))} in"
    return f"{_fraction_text(Fraction(int(_inches_of(mm) // step)) * step)} in"


def feet_rule(mm: float) -> str:
    """``4 feet``, ``3 feet 6 inches``: a length the Code sets (not a measurement)."""
    total_in = round(_inches_of(mm))
    ft, inch = divmod(total_in, 12)
    parts = [f"{ft} foot" if ft == 1 else f"{ft} feet"] if ft else []
    if inch or not parts:
        parts.append(f"{inch} inch" if inch == 1 else f"{inch} inches")
    return " ".join(parts)


def inches(
    mm: float, uncertainty_mm: float | None = None, *, at_least_mm: float | None = None
) -> str:
    """``7/8 in ± 1/16 in (23.0 mm ± 1.2 mm)``: a defect's size to the sixteenth of an
    inch, as the Code states its limits; one at or over ``at_least_mm`` never reads under it."""
    shown = f"{_fraction_text(_stepped(mm, SIXTEENTH_INCH, at_least_mm=at_least_mm))} in"
    if uncertainty_mm is None:
        return f"{shown} ({mm:.1f} mm)"
    plus = _fraction_text(_up_to_step(uncertainty_mm, SIXTEENTH_INCH))
    return f"{shown} ± {plus} in ({mm:.1f} mm ± {uncertainty_mm:.1f} mm)"


def inches_short(
    mm: float, uncertainty_mm: float | None = None, *, at_least_mm: float | None = None
) -> str:
    """``7/8 in (± 1/16 in)``: a defect's size as a letter says it."""
    shown = f"{_fraction_text(_stepped(mm, SIXTEENTH_INCH, at_least_mm=at_least_mm))} in"
    if uncertainty_mm is None:
        return shown
    return f"{shown} (± {_fraction_text(_up_to_step(uncertainty_mm, SIXTEENTH_INCH))} in)"


def usd(amount: Decimal) -> str:
    """``$1,234.50``: exact, never through a float."""
    return f"${amount.quantize(Decimal('0.01')):,}"


def local_day(day: date) -> str:
    """``Monday, December 21, 2026``: how a notice states a date."""
    return f"{day:%A, %B} {day.day}, {day.year}"


def how_cessation_was_found(basis: str | None, earliest_local: str | None) -> str | None:
    """How the end of the snowfall was determined, in the owner's words (None: a record
    from before the engine said so). Where the evidence left a range, the 24 hours count
    from its later end: the owner's favour, and the letter says so."""
    if basis == "gauge_latest" and earliest_local:
        return (
            "the Village's precipitation gauge places the end of the snowfall between"
            f" {earliest_local} and this time; the 24 hours count from the later time"
        )
    return {
        "gauge": "as recorded by the Village's precipitation gauge",
        "gauge_latest": "the latest time the Village's precipitation gauge allows",
        "depth": "when the snow depth measured at the Village's pole stopped rising",
        "camera": "when the Village's camera last saw fresh snow on the sidewalk",
        "last_signal": "the last reading of the Village's sensors that showed snow falling",
    }.get(basis or "")


# What each kind of notice is called on screen and paper (never its key).
NOTICE_KINDS: Final = {
    "clearing_violation": "Notice to clear snow and ice",
    "hazard_notice": "Hazard notice: remove snow and ice within 2 hours",
    "hazard_abatement_notice": "Notice that the Village removed a hazard",
    "abatement_bill": "Bill for work done by the Village",
    "obstruction_notice": "Notice to remove an obstruction",
    "inspection_notice": "Notice of an inspector's finding",
    "repair_notice": "Notice to repair the sidewalk",
    "replacement_notice": "Notice to replace the sidewalk",
    "frozen_ground_advisory": "Frozen-ground advisory",
    "permit_advisory": "Permit advisory",
}

# A notice's state, as the clerk reads it.
NOTICE_STATUS: Final = {
    "pending": "Being prepared",
    "held": "Held until the Village confirms a value it relies on",
    "rendered": "Ready to serve: not yet served",
    "delivered": "Served",
}

# A delivery job: how it goes, and where it stands.
DELIVERY_CHANNELS: Final = {"print": "printed letter", "email": "e-mail", "webhook": "webhook"}
DELIVERY_STATUS: Final = {
    "queued": "waiting to go",
    "sent": "sent",
    "failed": "failed",
    "uncertain": "may have gone: check",
}


def notice_kind(kind: str) -> str:
    return NOTICE_KINDS.get(kind, kind.replace("_", " ").capitalize())


def notice_status(status: str) -> str:
    return NOTICE_STATUS.get(status, status.replace("_", " ").capitalize())


def delivery_words(channel: str, status: str) -> str:
    """One delivery job in words: "printed letter: waiting to go"."""
    how = DELIVERY_CHANNELS.get(channel, channel.replace("_", " "))
    return f"{how}: {DELIVERY_STATUS.get(status, status.replace('_', ' '))}"


# Why the Village does the work itself: a work order's reason (its key) in words.
ABATEMENT_REASONS: Final = {
    "notice_expired": "the owner did not clear it by the deadline in the notice",
    "owner_unavailable": "a hazard, and the owner could not be reached",
    "obstruction_not_removed": "the obstruction was not removed in the time the notice gave",
    "street_not_swept": "the street was not swept in time",
    "finding_not_corrected": "the finding was not corrected in the time the notice gave",
}


def abatement_reason(key: str) -> str:
    return ABATEMENT_REASONS.get(key, key.replace("_", " "))
