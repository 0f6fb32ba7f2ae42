"""Obstructions, sweeping and street privileges staff record, made into the street clocks'.

What a person enters (§ 370-8 obstructions and materials authorizations, § 144-17
sweeping, § 370-9 street privileges and their inspections, the notices delivered
and the removals) is checked against the engine's frontages and handed to
``obstructions.StreetClocks``. An obstruction under a street-opening permit is
judged against that permit as the cold-weather clocks hold it (§§ 370-6/370-7).
The engine routes the actions here (``engine.HANDLERS``) and keeps the clocks'
state in its snapshot.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from sidewalk.analytics.clocks.actions import (
    ObstructionNoticeDelivered,
    ObstructionRemoved,
    RecordMaterialsAuthorization,
    RecordObstruction,
    RecordStreetPrivilege,
    RecordSweepingIncident,
    StreetPrivilegeInspected,
    SweepingDone,
)
from sidewalk.analytics.clocks.cold_weather import ColdWeatherClocks
from sidewalk.analytics.clocks.events import Event
from sidewalk.analytics.clocks.obstructions import (
    MaterialsAuthorization,
    Obstruction,
    StreetClocks,
    StreetPrivilegePermit,
    SweepingIncident,
)


class Frontage(Protocol):
    """What the street clocks read of a frontage (the engine's ``FrontageSpec``)."""

    @property
    def zone(self) -> str | None: ...


def required_frontage(frontages: Mapping[str, object], frontage: str) -> str:
    """``frontage`` if one of the engine's, else ``ValueError``: a case's records hang on it."""
    if frontage not in frontages:
        raise ValueError(f"unknown frontage {frontage!r}")
    return frontage


class StreetEntries:
    """The street clocks' person entries for one engine's frontages."""

    def __init__(
        self, street: StreetClocks, cold: ColdWeatherClocks, frontages: Mapping[str, Frontage]
    ) -> None:
        self.street = street
        self.cold = cold
        self.frontages = frontages

    def record_authorization(self, action: RecordMaterialsAuthorization) -> list[Event]:
        auth = action.detail
        frontage = required_frontage(self.frontages, auth.frontage)
        return list(
            self.street.record_authorization(
                MaterialsAuthorization(
                    action.target, frontage, auth.authorized_from, auth.authorized_until,
                    by=auth.by or action.who, location=auth.location or frontage,
                )
            )
        )  # fmt: skip

    def privilege_inspected(self, action: StreetPrivilegeInspected) -> list[Event]:
        seen = action.detail
        return list(
            self.street.privilege_inspected(
                action.target, action.at, action.cause, present=seen.present,
                temporary_walk_width_mm=seen.temporary_walk_width_mm,
                street_width_mm=seen.street_width_mm,
                street_occupied_mm=seen.street_occupied_mm,
            )
        )  # fmt: skip

    def notice_delivered(self, action: ObstructionNoticeDelivered) -> list[Event]:
        return list(self.street.notice_delivered(action.target, action.at, action.cause))

    def removed(self, action: ObstructionRemoved) -> list[Event]:
        return list(self.street.removed(action.target, action.at, action.cause))

    def swept(self, action: SweepingDone) -> list[Event]:
        return list(self.street.swept(action.target, action.at, action.cause))

    def record_obstruction(self, action: RecordObstruction) -> list[Event]:
        detail = action.detail
        frontage = required_frontage(self.frontages, detail.frontage)
        observed = detail.observed_at or action.at
        obstruction = Obstruction(
            action.target,
            detail.location or frontage,
            detail.area,
            observed,
            clear_width_mm=detail.clear_width,
            kind=detail.kind,
            sidewalk_width_mm=detail.sidewalk_width_mm,
            street_width_mm=detail.street_width_mm,
            street_occupied_mm=detail.street_occupied_mm,
            gutters_clear=detail.gutters_clear,
            privilege_permit=detail.privilege_permit,
            opening_permit=detail.opening_permit,
            materials_authorization=detail.materials_authorization,
        )
        opening_valid: bool | None = None
        if detail.opening_permit is not None:
            held = self.cold.permits.get(detail.opening_permit)
            if held is not None:
                # §§ 370-6/370-7: approved before the sighting and not yet expired.
                opening_valid = held.expiry.start <= observed < held.expiry.due
        description = detail.description or ""
        return list(
            self.street.observe_obstruction(
                obstruction, frontage, description, action.cause,
                commercial=self.frontages[frontage].zone == "commercial",
                opening_permit_valid=opening_valid,
            )
        )  # fmt: skip

    def record_sweeping(self, action: RecordSweepingIncident) -> list[Event]:
        detail = action.detail
        frontage = required_frontage(self.frontages, detail.frontage)
        incident = SweepingIncident(
            action.target, detail.location or frontage, detail.occurred_at or action.at,
            contractor=detail.contractor, contractor_address=detail.contractor_address,
        )  # fmt: skip
        description = detail.description or ""
        return list(self.street.record_sweeping(incident, frontage, description, action.cause))

    def record_privilege(self, action: RecordStreetPrivilege) -> list[Event]:
        detail = action.detail
        frontage = required_frontage(self.frontages, detail.frontage)
        permit = StreetPrivilegePermit(
            action.target,
            detail.issued_on,
            earlier_termination_on=detail.earlier_termination_on,
            temporary_walk_width_mm=detail.temporary_walk_width_mm,
            street_width_mm=detail.street_width_mm,
            street_occupied_mm=detail.street_occupied_mm,
            holder=detail.holder or "",
            location=detail.location or frontage,
            placed=detail.placed or "",
            area=detail.area,
        )
        return list(self.street.record_privilege(permit, frontage, action.cause))
