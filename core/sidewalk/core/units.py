"""Unit conversions. Stored values are SI (mm, °C); ordinance values are in feet and inches."""

from __future__ import annotations

MM_PER_INCH = 25.4
MM_PER_FOOT = 304.8

_TO_MM = {"mm": 1.0, "inches": MM_PER_INCH, "feet": MM_PER_FOOT}


def length_to_mm(value: float, unit: str) -> float:
    """Convert a length in ``mm``, ``inches`` or ``feet`` to millimetres."""
    try:
        return value * _TO_MM[unit]
    except KeyError:
        raise ValueError(f"unknown length unit {unit!r}") from None


def mm_to_feet(mm: float) -> float:
    return mm / MM_PER_FOOT


def mm_to_inches(mm: float) -> float:
    return mm / MM_PER_INCH


def f_to_c(deg_f: float) -> float:
    return (deg_f - 32.0) * 5.0 / 9.0


def c_to_f(deg_c: float) -> float:
    return deg_c * 9.0 / 5.0 + 32.0
