"""The ordinance profile: every rule value a village's code sets, with its citation.

A profile is a TOML file. Each rule is a table::

    [snow_and_ice.clearing_deadline]
    value = 24
    unit = "hours"
    citation = "§ 370-10 A"
    words = "within 24 hours from the time snow ceases to accumulate on said sidewalk"
    unconfirmed = false

``citation`` is required unless the value is ``unconfirmed`` (a gap in the
text: such a value carries a ``note`` instead and never an invented citation).
Code reads typed values (``profile.snow_and_ice.clearing_deadline.duration``);
no ordinance number is a literal anywhere else.
"""

from __future__ import annotations

import re
import tomllib
from datetime import timedelta
from decimal import Decimal
from importlib import resources
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sidewalk.core.units import length_to_mm

DurationUnit = Literal["minutes", "hours"]
DayUnit = Literal["calendar_days", "business_days"]
LengthUnit = Literal["mm", "inches", "feet"]
Unit = Literal[
    "minutes",
    "hours",
    "calendar_days",
    "business_days",
    "mm",
    "inches",
    "feet",
    "percent",
    "usd",
    "degF",
]
_DURATIONS = {"minutes", "hours"}
_DAYS = {"calendar_days", "business_days"}
_LENGTHS = {"mm", "inches", "feet"}


class ProfileError(ValueError):
    """A profile that cannot be used, naming the field and (when found) the line."""


class Rule(BaseModel):
    """One ordinance value with where it comes from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    value: Decimal = Field(description="the number the ordinance sets, in `unit`")
    unit: Unit
    citation: str | None = Field(default=None, min_length=3)
    words: str | None = Field(default=None, description="the ordinance's own words, quoted")
    unconfirmed: bool = False
    note: str | None = None

    @model_validator(mode="after")
    def _cited_or_unconfirmed(self) -> Rule:
        if self.value < 0:
            raise ValueError(f"value must not be negative (got {self.value})")
        if self.citation is None and not self.unconfirmed:
            raise ValueError("citation is required unless unconfirmed = true")
        if self.unconfirmed and not self.note:
            raise ValueError("an unconfirmed value needs a note saying what is missing")
        return self

    @property
    def duration(self) -> timedelta:
        """An elapsed-time rule (minutes or hours) as a timedelta of real time."""
        if self.unit not in _DURATIONS:
            raise TypeError(f"{self.unit} is not a duration unit")
        minutes = self.value * (60 if self.unit == "hours" else 1)
        return timedelta(minutes=float(minutes))

    @property
    def days(self) -> int:
        """A calendar- or business-day rule as a whole number of days."""
        if self.unit not in _DAYS:
            raise TypeError(f"{self.unit} is not a day unit")
        if self.value != int(self.value):
            raise TypeError("day rules must be whole days")
        return int(self.value)

    @property
    def length_mm(self) -> float:
        if self.unit not in _LENGTHS:
            raise TypeError(f"{self.unit} is not a length unit")
        return length_to_mm(float(self.value), self.unit)

    @property
    def fraction(self) -> float:
        if self.unit != "percent":
            raise TypeError(f"{self.unit} is not a percentage")
        return float(self.value) / 100

    def describe(self) -> str:
        """Human form for notices: ``24 hours (§ 370-10 A)`` or ``… [unconfirmed]``."""
        shown = f"{self.value.normalize():f} {self.unit.replace('_', ' ')}"
        if self.unconfirmed:
            return f"{shown} [unconfirmed: {self.note}]"
        return f"{shown} ({self.citation})"


def _require_unit(rule: Rule, allowed: set[str], name: str) -> Rule:
    if rule.unit not in allowed:
        raise ValueError(f"{name} must be in {sorted(allowed)}, got {rule.unit!r}")
    return rule


class SnowAndIce(BaseModel):
    """§ 370-10: snow and ice removal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    clearing_deadline: Rule
    clearing_min_width: Rule
    hazard_notice_period: Rule
    nonhazard_notice_period: Rule
    offense_period: Rule
    deposit_building_setback: Rule

    @field_validator("clearing_deadline", "hazard_notice_period", "nonhazard_notice_period", "offense_period")
    @classmethod
    def _durations(cls, rule: Rule) -> Rule:
        return _require_unit(rule, _DURATIONS, "this rule")

    @field_validator("clearing_min_width", "deposit_building_setback")
    @classmethod
    def _lengths(cls, rule: Rule) -> Rule:
        return _require_unit(rule, _LENGTHS, "this rule")


class Billing(BaseModel):
    """§ 370-10 G / § 370-8 F: the abatement bill and the tax roll."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    bill_payable: Rule
    tax_roll_after: Rule
    penalty_per_offense: Rule

    @field_validator("bill_payable", "tax_roll_after")
    @classmethod
    def _days(cls, rule: Rule) -> Rule:
        return _require_unit(rule, _DAYS, "this rule")


class Village(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    state: str = Field(min_length=2, max_length=2)
    timezone: str
    code_source: str = Field(description="which text of the code this profile transcribes")

    @field_validator("timezone")
    @classmethod
    def _zone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"unknown time zone {value!r}") from None
        return value


class Profile(BaseModel):
    """A village's ordinance, as data."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    village: Village
    snow_and_ice: SnowAndIce
    billing: Billing

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.village.timezone)

    def unconfirmed_rules(self) -> list[str]:
        """Dotted names of every value the text does not settle."""
        names = []
        for section_name in ("snow_and_ice", "billing"):
            section = getattr(self, section_name)
            for field in type(section).model_fields:
                if getattr(section, field).unconfirmed:
                    names.append(f"{section_name}.{field}")
        return names


def _line_of(text: str, loc: tuple[str | int, ...]) -> int | None:
    """Best-effort line number of a validation error's location in the TOML text."""
    keys = [str(part) for part in loc]
    lines = text.splitlines()
    for depth in range(len(keys), 0, -1):
        table = ".".join(keys[:depth])
        header = re.compile(rf"^\s*\[{re.escape(table)}\]\s*(#.*)?$")
        for number, line in enumerate(lines, start=1):
            if header.match(line):
                rest = keys[depth:]
                if rest:
                    key = re.compile(rf"^\s*{re.escape(rest[0])}\s*=")
                    for offset, after in enumerate(lines[number:], start=number + 1):
                        if after.lstrip().startswith("["):
                            break
                        if key.match(after):
                            return offset
                return number
    return None


def parse_profile(text: str, source: str = "<profile>") -> Profile:
    """Parse and validate profile TOML; errors name the field and the line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{source}: not valid TOML: {exc}") from None
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not str(p).startswith("function-"))
            where = ".".join(str(p) for p in loc)
            line = _line_of(text, loc)
            at = f"{source}:{line}" if line else source
            problems.append(f"{at}: {where}: {err['msg']}")
        raise ProfileError("invalid ordinance profile\n  " + "\n  ".join(problems)) from None


def load_profile(path: Path | str | None = None) -> Profile:
    """Load a profile file, or the embedded Village of Clyman profile."""
    if path is None:
        text = resources.files("sidewalk.core.profiles").joinpath("clyman.toml").read_text("utf-8")
        return parse_profile(text, "clyman.toml")
    p = Path(path)
    return parse_profile(p.read_text("utf-8"), str(p))
