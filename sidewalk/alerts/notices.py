"""Written notices rendered from templates the village can edit without code.

Rendering decides nothing: it turns a recorded decision (a violation) and the
case records (frontage, owner) into the words of a notice. Templates use
``StrictUndefined`` so a missing value is an error, never a blank on paper.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, TemplateError, select_autoescape

from sidewalk.analytics.clocks.events import ClearingViolation
from sidewalk.core.clock import format_local
from sidewalk.core.profile import Profile
from sidewalk.core.units import mm_to_feet

TEMPLATES = Path(__file__).parent / "templates"


class NoticeError(ValueError):
    """A notice that cannot be rendered (missing address, unknown template variable, …)."""


@dataclass(frozen=True)
class Addressee:
    name: str
    mailing_address: tuple[str, ...]


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


def _environment(template_dir: Path | None) -> Environment:
    dirs = [str(template_dir)] if template_dir else []
    return Environment(
        loader=FileSystemLoader([*dirs, str(TEMPLATES)]),
        undefined=StrictUndefined,
        autoescape=select_autoescape(enabled_extensions=("html.j2",), default_for_string=False),
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def feet_and_inches(mm: float) -> str:
    """``2 ft 0 in (609.6 mm)``: the units the ordinance speaks, with the measured value."""
    total_in = round(mm_to_feet(mm) * 12)
    return f"{total_in // 12} ft {total_in % 12} in ({mm:.1f} mm)"


def render_clearing_violation(
    violation: ClearingViolation,
    *,
    number: str,
    issued_at: datetime,
    owner: Addressee,
    frontage: FrontageInfo,
    profile: Profile,
    template_dir: Path | None = None,
) -> RenderedNotice:
    """The § 370-10 A notice for one violation, as text and HTML."""
    if not owner.name.strip() or not any(line.strip() for line in owner.mailing_address):
        raise NoticeError(
            f"notice {number}: owner of {frontage.id} has no name or last-known mailing address"
        )
    if violation.measured_width_mm is None or violation.measured_at is None:
        raise NoticeError(
            f"notice {number}: a clearing violation needs the measured width as evidence"
        )
    zone = profile.zone
    rules = profile.snow_and_ice
    unconfirmed = [
        f"{name}: {getattr(rules, name).describe()}"
        for name in ("clearing_deadline", "clearing_min_width", "offense_period")
        if getattr(rules, name).unconfirmed
    ]
    context: dict[str, Any] = {
        "village": profile.village,
        "notice": {"number": number},
        "owner": owner,
        "frontage": frontage,
        "issued_local": format_local(issued_at, zone),
        "cessation_local": format_local(violation.cessation_at, zone),
        "deadline_local": format_local(violation.deadline, zone),
        "deadline_rule": rules.clearing_deadline,
        "width_rule": rules.clearing_min_width,
        "offense_rule": rules.offense_period,
        "evidence": {
            "device": violation.measured_by,
            "seq": violation.measured_seq,
            "measured": feet_and_inches(violation.measured_width_mm),
            "measured_at_local": format_local(violation.measured_at, zone),
            "required": feet_and_inches(violation.required_width_mm),
        },
        "unconfirmed": unconfirmed,
        "history": [
            {
                "at_local": format_local(t.at, zone),
                "from_state": t.from_state,
                "to_state": t.to_state,
                "cause": _cause_text(t.cause.kind, t.cause.device, t.cause.seq, t.cause.who),
            }
            for t in violation.history
        ],
    }
    env = _environment(template_dir)
    try:
        text = env.get_template("clearing_violation.txt.j2").render(context)
        html = env.get_template("clearing_violation.html.j2").render(context)
    except TemplateError as exc:
        raise NoticeError(f"notice {number}: template error: {exc}") from None
    return RenderedNotice(number=number, kind="clearing_violation", text=text, html=html)


def _cause_text(kind: str, device: str | None, seq: int | None, who: str | None) -> str:
    if kind == "reading":
        return f"reading {device}#{seq}" if seq is not None else f"readings from {device}"
    if kind == "person":
        return f"recorded by {who}"
    return kind


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
) -> RenderedNotice:
    """§ 370-10 B(1): the 2-hour hazard notice, or the after-the-fact abatement notice."""
    if kind not in {"hazard_notice", "hazard_abatement_notice"}:
        raise NoticeError(f"notice {number}: no hazard template for {kind!r}")
    if not owner.name.strip() or not any(line.strip() for line in owner.mailing_address):
        raise NoticeError(
            f"notice {number}: owner of {frontage.id} has no name or last-known mailing address"
        )
    zone = profile.zone
    rules = profile.snow_and_ice
    context: dict[str, Any] = {
        "village": profile.village,
        "notice": {"number": number},
        "owner": owner,
        "frontage": frontage,
        "issued_local": format_local(issued_at, zone),
        "deadline_local": format_local(missed_deadline, zone),
        "rule": rules.hazard_notice_period,
        "deadline_rule": rules.clearing_deadline,
        "expense_citation": profile.billing.bill_payable.citation,
        "confirmed_by": confirmed_by,
    }
    env = _environment(template_dir)
    try:
        text = env.get_template(f"{kind}.txt.j2").render(context)
        html = env.get_template(f"{kind}.html.j2").render(context)
    except TemplateError as exc:
        raise NoticeError(f"notice {number}: template error: {exc}") from None
    return RenderedNotice(number=number, kind=kind, text=text, html=html)
