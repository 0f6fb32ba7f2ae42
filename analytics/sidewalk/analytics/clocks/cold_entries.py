"""Pours and street-opening permits staff record, made into the cold-weather clocks'.

What a person enters (``actions.RecordPour``, ``actions.RecordPermit``) is checked
against the engine's frontages and sites, handed to ``cold_weather.ColdWeatherClocks``
(frozen subgrade per site, keep-off per pour, validity per permit) and judged by
``cold_weather.pour_window`` (§ 370-5 (9)) and ``permits`` (§§ 370-6, 370-7: the
opening, its work's dates and notices). Each cold-weather transition is given the
frontages whose case records carry it (``named``). The engine routes the actions
here (``engine.HANDLERS``) and keeps the clocks' state in its snapshot.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import replace
from datetime import datetime

from sidewalk.analytics.clocks.actions import PermitDetail, RecordPermit, RecordPour
from sidewalk.analytics.clocks.cold_weather import (
    FROZEN_SUBGRADE,
    KEEP_OFF,
    ColdWeatherClocks,
    ForecastPoint,
    Pour,
    pour_window,
)
from sidewalk.analytics.clocks.events import Event, RuleFinding, Transition
from sidewalk.analytics.clocks.permits import (
    Excavation,
    Finding,
    Repaving,
    StreetOpeningPermit,
    street_opening_check,
    work_check,
)
from sidewalk.core.profile import Profile


class ColdEntries:
    """The cold-weather clocks' person entries for one engine's frontages and sites."""

    def __init__(
        self,
        profile: Profile,
        cold: ColdWeatherClocks,
        frontages: Collection[str],
        site_of: Mapping[str, str],
    ) -> None:
        self.profile = profile
        self.cold = cold
        self.frontages = frontages
        self._site_of = dict(site_of)
        # Each site's frontages, in frontage order.
        self._site_frontages: dict[str, list[str]] = {}
        for frontage in sorted(site_of):
            self._site_frontages.setdefault(site_of[frontage], []).append(frontage)

    def advance(self, to: datetime) -> list[Event]:
        """The cold-weather clocks' transitions due at ``to``, and the work findings."""
        events = self.named(self.cold.advance(to))
        events += [finding(f"permit:{p}", f) for p, f in self.cold.work_findings(to)]
        return events

    def record_pour(self, action: RecordPour) -> list[Event]:
        """§ 370-5 (9): a pour's keep-off clock, and the pour judged at its own instant."""
        detail = action.detail
        if action.target in self.cold.keep_off:
            raise ValueError(f"pour {action.target!r} is already recorded")
        at = detail.at
        frontage = self.known_frontage(detail.frontage)
        site = detail.site or (self._site_of[frontage] if frontage else None)
        if site not in self.cold.subgrade:
            known = ", ".join(self.cold.subgrade) or "none"
            raise ValueError(f"a pour needs a known site (one of {known}), not {site!r}")
        assert site is not None  # every known site is a name
        forecast = [ForecastPoint(p.at, p.temp_f) for p in detail.forecast]
        location = detail.location or site
        pour = Pour(action.target, detail.kind, at, location, site, frontage)
        events = self.named(self.cold.record_pour(pour, who=action.who))
        if detail.kind == "sidewalk":
            # § 370-5 (9) judges the pour at its own instant (event time): the probes'
            # reading as of the pour, however late the pour is entered, and the forecast given.
            temp, frozen = self.cold.subgrade_at(site, at)
            decision = pour_window(at, forecast, temp, self.profile, subgrade_is_frozen=frozen)
            events += [finding(f"pour:{pour.id}", f) for f in decision.reasons]
        return events

    def record_permit(self, action: RecordPermit, now: datetime | None) -> list[Event]:
        """§§ 370-6, 370-7: a permit, its renewal, or its work's dates (``now``: the
        engine's time, None before its first reading)."""
        detail = action.detail
        opened_at = detail.opened_at
        approved_at = detail.approved_at or opened_at
        held = self.cold.permits.get(action.target)
        if held is not None and detail.renewals == held.permit.renewals:
            return self._permit_work(action, now)  # the work's dates, entered as they happen
        if held is not None and detail.renewals < held.permit.renewals:
            raise ValueError(
                f"permit {action.target!r} is already recorded; a renewal must raise renewals"
            )
        frontage = self.known_frontage(detail.frontage)
        permit = StreetOpeningPermit(
            action.target, detail.street, approved_at, detail.renewals, frontage
        )
        # A renewal is granted when it is recorded; a first entry runs from its approval.
        at = action.at if held is not None else None
        events = self.named(self.cold.record_permit(permit, at=at, who=action.who))
        if held is not None:  # a renewal may bring the work's dates too
            return events + self._permit_work(action, now, renewal=True)
        opening = _opening(action.target, detail, permit)
        self.cold.record_work(permit.id, opening)
        findings = street_opening_check(opening, self.profile, opened_at, _repaved(detail))
        # Entered after a deadline passed (the engine's time is on): found now.
        findings += work_check(opening, self.profile, now or opened_at)
        return events + [
            finding(f"permit:{permit.id}", f) for f in self.cold.first_found(permit.id, findings)
        ]

    def _permit_work(
        self, action: RecordPermit, now: datetime | None, *, renewal: bool = False
    ) -> list[Event]:
        """§§ 370-7 B, F, G, H, I: dates entered for a recorded permit's work and notices
        (the same permit, street and opening); what they show late is a finding now."""
        held = self.cold.permits[action.target]
        detail = action.detail
        # A permit held from before its work was kept: the opening as this entry gives it.
        previous = held.opening or _opening(action.target, detail, held.permit)
        if (detail.street, detail.opened_at) != (
            previous.segment, previous.starts_at,
        ):  # fmt: skip
            if renewal:
                return []  # renewed as entered; its work is the recorded opening's
            raise ValueError(
                f"permit {action.target!r} is already recorded for another street or opening; "
                "a renewal must raise renewals"
            )
        given = detail.model_dump(exclude_unset=True)
        changes = {mine: given[theirs] for mine, theirs in _WORK_FIELDS.items() if theirs in given}
        if not changes:
            if renewal:
                return []
            raise ValueError(f"permit {action.target!r} is already recorded; nothing new given")
        opening = replace(previous, **changes)
        self.cold.record_work(action.target, opening)
        now = now or action.at
        findings = street_opening_check(opening, self.profile, now, _repaved(detail))
        return [
            finding(f"permit:{action.target}", f)
            for f in self.cold.first_found(action.target, findings)
        ]

    def known_frontage(self, frontage: str | None) -> str | None:
        """``frontage`` if one of the engine's (None: none given); else ``ValueError``."""
        if frontage is None:
            return None
        if frontage not in self.frontages:
            raise ValueError(f"unknown frontage {frontage!r}")
        return frontage

    def named(self, transitions: list[Transition]) -> list[Event]:
        """Name the frontages whose case records carry each cold-weather transition."""
        return [
            replace(t, detail={**t.detail, "frontages": self._cold_frontages(t)})
            for t in transitions
        ]

    def _cold_frontages(self, t: Transition) -> list[str]:
        if t.clock == FROZEN_SUBGRADE:
            return list(self._site_frontages.get(t.frontage, []))
        if t.clock == KEEP_OFF:
            pour = self.cold.keep_off[t.frontage].pour
            if pour.frontage:
                return [pour.frontage]
            return list(self._site_frontages.get(pour.site or "", []))
        permit = self.cold.permits[t.frontage].permit
        return [permit.frontage] if permit.frontage else []

    # -- person actions, by kind (``HANDLERS``) ------------------------------------


# An opening's field, and the permit entry's that gives it (the work and the notices).
_WORK_FIELDS = {
    "permit_applied_at": "applied_at", "board_found_essential": "essential",
    "pavement_removed": "pavement_removed", "cold_mix_on": "cold_mix_on",
    "permanent_pavement_on": "permanent_pavement_on",
    "repaving_notice_on": "repaving_notice_on", "work_completed_on": "work_completed_on",
    "dpw_notified_at": "dpw_notified_at", "parties_notified_at": "parties_notified_at",
    "backfill_at": "backfill_at", "backfill_notified_at": "backfill_notified_at",
    "utility_loss_at": "utility_loss_at", "utility_loss_notified_at": "utility_loss_notified_at",
}  # fmt: skip


def _opening(target: str, detail: PermitDetail, permit: StreetOpeningPermit) -> Excavation:
    """The opening a permit entry records, with the work's dates and notices given so far."""
    given = {mine: getattr(detail, theirs) for mine, theirs in _WORK_FIELDS.items()}
    return Excavation(target, detail.street, detail.opened_at, detail.emergency, permit, **given)


def _repaved(detail: PermitDetail) -> list[Repaving]:
    """§ 370-7 I: the street's last repaving, as the permit entry gives it."""
    on = detail.street_repaved_on
    return [] if on is None else [Repaving(detail.street, on)]


def finding(subject: str, f: Finding) -> RuleFinding:
    """A permit's or pour's finding, as the case records take it."""
    return RuleFinding(
        subject, f.rule, f.citation, f.severity, f.message, f.at, f.unconfirmed, f.notes
    )
