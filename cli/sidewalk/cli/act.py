"""``sidewalk act KIND TARGET``: record what a person did in a § 370-10 snow-and-ice case.

TARGET is what staff have in hand: the notice number (``CLY-2026-000002``), or
for ``record_treated``, which concerns a walk rather than a case, the frontage's
street address or id (a notice number works there too). It is resolved to the
case here, and the step is tried against the case's recorded state with the
clock engine's own rules, so a mistyped number or a step the case cannot take
is refused at once (exit 2) instead of later by the runner.

``--correct`` and ``--undo`` (with ``--reason``) correct or undo a § 370-10 notice's
entry of that step, a service or the crew's completion (``alerts.corrections``; a
notice under another section is refused, saying so):
the entry stays on record, the correction names who and why, and the case is
recomputed from the corrected facts; an entry a later act rests on is refused,
naming what to undo first. ``sidewalk act payment BILL-NOTICE --correct --amount …``
(or ``--at``, the right date paid) and ``--undo`` do the same for a payment on a bill
(``alerts.corrections.correct_payment``; ``--payment ID`` picks one, default the latest).

The records and the engine load when the command runs (``common``: a fast --help).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from sidewalk.cli.common import (
    ConfigOption,
    WhoOption,
    console,
    fail,
    no_nul,
    refusals,
    village,
)

if TYPE_CHECKING:
    from datetime import datetime

    from sidewalk.alerts.crew import CrewWork
    from sidewalk.analytics.clocks.enforcement import Enforcement
    from sidewalk.cli.common import Village
    from sidewalk.core.profile import Profile
    from sidewalk.storage.cases import CaseStore, FrontageRecord, NoticeRecord

# The § 370-10 steps a person records here, in plain words for what is printed. The
# cold-weather and street entries have commands of their own (sidewalk cold, street).
STEPS = {
    "confirm_hazard": "hazard confirmed",
    "record_delivery": "notice delivered",
    "owner_unavailable": "owner unavailable to receive the hazard notice",
    "record_treated": "walk sanded or salted",
    "record_ice": "untreated ice seen on the walk",
    "inspected_clear": "walk inspected and found clear",
    "abatement_done": "village abatement done",
    "bill_received": "bill received by the owner",
    "paid_in_full": "bill paid in full",
}


def act(  # noqa: PLR0917 (Typer maps parameters to options)
    kind: Annotated[
        str, typer.Argument(help=" | ".join(STEPS) + " | payment (with --correct or --undo)")
    ],
    target: Annotated[
        str,
        typer.Argument(
            help="notice number, e.g. CLY-2026-000002 (record_treated, record_ice:"
            " the address or frontage)"
        ),
    ],
    who: WhoOption,
    at: Annotated[
        str | None,
        typer.Option(
            help="when it happened, ISO 8601 or local time (default: now); with --correct,"
            " the right time"
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            help="record_delivery: hand (personal service, the default), posted (on the"
            " premises) or mail (--at is its receipt); what starts a period is the profile's"
            " notice_delivery"
        ),
    ] = None,
    correct: Annotated[
        bool,
        typer.Option(
            "--correct",
            help="correct the entry of this step on the notice (record_delivery:"
            " --at and/or --method; abatement_done: --at); needs --reason",
        ),
    ] = False,
    undo: Annotated[
        bool,
        typer.Option(
            "--undo",
            help="undo the entry of this step on the notice (entered in error); needs --reason",
        ),
    ] = False,
    reason: Annotated[
        str | None, typer.Option(help="--correct, --undo: why (kept on record)")
    ] = None,
    amount: Annotated[
        str | None, typer.Option(help="payment --correct: the right amount, e.g. 15.00")
    ] = None,
    payment: Annotated[
        int | None,
        typer.Option(help="payment --correct/--undo: which payment (default: the latest)"),
    ] = None,
    worker: Annotated[
        list[str] | None,
        typer.Option(
            help="abatement_done: who worked how many hours, 'Pat Olson=2.5' (repeat it for"
            " each worker); the bill prices them at the profile's crew rate"
        ),
    ] = None,
    equipment: Annotated[
        list[str] | None,
        typer.Option(help="abatement_done: equipment and its hours, 'plow truck=1' (repeatable)"),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record what a person did (hazard confirmed, notice delivered, …) for the clocks, or
    correct or undo a wrong entry (--correct, --undo) with the reason."""
    from sidewalk.alerts.delivery import NotReadyError
    from sidewalk.core.clock import format_local

    if kind == "payment":
        if correct == undo:
            fail("payment: --correct (with --amount and/or --at) or --undo, with --reason")
        _correct_payment(
            village(config), target, who, at=at, amount=amount, payment=payment, undo=undo,
            reason=reason,
        )  # fmt: skip
        return
    if amount is not None or payment is not None:
        fail("--amount and --payment go with: sidewalk act payment BILL-NOTICE --correct/--undo")
    if kind not in STEPS:
        fail(
            f"unknown step {kind!r}: one of {', '.join(STEPS)} (pours and permits:"
            " sidewalk cold; obstructions, sweeping, street privileges: sidewalk street)"
        )
    no_nul(target=target, who=who, reason=reason or "")
    if correct and undo:
        fail("--correct or --undo, not both")
    place = village(config)
    if correct or undo:
        _correct(place, kind, target, who, at=at, method=method, undo=undo, reason=reason)
        return
    if reason is not None:
        fail("--reason goes with --correct or --undo")
    crew = _crew(kind, worker or [], equipment or [])
    when = place.instant("--at", at)
    with place.cases() as cases, refusals(ValueError, NotReadyError):
        if kind in ("record_treated", "record_ice"):
            frontage = _frontage(cases, target)
            _try(kind, frontage.id, when, who)
            cases.actions.record(kind, frontage.id, when, who)
            what = frontage.street_address
        else:
            notice = _notice(cases, target)
            detail = {"method": method or "hand"} if kind == "record_delivery" else {}
            case = _case(cases, place.profile, notice)
            _try(kind, notice.number, when, who, case=case, detail=detail)
            if kind in ("bill_received", "paid_in_full"):
                _bill_first(cases, notice, kind)
            _record(cases, notice, kind, when, who, method=method or "hand", profile=place.profile)
            address = cases.registry.get_frontage(notice.frontage_id).street_address
            what = f"notice {notice.number}, {address}"
            if crew is not None:
                what += f"; the crew's hours: {_crew_hours(cases, notice, crew, when, who)}"
    console().print(
        f"recorded: {STEPS[kind]} — {what}, {format_local(when, place.profile.zone)}, by {who};"
        " the analytics runner applies it",
        soft_wrap=True,
    )


def _bill_first(cases: CaseStore, notice: NoticeRecord, kind: str) -> None:
    """A bill's step only once the case's bill exists (the dashboard refuses it too)."""
    order = None
    if notice.violation_id is not None:
        key = cases.clocks.get_violation(notice.violation_id).key
        order = cases.bills.abatement_by_key(f"{key}/abatement")
    if order is None or cases.bills.for_abatement(order.id) is None:
        fail(
            f"refused: {notice.number}: {STEPS[kind]} cannot be recorded: no bill has been"
            " issued for this case yet (bill it first: sidewalk notices bill)"
        )


def _crew(kind: str, workers: list[str], equipment: list[str]) -> CrewWork | None:
    """The crew's hours given with ``abatement_done`` (None: none given)."""
    from sidewalk.alerts.crew import CrewInputError, crew_work, parse_pairs

    if not workers and not equipment:
        return None
    if kind != "abatement_done":
        fail("--worker and --equipment go with abatement_done (the crew's hours for the bill)")
    try:
        return crew_work(parse_pairs(workers, "--worker"), parse_pairs(equipment, "--equipment"))
    except CrewInputError as exc:
        fail(f"refused: {exc}")


def _crew_hours(
    cases: CaseStore, notice: NoticeRecord, crew: CrewWork, when: datetime, who: str
) -> str:
    """Keep the crew's hours with the case's work order, for its bill; what was kept."""
    from sidewalk.alerts.accounts import record_crew_work

    if notice.violation_id is None:
        fail(f"refused: notice {notice.number} has no case with a Village work order")
    key = cases.clocks.get_violation(notice.violation_id).key
    order = cases.bills.abatement_by_key(f"{key}/abatement")
    if order is None:
        fail(f"refused: notice {notice.number}: no Village work order to keep the hours with")
    record_crew_work(cases, order.id, crew, when, who)
    return crew.words()


def _correct(
    place: Village,
    kind: str,
    target: str,
    who: str,
    *,
    at: str | None,
    method: str | None,
    undo: bool,
    reason: str | None,
) -> None:
    """Correct or undo the standing entry of ``kind`` on the notice (``alerts.corrections``):
    refused in the clerk's words, naming what to undo first, with nothing recorded."""
    from sidewalk.alerts.corrections import (
        ENTRY_WORDS,
        CaseRecords,
        CorrectionRefused,
        entries_of,
        other_section,
    )
    from sidewalk.alerts.corrections import correct_entry as correction
    from sidewalk.core.clock import format_local
    from sidewalk.storage.cases import NotFoundError

    if kind not in ENTRY_WORDS:
        fail(
            f"refused: only {' and '.join(ENTRY_WORDS)} entries are corrected or undone"
            f" ({' and '.join(ENTRY_WORDS.values())} on a § 370-10 snow-and-ice notice)"
        )
    if undo and (at is not None or method is not None):
        fail("--undo takes no --at or --method: the entry is undone, not corrected")
    if not (reason or "").strip():
        fail("--reason: say why the entry is corrected (it is kept on record)")
    assert reason is not None
    when = None if at is None else place.instant("--at", at)
    with place.cases() as cases:
        try:
            notice = cases.notices.get_by_number(target.strip())
            if (elsewhere := other_section(notice, CaseRecords.read(cases, notice).violation)):
                fail(f"refused: {elsewhere}")
        except NotFoundError:
            fail(f"no notice {target!r}: give its number, e.g. CLY-2026-000002 (notices register)")
        except CorrectionRefused as exc:
            fail(f"refused: {exc}")
        standing = [e for e in entries_of(cases, notice) if e.kind == kind and not e.undone]
        if not standing:
            fail(
                f"refused: {ENTRY_WORDS[kind]} is not on record for notice {notice.number}"
                " (never recorded, or undone)"
            )
        entry = standing[-1]
        try:
            done = correction(
                cases, place.profile, notice, entry.id, who=who, reason=reason,
                at=when, method=method, undo=undo,
            )  # fmt: skip
        except CorrectionRefused as exc:
            fail(f"refused: {exc}")
    zone = place.profile.zone
    was = format_local(entry.at, zone)
    then = "undone" if undo else f"corrected to {format_local(done.at, zone)}"
    if not undo and method is not None:
        then += f", {method}"
    console().print(
        f"recorded: {ENTRY_WORDS[kind]} of {was} on notice {notice.number} {then}, by {who},"
        f" because: {reason.strip()}; the entry stays on record and the analytics runner"
        " recomputes the case",
        soft_wrap=True,
    )


def _correct_payment(
    place: Village,
    target: str,
    who: str,
    *,
    at: str | None,
    amount: str | None,
    payment: int | None,
    undo: bool,
    reason: str | None,
) -> None:
    """Correct or undo a payment on the bill ``target`` sent (``alerts.corrections``)."""
    from decimal import Decimal, InvalidOperation

    from sidewalk.alerts.corrections import CorrectionRefused, correct_payment, payments_of
    from sidewalk.core.clock import format_local
    from sidewalk.storage.cases import NotFoundError

    no_nul(target=target, who=who, reason=reason or "", amount=amount or "")
    if undo and (at is not None or amount is not None):
        fail("--undo takes no --at or --amount: the payment is undone, not corrected")
    if not (reason or "").strip():
        fail("--reason: say why the payment is corrected (it is kept on record)")
    assert reason is not None
    value = None
    if amount is not None:
        try:
            value = Decimal(amount.strip().lstrip("$"))
        except InvalidOperation:
            value = Decimal("NaN")
        if not value.is_finite():
            fail(f"--amount: not an amount: {amount!r} (e.g. 15.00)")
    when = None if at is None else place.instant("--at", at)
    with place.cases() as cases:
        try:
            notice = cases.notices.get_by_number(target.strip())
        except NotFoundError:
            fail(f"no notice {target!r}: give the bill's number, e.g. CLY-2026-000003")
        try:
            standing = payments_of(cases, notice)
            if not standing:
                fail(f"refused: bill {notice.number} has no payment on record to correct")
            old = (
                standing[-1]
                if payment is None
                else next((p for p in standing if p.id == payment), None)
            )
            if old is None:
                fail(
                    f"--payment: bill {notice.number} has no payment {payment} on record"
                    f" (its payments: {', '.join(str(p.id) for p in standing)})"
                )
            bill = correct_payment(
                cases, place.profile, notice, old.id, who=who, reason=reason,
                now=place.instant("--at", None), amount=value, paid_at=when, undo=undo,
            )  # fmt: skip
        except CorrectionRefused as exc:
            fail(f"refused: {exc}")
    was = f"${old.amount:.2f} of {format_local(old.paid_at, place.profile.zone)}"
    console().print(
        f"recorded: the payment {was} on bill {notice.number}"
        f" {'undone' if undo else 'corrected'}, by {who}, because: {reason.strip()}; the"
        f" bill's balance is now ${bill.balance:.2f}; the payment stays on record",
        soft_wrap=True,
    )


def _notice(cases: CaseStore, number: str) -> NoticeRecord:
    """The notice of a § 370-10 case, by its number."""
    from sidewalk.storage.cases import NotFoundError

    try:
        notice = cases.notices.get_by_number(number.strip())
    except NotFoundError:
        fail(f"no notice {number!r}: give its number, e.g. CLY-2026-000002 (notices register)")
    violation = (
        None if notice.violation_id is None else cases.clocks.get_violation(notice.violation_id)
    )
    if violation is None or not violation.rule.startswith("snow_and_ice."):
        fail(
            f"notice {notice.number} is not about a § 370-10 snow-and-ice case: record its"
            " service with `sidewalk street delivered --id …` (an obstruction) or"
            " `sidewalk street noticed --id …` (an inspector's finding)"
        )
    return notice


def _case(cases: CaseStore, profile: Profile, notice: NoticeRecord) -> Enforcement:
    """A copy of the notice's case with every recorded entry counted (the dashboard's
    own, ``analytics.casework``), keyed by the notice's number for its refusals."""
    from dataclasses import replace

    from sidewalk.analytics.casework import case_clock_key, case_copy
    from sidewalk.analytics.clocks.enforcement import Enforcement

    assert notice.violation_id is not None
    violation = cases.clocks.get_violation(notice.violation_id)
    key = case_clock_key(violation)
    clocks = cases.clocks.list(frontage_id=violation.frontage_id, kind="enforcement")
    clock = next((c for c in reversed(clocks) if c.key == key), None)
    played = case_copy(profile, violation, clock, cases.actions.list(violation.key))
    case = played.cases[violation.key]
    copy = Enforcement(profile)
    copy.load({notice.number: replace(case, key=notice.number, history=[])})
    return copy


def _try(
    kind: str,
    target: str,
    at: datetime,
    who: str,
    *,
    case: Enforcement | None = None,
    detail: dict[str, str] | None = None,
) -> None:
    """The step typed by the clocks' own models and, on a case, tried with the engine's
    rules; a refusal exits 2 naming the notice, not an internal key."""
    from sidewalk.analytics.clocks.actions import ActionError, EnforcementAction, parse_action

    try:
        action = parse_action(kind, target, detail, at=at, who=who)
        if case is not None:
            assert isinstance(action, EnforcementAction)
            case.act(action)
    except (ActionError, ValueError) as exc:
        fail(f"refused: {exc}")


def _record(
    cases: CaseStore,
    notice: NoticeRecord,
    kind: str,
    at: datetime,
    who: str,
    *,
    method: str,
    profile: Profile,
) -> None:
    """The step on the notice's case; a delivery is recorded the way ``notices delivered``
    records it (the delivery, then the step for the clock)."""
    from sidewalk.alerts import delivery
    from sidewalk.alerts.notices import CLOCK_FROM_DELIVERY

    if kind == "record_delivery":
        if notice.delivered_at is not None:
            fail(f"refused: notice {notice.number} was delivered on {notice.delivered_at:%Y-%m-%d}")
        if notice.kind not in CLOCK_FROM_DELIVERY:
            fail(f"refused: no period runs from the delivery of a {notice.kind} notice")
        delivery.record_notice_delivery(cases, notice.id, at, who, method, profile=profile)
        return
    assert notice.violation_id is not None
    violation = cases.clocks.get_violation(notice.violation_id)
    cases.actions.record(kind, violation.key, at, who, {"notice": notice.number})


def _frontage(cases: CaseStore, target: str) -> FrontageRecord:
    """A watched frontage by id, street address (any case and spacing) or notice number."""
    from sidewalk.storage.cases import NotFoundError

    def plain(text: str) -> str:
        return " ".join(text.split()).casefold()

    found = [
        f
        for f in cases.registry.list_frontages()
        if plain(target) in {plain(f.id), plain(f.street_address)}
    ]
    if not found:
        try:
            found = [cases.registry.get_frontage(cases.notices.get_by_number(target).frontage_id)]
        except NotFoundError:
            fail(f"no frontage, address or notice {target!r}: give the address, e.g. '105 Main St'")
    if len(found) > 1:
        fail(
            f"{target!r} is {len(found)} frontages: give the id of one"
            f" ({', '.join(f.id for f in found)})"
        )
    if found[0].device_id is None:
        fail(f"refused: no pole watches {found[0].street_address}, so no clock runs there")
    return found[0]
