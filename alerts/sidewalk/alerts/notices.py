"""Written notices rendered from templates the village can edit without code.

Rendering decides nothing: it turns a recorded decision (a violation, an
abatement's bill, a survey's defects, an obstruction, a permit finding) and the
case records (frontage, owner) into the words of a notice. Templates use
``StrictUndefined`` so a missing value is an error, never a blank on paper.

Every kind is a letter from the Village: what was found,
in plain words; what to do and by when, in the Village's local time; what
happens if not, only as the ordinance says it, cited plainly ("Village Code
§ 370-10 A"); the officer who signs it and whom to call. The stored text is
the letter, then a form feed (``\f``), then the evidence record (the
measurements, the readings with their references, the clock's history and
the Code's own words), which the PDF prints on a page of its own. No
internal vocabulary (state names, field names, ``device#seq``) reaches the
letter: ``LETTER_FILTERS`` turn each into words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from html import escape as html_escape
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final
from zoneinfo import ZoneInfo

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError, select_autoescape

from sidewalk.alerts.letterhead import Letterhead, cited_in, plain_citation
from sidewalk.alerts.wording import (
    CAUSE_WORDS,
    amount,
    feet_and_inches,
    feet_bound,
    feet_rule,
    feet_short,
    how_cessation_was_found,
    inches,
    inches_short,
    local_day,
    quantity_words,
    usd,
    words,
)
from sidewalk.core.clock import format_local
from sidewalk.core.profile import DepositChargeRule, Profile, Provision, Rule

if TYPE_CHECKING:
    from sidewalk.analytics.clocks.bill_terms import BillTerms

TEMPLATES = Path(__file__).parent / "templates"

# Notices addressed inside the Village (no owner mailing); the rest go to the owner.
INTERNAL_KINDS: Final = frozenset({"frozen_ground_advisory", "permit_advisory"})
OWNER_KINDS: Final = frozenset(
    {
        "clearing_violation",
        "hazard_notice",
        "hazard_abatement_notice",
        "abatement_bill",
        "repair_notice",
        "replacement_notice",
        "obstruction_notice",
        "inspection_notice",
    }
)
# The period these notices set runs from their delivery (§ 370-10 B(1), B(2)).
CLOCK_FROM_DELIVERY: Final = frozenset({"clearing_violation", "hazard_notice"})


class NoticeError(ValueError):
    """A notice that cannot be rendered (missing address, unknown template variable, …)."""


# A line in the window above the street that is not an owner's name.
_NOT_A_NAME: Final = re.compile(r"^\s*(c/o|attn|care of|general delivery|po box|p\.o\.)\b", re.I)


@dataclass(frozen=True)
class Addressee:
    name: str
    mailing_address: tuple[str, ...]

    @property
    def owners(self) -> tuple[str, ...]:
        """Every owner of record the window names: the first, then each name line the
        county puts above the address (its second owner); an address line has a number."""
        names = [self.name]
        for line in self.mailing_address[:-1]:
            if any(c.isdigit() for c in line) or _NOT_A_NAME.match(line) or not line.strip():
                break
            names.append(line.strip())
        return tuple(dict.fromkeys(n for n in names if n.strip()))

    @property
    def greeting(self) -> str:
        """``Jane Doe and John Doe``: the salutation names every owner of record."""
        owners = self.owners
        if len(owners) <= 2:
            return " and ".join(owners)
        return f"{', '.join(owners[:-1])} and {owners[-1]}"


@dataclass(frozen=True)
class FrontageInfo:
    id: str
    address: str
    parcel: str


@dataclass(frozen=True)
class RenderedNotice:
    number: str
    kind: str
    text: str
    html: str


@dataclass(frozen=True)
class LedgerLine:
    """One line of an abatement bill, exact to the cent."""

    description: str
    quantity: Decimal
    unit: str
    rate: Decimal
    amount: Decimal
    unconfirmed: bool = False


@dataclass(frozen=True)
class BlockDefect:
    """One defective block from a § 370-5 (11) survey, as measured (mm)."""

    block: int
    rule: str  # vertical_differential | horizontal_gap | surface_deterioration
    measured_mm: float
    uncertainty_mm: float
    edge: str | None = None  # crack (sharp-edged) or joint (round-edged), for (11)(a)


@dataclass(frozen=True)
class AdvisoryFinding:
    """A permit or cold-weather finding, as the pure checks report it."""

    rule: str
    citation: str | None
    severity: str
    message: str
    at: datetime
    unconfirmed: bool = False
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Photo:
    """An evidence frame referenced by a notice (content hash; bytes live in the evidence store)."""

    sha256: str
    taken_at: datetime
    device: str | None = None
    caption: str = ""


@dataclass(frozen=True)
class Reading:
    """One sensor reading quoted as evidence."""

    at: datetime
    device: str
    seq: int | None
    quantity: str
    value: str


@dataclass(frozen=True)
class Evidence:
    """What the Village measured, for any notice kind."""

    photos: tuple[Photo, ...] = ()
    readings: tuple[Reading, ...] = ()
    facts: tuple[tuple[str, str], ...] = field(default=())


NO_EVIDENCE: Final = Evidence()


@dataclass(frozen=True)
class LetterContext:
    """What a letter needs beyond its record: who signs it, and what the Village confirmed.

    ``penalty``: the § 370-10 H penalty in words once the Village confirmed it
    (None: the letter names the section and no amount). ``confirmed``: one
    sentence per confirmed value the notice relies on, for the evidence record.
    """

    letterhead: Letterhead | None = None
    penalty: str | None = None
    confirmed: tuple[str, ...] = ()
    # What the Village calls each pole (device id, name): readings are cited by it.
    poles: tuple[tuple[str, str], ...] = ()


NO_LETTER: Final = LetterContext()

# How the evidence record says a clock's state (the engine's names stay in record.json).
LETTER_FILTERS: Final = {"plain": plain_citation, "words": words, "amount": amount}


@functools.lru_cache(maxsize=8)
def _environment(template_dir: Path | None) -> Environment:
    # One environment per folder keeps compiled templates; Jinja still reloads
    # a template the village edits on disk (auto_reload checks its mtime).
    dirs = [str(template_dir)] if template_dir else []
    env = Environment(
        loader=FileSystemLoader([*dirs, str(TEMPLATES)]),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(LETTER_FILTERS)
    return env


def _require_mailing(number: str, owner: Addressee, frontage: FrontageInfo) -> None:
    if not owner.name.strip() or not any(line.strip() for line in owner.mailing_address):
        raise NoticeError(
            f"notice {number}: owner of {frontage.id} has no name or last-known mailing address"
        )


_KIND_OF_VALUE: Final = {
    "minutes": "period", "hours": "period", "days": "period", "calendar_days": "period",
    "business_days": "period", "months": "period", "years": "period", "usd": "amount",
    "mm": "measure", "inches": "measure", "feet": "measure",
}  # fmt: skip


def source_words(rule: Rule) -> str:
    """What a letter puts in parentheses after a value: the Code's section, or, for a value
    the Code's text does not set (unconfirmed), that in plain words: never a profile note,
    never a section cited for a number it does not contain."""
    if not rule.unconfirmed and rule.citation:
        return plain_citation(rule.citation)
    what = _KIND_OF_VALUE.get(rule.unit, "value")
    if rule.citation:
        return f"a {what} set by the Village: {plain_citation(rule.citation)} does not state one"
    return f"a {what} set by the Village: the text of the Village Code does not state one"


def _cited(name: str, rule: Rule) -> dict[str, Any]:
    return {
        "name": name,
        "citation": rule.citation or "",
        "plain": plain_citation(rule.citation),
        "source": source_words(rule),
        "amount": amount(rule),
        "words": rule.words or "",
        "described": rule.describe(),
        "unconfirmed": rule.unconfirmed,
        "note": rule.note or "",
    }


def _provision(name: str, provision: Provision | None) -> dict[str, Any] | None:
    """A section cited for what it provides (§ 370-10 F), not for a value."""
    if provision is None or not provision.citation:
        return None
    return {
        "name": name,
        "citation": provision.citation,
        "plain": plain_citation(provision.citation),
        "source": plain_citation(provision.citation),
        "amount": "",
        "words": provision.words or "",
        "described": provision.describe(),
        "unconfirmed": provision.unconfirmed,
        "note": provision.note or "",
    }


def sections(*citations: str | None) -> str:
    """The profile's citations as a letter cites them, each section once and never a note:
    ``§ 370-10 A (inferred); § 370-10 A (inferred)`` → ``Village Code § 370-10 A``."""
    return plain_citation("; ".join(c for c in citations if c))


def _unconfirmed(rules: Iterable[tuple[str, Rule | DepositChargeRule]]) -> list[str]:
    return [f"{name}: {rule.describe()}" for name, rule in rules if rule.unconfirmed]


def _evidence(evidence: Evidence, profile: Profile) -> dict[str, Any]:
    zone = profile.zone
    return {
        "photos": [
            {
                "sha256": p.sha256,
                "taken_local": format_local(p.taken_at, zone),
                "device": p.device or "-",
                "caption": p.caption,
            }
            for p in evidence.photos
        ],
        "readings": [
            {
                "at_local": format_local(r.at, zone),
                "device": r.device,
                "seq": "-" if r.seq is None else r.seq,
                "quantity": r.quantity,
                "quantity_words": quantity_words(r.quantity),
                "reference": _reference("reading", r.device, r.seq),
                "value": r.value,
            }
            for r in evidence.readings
        ],
        "facts": [{"label": k, "value": v} for k, v in evidence.facts],
    }


def _base(
    kind: str,
    number: str,
    issued_at: datetime,
    *,
    owner: Addressee,
    frontage: FrontageInfo,
    profile: Profile,
    letter: LetterContext = NO_LETTER,
) -> dict[str, Any]:
    letterhead = letter.letterhead or Letterhead.unconfigured(profile)
    return {
        "kind": kind,
        "village": profile.village,
        "notice": {"number": number},
        "owner": owner,
        "frontage": frontage,
        "issued_local": format_local(issued_at, profile.zone),
        "issued_date": local_day(issued_at.astimezone(profile.zone).date()),
        "evidence": {"photos": [], "readings": [], "facts": []},
        "history": [],
        "page_break": "\f",
        "letterhead": letterhead,
        "penalty": letter.penalty,
        # Each value once: a notice's period and its finding may be one value.
        "confirmed": list(dict.fromkeys(letter.confirmed)),
        "pole_names": dict(letter.poles),
        "offense_rule": _cited("snow_and_ice.offense_period", profile.snow_and_ice.offense_period),
        "expense": _cited("billing.bill_payable", profile.billing.bill_payable),
        "tax_roll": _cited("billing.tax_roll_after", profile.billing.tax_roll_after),
        # F: the Village's removal once a notice's time has passed (snow and ice).
        "removal_after_notice": _provision(
            "snow_and_ice.abatement_after_notice", profile.snow_and_ice.abatement_after_notice
        ),
    }


def render_kind(
    kind: str, context: Mapping[str, Any], *, number: str, template_dir: Path | None = None
) -> RenderedNotice:
    """Render ``<kind>.txt.j2`` and ``<kind>.html.j2`` with ``context``.

    An unknown variable in a (village-edited) template is a ``NoticeError``
    naming the notice and the variable; nothing half-rendered is returned.
    """
    env = _environment(template_dir)
    try:
        text = env.get_template(f"{kind}.txt.j2").render(context)
        html = env.get_template(f"{kind}.html.j2").render(context)
    except TemplateError as exc:
        raise NoticeError(f"notice {number}: template error in {kind}: {exc}") from None
    for device, name in (context.get("pole_names") or {}).items():
        text = _pole_named(text, device, name, escape=False)
        html = _pole_named(html, device, name, escape=True)
    return RenderedNotice(number=number, kind=kind, text=text, html=html)


def pole_words(label: str) -> str:
    """``the Main St east pole``: a pole as the Village names it (its registry label)."""
    return label if "pole" in label.casefold() else f"the {label} pole"


def _pole_named(text: str, device: str, name: str, *, escape: bool) -> str:
    """Each mention of the pole's device id (a reading's source, a photograph's camera)
    by the Village's name for the pole; the evidence package keeps the id."""
    words = html_escape(pole_words(name)) if escape else pole_words(name)
    return re.sub(rf"(?<![\w-]){re.escape(device)}(?![\w-])", lambda _: words, text)


def history_rows(transitions: Iterable[Any], profile: Profile) -> list[dict[str, str]]:
    """Clock transitions (engine or case-record form) as notice table rows."""
    rows = []
    for t in transitions:
        cause = t.cause
        rows.append(
            {
                "at_local": format_local(t.at, profile.zone),
                "from_state": t.from_state,
                "to_state": t.to_state,
                "from_words": words(t.from_state),
                "to_words": words(t.to_state),
                "cause": _cause_text(cause.kind, cause.device, cause.seq, cause.who),
            }
        )
    return rows


def render_clearing_violation(
    violation: Mapping[str, Any],
    *,
    number: str,
    issued_at: datetime,
    owner: Addressee,
    frontage: FrontageInfo,
    profile: Profile,
    history: Sequence[Mapping[str, str]] = (),
    template_dir: Path | None = None,
    letter: LetterContext = NO_LETTER,
    evidence: Evidence = Evidence(),
) -> RenderedNotice:
    """The § 370-10 A notice for one violation (its stored evidence), as text and HTML."""
    _require_mailing(number, owner, frontage)
    zone = profile.zone
    reviewed = _reviewed(violation.get("review"), zone)
    try:
        if reviewed is None:
            width = float(violation["measured_width_mm"])
            measured_at = datetime.fromisoformat(str(violation["measured_at"]))
        else:  # decided by a person on review: no camera measurement reached the Village
            width, measured_at = 0.0, datetime.fromisoformat(str(violation["deadline"]))
        cessation_at = datetime.fromisoformat(str(violation["cessation_at"]))
        deadline = datetime.fromisoformat(str(violation["deadline"]))
        required = float(violation["required_width_mm"])
        # The uncertainty the decision used; a record from before it was kept: the
        # camera's stated one, from the profile.
        stated = violation.get("width_uncertainty_mm")
        uncertainty = (
            profile.snow_and_ice.width_tolerance.length_mm if stated is None else float(stated)
        )
    except (KeyError, TypeError, ValueError):
        raise NoticeError(
            f"notice {number}: a clearing violation needs the measured width as evidence"
        ) from None
    rules = profile.snow_and_ice
    peak = violation.get("snow_depth_peak_mm")
    context = _base(
        "clearing_violation",
        number,
        issued_at,
        owner=owner,
        frontage=frontage,
        profile=profile,
        letter=letter,
    )
    context.update(
        {
            "cessation_local": format_local(cessation_at, zone),
            "cessation_how": how_cessation_was_found(
                violation.get("cessation_basis"),
                format_local(datetime.fromisoformat(str(violation["cessation_earliest"])), zone)
                if violation.get("cessation_earliest")
                else None,
            ),
            "deadline_local": format_local(deadline, zone),
            "deadline_rule": rules.clearing_deadline,
            "width_rule": rules.clearing_min_width,
            "deadline_cited": _cited("snow_and_ice.clearing_deadline", rules.clearing_deadline),
            "width_cited": _cited("snow_and_ice.clearing_min_width", rules.clearing_min_width),
            "notice_rule": _cited(
                "snow_and_ice.nonhazard_notice_period", rules.nonhazard_notice_period
            ),
            "tolerance": {
                "amount": amount(rules.width_tolerance),
                "pending": rules.width_tolerance.unconfirmed
                and not any(c.lower().startswith("width tolerance") for c in letter.confirmed),
            },
            "measured": {
                "device": violation.get("measured_by") or "-",
                "seq": violation.get("measured_seq", "-"),
                "width": feet_and_inches(width, uncertainty, short_of_mm=required),
                "width_short": feet_short(width, uncertainty, short_of_mm=required),
                # Short by more than the measurement's uncertainty: what the decision found.
                "beyond_uncertainty": required - width > uncertainty,
                # Rounded up where the letter says the camera measures to within
                # it, down where it says the path was short by more than it.
                "uncertainty": feet_bound(uncertainty, up=True),
                "uncertainty_exceeded": feet_bound(uncertainty, up=False),
                "at_local": format_local(measured_at, zone),
                "required": feet_and_inches(required),
                "required_short": feet_rule(required),
                "reference": _reference(
                    "reading", violation.get("measured_by") or "-", violation.get("measured_seq")
                ),
                "snow_depth_peak": "-" if peak is None else f"{float(peak):.0f} mm",
            },
            "evidence": _evidence(evidence, profile),
            "unconfirmed": _unconfirmed(
                (name, getattr(rules, name))
                for name in (
                    "clearing_deadline",
                    "clearing_min_width",
                    "width_tolerance",
                    "offense_period",
                    "nonhazard_notice_period",
                )
            ),
            "history": list(history),
            "ice": _ice_words(violation.get("ice"), zone),
            "reviewed": reviewed,
        }
    )
    return render_kind("clearing_violation", context, number=number, template_dir=template_dir)


def _reviewed(review: Any, zone: ZoneInfo) -> dict[str, str] | None:
    """A deadline a person decided on review (the pole's evidence never came in): who,
    when and why, for the letter and the evidence page."""
    if not isinstance(review, Mapping) or review.get("decision") != "not_cleared":
        return None
    return {
        "by": str(review.get("by") or "a Village inspector"),
        "reason": str(review.get("reason") or ""),
        "at_local": format_local(datetime.fromisoformat(str(review["at"])), zone),
    }


DELIVERY_WORDS: Final = {
    "hand": "handed to the owner, occupant or person in charge",
    "posted": "posted on the premises",
    "mail": "received by mail",
    "email": "received by e-mail",
}
_SURFACE_WORDS = {"wet": "wet", "ice": "icy", "dry": "dry", "treated": "sanded or salted"}


def _ice_words(ice: Any, zone: ZoneInfo) -> dict[str, str] | None:
    """§ 370-10 A's ice at the deadline in plain words: ``found`` for the letter,
    ``record`` (how it was known, with the readings) for the evidence page."""
    if not isinstance(ice, Mapping):
        return None
    readings: Mapping[str, Any] = ice.get("readings") or {}
    seen_at = format_local(datetime.fromisoformat(str(ice["seen_at"])), zone)
    status = str(ice.get("status"))
    if ice.get("known_by") == "inspector":
        who = str(readings.get("inspector") or "a Village inspector")
        if status == "treated":
            return None
        return {
            "found": f"A Village inspector, {who}, also found ice on the sidewalk that had not"
            f" been sanded or salted, on {seen_at}.",
            "record": f"untreated ice seen by inspector {who} on {seen_at} (entered by the"
            " inspector).",
        }
    camera = readings.get("camera") or {}
    parts = [f"camera {_reference('reading', camera.get('device'), camera.get('seq'))}"]
    surface = readings.get("surface_state")
    if surface:
        parts.append(f"surface seen {_SURFACE_WORDS.get(str(surface), str(surface))}")
    temp = readings.get("surface_temp_c")
    source = readings.get("surface_temp")
    if temp is not None:
        where = (
            f" ({_reference('reading', source.get('device'), source.get('seq'))})"
            if isinstance(source, Mapping)
            else " (measured with the camera reading)"
        )
        parts.append(f"pavement temperature {float(temp):.1f} °C{where}")
    measured = "; ".join(parts)
    if status == "untreated":
        found = (
            "The Village's sensors also found ice on the sidewalk that had not been sanded or"
            " salted: the pavement was at or below freezing and its surface wet or icy"
            f" ({seen_at})."
        )
        return {"found": found, "record": f"untreated ice, from the pole's sensors: {measured}."}
    if status == "suspected":
        found = f"The camera also saw what looked like ice on the sidewalk ({seen_at})."
        return {"found": found, "record": f"ice suspected by the camera: {measured}."}
    return None


def _reference(kind: str, device: str | None, seq: int | None) -> str:
    """``pole-main-01, reading no. 53``: a reading's reference in words."""
    what = "photograph" if kind == "frame" else "reading"
    if seq is None:
        return f"{what}s from {device}"
    return f"{device}, {what} no. {seq}"


def _cause_text(kind: str, device: str | None, seq: int | None, who: str | None) -> str:
    if kind in ("reading", "frame"):
        return _reference(kind, device, seq)
    if kind == "person":
        return f"recorded by {who}"
    return CAUSE_WORDS.get(kind, kind.replace("_", " "))


def render_hazard_notice(
    kind: str,
    *,
    number: str,
    issued_at: datetime,
    owner: Addressee,
    frontage: FrontageInfo,
    profile: Profile,
    missed_deadline: datetime,
    confirmed_by: str,
    template_dir: Path | None = None,
    letter: LetterContext = NO_LETTER,
    evidence: Evidence = Evidence(),
    history: Sequence[Mapping[str, str]] = (),
    delivery: tuple[datetime, str] | None = None,
    owner_mailing: Mapping[str, Any] | None = None,
) -> RenderedNotice:
    """§ 370-10 B(1): the 2-hour hazard notice, or the after-the-fact abatement notice.

    ``delivery`` (when and how it was delivered, as the officer recorded it) makes
    the owner's copy: it states when the two hours began and when they end.
    ``owner_mailing`` (name, address lines) is the owner of record's mailing address,
    shown apart on a notice addressed for delivery at the property.
    """
    if kind not in {"hazard_notice", "hazard_abatement_notice"}:
        raise NoticeError(f"notice {number}: no hazard template for {kind!r}")
    _require_mailing(number, owner, frontage)
    rules = profile.snow_and_ice
    context = _base(
        kind, number, issued_at, owner=owner, frontage=frontage, profile=profile, letter=letter
    )
    context.update(
        {
            "deadline_local": format_local(missed_deadline, profile.zone),
            "rule": rules.hazard_notice_period,
            "deadline_rule": rules.clearing_deadline,
            "rule_cited": _cited("snow_and_ice.hazard_notice_period", rules.hazard_notice_period),
            "deadline_cited": _cited("snow_and_ice.clearing_deadline", rules.clearing_deadline),
            "expense_citation": profile.billing.bill_payable.citation,
            "confirmed_by": confirmed_by,
            "evidence": _evidence(evidence, profile),
            "history": list(history),
            "owner_mailing": _mailing(owner_mailing),
            "delivered": None
            if delivery is None
            else {
                "at_local": format_local(delivery[0], profile.zone),
                "how": DELIVERY_WORDS.get(delivery[1], delivery[1]),
                "remove_by_local": format_local(
                    delivery[0].astimezone(UTC) + rules.hazard_notice_period.duration,
                    profile.zone,
                ),
            },
            "unconfirmed": _unconfirmed(
                [
                    ("hazard_notice_period", rules.hazard_notice_period),
                    ("clearing_deadline", rules.clearing_deadline),
                ]
            ),
        }
    )
    return render_kind(kind, context, number=number, template_dir=template_dir)


def _mailing(owner: Mapping[str, Any] | None) -> dict[str, str] | None:
    """The owner of record's name and mailing address on one line, if known."""
    if not owner or not owner.get("name"):
        return None
    lines = [str(x) for x in owner.get("address") or () if str(x).strip()]
    return {"name": str(owner["name"]), "address": ", ".join(lines)}


def render_abatement_bill(
    *,
    number: str,
    issued_at: datetime,
    owner: Addressee,
    frontage: FrontageInfo,
    profile: Profile,
    bill_id: int,
    lines: Sequence[LedgerLine],
    total: Decimal,
    costs_incurred_at: datetime,
    work: str,
    abatement_citation: str,
    template_dir: Path | None = None,
    letter: LetterContext = NO_LETTER,
    terms: BillTerms | None = None,
) -> RenderedNotice:
    """The bill for the Village's abatement, under its section's ``terms`` (``bill_terms``:
    § 370-10 G by default; § 370-8 F, § 144-17, § 370-6, § 144-12 C, …): its addressee,
    period to pay and what follows non-payment, each from the profile with its citation."""
    _require_mailing(number, owner, frontage)
    if sum((line.amount for line in lines), Decimal("0.00")) != total:
        raise NoticeError(f"notice {number}: ledger lines do not add up to the bill total")
    from sidewalk.analytics.clocks.bill_terms import bill_terms

    terms = terms or bill_terms(profile, "snow_and_ice")
    # The section the work was done under, as the ordinance numbers it. A record
    # from before this was checked may hold a profile note where a section belongs
    # (an unconfirmed period's): snow and ice removed after a notice is § 370-10 F's.
    removal = _provision(
        "snow_and_ice.abatement_after_notice", profile.snow_and_ice.abatement_after_notice
    )
    authority = sections(abatement_citation)
    if not authority and terms.kind == "snow_and_ice" and removal is not None:
        authority = removal["plain"]
    under_f = removal is not None and removal["plain"] in authority
    said: dict[str, Any] = {
        "kind": terms.kind,
        "billed": terms.billed,
        "unpaid": terms.unpaid,
        "citation": terms.citation,
        "plain": plain_citation(terms.citation),
        **{
            part: None if pair is None else _cited(*pair)
            for part, pair in (
                ("payable", terms.payable),
                ("tax_roll", terms.tax_roll),
                ("administration", terms.administration),
                ("basis", terms.basis),
            )
        },
    }
    context = _base(
        "abatement_bill",
        number,
        issued_at,
        owner=owner,
        frontage=frontage,
        profile=profile,
        letter=letter,
    )
    context.update(
        {
            "bill": {"id": bill_id, "total": usd(total), "work": work},
            "lines": [
                {
                    "description": line.description,
                    "quantity": f"{line.quantity.normalize():f}",
                    "unit": line.unit,
                    "rate": usd(line.rate) if line.unit != "%" else f"{line.rate.normalize():f}%",
                    "amount": usd(line.amount),
                    "mark": " [unconfirmed]" if line.unconfirmed else "",
                    "text": _ledger_text(line, lines),
                }
                for line in lines
            ],
            "costs_incurred_local": format_local(costs_incurred_at, profile.zone),
            "terms": said,
            "payable": said["payable"],
            "tax_roll": said["tax_roll"],
            "expense": said["payable"] or said["basis"],
            "code_rules": [
                c
                for c in (
                    removal if under_f else None,
                    said["payable"],
                    said["tax_roll"],
                    said["basis"],
                    said["administration"],
                )
                if c and c["words"]
            ],
            "abatement_citation": abatement_citation,
            "authority": authority,
            # § 370-10 C's deposit: the Village's reading that G charges its removal.
            "charge": None if terms.charge is None else {
                "unconfirmed": terms.charge[1].unconfirmed,
                "citation": plain_citation(terms.charge[1].citation or ""),
            },
            "unconfirmed": _unconfirmed(
                list(terms.rules)
                + ([terms.charge] if terms.charge else [])
                + (
                    [
                        (f"abatement_rates.{n}", getattr(profile.abatement_rates, n))
                        for n in ("crew_hourly_rate", "equipment_hourly_rate")
                    ]
                    if profile.abatement_rates is not None
                    else []
                )
            ),
        }
    )
    return render_kind("abatement_bill", context, number=number, template_dir=template_dir)


def ledger_text(line: LedgerLine, lines: Sequence[LedgerLine]) -> str:
    """One bill line as the bill's letter says it (the dashboard's preview shows the same)."""
    return _ledger_text(line, lines)


def _ledger_text(line: LedgerLine, lines: Sequence[LedgerLine]) -> str:
    """``Crew labor: 2.5 hours at $45.00 an hour = $112.50``: one bill line in words."""
    if line.unit == "%":
        base = sum((x.amount for x in lines if x.unit != "%"), Decimal("0.00"))
        return f"{line.description}: {line.rate.normalize():f}% of {usd(base)} = {usd(line.amount)}"
    if line.unit == "lot" and line.quantity == 1:
        return f"{line.description} = {usd(line.amount)}"
    unit = {"h": "hour"}.get(line.unit, line.unit)
    many = f"{line.quantity.normalize():f} {unit}{'' if line.quantity == 1 else 's'}"
    return f"{line.description}: {many} at {usd(line.rate)} an {unit} = {usd(line.amount)}"


_DEFECT_RULES: Final = {
    "vertical_differential": "sidewalk_condition.vertical_differential",
    "horizontal_gap": "sidewalk_condition.horizontal_gap",
    "surface_deterioration": "sidewalk_condition.surface_deterioration",
}


def render_repair_notice(
    *,
    number: str,
    issued_at: datetime,
    owner: Addressee,
    frontage: FrontageInfo,
    profile: Profile,
    surveyed_at: datetime,
    total_blocks: int,
    defects: Sequence[BlockDefect],
    template_dir: Path | None = None,
    letter: LetterContext = NO_LETTER,
    evidence: Evidence = Evidence(),
    survey: Mapping[str, Any] | None = None,
    addresses: Mapping[str, str] | None = None,
) -> RenderedNotice:
    """§ 370-5 (11): repair of defective blocks, or (80 % rule) replacement of the whole walk.

    ``survey`` is the owner's count as the survey aggregation decided it
    (``sidewalk.analytics.survey.BlockSurvey.to_json``): blocks measured, the
    owner's total and how it was known, and whether the whole walk is to be
    replaced; the kind follows from it. Without it (records issued before it
    existed) the kind follows from the defective share of ``total_blocks``.
    ``addresses``: the street address of each frontage the survey counts (the letter
    names them so, never by their record ids).
    """
    _require_mailing(number, owner, frontage)
    if total_blocks <= 0 or not defects:
        raise NoticeError(f"notice {number}: a repair notice needs the survey's defective blocks")
    cond = profile.sidewalk_condition
    defective = sorted({d.block for d in defects})
    if len(defective) > total_blocks:
        raise NoticeError(f"notice {number}: more defective blocks than blocks surveyed")
    share = Decimal(len(defective)) / Decimal(total_blocks)
    if survey is None:
        replace = share >= Decimal(str(cond.replacement_share.fraction))
    else:
        replace = bool(survey["replace_entire_sidewalk"])
        if replace and survey["owner_blocks"] is None:
            raise NoticeError(f"notice {number}: full replacement needs the owner's block total")
    kind = "replacement_notice" if replace else "repair_notice"
    rules_used: dict[str, Rule] = {}
    rows = []
    for d in sorted(defects, key=lambda d: (d.block, d.rule)):
        name = _DEFECT_RULES.get(d.rule)
        if name is None:
            raise NoticeError(f"notice {number}: unknown defect rule {d.rule!r}")
        rule: Rule = getattr(cond, name.split(".", 1)[1])
        rules_used[name] = rule
        rows.append(
            {
                "block": d.block,
                "rule": d.rule.replace("_", " "),
                "edge": d.edge or "-",
                "measured": inches(d.measured_mm, d.uncertainty_mm, at_least_mm=rule.length_mm),
                "limit": f"{rule.describe()}",
                "limit_plain": f"{amount(rule)}, {plain_citation(rule.citation)}",
                "letter": _defect_words(d, rule),
            }
        )
    rules_used["sidewalk_condition.replacement_share"] = cond.replacement_share
    context = _base(
        kind, number, issued_at, owner=owner, frontage=frontage, profile=profile, letter=letter
    )
    context.update(
        {
            "surveyed_local": format_local(surveyed_at, profile.zone),
            "defects": rows,
            "citations": [_cited(n, r) for n, r in rules_used.items()],
            "count": {
                "defective": len(defective),
                "total": total_blocks,
                "share": f"{(share * 100).quantize(Decimal('0.1'))}%",
                "threshold": amount(cond.replacement_share),
            },
            "evidence": _evidence(evidence, profile),
            "unconfirmed": _unconfirmed(rules_used.items()),
            "survey": _survey_by_address(survey, frontage, addresses or {}),
            "letter_defects": [r["letter"] for r in rows[:_LETTER_DEFECTS]],
            "more_defects": max(0, len(rows) - _LETTER_DEFECTS),
            "code_sections": "; ".join(
                dict.fromkeys(plain_citation(r.citation) for r in rules_used.values())
            ),
            "share_citation": plain_citation(cond.replacement_share.citation),
        }
    )
    return render_kind(kind, context, number=number, template_dir=template_dir)


def _survey_by_address(
    survey: Mapping[str, Any] | None, frontage: FrontageInfo, addresses: Mapping[str, str]
) -> Mapping[str, Any] | None:
    """The survey with each counted frontage's street address beside its record id."""
    if survey is None:
        return None
    known = {frontage.id: frontage.address, **addresses}
    counted = [
        {**f, "address": known.get(f["frontage"], "another frontage of the owner's")}
        for f in survey.get("frontages", ())
    ]
    return {**survey, "frontages": counted}


_LETTER_DEFECTS: Final = 6
_DEFECT_WORDS: Final = {
    "vertical_differential": "one edge higher than the next by",
    "horizontal_gap": "a gap between blocks of",
    "surface_deterioration": "the surface worn away to a depth of",
}


def _defect_words(d: BlockDefect, rule: Rule) -> str:
    """``Block 3: one edge higher than the next by 7/8 in (± 1/16 in) at a crack (the limit
    is 3/4 inch).``: to the sixteenth, with its uncertainty, never read under the limit."""
    where = f" at a {d.edge}" if d.edge else ""
    size = inches_short(d.measured_mm, d.uncertainty_mm, at_least_mm=rule.length_mm)
    return f"Block {d.block}: {_DEFECT_WORDS[d.rule]} {size}{where} (the limit is {amount(rule)})."


def render_obstruction_notice(
    *,
    number: str,
    issued_at: datetime,
    owner: Addressee,
    frontage: FrontageInfo,
    profile: Profile,
    area: str,
    observed_at: datetime,
    description: str,
    clear_width_mm: float | None,
    template_dir: Path | None = None,
    letter: LetterContext = NO_LETTER,
    evidence: Evidence = Evidence(),
) -> RenderedNotice:
    """§ 370-8 D/E: remove the obstruction within 24 hours of this notice."""
    _require_mailing(number, owner, frontage)
    obs = profile.obstructions
    removal = (
        obs.sidewalk_removal_after_notice if area == "sidewalk" else obs.street_removal_after_notice
    )
    rules_used = {f"obstructions.{area}_removal_after_notice": removal}
    if area == "sidewalk":
        rules_used["obstructions.fixture_min_clear_width"] = obs.fixture_min_clear_width
    context = _base(
        "obstruction_notice",
        number,
        issued_at,
        owner=owner,
        frontage=frontage,
        profile=profile,
        letter=letter,
    )
    context.update(
        {
            "area": area,
            "observed_local": format_local(observed_at, profile.zone),
            "description": description,
            # Measured by a person with a tape: to the quarter inch, never read as reaching
            # the 3 feet it fell short of.
            "clear_width": None  # the letter says none was measured, never a dash
            if clear_width_mm is None
            else feet_and_inches(clear_width_mm, short_of_mm=obs.fixture_min_clear_width.length_mm),
            "clear_width_short": None
            if clear_width_mm is None
            else feet_short(clear_width_mm, short_of_mm=obs.fixture_min_clear_width.length_mm),
            "required_width": feet_and_inches(obs.fixture_min_clear_width.length_mm),
            "removal": _cited(f"obstructions.{area}_removal_after_notice", removal),
            "citations": [_cited(n, r) for n, r in rules_used.items()],
            # § 370-8 F bills the removal on its own terms (bill_terms "obstruction").
            "bill_citation": profile.obstructions.bill_payable.citation,
            "expense": _cited("obstructions.bill_payable", obs.bill_payable),
            "tax_roll": _cited("obstructions.tax_roll_after", obs.tax_roll_after),
            "evidence": _evidence(evidence, profile),
            "unconfirmed": _unconfirmed(rules_used.items()),
        }
    )
    return render_kind("obstruction_notice", context, number=number, template_dir=template_dir)


# What the owner is to do, per inspector-entered rule (the periods come from the profile).
INSPECTION_TODO: Final = {
    "snow_on_street": "Remove the snow or ice deposited on the public way",
    "mailbox": "Clear the snow from the mailbox on the terrace",
    "dumping": "Remove what was dumped or left on the public way",
    "excavation_fence": "Put up a fence, wall or railing between the excavation and the "
    "public right-of-way",
    "demolition_fill": "Fill, grade and level the excavation left by the demolition",
    "abandoned_excavation": "Resume building on the excavation or foundation, provide "
    "safeguards against accidental injury, or fill it to grade",
}


def render_inspection_notice(
    *,
    number: str,
    issued_at: datetime,
    owner: Addressee,
    frontage: FrontageInfo,
    profile: Profile,
    rule: str,
    observed_at: datetime,
    description: str,
    finding: str = "",
    template_dir: Path | None = None,
    letter: LetterContext = NO_LETTER,
    evidence: Evidence = Evidence(),
    deposit_charge: tuple[str, bool] | None = None,
) -> RenderedNotice:
    """A rule an inspector enforces by sight (§ 370-10 C, § 370-11 C, § 370-14, §§ 144-11,
    144-12 B, C): correct it within the profile's period after this notice is delivered.

    ``deposit_charge``: for § 370-10 C, the Village's reading of whether G charges a
    deposit's removal to the owner (``snow_and_ice.deposit_removal_charge``) and whether
    that reading is settled (confirmed, or not a gap); the letter states E and H, which
    the text applies to C, and G only as that reading."""
    from sidewalk.analytics.clocks.bill_terms import bill_terms, kind_of
    from sidewalk.analytics.clocks.inspections import (
        FINDING_RULE,
        NOTICE_PERIOD,
        WORDS,
        rule_value,
    )

    _require_mailing(number, owner, frontage)
    if rule not in NOTICE_PERIOD:
        raise NoticeError(f"notice {number}: no inspector rule {rule!r}")
    period_name, finding_name = NOTICE_PERIOD[rule], FINDING_RULE[rule]
    rules_used = {
        finding_name: rule_value(profile, finding_name),
        period_name: rule_value(profile, period_name),
    }
    terms = bill_terms(profile, kind_of(f"inspection:{number}", finding_name))
    context = _base(
        "inspection_notice", number, issued_at, owner=owner, frontage=frontage, profile=profile,
        letter=letter,
    )  # fmt: skip
    context.update(
        {
            "rule": rule,
            "what": WORDS[rule],
            "todo": INSPECTION_TODO[rule],
            "finding": cited_in(finding),
            "observed_local": format_local(observed_at, profile.zone),
            "description": description,
            "period": _cited(period_name, rules_used[period_name]),
            "basis": _cited(finding_name, rules_used[finding_name]),
            "citations": [_cited(n, r) for n, r in rules_used.items() if r.words],
            "bill_citation": terms.citation,
            "deposit_charge": None
            if deposit_charge is None
            else {"reading": deposit_charge[0], "settled": deposit_charge[1]},
            "bill": {
                "billed": terms.billed,
                "unpaid": terms.unpaid,
                "payable": None if terms.payable is None else _cited(*terms.payable),
                "tax_roll": None if terms.tax_roll is None else _cited(*terms.tax_roll),
                "basis": None if terms.basis is None else _cited(*terms.basis),
            },
            "evidence": _evidence(evidence, profile),
            "unconfirmed": _unconfirmed(rules_used.items()),
        }
    )
    return render_kind("inspection_notice", context, number=number, template_dir=template_dir)


def render_advisory(
    kind: str,
    *,
    number: str,
    issued_at: datetime,
    frontage: FrontageInfo,
    profile: Profile,
    subject: str,
    findings: Sequence[AdvisoryFinding],
    deadlines: Sequence[tuple[str, datetime]] = (),
    template_dir: Path | None = None,
    letter: LetterContext = NO_LETTER,
    evidence: Evidence = Evidence(),
) -> RenderedNotice:
    """Internal advisory to the Director of Public Works (frozen ground, permits, pours)."""
    if kind not in INTERNAL_KINDS:
        raise NoticeError(f"notice {number}: {kind!r} is not an internal advisory")
    if not findings:
        raise NoticeError(f"notice {number}: an advisory needs at least one finding")
    zone = profile.zone
    context = _base(
        kind,
        number,
        issued_at,
        owner=Addressee("Director of Public Works", (profile.village.name, "internal advisory")),
        frontage=frontage,
        profile=profile,
        letter=letter,
    )
    context.update(
        {
            "subject": subject,
            "findings": [
                {
                    "rule": f.rule,
                    "rule_words": words(f.rule.rpartition(".")[2]),
                    "citation": f.citation or "no citation: a gap in the code text",
                    "plain": plain_citation(f.citation) or "no section of the Code",
                    "severity": f.severity,
                    "message": f.message,
                    "at_local": format_local(f.at, zone),
                    "mark": " [unconfirmed]" if f.unconfirmed else "",
                    "pending": f.unconfirmed,
                    "notes": list(f.notes),
                }
                for f in findings
            ],
            "deadlines": [
                {"label": label, "local": format_local(at, zone)} for label, at in deadlines
            ],
            "evidence": _evidence(evidence, profile),
            "unconfirmed": [
                f"{f.rule}: {'; '.join(f.notes) or 'value pending confirmation'}"
                for f in findings
                if f.unconfirmed
            ],
        }
    )
    return render_kind(kind, context, number=number, template_dir=template_dir)


def evidence_from_detail(detail: Mapping[str, Any]) -> Evidence:
    """The photos, readings and facts a notice's stored ``detail`` carries (JSON form)."""
    photos = tuple(
        Photo(
            sha256=str(p["sha256"]),
            taken_at=datetime.fromisoformat(str(p["taken_at"])),
            device=p.get("device"),
            caption=str(p.get("caption", "")),
        )
        for p in detail.get("photos", ())
    )
    readings = tuple(
        Reading(
            at=datetime.fromisoformat(str(r["at"])),
            device=str(r["device"]),
            seq=r.get("seq"),
            quantity=str(r["quantity"]),
            value=str(r["value"]),
        )
        for r in detail.get("readings", ())
    )
    facts = tuple((str(k), str(v)) for k, v in detail.get("facts", ()))
    return Evidence(photos, readings, facts)
