"""Plain words for letters: internal names, rule values and measurements as the
Village writes them (feet and inches, dollars, dates), never field or state names."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from fractions import Fraction
from typing import Final

from sidewalk.core.profile import Rule
from sidewalk.core.units import mm_to_feet

STATE_WORDS: Final = {
    "idle": "no snow",
    "snowing": "snow accumulating",
    "clearing_period": "clearing period running",
    "complied": "sidewalk cleared in time",
    "violation": "not cleared by the deadline",
    "unverified": "not verified, sent for review",
    "notice_issued": "written notice issued",
    "notice_period": "period after the notice running",
    "hazard_notice_issued": "hazard notice issued",
    "hazard_period": "hazard period running",
    "abatement_ordered": "removal by the Village ordered",
    "abated": "removed by the Village",
    "billed": "bill sent",
    "paid": "bill paid",
    "cured": "cleared by the owner",
    "tax_roll": "entered on the tax roll",
    "none": "nothing recorded",
    "obstructed": "obstruction found",
    "removal_period": "removal period running",
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


def amount(rule: Rule) -> str:
    """``24 hours``, ``10 calendar days``, ``3/4 inch``: a rule's value without marks."""
    if rule.unit == "fraction":
        return str(Fraction(rule.value).limit_denominator(100))
    if rule.unit == "percent":
        return f"{rule.value.normalize():f}%"
    if rule.unit == "inches":
        whole, part = divmod(Fraction(rule.value).limit_denominator(64), 1)
        number = " ".join(x for x in (str(whole) if whole else "", str(part) if part else "") if x)
        return f"{number or '0'} {'inch' if rule.value <= 1 else 'inches'}"
    number = f"{rule.value.normalize():f}"
    unit = {"in_per_ft": "inch per foot", "usd": "dollars"}.get(rule.unit)
    if unit is None:
        unit = rule.unit.replace("_", " ")
        if rule.value == 1 and unit.endswith("s"):
            unit = unit[:-1]
    return f"{number} {unit}"


def feet_and_inches(mm: float) -> str:
    """``2 ft 0 in (609.6 mm)``: the units the ordinance speaks, with the measured value."""
    total_in = round(mm_to_feet(mm) * 12)
    return f"{total_in // 12} ft {total_in % 12} in ({mm:.1f} mm)"


def feet_short(mm: float) -> str:
    """``2 feet``, ``2 feet 4 inches``: a measured length as a letter says it."""
    total_in = round(mm_to_feet(mm) * 12)
    ft, inch = divmod(total_in, 12)
    parts = [f"{ft} foot" if ft == 1 else f"{ft} feet"] if ft else []
    if inch or not parts:
        parts.append(f"{inch} inch" if inch == 1 else f"{inch} inches")
    return " ".join(parts)


def inches(mm: float) -> str:
    """``0.91 in (23.0 mm)``: defect sizes as the code states its limits."""
    return f"{mm / 25.4:.2f} in ({mm:.1f} mm)"


def usd(amount: Decimal) -> str:
    """``$1,234.50``: exact, never through a float."""
    return f"${amount.quantize(Decimal('0.01')):,}"


def local_day(day: date) -> str:
    """``Monday, December 21, 2026``: how a notice states a date."""
    return f"{day:%A, %B} {day.day}, {day.year}"
