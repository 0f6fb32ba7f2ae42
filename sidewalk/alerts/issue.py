"""Turns a recorded violation into a numbered, rendered notice in the case records.

Idempotent: the notice's key derives from the violation's key, so a replay or
a restart returns the notice already issued instead of making another. A
notice that cannot be rendered (no mailing address, a template error) stays
``pending`` and visible, with the reason in the audit log; it is never lost.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sidewalk.alerts.notices import (
    Addressee,
    FrontageInfo,
    NoticeError,
    render_clearing_violation,
)
from sidewalk.analytics.clocks.events import ClearingViolation
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
                records.RuleUse.from_rule("snow_and_ice.clearing_deadline", rules.clearing_deadline),
                records.RuleUse.from_rule("snow_and_ice.clearing_min_width", rules.clearing_min_width),
            ],
            detail=dict(record.evidence),
        )
        if notice.status != "pending":
            return notice
        frontage = self.cases.get_frontage(violation.frontage)
        try:
            rendered = render_clearing_violation(
                violation,
                number=notice.number,
                issued_at=notice.issued_at,
                owner=Addressee(notice.owner_name, notice.owner_address_lines),
                frontage=FrontageInfo(frontage.id, frontage.street_address, frontage.parcel_number),
                profile=self.profile,
                template_dir=self.template_dir,
            )
        except NoticeError as exc:
            log.error("notice %s kept pending: %s", notice.number, exc)
            self.cases.append_audit(
                "alerts", "notice.render_failed", f"notice:{notice.number}", {"reason": str(exc)}
            )
            return notice
        return self.cases.set_notice_rendered(notice.id, rendered.text, rendered.html)
