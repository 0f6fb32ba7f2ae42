"""Confirmation before use.

A profile value marked ``unconfirmed`` (a gap in the code text such as
§ 370-10 B(2)'s period, or a placeholder rate) is used by no notice until the
Village confirms it: who confirmed it, when, and the board action or
ordinance reference, recorded in the case records (``cases.confirmations``)
and the audit log. A notice whose rules include such a value is ``held``
(``NoticeIssuer.render``); confirming the value releases it.

A confirmation is of a value: a profile that later changes the value is
unconfirmed again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Protocol

from sidewalk.core.profile import Calendar, DeliveryMethodsRule, OwnerChangeRule, Profile, Rule
from sidewalk.storage.cases import CaseStore, ConfirmationRecord, NoticeRecord, RuleUse


class ReleasesHeld(Protocol):
    """What confirming needs of the issuer (``NoticeIssuer``), named here so that
    this module, which the issuer imports, does not import it back."""

    def release_held(self) -> list[NoticeRecord]: ...


class ConfirmationError(ValueError):
    """A confirmation that cannot be recorded (unknown name, nothing to confirm)."""


def value_text(value: Decimal | str, unit: str) -> str:
    """``24 hours``, ``$45.00``, ``owner served``: a value as a confirmation records it (a
    reading of the text, as its words)."""
    if isinstance(value, str):
        return value
    if unit == "usd":
        return f"${value.quantize(Decimal('0.01')):,}"
    return f"{value.normalize():f} {unit.replace('_', ' ')}"


def profile_value_text(rule: object) -> str:
    """The confirmable text of any profile value (a rule, a date window, the calendar)."""
    if isinstance(rule, Rule):
        return value_text(rule.value, rule.unit)
    if isinstance(rule, OwnerChangeRule):  # a reading of the text, in its words
        return rule.value
    if isinstance(rule, DeliveryMethodsRule):  # what delivery starts a period
        return ", ".join(rule.value)
    if isinstance(rule, Calendar):
        days = ", ".join(rule.business_weekdays)
        return f"business days {days}; {len(rule.holidays)} holidays listed"
    start, end = getattr(rule, "start", None), getattr(rule, "end", None)
    if start and end:
        return f"{start} to {end}"
    return str(getattr(rule, "value", ""))


@dataclass(frozen=True)
class UnconfirmedValue:
    """One profile value the code text leaves open, and where the Village stands on it."""

    name: str
    value: str
    note: str
    confirmation: ConfirmationRecord | None
    held_notices: int

    @property
    def confirmed(self) -> bool:
        return self.confirmation is not None


def _confirmed(uses: Iterable[RuleUse], in_force: dict[str, ConfirmationRecord]) -> list[str]:
    """The names among ``uses`` still waiting for a confirmation of the value used."""
    waiting = []
    for use in uses:
        if not use.unconfirmed:
            continue
        done = in_force.get(use.name)
        if done is None or done.value != value_text(use.value, use.unit):
            waiting.append(use.name)
    return waiting


def still_waiting(uses: Iterable[RuleUse], in_force: dict[str, ConfirmationRecord]) -> list[str]:
    """The names among ``uses`` not confirmed now (``in_force``: one read for many
    notices): a notice's "value not confirmed" mark is only for these."""
    return _confirmed(uses, in_force)


def waiting_for(cases: CaseStore, notice: NoticeRecord) -> list[str]:
    """The unconfirmed values a notice relies on that the Village has not confirmed."""
    if not any(r.unconfirmed for r in notice.rules):
        return []
    return _confirmed(notice.rules, cases.confirmations.in_force())


def unconfirmed_report(cases: CaseStore, profile: Profile) -> list[UnconfirmedValue]:
    """Every value the profile marks unconfirmed, its confirmation (if any) and the
    notices held for it: what a ``sidewalk check`` lists."""
    in_force = cases.confirmations.in_force()
    held: dict[str, int] = {}
    for notice in cases.notices.list(status="held"):
        for name in _confirmed(notice.rules, in_force):
            held[name] = held.get(name, 0) + 1
    out = []
    for name, rule in profile.rules():
        if not rule.unconfirmed:
            continue
        value = profile_value_text(rule)
        done = in_force.get(name)
        out.append(
            UnconfirmedValue(
                name=name,
                value=value,
                note=rule.note or "",
                confirmation=done if done is not None and done.value == value else None,
                held_notices=held.get(name, 0),
            )
        )
    return out


def confirm_value(
    cases: CaseStore,
    profile: Profile,
    name: str,
    *,
    by: str,
    reference: str,
    at: datetime,
    who: str,
    issuer: ReleasesHeld | None = None,
) -> tuple[ConfirmationRecord, list[NoticeRecord]]:
    """Record the Village's confirmation of the profile value ``name``, as the profile
    states it now; then issue the notices that waited for it (with ``issuer``)."""
    rules = dict(profile.rules())
    rule = rules.get(name)
    if rule is None:
        raise ConfirmationError(f"the profile has no value named {name!r}")
    if not rule.unconfirmed:
        raise ConfirmationError(
            f"{name} is not marked unconfirmed in the profile: the code text settles it "
            f"({getattr(rule, 'citation', None) or 'cited'})"
        )
    record = cases.confirmations.confirm(
        name, profile_value_text(rule), confirmed_by=by, reference=reference,
        confirmed_at=at, who=who,
    )  # fmt: skip
    released = issuer.release_held() if issuer is not None else []
    return record, released
