"""Turns recorded decisions into numbered, rendered notices in the case records.

Idempotent: each notice's key derives from the decision's key, so a replay or
a restart returns the notice already issued instead of making another. Every
notice is rendered from its stored record alone (``render``), so a notice kept
``pending`` (no mailing address, a template error) is rendered again, once the
cause is fixed, by ``render_pending``; it is never lost, and the reason it is
pending is in the audit log.

Confirmation before use: a notice whose rules include a
profile value marked ``unconfirmed`` that the Village has not confirmed
(``sidewalk.alerts.confirm``) is ``held``, not rendered, with the values it
waits for in the audit log; ``release_held`` renders it once they are
confirmed. The issuer's ``letterhead`` (the settings' ``[village]``) is stored
with each notice, so the letter keeps the officer who issued it.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Final

from sidewalk.alerts.confirm import value_text, waiting_for
from sidewalk.alerts.letterhead import Letterhead, letterhead_of, plain_citation
from sidewalk.alerts.notices import (
    NO_EVIDENCE,
    Addressee,
    AdvisoryFinding,
    BlockDefect,
    Evidence,
    FrontageInfo,
    LedgerLine,
    LetterContext,
    NoticeError,
    RenderedNotice,
    evidence_from_detail,
    history_rows,
    render_abatement_bill,
    render_advisory,
    render_clearing_violation,
    render_hazard_notice,
    render_inspection_notice,
    render_obstruction_notice,
    render_repair_notice,
)
from sidewalk.alerts.wording import local_day, usd, words
from sidewalk.analytics.clocks.bill_terms import BillTerms, bill_terms
from sidewalk.analytics.clocks.events import ClearingViolation, NoticeRequired
from sidewalk.analytics.clocks.states import InspectionState, ObstructionState
from sidewalk.analytics.survey import BlockSurvey
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records

log = logging.getLogger(__name__)

CLEARING_VIOLATION = "clearing_violation"
# A bill's preview is not numbered yet: the register numbers it when it is issued.
PREVIEW_NUMBER: Final = "[number given when issued]"
# The notice a person's case calls for, by the case's kind (its violation key's prefix).
CASE_NOTICE: Final = {"obstruction": "obstruction_notice", "inspection": "inspection_notice"}
CASE_WORDS: Final = {"obstruction": "obstruction", "inspection": "inspector's finding"}
# The entries that open each kind of case (a § 370-9 permit's site still occupied after
# it ended is an obstruction under the permit's number).
CASE_ENTRIES: Final = {
    "obstruction": frozenset({"record_obstruction", "street_privilege_inspected"}),
    "inspection": frozenset({
        "record_inspection_finding", "record_demolition_completed", "record_excavation_opened",
    }),
}  # fmt: skip
CASE_STATE_WORDS: Final = {
    "removal_period": "its notice was served",
    "notice_period": "its notice was served",
    "period_running": "its period under the Code has not ended",
    "removed": "it was seen removed",
    "corrected": "it was seen corrected",
    "overdue": "its period after the notice has ended",
    "compliant": "it is within the Code as recorded",
}
# The clock states in which the case waits for its written notice.
AWAITING_NOTICE: Final = frozenset({ObstructionState.OBSTRUCTED, InspectionState.FOUND})


class CaseNotOnRecord(ValueError):
    """No case awaits the notice asked for (none recorded, or past its notice)."""


def _evidence_json(evidence: Evidence) -> dict[str, Any]:
    return {
        "photos": [{**asdict(p), "taken_at": p.taken_at.isoformat()} for p in evidence.photos],
        "readings": [{**asdict(r), "at": r.at.isoformat()} for r in evidence.readings],
        "facts": [list(f) for f in evidence.facts],
    }


def notice_of_case(cases: records.CaseStore, case_key: str) -> records.NoticeRecord | None:
    """The notice in the register for a person's case (``obstruction:<id>``,
    ``inspection:<id>``), or None: none was issued for it."""
    kind = CASE_NOTICE.get(case_key.partition(":")[0])
    violation = cases.clocks.violation_by_key(case_key)
    if kind is None or violation is None:
        return None
    return next(
        (n for n in cases.notices.list(kind=kind, frontage_id=violation.frontage_id)
         if n.violation_id == violation.id),
        None,
    )  # fmt: skip


def cases_awaiting_notice(cases: records.CaseStore) -> list[records.ViolationRecord]:
    """Every obstruction and inspector's finding case waiting for its written notice
    (its clock at ``AWAITING_NOTICE``, no notice for it in the register), oldest first."""
    out = []
    for kind in CASE_NOTICE:
        for clock in cases.clocks.list(kind=kind, active_only=True):
            if clock.state not in AWAITING_NOTICE:
                continue
            key = f"{kind}:{clock.key.split('/', 2)[2]}"
            violation = cases.clocks.violation_by_key(key)
            if violation is not None and notice_of_case(cases, key) is None:
                out.append(violation)
    return sorted(out, key=lambda v: (v.detected_at, v.id))


# § 370-10 C's reading of G (``snow_and_ice.deposit_removal_charge``).
DEPOSIT_CHARGE: Final = "snow_and_ice.deposit_removal_charge"
# A reading of the text the Village confirmed, as the evidence record states it.
READING_WORDS: Final = {
    ("billing.owner_changed_during_case", "owner served"): (
        "After a sale during the case, the bill goes to the owner who was served the notice"
    ),
    (DEPOSIT_CHARGE, "charged under G"): (
        "The removal of snow or ice deposited on a public way is charged to the owner under"
        " § 370-10 G"
    ),
    ("billing.owner_changed_during_case", "new notice"): (
        "After a sale during the case, no bill goes to the new owner before a notice is served"
        " on them"
    ),
}


@dataclass
class NoticeIssuer:
    cases: records.CaseStore
    profile: Profile
    template_dir: Path | None = None
    # The settings' [village] letterhead and officer; None: the unconfigured one.
    letterhead: Letterhead | None = None

    def _detail(self, detail: Mapping[str, Any]) -> dict[str, Any]:
        """A notice's detail with the letterhead it is issued under."""
        if self.letterhead is None:
            return dict(detail)
        return {**detail, "letterhead": self.letterhead.to_json()}

    # -- § 370-10: what the clocks decide (the recorder calls these) ---------------

    def clearing_violation(
        self, violation: ClearingViolation, record: records.ViolationRecord
    ) -> records.NoticeRecord:
        """Issue (or find) the § 370-10 A notice for ``violation`` and render it."""
        rules = self.profile.snow_and_ice
        notice = self.cases.notices.create(
            f"notice/{violation.key}",
            CLEARING_VIOLATION,
            violation.frontage,
            violation.decided_at,
            violation_id=record.id,
            deadline=violation.deadline,
            citation=violation.citation,
            rules=[
                records.RuleUse.from_rule(
                    "snow_and_ice.clearing_deadline", rules.clearing_deadline
                ),
                records.RuleUse.from_rule(
                    "snow_and_ice.clearing_min_width", rules.clearing_min_width
                ),
                # The camera's tolerance decided the width (not a person on review).
                *(
                    [
                        records.RuleUse.from_rule(
                            "snow_and_ice.width_tolerance", rules.width_tolerance
                        )
                    ]
                    if violation.measured_width_mm is not None
                    else []
                ),
                records.RuleUse.from_rule(
                    "snow_and_ice.nonhazard_notice_period", rules.nonhazard_notice_period
                ),
            ],
            detail=self._detail(record.evidence),
        )
        return self.render(notice)

    def required_notice(
        self, required: NoticeRequired, record: records.ViolationRecord
    ) -> records.NoticeRecord:
        """Issue (or find) a hazard notice or an after-the-fact abatement notice, and render it.

        § 370-10 B(1): the hazard notice goes to "the owner, occupant or person in
        charge", and takes effect only when handed over or posted, so it is addressed
        for delivery at the property: to the person in charge the registry has at that
        time (or else an occupant), or else to the owner of record by name, at the
        premises. The owner's mailing address is shown on it apart, and the owner gets
        the owner's copy there (``owner_copy``). The after-the-fact notice goes to the
        owner's last-known address."""
        rule = self.profile.snow_and_ice.hazard_notice_period
        detail: dict[str, Any] = {"violation": required.violation_key, **required.detail}
        addressee = None
        if required.kind == "hazard_notice":
            owner = self.cases.registry.owner_of_record(required.frontage, required.at)
            served = self._person_in_charge(required.frontage, required.at) or (
                (owner.name, self._premises(required.frontage)),
                {"name": owner.name, "role": "owner"},
            )
            addressee = served[0]
            detail["served_on"] = served[1]
            detail["owner_mailing"] = {"name": owner.name, "address": list(owner.address_lines)}
        notice = self.cases.notices.create(
            f"notice/{required.key}",
            required.kind,
            required.frontage,
            required.at,
            violation_id=record.id,
            citation=required.citation,
            rules=[records.RuleUse.from_rule("snow_and_ice.hazard_notice_period", rule)],
            detail=self._detail(detail),
            addressee=addressee,
        )
        return self.render(notice)

    def _person_in_charge(
        self, frontage_id: str, at: datetime
    ) -> tuple[tuple[str, list[str]], dict[str, str]] | None:
        """The person in charge (else the occupant) of the frontage's parcel at ``at``:
        (name, the property's address lines) and who they are, or ``None``."""
        frontage = self.cases.registry.get_frontage(frontage_id)
        if frontage.parcel_id is None:
            return None
        people = self.cases.registry.occupants(frontage.parcel_id, at)
        people.sort(key=lambda p: (p.role != "person in charge", p.id))
        if not people:
            return None
        person = people[0]
        return (person.name, self._premises(frontage_id)), {
            "name": person.name,
            "role": person.role,
        }

    def _premises(self, frontage_id: str) -> list[str]:
        """The property's own address lines (where a notice is handed over or posted)."""
        frontage = self.cases.registry.get_frontage(frontage_id)
        parcel = (
            None
            if frontage.parcel_id is None
            else self.cases.registry.get_parcel(frontage.parcel_id)
        )
        # The county's PLACENAME is the municipality ("VILLAGE OF CLYMAN"); an address
        # line wants the town, the state and the ZIP code.
        village = self.profile.village
        place = (parcel.place if parcel else None) or village.name
        town = re.sub(r"^(village|city|town) of\s+", "", place, flags=re.I)
        # A parcel record without a ZIP code: the village's own (its profile's).
        zip_code = (parcel.zip_code if parcel else None) or village.zip_code
        postal = " ".join(x for x in (town, village.state, zip_code) if x)
        return [frontage.street_address, postal]

    # -- the other notices the ordinance implies -----------------------------------

    def abatement_bill(
        self,
        bill: records.BillRecord,
        lines: Sequence[LedgerLine],
        at: datetime,
        *,
        work: str,
        abatement_citation: str,
        terms: BillTerms | None = None,
        billed_to: tuple[str, Sequence[str]] | None = None,
        rests_on: Sequence[records.RuleUse] = (),
    ) -> records.NoticeRecord:
        """The notice of the bill for a recorded bill, under its section's ``terms``
        (§ 370-10 G by default; § 370-8 F, § 144-17, § 370-6, …: ``bill_terms``).
        ``billed_to`` addresses it to someone other than the frontage's owner
        (§ 144-17: the primary contractor, or the owner served before a sale);
        ``rests_on``: the profile's other settings the bill relies on (held while one
        is unconfirmed). Numbered in the notice register: its number is the bill's."""
        abatement = self.cases.bills.get_abatement(bill.abatement_id)
        terms = terms or bill_terms(self.profile, "snow_and_ice")
        rules, detail = self._bill_fields(
            bill.id, bill.amount, bill.costs_incurred_at, lines, work=work,
            abatement_citation=abatement_citation, terms=terms, billed_to=billed_to,
            rests_on=rests_on,
        )  # fmt: skip
        notice = self.cases.notices.create(
            f"notice/bill/{bill.key}",
            "abatement_bill",
            bill.frontage_id,
            at,
            violation_id=abatement.violation_id,
            citation=terms.citation or None,
            rules=rules,
            addressee=None if billed_to is None else (billed_to[0], tuple(billed_to[1])),
            detail=detail,
        )
        return self.render(notice)

    def abatement_bill_preview(
        self,
        abatement: records.AbatementRecord,
        lines: Sequence[LedgerLine],
        at: datetime,
        *,
        costs_incurred_at: datetime,
        addressee: tuple[str, Sequence[str]],
        work: str,
        abatement_citation: str,
        terms: BillTerms,
        rests_on: Sequence[records.RuleUse] = (),
        number: str = PREVIEW_NUMBER,
    ) -> tuple[records.NoticeRecord, RenderedNotice]:
        """The bill's notice as ``abatement_bill`` would write it, nothing stored: the
        same record (unnumbered) and the same renderer, so the clerk reads what the owner
        will. Raises ``NoticeError`` where the letter could not be written."""
        amount = sum((x.amount for x in lines), Decimal("0.00"))
        rules, detail = self._bill_fields(
            0, amount, costs_incurred_at, lines, work=work,
            abatement_citation=abatement_citation, terms=terms, billed_to=None,
            rests_on=rests_on,
        )  # fmt: skip
        notice = records.NoticeRecord(
            id=0, number=number, key="preview", kind="abatement_bill",
            violation_id=abatement.violation_id, frontage_id=abatement.frontage_id,
            owner_id="", owner_name=addressee[0], owner_address_lines=tuple(addressee[1]),
            issued_at=at, deadline=None, citation=terms.citation or None, rules=tuple(rules),
            detail=detail, body_text=None, body_html=None, status="pending",
            rendered_at=None, delivered_at=None, received_at=None,
        )  # fmt: skip
        return notice, self.rendered(notice)

    def _bill_fields(
        self,
        bill_id: int,
        amount: Decimal,
        costs_incurred_at: datetime,
        lines: Sequence[LedgerLine],
        *,
        work: str,
        abatement_citation: str,
        terms: BillTerms,
        billed_to: tuple[str, Sequence[str]] | None,
        rests_on: Sequence[records.RuleUse],
    ) -> tuple[list[records.RuleUse], dict[str, Any]]:
        """A bill notice's rules and detail (``abatement_bill`` and its preview)."""
        if not terms.chargeable:
            raise NoticeError(
                "no bill: the Village reads § 370-10 as charging no one for removing snow "
                "or ice deposited on a public way (the penalty alone applies)"
            )
        # The administration share is a rate only where the bill's lines carry one.
        priced = ["crew_hourly_rate", "equipment_hourly_rate"]
        rules = [
            *(records.RuleUse.from_rule(name, rule) for name, rule in terms.rules),
            # The reading the charge rests on (§ 370-10 C's deposit): held while unconfirmed.
            *(
                records.RuleUse(
                    name, r.value, records.TEXT_UNIT, r.citation, r.unconfirmed, r.note
                )
                for name, r in ([terms.charge] if terms.charge else [])
            ),
            # The rates priced the lines: a bill waits for the Village's fee schedule.
            *(
                records.RuleUse.from_rule(
                    f"abatement_rates.{n}", getattr(self.profile.abatement_rates, n)
                )
                for n in priced
                if self.profile.abatement_rates is not None
            ),
            *rests_on,
        ]
        detail = self._detail(
            {
                "terms": terms.kind,
                **(
                    {}
                    if billed_to is None
                    else {"billed_to": {"name": billed_to[0], "address": list(billed_to[1])}}
                ),
                "bill_id": bill_id,
                "total": str(amount),
                "costs_incurred_at": costs_incurred_at.isoformat(),
                "work": work,
                "abatement_citation": abatement_citation,
                "lines": [
                    {
                        "description": x.description,
                        "quantity": str(x.quantity),
                        "unit": x.unit,
                        "rate": str(x.rate),
                        "amount": str(x.amount),
                        "unconfirmed": x.unconfirmed,
                    }
                    for x in lines
                ],
            }
        )
        return rules, detail

    def repair_notice(
        self,
        key: str,
        frontage_id: str,
        at: datetime,
        *,
        surveyed_at: datetime,
        defects: Sequence[BlockDefect],
        survey: BlockSurvey | None = None,
        total_blocks: int | None = None,
        evidence: Evidence = NO_EVIDENCE,
    ) -> records.NoticeRecord:
        """§ 370-5 (11): repair notice, or the 80 % full-replacement notice, from a survey.

        Repair or replacement is the aggregation's decision (``survey``), never
        a share recomputed here: only the aggregation knows whether the owner's
        total is known. ``total_blocks`` alone stands for a complete survey of a
        single frontage whose count is on record.
        """
        cond = self.profile.sidewalk_condition
        if survey is None:
            if total_blocks is None:
                raise ValueError("a repair notice needs the survey's block count")
            survey = BlockSurvey.recorded(
                frontage_id,
                total_blocks,
                len({d.block for d in defects}),
                cond.replacement_share.fraction,
            )
        # The notice's share is of the owner's total when known, else of the blocks measured.
        total = survey.owner_blocks if survey.owner_blocks is not None else survey.surveyed_blocks
        replace = survey.replace_entire_sidewalk
        notice = self.cases.notices.create(
            f"notice/condition/{key}",
            "replacement_notice" if replace else "repair_notice",
            frontage_id,
            at,
            citation=cond.replacement_share.citation
            if replace
            else cond.vertical_differential.citation,
            rules=[
                records.RuleUse.from_rule(f"sidewalk_condition.{n}", getattr(cond, n))
                for n in (
                    "vertical_differential",
                    "horizontal_gap",
                    "surface_deterioration",
                    "replacement_share",
                )
            ],
            detail=self._detail(
                {
                    "surveyed_at": surveyed_at.isoformat(),
                    "total_blocks": total,
                    "survey": survey.to_json(),
                    "defects": [asdict(d) for d in defects],
                    **_evidence_json(evidence),
                }
            ),
        )
        return self.render(notice)

    def obstruction_notice(
        self,
        key: str,
        frontage_id: str,
        at: datetime,
        *,
        area: str,
        observed_at: datetime,
        description: str,
        clear_width_mm: float | None = None,
        evidence: Evidence = NO_EVIDENCE,
    ) -> records.NoticeRecord:
        """§ 370-8 D/E: the written notice to remove an obstruction within 24 hours."""
        if area not in ("sidewalk", "street"):
            raise ValueError(f"an obstruction is on the sidewalk or the street, not {area!r}")
        obs = self.profile.obstructions
        removal = (
            obs.sidewalk_removal_after_notice
            if area == "sidewalk"
            else obs.street_removal_after_notice
        )
        # The case it starts the removal clock of (§ 370-8 D/E), when the engine opened one.
        violation = self.cases.clocks.violation_by_key(f"obstruction:{key}")
        notice = self.cases.notices.create(
            f"notice/obstruction/{key}",
            "obstruction_notice",
            frontage_id,
            at,
            violation_id=None if violation is None else violation.id,
            citation=removal.citation,
            rules=[records.RuleUse.from_rule(f"obstructions.{area}_removal_after_notice", removal)],
            detail=self._detail(
                {
                    "area": area,
                    "observed_at": observed_at.isoformat(),
                    "description": description,
                    "clear_width_mm": clear_width_mm,
                    **_evidence_json(evidence),
                }
            ),
        )
        return self.render(notice)

    def inspection_notice(
        self,
        key: str,
        frontage_id: str,
        at: datetime,
        *,
        rule: str,
        observed_at: datetime,
        description: str,
        finding: str = "",
        evidence: Evidence = NO_EVIDENCE,
    ) -> records.NoticeRecord:
        """The written notice for a rule an inspector enforces (§ 370-10 C, § 370-11 C,
        § 370-14, §§ 144-11, 144-12 B; § 144-12 C's order): correct it within the
        profile's period after delivery (``inspections.NOTICE_PERIOD``)."""
        from sidewalk.analytics.clocks.inspections import FINDING_RULE, NOTICE_PERIOD, rule_value

        if rule not in NOTICE_PERIOD:
            raise ValueError(f"no inspector rule {rule!r}")
        names = [FINDING_RULE[rule], NOTICE_PERIOD[rule]]
        used = [records.RuleUse.from_rule(n, rule_value(self.profile, n)) for n in names]
        period = rule_value(self.profile, NOTICE_PERIOD[rule])
        violation = self.cases.clocks.violation_by_key(f"inspection:{key}")
        notice = self.cases.notices.create(
            f"notice/inspection/{key}",
            "inspection_notice",
            frontage_id,
            at,
            violation_id=None if violation is None else violation.id,
            citation=period.citation or rule_value(self.profile, FINDING_RULE[rule]).citation,
            rules=used,
            detail=self._detail({
                "rule": rule,
                "observed_at": observed_at.isoformat(),
                "description": description,
                "finding": finding,
                **_evidence_json(evidence),
            }),
        )  # fmt: skip
        return self.render(notice)

    def case_notice(self, case_key: str, at: datetime, *, who: str) -> records.NoticeRecord:
        """The written notice for a case the engine opened from a person's entry: an
        obstruction's (``obstruction:<id>``, § 370-8 D/E) or an inspector's finding's
        (``inspection:<id>``), issued by ``who`` (audited), numbered and rendered.

        Issued only while the case awaits it (``CaseNotOnRecord`` otherwise, in the
        clerk's words); issuing it again returns the notice already issued."""
        violation = self.cases.clocks.violation_by_key(case_key)
        kind, _, case_id = case_key.partition(":")
        if kind not in CASE_NOTICE:
            raise CaseNotOnRecord(f"no case {case_key!r}: obstruction:<id> or inspection:<id>")
        if violation is None:
            raise CaseNotOnRecord(self._no_case(kind, case_id))
        issued = notice_of_case(self.cases, case_key)
        if issued is not None:
            return issued
        clock = self._case_clock(violation, kind, case_id)
        if clock is None or clock.state not in AWAITING_NOTICE:
            state = "the runner has not applied it yet" if clock is None else (
                CASE_STATE_WORDS.get(clock.state, words(clock.state)))  # fmt: skip
            raise CaseNotOnRecord(f"{CASE_WORDS[kind]} {case_id} awaits no notice: {state}")
        e = violation.evidence
        seen = e.get("observed_at")
        observed = datetime.fromisoformat(seen) if isinstance(seen, str) else violation.detected_at
        if at < observed:
            raise CaseNotOnRecord(
                f"a notice cannot be issued before {CASE_WORDS[kind]} {case_id} was seen"
            )
        if kind == "obstruction":
            width = e.get("clear_width_mm")
            notice = self.obstruction_notice(
                case_id, violation.frontage_id, at, area=str(e.get("area", "sidewalk")),
                observed_at=observed, description=str(e.get("description") or ""),
                clear_width_mm=None if width is None else float(width),
            )  # fmt: skip
        else:
            notice = self.inspection_notice(
                case_id, violation.frontage_id, at, rule=str(e["rule"]), observed_at=observed,
                description=str(e.get("description") or ""), finding=str(e.get("finding", "")),
            )  # fmt: skip
        self.cases.audit.append(
            who, "notice.issued_by", f"notice:{notice.number}", {"case": case_key}, at=at
        )
        return notice

    def _no_case(self, kind: str, case_id: str) -> str:
        """Why there is no case: the entry not applied yet, refused, or within the Code."""
        what = CASE_WORDS[kind]
        entries = [a for a in self.cases.actions.list(case_id) if a.kind in CASE_ENTRIES[kind]]
        if not entries:
            return f"no {what} {case_id} is on record"
        last = entries[-1]
        if last.applied_at is None:
            return f"{what} {case_id} is recorded; the runner has not applied it yet, try again"
        if last.error is not None:
            return f"{what} {case_id} was refused when it was applied: {last.error}"
        return f"{what} {case_id} is within the Code as recorded: there is no case to notice"

    def _case_clock(
        self, violation: records.ViolationRecord, kind: str, case_id: str
    ) -> records.ClockRecord | None:
        key = f"{violation.frontage_id}/{kind}/{case_id}"
        return next(
            (c for c in self.cases.clocks.list(kind=kind, frontage_id=violation.frontage_id)
             if c.key == key),
            None,
        )  # fmt: skip

    def advisory(
        self,
        kind: str,
        key: str,
        frontage_id: str,
        at: datetime,
        *,
        subject: str,
        findings: Sequence[AdvisoryFinding],
        deadlines: Sequence[tuple[str, datetime]] = (),
    ) -> records.NoticeRecord:
        """An internal frozen-ground or permit advisory (numbered and registered like a notice)."""
        notice = self.cases.notices.create(
            f"notice/{kind}/{key}",
            kind,
            frontage_id,
            at,
            citation="; ".join(dict.fromkeys(f.citation for f in findings if f.citation)) or None,
            detail=self._detail(
                {
                    "subject": subject,
                    "findings": [
                        {**asdict(f), "at": f.at.isoformat(), "notes": list(f.notes)}
                        for f in findings
                    ],
                    "deadlines": [[label, due.isoformat()] for label, due in deadlines],
                }
            ),
        )
        return self.render(notice)

    # -- rendering from the record -------------------------------------------------

    def render(self, notice: records.NoticeRecord) -> records.NoticeRecord:
        """Render a pending notice from its record; on failure keep it pending, with the reason.

        A notice relying on a profile value the Village has not confirmed is
        ``held`` instead (audited, with the values it waits for).
        """
        if notice.status not in ("pending", "held"):
            return notice
        waiting = waiting_for(self.cases, notice)
        if waiting:
            if notice.status == "pending":
                log.warning("notice %s held: waits for %s", notice.number, ", ".join(waiting))
                self.cases.confirmations.hold_notice(notice.id, waiting)
            return self.cases.notices.get(notice.id)
        try:
            rendered = self.rendered(notice)
        except NoticeError as exc:
            log.error("notice %s kept pending: %s", notice.number, exc)
            self.cases.audit.append(
                "alerts", "notice.render_failed", f"notice:{notice.number}", {"reason": str(exc)}
            )
            return notice
        if notice.status == "held":
            self.cases.audit.append(
                "system", "notice.released", f"notice:{notice.number}",
                {"confirmed": [r.name for r in notice.rules if r.unconfirmed]},
            )  # fmt: skip
        return self.cases.notices.set_rendered(notice.id, rendered.text, rendered.html)

    def release_held(self) -> list[records.NoticeRecord]:
        """Render every held notice whose values the Village has now confirmed."""
        return [self.render(n) for n in self.cases.notices.list(status="held")]

    def letter_context(self, notice: records.NoticeRecord) -> LetterContext:
        """The letterhead stored with the notice, the confirmed penalty, and the
        confirmations of the values the notice relies on (for its evidence record)."""
        in_force = self.cases.confirmations.in_force()
        zone = self.profile.zone
        confirmed = []
        for use in notice.rules:
            done = in_force.get(use.name) if use.unconfirmed else None
            if done is not None and done.value == value_text(use.value, use.unit):
                said = READING_WORDS.get((use.name, done.value))
                what = said or f"{words(use.name.rpartition('.')[2]).capitalize()}, {done.value}"
                confirmed.append(
                    f"{what}: confirmed "
                    f"by {done.confirmed_by} on "
                    f"{local_day(done.confirmed_at.astimezone(zone).date())}"
                    f" ({done.reference})"
                )
        penalty = None
        rule = self.profile.billing.penalty_per_offense
        done = in_force.get("billing.penalty_per_offense")
        agreed = done is not None and done.value == value_text(rule.value, rule.unit)
        if rule.unconfirmed and agreed and done is not None and rule.value > 0:
            penalty = f"{usd(rule.value)} for each offense ({done.reference})"
        elif not rule.unconfirmed and rule.value > 0:
            penalty = f"{usd(rule.value)} for each offense ({plain_citation(rule.citation)})"
        # Readings are cited by the pole's name, as the Village registered it.
        poles = tuple((d.id, d.label) for d in self.cases.registry.list_devices() if d.label)
        return LetterContext(
            letterhead_of(notice.detail, self.profile), penalty, tuple(confirmed), poles
        )

    def _survey_addresses(self, survey: Mapping[str, Any] | None) -> dict[str, str]:
        """The street address of each frontage a survey counts (the letter's words)."""
        ids = {str(f["frontage"]) for f in (survey or {}).get("frontages", ())}
        if not ids:
            return {}
        every = self.cases.registry.list_frontages(include_retired=True)
        return {f.id: f.street_address for f in every if f.id in ids}

    def _deposit_charge(self) -> tuple[str, bool]:
        """§ 370-10 C: the Village's reading of whether G charges a deposit's removal to the
        owner, and whether it is settled (not a gap, or confirmed as it stands)."""
        reading = self.profile.snow_and_ice.deposit_removal_charge
        done = self.cases.confirmations.in_force().get(DEPOSIT_CHARGE)
        settled = not reading.unconfirmed or (done is not None and done.value == reading.value)
        return reading.value, settled

    def _charge_settled(self, terms: BillTerms) -> BillTerms:
        """A deposit's bill (§ 370-10 C) once the Village confirmed its reading of G: the
        letter no longer says the reading waits for the Village attorney."""
        if terms.charge is None or not self._deposit_charge()[1]:
            return terms
        name, rule = terms.charge
        return replace(terms, charge=(name, rule.model_copy(update={"unconfirmed": False})))

    def render_pending(self) -> list[records.NoticeRecord]:
        """Try every pending notice again (after an address or a template was fixed)."""
        out = []
        for notice in self.cases.notices.list(status="pending"):
            out.append(self.render(self.cases.notices.refresh_owner(notice.id)))
        return out

    def rendered(self, notice: records.NoticeRecord) -> RenderedNotice:  # noqa: PLR0911
        """The text and HTML of a notice, from its stored record (raises ``NoticeError``)."""
        frontage = self.cases.registry.get_frontage(notice.frontage_id)
        common: dict[str, Any] = {
            "number": notice.number,
            "issued_at": notice.issued_at,
            "frontage": FrontageInfo(frontage.id, frontage.street_address, frontage.parcel_number),
            "profile": self.profile,
            "template_dir": self.template_dir,
            "evidence": evidence_from_detail(notice.detail),
            "letter": self.letter_context(notice),
        }
        owner = Addressee(notice.owner_name, notice.owner_address_lines)
        d: Mapping[str, Any] = notice.detail
        kind = notice.kind
        if kind == CLEARING_VIOLATION:
            return render_clearing_violation(
                d, owner=owner, history=self._history(notice), **common
            )
        if kind in ("hazard_notice", "hazard_abatement_notice"):
            violation = self._violation(notice)
            return render_hazard_notice(
                kind,
                owner=owner,
                missed_deadline=datetime.fromisoformat(str(violation.evidence["deadline"])),
                confirmed_by=str(d.get("confirmed_by", "a Village officer")),
                history=self._history(notice),
                owner_mailing=d.get("owner_mailing"),
                **common,
            )
        if kind == "abatement_bill":
            return render_abatement_bill(
                owner=owner,
                bill_id=int(d["bill_id"]),
                lines=[
                    LedgerLine(
                        x["description"],
                        Decimal(x["quantity"]),
                        x["unit"],
                        Decimal(x["rate"]),
                        Decimal(x["amount"]),
                        bool(x["unconfirmed"]),
                    )
                    for x in d["lines"]
                ],
                total=Decimal(d["total"]),
                costs_incurred_at=datetime.fromisoformat(d["costs_incurred_at"]),
                work=str(d["work"]),
                abatement_citation=str(d["abatement_citation"]),
                # Bills stored before the terms were: § 370-10 G's, as they were issued.
                terms=self._charge_settled(
                    bill_terms(self.profile, d.get("terms", "snow_and_ice"))
                ),
                **{k: v for k, v in common.items() if k != "evidence"},
            )
        if kind in ("repair_notice", "replacement_notice"):
            return render_repair_notice(
                owner=owner,
                surveyed_at=datetime.fromisoformat(d["surveyed_at"]),
                total_blocks=int(d["total_blocks"]),
                defects=[BlockDefect(**x) for x in d["defects"]],
                survey=d.get("survey"),  # absent from notices issued before it was stored
                addresses=self._survey_addresses(d.get("survey")),
                **common,
            )
        if kind == "obstruction_notice":
            return render_obstruction_notice(
                owner=owner,
                area=str(d["area"]),
                observed_at=datetime.fromisoformat(d["observed_at"]),
                description=str(d["description"]),
                clear_width_mm=d.get("clear_width_mm"),
                **common,
            )
        if kind == "inspection_notice":
            return render_inspection_notice(
                owner=owner,
                rule=str(d["rule"]),
                observed_at=datetime.fromisoformat(d["observed_at"]),
                description=str(d["description"]),
                finding=str(d.get("finding", "")),
                deposit_charge=self._deposit_charge() if d["rule"] == "snow_on_street" else None,
                **common,
            )
        if kind in ("frozen_ground_advisory", "permit_advisory"):
            return render_advisory(
                kind,
                subject=str(d["subject"]),
                findings=[
                    AdvisoryFinding(
                        **{**f, "at": datetime.fromisoformat(f["at"]), "notes": tuple(f["notes"])}
                    )
                    for f in d["findings"]
                ],
                deadlines=[(label, datetime.fromisoformat(due)) for label, due in d["deadlines"]],
                **common,
            )
        raise NoticeError(f"notice {notice.number}: no template for kind {kind!r}")

    def owner_copy(self, notice: records.NoticeRecord) -> records.NoticeRecord:
        """The owner's copy of a delivered hazard notice (§ 370-10 B(1)): the same
        letter, rendered by the same renderer, stating when the officer recorded its
        delivery and so when the two hours end. Not stored: the delivered notice's
        record is unchanged; print it (``pdf.notice_pdf``) or mail it to the owner."""
        if notice.kind != "hazard_notice" or notice.delivered_at is None:
            raise NoticeError(
                f"notice {notice.number}: an owner's copy is of a delivered hazard notice"
            )
        delivered = [d for d in self.cases.notices.list_deliveries(notice_id=notice.id)
                     if d.status == "delivered"]  # fmt: skip
        method = delivered[0].channel if delivered else "hand"
        frontage = self.cases.registry.get_frontage(notice.frontage_id)
        # Served on the person in charge at the property, the copy goes to the owner
        # of record when the notice was issued.
        owner = self.cases.registry.owner_of_record(notice.frontage_id, notice.issued_at)
        violation = self._violation(notice)
        rendered = render_hazard_notice(
            notice.kind,
            number=notice.number,
            issued_at=notice.issued_at,
            frontage=FrontageInfo(frontage.id, frontage.street_address, frontage.parcel_number),
            profile=self.profile,
            template_dir=self.template_dir,
            evidence=evidence_from_detail(notice.detail),
            letter=self.letter_context(notice),
            owner=Addressee(owner.name, owner.address_lines),
            missed_deadline=datetime.fromisoformat(str(violation.evidence["deadline"])),
            confirmed_by=str(notice.detail.get("confirmed_by", "a Village officer")),
            history=self._history(notice),
            delivery=(notice.delivered_at, method),
        )
        # Mailed to the owner: the window shows the owner's mailing address.
        return replace(
            notice,
            owner_name=owner.name,
            owner_address_lines=tuple(owner.address_lines),
            body_text=rendered.text,
            body_html=rendered.html,
        )

    def _violation(self, notice: records.NoticeRecord) -> records.ViolationRecord:
        if notice.violation_id is None:
            raise NoticeError(f"notice {notice.number}: needs its violation")
        return self.cases.clocks.get_violation(notice.violation_id)

    def _history(self, notice: records.NoticeRecord) -> list[dict[str, str]]:
        """The clearing clock's history, then the enforcement clock's, for the violation."""
        if notice.violation_id is None:
            return []
        violation = self.cases.clocks.get_violation(notice.violation_id)
        clocks = [] if violation.clock_id is None else [violation.clock_id]
        clocks += [
            c.id
            for c in self.cases.clocks.list(frontage_id=notice.frontage_id, kind="enforcement")
            if c.key.endswith(f"/{violation.key}")
        ]
        steps: list[Any] = []
        for clock_id in clocks:
            steps += [t for t in self.cases.clocks.history(clock_id) if t.at <= notice.issued_at]
        return history_rows(sorted(steps, key=lambda t: (t.at, t.id)), self.profile)
