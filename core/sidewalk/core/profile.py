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

A value may be written as a fraction where the code does (``value = "1 1/4"``).
Yearly date windows and month-days (§ 370-7 A "between November 15 and April
1") are their own rule shapes, ``DateWindowRule`` and ``MonthDayRule``, with
``"MM-DD"`` strings. A section that sets no value but that documents rest on
(§ 370-10 F: the Village removes the snow) is a ``Provision``: citation and
words only. The ``[calendar]`` table lists the business weekdays and
holidays that business-day clocks count with.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from datetime import date, timedelta
from decimal import Decimal
from fractions import Fraction
from importlib import resources
from pathlib import Path
from typing import Annotated, Any, Final, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from sidewalk.core.calendar import BusinessCalendar, MonthDay, MonthDayWindow
from sidewalk.core.units import c_to_f, f_to_c, length_to_mm

DurationUnit = Literal["minutes", "hours", "days"]
DayUnit = Literal["calendar_days", "business_days"]
LengthUnit = Literal["mm", "inches", "feet"]
# "days" is elapsed time (24-hour periods, e.g. curing); "calendar_days" and
# "business_days" count local dates; "months"/"years" are calendar months.
Unit = Literal[
    "minutes",
    "hours",
    "days",
    "calendar_days",
    "business_days",
    "months",
    "years",
    "mm",
    "inches",
    "feet",
    "in_per_ft",
    "percent",
    "fraction",
    "usd",
    "degF",
    "degC",
]
Weekday = Literal["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
_DURATIONS = {"minutes", "hours", "days"}
_DAYS = {"calendar_days", "business_days"}
_MONTHS = {"months", "years"}
_LENGTHS = {"mm", "inches", "feet"}
_SHARES = {"percent", "fraction"}
_TEMPERATURES = {"degF", "degC"}
_MINUTES_PER = {"minutes": 1, "hours": 60, "days": 24 * 60}
# "3/4" or "1 1/4": the code writes several limits as fractions.
_FRACTION = re.compile(r"^\s*(?:(\d+)\s+)?(\d+)\s*/\s*(\d+)\s*$")
# No ordinance value comes near this; past it durations overflow timedelta at use.
MAX_RULE_VALUE = Decimal(1_000_000)


class ProfileError(ValueError):
    """A profile that cannot be used, naming the field and (when found) the line."""


class _Cited(BaseModel):
    """Where a value comes from: citation and words, or an unconfirmed mark with a note."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    citation: str | None = Field(default=None, min_length=3)
    words: str | None = Field(default=None, description="the ordinance's own words, quoted")
    unconfirmed: bool = False
    note: str | None = None

    @model_validator(mode="after")
    def _cited_or_unconfirmed(self) -> Any:
        if self.citation is None and not self.unconfirmed:
            raise ValueError("citation is required unless unconfirmed = true")
        if self.unconfirmed and not self.note:
            raise ValueError("an unconfirmed value needs a note saying what is missing")
        return self

    def _mark(self, shown: str) -> str:
        if self.unconfirmed:
            return f"{shown} [unconfirmed: {self.note}]"
        return f"{shown} ({self.citation})"


# The profile's unit names people do not write: a temperature with its degree sign
# ("35 °F", never "35 degF"), a slope and money in words.
UNIT_WORDS: Final = {
    "degF": "°F",
    "degC": "°C",
    "in_per_ft": "inch per foot",
    "usd": "dollars",
}


class Rule(_Cited):
    """One ordinance value with where it comes from."""

    value: Decimal = Field(description="the number the ordinance sets, in `unit`")
    unit: Unit

    @field_validator("value", mode="before")
    @classmethod
    def _fraction_text(cls, value: object) -> object:
        if isinstance(value, str) and (match := _FRACTION.match(value)):
            whole, numerator, denominator = (int(g) if g else 0 for g in match.groups())
            if denominator == 0:
                raise ValueError(f"{value!r}: a fraction needs a non-zero denominator")
            return Decimal(whole) + Decimal(numerator) / Decimal(denominator)
        return value

    @model_validator(mode="after")
    def _not_negative(self) -> Rule:
        # Temperatures may be below zero; no other ordinance value may.
        if self.value < 0 and self.unit not in _TEMPERATURES:
            raise ValueError(f"value must not be negative (got {self.value})")
        if abs(self.value) > MAX_RULE_VALUE:
            raise ValueError(f"value {self.value} is beyond {MAX_RULE_VALUE} {self.unit}")
        # Checked here so a bad file fails at load, not when a clock first reads it.
        whole = self.value * (12 if self.unit == "years" else 1)
        if self.unit in _DAYS | _MONTHS and whole != int(whole):
            raise ValueError(f"{self.unit} must come to whole days or months (got {self.value})")
        return self

    @property
    def duration(self) -> timedelta:
        """An elapsed-time rule (minutes, hours, days of 24 h) as a timedelta of real time."""
        if self.unit not in _DURATIONS:
            raise TypeError(f"{self.unit} is not a duration unit")
        return timedelta(minutes=float(self.value * _MINUTES_PER[self.unit]))

    @property
    def days(self) -> int:
        """A calendar- or business-day rule as a whole number of days."""
        if self.unit not in _DAYS:
            raise TypeError(f"{self.unit} is not a day unit")
        if self.value != int(self.value):
            raise TypeError("day rules must be whole days")
        return int(self.value)

    @property
    def months(self) -> int:
        """A calendar-month or -year rule as a whole number of months."""
        if self.unit not in _MONTHS:
            raise TypeError(f"{self.unit} is not a month or year unit")
        months = self.value * (12 if self.unit == "years" else 1)
        if months != int(months):
            raise TypeError("month and year rules must be whole months")
        return int(months)

    @property
    def length_mm(self) -> float:
        if self.unit not in _LENGTHS:
            raise TypeError(f"{self.unit} is not a length unit")
        return length_to_mm(float(self.value), self.unit)

    @property
    def fraction(self) -> float:
        """A share (percent, or a fraction such as 1/3) as a number in [0, 1]."""
        if self.unit not in _SHARES:
            raise TypeError(f"{self.unit} is not a share")
        return float(self.value) / (100 if self.unit == "percent" else 1)

    @property
    def slope(self) -> float:
        """A cross-slope rule (inches per foot) as rise over run."""
        if self.unit != "in_per_ft":
            raise TypeError(f"{self.unit} is not a slope unit")
        return float(self.value) / 12

    @property
    def deg_f(self) -> float:
        if self.unit not in _TEMPERATURES:
            raise TypeError(f"{self.unit} is not a temperature unit")
        return float(self.value) if self.unit == "degF" else c_to_f(float(self.value))

    @property
    def deg_c(self) -> float:
        if self.unit not in _TEMPERATURES:
            raise TypeError(f"{self.unit} is not a temperature unit")
        return float(self.value) if self.unit == "degC" else f_to_c(float(self.value))

    def describe(self) -> str:
        """Human form for notices: ``24 hours (§ 370-10 A)``, ``35 °F (…)`` or
        ``… [unconfirmed]``: a unit as people write it, never the profile's name for it."""
        if self.unit == "fraction":
            number = str(Fraction(self.value).limit_denominator(100))
        else:
            number = f"{self.value.normalize():f}"
        unit = UNIT_WORDS.get(self.unit, self.unit.replace("_", " "))
        return self._mark(f"{number} {unit}")


def _month_day(text: str) -> str:
    MonthDay.parse(text)
    return text


class MonthDayRule(_Cited):
    """A yearly date the ordinance names ("by not later than the following June 1")."""

    value: str = Field(description='"MM-DD"')

    @field_validator("value")
    @classmethod
    def _date(cls, value: str) -> str:
        return _month_day(value)

    @property
    def month_day(self) -> MonthDay:
        return MonthDay.parse(self.value)

    def describe(self) -> str:
        return self._mark(f"{self.month_day.in_year(2001):%B} {self.month_day.day}")


class DateWindowRule(_Cited):
    """A yearly window of dates, both ends included, that may wrap the year end."""

    start: str = Field(description='first date of the window, "MM-DD"')
    end: str = Field(description='last date of the window, "MM-DD" (included)')

    @field_validator("start", "end")
    @classmethod
    def _dates(cls, value: str) -> str:
        return _month_day(value)

    @property
    def window(self) -> MonthDayWindow:
        return MonthDayWindow(MonthDay.parse(self.start), MonthDay.parse(self.end))

    def describe(self) -> str:
        first, last = (MonthDay.parse(v).in_year(2001) for v in (self.start, self.end))
        return self._mark(f"{first:%B} {first.day} – {last:%B} {last.day}")


DeliveryMethod = Literal["hand", "posted", "mail", "email"]
"""How a written notice reaches a person: ``hand`` is personal service, ``posted``
posting on the premises, ``mail`` mail (dated by its receipt), ``email`` e-mail."""


class DeliveryMethodsRule(_Cited):
    """The ways of delivering a notice that start a period running "from the delivery"."""

    value: tuple[DeliveryMethod, ...] = Field(min_length=1)

    @field_validator("value")
    @classmethod
    def _unique(cls, methods: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(methods)) != len(methods):
            raise ValueError("a delivery method must not repeat")
        return methods

    def describe(self) -> str:
        return self._mark(", ".join(self.value))


class NoticeDelivery(BaseModel):
    """What counts as the delivery a § 370-10 B period runs from (the code does not say).

    By default, until the Village confirms otherwise: personal service, posting on
    the premises, or mail from the date it was received; the 2-hour hazard notice
    by personal service or posting only. An e-mail server accepting a message is
    not delivery.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    starts_period: DeliveryMethodsRule = DeliveryMethodsRule(
        value=("hand", "posted", "mail"),
        unconfirmed=True,
        note=(
            "§ 370-10 B runs the notice periods from 'the delivery of the notice' and does not"
            " say what delivery is; personal service, posting on the premises and mail (from"
            " its receipt) are taken as delivery, e-mail is not, pending the Village's"
            " confirmation"
        ),
    )
    hazard_notice: DeliveryMethodsRule = DeliveryMethodsRule(
        value=("hand", "posted"),
        unconfirmed=True,
        note=(
            "§ 370-10 B(1)'s two hours run 'from the delivery of the notice' to the owner,"
            " occupant or person in charge; only personal service and posting on the premises"
            " are taken to deliver it, pending the Village's confirmation"
        ),
    )

    def counts(self, kind: str, method: str) -> bool:
        """Whether delivering a notice of ``kind`` by ``method`` starts its period."""
        rule = self.hazard_notice if kind == "hazard_notice" else self.starts_period
        return method in rule.value

    def rule_for(self, kind: str) -> tuple[str, DeliveryMethodsRule]:
        """The setting (dotted name, value) that says what delivers a notice of ``kind``."""
        if kind == "hazard_notice":
            return "notice_delivery.hazard_notice", self.hazard_notice
        return "notice_delivery.starts_period", self.starts_period


class Provision(_Cited):
    """A section a document rests on that sets no value (§ 370-10 F: the Village removes
    the snow after the notice's time has passed): its citation and its own words."""

    @model_validator(mode="after")
    def _quoted(self) -> Provision:
        if self.citation is None or not self.words:
            raise ValueError("a provision needs its citation and the code's words")
        return self

    def describe(self) -> str:
        return self._mark("provision")


AnyRule = Rule | MonthDayRule | DateWindowRule | DeliveryMethodsRule | Provision


def _require_unit(rule: Rule, allowed: set[str], name: str) -> Rule:
    if rule.unit not in allowed:
        raise ValueError(f"{name} must be in {sorted(allowed)}, got {rule.unit!r}")
    return rule


DepositChargeReading = Literal["charged under G", "penalty only"]
"""What follows a § 370-10 C notice not complied with: ``charged under G`` has the
Village remove the snow or ice and charge its expenses to the owner (§ 370-10 G);
``penalty only`` leaves C to the penalty (§ 370-10 E, H) and charges no one."""

DEPOSIT_CHARGE_NOTE = (
    "§ 370-10 C forbids depositing snow or ice onto a public street, alley, sidewalk or"
    " public land and sets no notice, period or removal by the Village; § 370-10 F has the"
    " Village remove snow and ice only after the time 'established under Subsection B(1)"
    " and (2)', the notices for a sidewalk not kept clear under Subsection A; § 370-10 G"
    " charges the owner 'the expenses incurred by the Village to abate the snow and/or ice"
    " hazard' without naming a subsection. Read here: G's charge reaches the Village's"
    " removal of snow or ice deposited in breach of C after a written notice; the other"
    " reading leaves C to the penalty of § 370-10 E and H; for the Village attorney's"
    " confirmation"
)


class DepositChargeRule(_Cited):
    """The reading of § 370-10 C, F and G applied to a deposit not removed after notice."""

    value: DepositChargeReading

    def describe(self) -> str:
        said = {
            "charged under G": "the Village removes it and charges its expenses to the owner",
            "penalty only": "the penalty alone; the Village charges no one for its removal",
        }[self.value]
        return self._mark(said)


class SnowAndIce(BaseModel):
    """§ 370-10: snow and ice removal."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    clearing_deadline: Rule
    clearing_min_width: Rule
    hazard_notice_period: Rule
    nonhazard_notice_period: Rule
    offense_period: Rule
    deposit_building_setback: Rule
    # C: snow or ice pushed onto a street or walk; the code sets no removal period.
    deposit_removal_after_notice: Rule
    # A's four feet as the camera measures them: a path is found short only when it
    # falls short by more than this (the measurement's stated uncertainty). The code
    # sets no tolerance: the Village confirms it.
    width_tolerance: Rule = Rule(
        value=Decimal(2),
        unit="inches",
        unconfirmed=True,
        note=(
            "§ 370-10 A sets a minimum of four feet and no tolerance for measuring it; the"
            " Village's camera measures the narrowest cleared path to within 2 inches, so a"
            " path is found too narrow only when it measures more than 2 inches short,"
            " pending the Village's confirmation"
        ),
    )
    # F: the Village's removal after a written notice's time has passed (no value).
    abatement_after_notice: Provision | None = None
    # C: whether the Village's removal of snow deposited in breach of C is charged to the
    # owner under G (the text does not settle it; for the Village attorney).
    deposit_removal_charge: DepositChargeRule = Field(
        default_factory=lambda: DepositChargeRule(
            value="charged under G", unconfirmed=True, note=DEPOSIT_CHARGE_NOTE
        )
    )

    @field_validator(
        "clearing_deadline",
        "hazard_notice_period",
        "nonhazard_notice_period",
        "offense_period",
        "deposit_removal_after_notice",
    )
    @classmethod
    def _durations(cls, rule: Rule) -> Rule:
        return _require_unit(rule, _DURATIONS, "this rule")

    @field_validator("clearing_min_width", "deposit_building_setback", "width_tolerance")
    @classmethod
    def _lengths(cls, rule: Rule) -> Rule:
        return _require_unit(rule, _LENGTHS, "this rule")


OwnerChangeReading = Literal["owner served", "new notice"]
"""Whom a case's bill goes to when its parcel changes hands while the case is open:
``owner served`` bills the owner who was served the case's notice; ``new notice``
bills no new owner before a written notice has been served on them."""

OWNER_CHANGE_NOTE = (
    "§ 370-10 F has the Village remove the snow and ice when the owner fails to 'after"
    " receiving a written notice', and § 370-10 G charges the expenses to 'the parcel or lot"
    " owner' and mails the bill to 'the last-known address of the owner'; neither says whom"
    " the bill goes to when the parcel changes hands while a case is open. Read here: the"
    " owner who was served the notice, whose failure the removal followed, not a new owner"
    " who received no notice; for the Village attorney's confirmation"
)


class OwnerChangeRule(_Cited):
    """The reading of § 370-10 F and G applied to a sale during an open case."""

    value: OwnerChangeReading

    def describe(self) -> str:
        said = {
            "owner served": "the bill goes to the owner who was served the notice",
            "new notice": "no bill to a new owner before a written notice is served on them",
        }[self.value]
        return self._mark(said)


class Billing(BaseModel):
    """§ 370-10 G: the snow and ice abatement bill and the tax roll.

    ``other_bill_payable`` and ``other_tax_roll_after`` are the terms of a bill
    for an abatement under a section that sets none (§ 370-11 C, § 370-14,
    § 144-11, § 144-12 B): values the Village must confirm.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    bill_payable: Rule
    tax_roll_after: Rule
    penalty_per_offense: Rule
    other_bill_payable: Annotated[Rule, Field(description="calendar days from receipt")]
    other_tax_roll_after: Annotated[Rule, Field(description="calendar days after the costs")]
    # A sale during an open case (§ 370-10 F, G): the text does not settle it.
    owner_changed_during_case: OwnerChangeRule = OwnerChangeRule(
        value="owner served", unconfirmed=True, note=OWNER_CHANGE_NOTE
    )

    @field_validator("other_bill_payable", "other_tax_roll_after")
    @classmethod
    def _other_days(cls, rule: Rule) -> Rule:
        return _require_unit(rule, {"calendar_days"}, "this rule")

    @field_validator("bill_payable", "tax_roll_after")
    @classmethod
    def _days(cls, rule: Rule) -> Rule:
        return _require_unit(rule, _DAYS, "this rule")


class AbatementRates(BaseModel):
    """What the village charges for an abatement: the § 370-10 G / § 370-8 F expense account.

    Neither section sets rates or an administrative charge; the Village's fee
    schedule does. These are kept apart from the ordinance sections, and each
    value carries its own ``unconfirmed`` mark onto the bill.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    crew_hourly_rate: Rule = Field(description="per crew member per hour, usd")
    equipment_hourly_rate: Rule = Field(description="per machine per hour, usd")
    administration_share: Rule = Field(description="added to labor, equipment and materials")

    @field_validator("crew_hourly_rate", "equipment_hourly_rate")
    @classmethod
    def _money(cls, rule: Rule) -> Rule:
        return _require_unit(rule, {"usd"}, "this rule")

    @field_validator("administration_share")
    @classmethod
    def _share(cls, rule: Rule) -> Rule:
        return _require_unit(rule, {"percent"}, "this rule")


def _in_units(allowed: set[str]) -> AfterValidator:
    return AfterValidator(lambda rule: _require_unit(rule, allowed, "this rule"))


# Rule shapes by unit, so a profile with a width in hours is refused where it is loaded.
ElapsedRule = Annotated[Rule, _in_units(_DURATIONS)]
CalendarDaysRule = Annotated[Rule, _in_units({"calendar_days"})]
BusinessDaysRule = Annotated[Rule, _in_units({"business_days"})]
MonthsRule = Annotated[Rule, _in_units(_MONTHS)]
LengthRule = Annotated[Rule, _in_units(_LENGTHS)]
ShareRule = Annotated[Rule, _in_units(_SHARES)]
TemperatureRule = Annotated[Rule, _in_units(_TEMPERATURES)]
SlopeRule = Annotated[Rule, _in_units({"in_per_ft"})]
MoneyRule = Annotated[Rule, _in_units({"usd"})]


class StreetOpenings(BaseModel):
    """§ 370-7: frozen ground, notices, pavement replacement, emergency excavation, new streets."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    frozen_ground_window: DateWindowRule
    emergency_permit_application: BusinessDaysRule
    dpw_notice_before_excavation: ElapsedRule
    utility_loss_notice: ElapsedRule
    affected_parties_notice: BusinessDaysRule
    backfill_notice: ElapsedRule
    cold_mix_replacement_by: MonthDayRule
    permanent_pavement_within: CalendarDaysRule
    street_concrete_protection: ElapsedRule
    repaving_determination_lead: CalendarDaysRule
    utility_completion: CalendarDaysRule
    repaving_moratorium: MonthsRule


class Permits(BaseModel):
    """§ 370-6 street-opening permits and § 370-9 street-privilege permits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    opening_permit_validity: CalendarDaysRule
    opening_permit_renewal: CalendarDaysRule
    opening_permit_renewal_fee: MoneyRule
    street_privilege_term: MonthsRule
    # § 370-6: the Village repairs a permittee's faulty work and bills "plus 20% for
    # administration"; the code sets no period to pay that bill.
    repair_administration_share: ShareRule
    repair_bill_payable: CalendarDaysRule


class ColdWeather(BaseModel):
    """§ 370-5 (9) concrete pours and keep-off; § 144-13 sump discharge window."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pour_min_temp: TemperatureRule
    pour_forecast_window: ElapsedRule
    frozen_subgrade_at_or_below: TemperatureRule
    # Hysteresis on the probes' frozen/thawed reading (the code says nothing: unconfirmed).
    frozen_subgrade_deadband: TemperatureRule = Field(
        description="a thaw needs the probe this far above the threshold (a difference)"
    )
    frozen_subgrade_min_dwell: ElapsedRule = Field(
        description="and above it that long, every reading, before the subgrade counts as thawed"
    )
    cold_weather_below: TemperatureRule
    keep_off_normal: ElapsedRule
    keep_off_cold: ElapsedRule
    sump_discharge_window: DateWindowRule

    @model_validator(mode="after")
    def _cold_is_longer(self) -> ColdWeather:
        if self.keep_off_cold.duration < self.keep_off_normal.duration:
            raise ValueError("keep_off_cold must not be shorter than keep_off_normal")
        return self


class Obstructions(BaseModel):
    """§ 370-8 obstructions and encroachments; § 370-9 conditions of occupancy."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    fixture_min_clear_width: LengthRule
    sidewalk_removal_after_notice: ElapsedRule
    street_removal_after_notice: ElapsedRule
    building_materials_max_sidewalk: ShareRule
    building_materials_max_street: ShareRule
    privilege_max_street: ShareRule
    temporary_walk_min_width: LengthRule
    privilege_removal_after_notice: ElapsedRule
    # § 370-8 F: the bill for the Village's removal, and the tax roll.
    bill_payable: CalendarDaysRule
    tax_roll_after: CalendarDaysRule


class Streets(BaseModel):
    """§ 144-17: construction debris swept from streets; the village's bill. § 370-14 dumping."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    sweeping_deadline: ElapsedRule
    sweeping_costs_payable: CalendarDaysRule
    dumping_removal_after_notice: ElapsedRule


class Terraces(BaseModel):
    """§ 370-11 C: mailboxes on a terrace kept free and clear of snow."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mailbox_clearing_after_notice: ElapsedRule


class Construction(BaseModel):
    """Chapter 144: excavations after demolition (§ 144-11), fencing and abandoned
    excavations (§ 144-12 B, C), and the written notice of a violation (§ 144-21)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    demolition_fill_within: CalendarDaysRule
    excavation_fence_min_height: LengthRule
    abandoned_excavation_after: MonthsRule
    abandoned_order_compliance: CalendarDaysRule
    violation_correction_after_notice: CalendarDaysRule


class SidewalkCondition(BaseModel):
    """§ 370-5 (sidewalk construction): defect limits (11), width (7), slope (6), joints (5)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    vertical_differential: LengthRule
    horizontal_gap: LengthRule
    surface_deterioration: LengthRule
    replacement_share: ShareRule
    residential_width: LengthRule
    commercial_width: LengthRule
    min_cross_slope: SlopeRule
    max_joint_spacing: LengthRule


class Calendar(_Cited):
    """Business days for business-day clocks: weekdays, minus the village's holidays."""

    business_weekdays: tuple[Weekday, ...] = Field(min_length=1)
    holidays: tuple[date, ...] = ()

    @field_validator("business_weekdays")
    @classmethod
    def _unique(cls, days: tuple[Weekday, ...]) -> tuple[Weekday, ...]:
        if len(set(days)) != len(days):
            raise ValueError("business weekdays must not repeat")
        return days

    def business_calendar(self) -> BusinessCalendar:
        return BusinessCalendar.of(self.business_weekdays, self.holidays)


class Village(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    state: str = Field(min_length=2, max_length=2)
    timezone: str
    code_source: str = Field(description="which text of the code this profile transcribes")
    # The village's own ZIP code, for an address at a property whose parcel record has
    # none (a hazard notice is addressed to the premises).
    zip_code: str | None = Field(default=None, pattern=r"^\d{5}(-\d{4})?$")

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
    street_openings: StreetOpenings
    permits: Permits
    cold_weather: ColdWeather
    obstructions: Obstructions
    streets: Streets
    terraces: Terraces
    construction: Construction
    sidewalk_condition: SidewalkCondition
    calendar: Calendar
    # Optional: a profile without a fee schedule can run every clock but cannot price a bill.
    abatement_rates: AbatementRates | None = None
    # What delivery starts a notice period; absent: the defaults, unconfirmed.
    notice_delivery: NoticeDelivery = NoticeDelivery()

    @property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.village.timezone)

    @property
    def business_calendar(self) -> BusinessCalendar:
        return self.calendar.business_calendar()

    def rules(self) -> Iterator[tuple[str, AnyRule | Calendar]]:
        """Every cited value by dotted name (``cold_weather.pour_min_temp``), then the calendar."""
        for section_name in _RULE_SECTIONS:
            section = getattr(self, section_name)
            if section is None:  # an optional section this village does not set
                continue
            for field in type(section).model_fields:
                value = getattr(section, field)
                if value is not None:  # an optional value this village does not set
                    yield f"{section_name}.{field}", value
        yield "calendar", self.calendar

    def unconfirmed_rules(self) -> list[str]:
        """Dotted names of every value the text does not settle."""
        return [name for name, rule in self.rules() if rule.unconfirmed]


_RULE_SECTIONS = (
    "snow_and_ice",
    "billing",
    "street_openings",
    "permits",
    "cold_weather",
    "obstructions",
    "streets",
    "terraces",
    "construction",
    "sidewalk_condition",
    "abatement_rates",
    "notice_delivery",
)


def _line_of(text: str, loc: tuple[str | int, ...]) -> int | None:
    """Best-effort line number of a validation error's location in the TOML text."""
    keys = [str(part) for part in loc]
    lines = text.splitlines()
    for depth in range(len(keys), 0, -1):
        table = ".".join(keys[:depth])
        header = re.compile(rf"^\s*\[\[?\s*{re.escape(table)}\s*\]\]?\s*(#.*)?$")
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


def _with_line(message: str, text: str) -> str:
    """tomllib says "(at end of document)" for a cut-off file: name that line too."""
    if "line" in message:
        return message
    return f"{message} (the document ends at line {max(1, len(text.splitlines()))})"


def parse_profile(text: str, source: str = "<profile>") -> Profile:
    """Parse and validate profile TOML; errors name the field and the line."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{source}: not valid TOML: {_with_line(str(exc), text)}") from None
    try:
        return Profile.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            loc = tuple(p for p in err["loc"] if not str(p).startswith("function-"))
            where = ".".join(str(p) for p in loc) or "(top level)"
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
    try:
        text = p.read_text("utf-8")
    except OSError as exc:
        raise ProfileError(f"{p}: cannot read the profile: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{p}: not UTF-8 text (byte {exc.start})") from None
    return parse_profile(text, str(p))
