"""The crew's work on an abatement, hour by hour, and its price: pure, no I/O.

Where the crew records that it finished (the notice's page, ``sidewalk act
abatement_done``), it says who worked how many hours and which equipment ran
how long. The bill prices those hours at the profile's ``abatement_rates``
(§ 370-10 G keeps "an account of the expenses"; neither section sets a rate:
the Village's fee schedule does). A rate the profile marks unconfirmed is
shown "not confirmed" until the Village has confirmed that value
(``sidewalk profile confirm``): ``rates_in_force``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from sidewalk.alerts.billing import AbatementWork, BillingInputError, Material, cents
from sidewalk.alerts.confirm import value_text
from sidewalk.core.profile import AbatementRates, Rule

# A person's or a machine's hours on one job: more than a day is a typing slip.
MAX_HOURS: Final = Decimal(24)
RATE_NAMES: Final = ("crew_hourly_rate", "equipment_hourly_rate")


class CrewInputError(BillingInputError):
    """Hours the clerk or the crew must write again (said in their words)."""


def hours(text: object, what: str) -> Decimal:
    """Hours as written ("2", "1.5", "0.25"): more than 0, at most 24, to the hundredth."""
    try:
        value = Decimal(str(text).strip().replace(",", "."))
    except InvalidOperation:
        raise CrewInputError(f"{what}: write the hours as a number, e.g. 1.5") from None
    if not value.is_finite() or value <= 0:
        raise CrewInputError(f"{what}: the hours must be more than 0")
    if value > MAX_HOURS:
        raise CrewInputError(f"{what}: at most {MAX_HOURS} hours on one job")
    if value != value.quantize(Decimal("0.01")):
        raise CrewInputError(f"{what}: write the hours to the hundredth at most, e.g. 1.25")
    return value


@dataclass(frozen=True)
class Worked:
    """One person's or one machine's hours on the job."""

    name: str
    hours: Decimal


@dataclass(frozen=True)
class CrewWork:
    """Who worked how long, and which equipment ran how long."""

    workers: tuple[Worked, ...]
    equipment: tuple[Worked, ...] = ()

    @property
    def crew_hours(self) -> Decimal:
        return sum((w.hours for w in self.workers), Decimal(0))

    @property
    def equipment_hours(self) -> Decimal:
        return sum((e.hours for e in self.equipment), Decimal(0))

    def work(self, materials: Sequence[Material] = ()) -> AbatementWork:
        """The work to price: the person-hours and machine-hours summed, and materials."""
        return AbatementWork(self.crew_hours, self.equipment_hours, tuple(materials))

    def to_json(self) -> dict[str, Any]:
        return {
            "workers": [{"name": w.name, "hours": str(w.hours)} for w in self.workers],
            "equipment": [{"name": e.name, "hours": str(e.hours)} for e in self.equipment],
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CrewWork:
        return crew_work(data.get("workers", ()), data.get("equipment", ()))

    def words(self) -> str:
        """The crew's work as the clerk reads it: "Pat 2 h, Lee 1.5 h; plow truck 1 h"."""
        people = ", ".join(f"{w.name} {_h(w.hours)}" for w in self.workers)
        machines = ", ".join(f"{e.name} {_h(e.hours)}" for e in self.equipment)
        return "; ".join(x for x in (people, machines) if x)


def _h(value: Decimal) -> str:
    return f"{value.normalize():f} h"


def _entries(rows: Iterable[Any], kind: str) -> tuple[Worked, ...]:
    out: list[Worked] = []
    for n, row in enumerate(rows, 1):
        if isinstance(row, Worked):
            out.append(row)
            continue
        name = str((row.get("name") if isinstance(row, Mapping) else row[0]) or "").strip()
        raw = row.get("hours") if isinstance(row, Mapping) else row[1]
        if not name:
            raise CrewInputError(f"{kind} {n}: write who (or which machine) it was")
        out.append(Worked(name, hours(raw, f"{kind} {n} ({name})")))
    return tuple(out)


def crew_work(workers: Iterable[Any], equipment: Iterable[Any] = ()) -> CrewWork:
    """The crew's work from rows of ``{"name", "hours"}`` (or pairs); at least one worker."""
    people = _entries(workers, "Worker")
    if not people:
        raise CrewInputError("Write at least one worker and the hours they worked")
    return CrewWork(people, _entries(equipment, "Equipment"))


def parse_pairs(items: Iterable[str], kind: str) -> list[tuple[str, str]]:
    """``NAME=HOURS`` as the command line takes them ("Pat=2", "plow truck=1.5")."""
    out = []
    for item in items:
        name, sep, value = item.rpartition("=")
        if not sep or not name.strip():
            raise CrewInputError(f"{kind} {item!r}: write it as 'name=hours', e.g. 'Pat=2'")
        out.append((name.strip(), value))
    return out


def confirmed_now(name: str, rule: Rule, in_force: Mapping[str, Any]) -> bool:
    """Whether ``rule`` (the profile's value ``name``) stands confirmed: not marked
    unconfirmed, or confirmed by the Village at the value it has now."""
    if not rule.unconfirmed:
        return True
    done = in_force.get(name)
    return done is not None and done.value == value_text(rule.value, rule.unit)


def rates_in_force(rates: AbatementRates, in_force: Mapping[str, Any]) -> AbatementRates:
    """The rates, each marked unconfirmed only while the Village has not confirmed it."""
    update = {
        n: getattr(rates, n).model_copy(update={"unconfirmed": False})
        for n in RATE_NAMES
        if getattr(rates, n).unconfirmed
        and confirmed_now(f"abatement_rates.{n}", getattr(rates, n), in_force)
    }
    return rates.model_copy(update=update) if update else rates


@dataclass(frozen=True)
class RateShown:
    """A rate as the crew's form and the bill's preview show it."""

    what: str
    amount: str
    confirmed: bool

    @property
    def text(self) -> str:
        said = f"{self.what}: {self.amount} an hour"
        return said if self.confirmed else f"{said} (not confirmed)"


def rates_shown(rates: AbatementRates, in_force: Mapping[str, Any]) -> list[RateShown]:
    """The crew and equipment rates, each with whether the Village has confirmed it."""
    said = {"crew_hourly_rate": "Crew labor, per worker", "equipment_hourly_rate": "Equipment"}
    return [
        RateShown(
            said[n],
            f"${cents(getattr(rates, n).value):,.2f}",
            confirmed_now(f"abatement_rates.{n}", getattr(rates, n), in_force),
        )
        for n in RATE_NAMES
    ]
