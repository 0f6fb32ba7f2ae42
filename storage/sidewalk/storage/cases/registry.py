"""The registry: owners of record, pole devices, frontages and their map geometry."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import select

from sidewalk.storage import models as m
from sidewalk.storage.cases.records import (
    Availability,
    DeviceRecord,
    FrontageRecord,
    OwnerRecord,
    Zone,
    from_row,
)
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, jsonable, now


class RegistryRepository:
    """``cases.registry``: the village's world the clocks run on."""

    def __init__(self, uow: UnitOfWork) -> None:
        self._uow = uow

    # -- owners

    def upsert_owner(
        self, owner_id: str, name: str, address_lines: Sequence[str], email: str | None = None
    ) -> OwnerRecord:
        """Create or update an owner (the last-known mailing address)."""
        with self._uow.write() as session:
            row = session.get(m.Owner, owner_id)
            if row is None:
                row = m.Owner(id=owner_id)
                session.add(row)
            row.name = name
            row.address_lines = list(address_lines)
            row.email = email
            row.updated_at = now()
            session.flush()
            return from_row(OwnerRecord, row)

    def get_owner(self, owner_id: str) -> OwnerRecord:
        with self._uow.read() as session:
            return from_row(OwnerRecord, self._uow.get(session, m.Owner, owner_id))

    def list_owners(self) -> list[OwnerRecord]:
        """Every owner, by id."""
        with self._uow.read() as session:
            query = select(m.Owner).order_by(m.Owner.id)
            return [from_row(OwnerRecord, r) for r in session.scalars(query)]

    # -- devices

    def upsert_device(self, device_id: str, site: str) -> DeviceRecord:
        """Register a device (idempotent); availability starts ``unknown``."""
        with self._uow.write() as session:
            row = session.get(m.Device, device_id)
            if row is None:
                row = m.Device(id=device_id, availability="unknown")
                session.add(row)
            row.site = site
            session.flush()
            return from_row(DeviceRecord, row)

    def record_device_seen(
        self, device_id: str, at: datetime, availability: Availability | None = None
    ) -> DeviceRecord:
        """Move ``last_seen`` forward (never back: messages arrive out of order)."""
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Device, device_id)
            if row.last_seen is None or at >= row.last_seen:
                row.last_seen = at
                if availability is not None:
                    row.availability = availability
            session.flush()
            return from_row(DeviceRecord, row)

    def list_devices(self, site: str | None = None) -> list[DeviceRecord]:
        query = select(m.Device).order_by(m.Device.id)
        if site is not None:
            query = query.where(m.Device.site == site)
        with self._uow.read() as session:
            return [from_row(DeviceRecord, r) for r in session.scalars(query)]

    # -- frontages

    def upsert_frontage(
        self,
        frontage_id: str,
        *,
        site: str,
        parcel_number: str,
        street_address: str,
        length_ft: float,
        zone: Zone,
        owner_id: str,
        device_id: str | None = None,
        may_deposit_on_street: bool = False,
    ) -> FrontageRecord:
        """Create or update a frontage; its owner (and device, if any) must exist."""
        with self._uow.write() as session:
            self._uow.get(session, m.Owner, owner_id)
            if device_id is not None:
                self._uow.get(session, m.Device, device_id)
            row = session.get(m.Frontage, frontage_id)
            if row is None:
                row = m.Frontage(id=frontage_id)
                session.add(row)
            row.site = site
            row.parcel_number = parcel_number
            row.street_address = street_address
            row.length_ft = length_ft
            row.zone = zone
            row.owner_id = owner_id
            row.device_id = device_id
            row.may_deposit_on_street = may_deposit_on_street
            session.flush()
            return from_row(FrontageRecord, row)

    def get_frontage(self, frontage_id: str) -> FrontageRecord:
        with self._uow.read() as session:
            return from_row(FrontageRecord, self._uow.get(session, m.Frontage, frontage_id))

    def list_frontages(
        self, *, site: str | None = None, device_id: str | None = None
    ) -> list[FrontageRecord]:
        query = select(m.Frontage).order_by(m.Frontage.id)
        if site is not None:
            query = query.where(m.Frontage.site == site)
        if device_id is not None:
            query = query.where(m.Frontage.device_id == device_id)
        with self._uow.read() as session:
            return [from_row(FrontageRecord, r) for r in session.scalars(query)]

    # -- map geometry

    def set_frontage_geometry(self, frontage_id: str, geometry: Mapping[str, Any]) -> None:
        """Store (or replace) a frontage's GeoJSON geometry."""
        with self._uow.write() as session:
            self._uow.get(session, m.Frontage, frontage_id)
            row = session.get(m.FrontageGeometry, frontage_id)
            if row is None:
                row = m.FrontageGeometry(frontage_id=frontage_id)
                session.add(row)
            row.geometry = jsonable(geometry)

    def frontage_geometries(self) -> dict[str, dict[str, Any]]:
        """``{frontage id: GeoJSON geometry}`` for every frontage that has one."""
        with self._uow.read() as session:
            return {
                r.frontage_id: dict(r.geometry) for r in session.scalars(select(m.FrontageGeometry))
            }
