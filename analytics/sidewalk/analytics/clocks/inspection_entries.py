"""The findings inspectors enter, made into the inspection clocks'.

What an inspector records for the inspector-entered rules (§ 370-10 C, § 370-11 C,
§ 370-14, §§ 144-11, 144-12 B, C: a finding, a demolition completed or an
excavation opened, a notice delivered, a correction) is checked against the
engine's frontages and handed to ``inspections.InspectionClocks``. The engine
routes the actions here (``engine.HANDLERS``) and keeps the clocks' state in its
snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from sidewalk.analytics.clocks.actions import (
    InspectionCorrected,
    InspectionNoticeDelivered,
    RecordDemolitionCompleted,
    RecordExcavationOpened,
    RecordInspectionFinding,
)
from sidewalk.analytics.clocks.events import Event
from sidewalk.analytics.clocks.inspections import Inspection, InspectionClocks, InspectionRule
from sidewalk.analytics.clocks.street_entries import required_frontage


class Frontage(Protocol):
    """What the inspection clocks read of a frontage (the engine's ``FrontageSpec``)."""

    @property
    def may_deposit_on_street(self) -> bool: ...


class InspectionEntries:
    """The inspection clocks' person entries for one engine's frontages."""

    def __init__(self, inspections: InspectionClocks, frontages: Mapping[str, Frontage]) -> None:
        self.inspections = inspections
        self.frontages = frontages

    def record_finding(self, action: RecordInspectionFinding) -> list[Event]:
        found = action.detail
        frontage = required_frontage(self.frontages, found.frontage)
        inspection = Inspection(
            action.target, found.rule, found.location or frontage,
            found.observed_at or action.at, found.description or "",
            onto=found.onto, from_own_walk=found.from_own_walk,
            may_deposit=self.frontages[frontage].may_deposit_on_street,
            fence_height_mm=found.fence_height,
        )  # fmt: skip
        return list(self.inspections.record(inspection, frontage, action.cause))

    def record_work(
        self, action: RecordDemolitionCompleted | RecordExcavationOpened
    ) -> list[Event]:
        work = action.detail
        frontage = required_frontage(self.frontages, work.frontage)
        rule: InspectionRule = (
            "demolition_fill"
            if isinstance(action, RecordDemolitionCompleted)
            else "abandoned_excavation"
        )
        inspection = Inspection(
            action.target, rule, work.location or frontage, work.at,
            work.description or "", started_at=work.at,
        )  # fmt: skip
        return list(self.inspections.record(inspection, frontage, action.cause))

    def notice_delivered(self, action: InspectionNoticeDelivered) -> list[Event]:
        return list(self.inspections.notice_delivered(action.target, action.at, action.cause))

    def corrected(self, action: InspectionCorrected) -> list[Event]:
        return list(self.inspections.corrected(action.target, action.at, action.cause))
