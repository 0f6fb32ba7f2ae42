"""Turns a recorded violation into a numbered, rendered notice in the case records.

Idempotent: the notice's key derives from the violation's key, so a replay or
a restart returns the notice already issued instead of making another. A
notice that cannot be rendered (no mailing address, a template error) stays
``pending`` and visible, with the reason in the audit log; it is never lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from sidewalk.alerts.notices import (
    Addressee,
    FrontageInfo,
    NoticeError,
    RenderedNotice,
    render_clearing_violation,
    render_hazard_notice,
)
from sidewalk.analytics.clocks.events import ClearingViolation, NoticeRequired
from sidewalk.core.profile import Profile
from sidewalk.storage import cases as records

log = logging.getLogger(__name__)

CLEARING_VIOLATION = "clearing_violation"


@dataclass
class NoticeIssuer:
    cases: records.CaseStore
    profile: Profile
    template_dir: Path | None = None

    def clearing_violation(
        self, violation: ClearingViolation, record: records.ViolationRecord
    ) -> records.NoticeRecord:
        """Issue (or find) the § 370-10 A notice for ``violation`` and render it."""
        rules = self.profile.snow_and_ice
        notice = self.cases.create_notice(
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
            ],
            detail=dict(record.evidence),
        )
        if notice.status != "pending":
            return notice
        frontage = self.cases.get_frontage(violation.frontage)
        return self._render(
            notice,
            lambda: render_clearing_violation(
                violation,
                number=notice.number,
                issued_at=notice.issued_at,
                owner=Addressee(notice.owner_name, notice.owner_address_lines),
                frontage=FrontageInfo(frontage.id, frontage.street_address, frontage.parcel_number),
                profile=self.profile,
                template_dir=self.template_dir,
            ),
        )

    def required_notice(
        self, required: NoticeRequired, record: records.ViolationRecord
    ) -> records.NoticeRecord:
        """Issue (or find) a hazard notice or an after-the-fact abatement notice, and render it."""
        rule = self.profile.snow_and_ice.hazard_notice_period
        notice = self.cases.create_notice(
            f"notice/{required.key}",
            required.kind,
            required.frontage,
            required.at,
            violation_id=record.id,
            citation=required.citation,
            rules=[records.RuleUse.from_rule("snow_and_ice.hazard_notice_period", rule)],
            detail={"violation": required.violation_key, **required.detail},
        )
        if notice.status != "pending":
            return notice
        frontage = self.cases.get_frontage(required.frontage)
        missed = datetime.fromisoformat(str(record.evidence["deadline"]))
        return self._render(
            notice,
            lambda: render_hazard_notice(
                required.kind,
                number=notice.number,
                issued_at=notice.issued_at,
                owner=Addressee(notice.owner_name, notice.owner_address_lines),
                frontage=FrontageInfo(frontage.id, frontage.street_address, frontage.parcel_number),
                profile=self.profile,
                missed_deadline=missed,
                confirmed_by=str(required.detail.get("confirmed_by", "a Village officer")),
                template_dir=self.template_dir,
            ),
        )

    def _render(
        self, notice: records.NoticeRecord, render: Callable[[], RenderedNotice]
    ) -> records.NoticeRecord:
        try:
            rendered = render()
        except NoticeError as exc:
            log.error("notice %s kept pending: %s", notice.number, exc)
            self.cases.append_audit(
                "alerts", "notice.render_failed", f"notice:{notice.number}", {"reason": str(exc)}
            )
            return notice
        return self.cases.set_notice_rendered(notice.id, rendered.text, rendered.html)
