"""The registry: the village's world the clocks run on, as managed, audited data.

Streets, parcels (from the county's parcel file), owners of record with
effective dates, occupants or persons in charge, frontages, poles (devices)
and the frontages each watches, and each pole camera's calibrated view.

Every change a running analytics must know about (a frontage added or
retired, a pole assigned, an owner changed, a camera calibrated) is also
appended to ``registry_events`` with its own effective time, in the same
transaction; the runner applies them in id order. Changes are audited in the
hash-chained log under the subject ``registry:<kind>:<id>``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import func, or_, select
from sqlalchemy.orm import Session

from sidewalk.core.calibration import calibration_hash, pole_calibration_hash
from sidewalk.storage import models as m
from sidewalk.storage.cases.audit import AuditRepository
from sidewalk.storage.cases.errors import CaseStoreError
from sidewalk.storage.cases.records import (
    Availability,
    CameraRecord,
    DeviceRecord,
    FrontageRecord,
    OccupantRecord,
    OccupantRole,
    OwnerRecord,
    OwnershipRecord,
    ParcelRecord,
    RegistryEventKind,
    RegistryEventRecord,
    StreetRecord,
    Zone,
    from_row,
)
from sidewalk.storage.cases.unit_of_work import UnitOfWork, aware, jsonable, now

# The effective time of a frontage registered with no date: before any reading.
ALWAYS = datetime(1970, 1, 1, tzinfo=UTC)
# Ingest's and analytics' MQTT client ids ("sidewalk-ingest", "sidewalk-analytics")
# begin so; a pole's client id is its login on the pole listeners.
SERVER_CLIENT_PREFIX = "sidewalk-"


class RegistryError(CaseStoreError):
    """A registry change the records cannot take (said in the user's words)."""


def street_id(name: str) -> str:
    """``"N Main St"`` → ``"n-main-st"``: a street's id from its name."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")[:64] or "street"


def owner_row_at(session: Session, frontage: m.Frontage, at: datetime) -> m.Owner:
    """The owner of record of ``frontage`` at ``at``: the parcel's ownership then, else
    the frontage's own owner (frontages registered without a parcel)."""
    if frontage.parcel_id is not None:
        owner_id = session.scalar(
            select(m.Ownership.owner_id)
            .where(
                m.Ownership.parcel_id == frontage.parcel_id,
                m.Ownership.effective_from <= at,
                or_(m.Ownership.effective_to.is_(None), m.Ownership.effective_to > at),
            )
            .order_by(m.Ownership.effective_from.desc())
            .limit(1)
        )
        if owner_id is not None:
            return UnitOfWork.get(session, m.Owner, owner_id)
    return UnitOfWork.get(session, m.Owner, frontage.owner_id)


class _OneTransaction:
    """Stands in for the unit of work inside ``RegistryRepository.batch``: every read
    and write goes to the one open session."""

    get = staticmethod(UnitOfWork.get)

    def __init__(self, session: Session) -> None:
        self._session = session

    @contextmanager
    def write(self) -> Iterator[Session]:
        yield self._session

    read = write


class RegistryRepository:
    """``cases.registry``: the village's world the clocks run on."""

    def __init__(self, uow: UnitOfWork, audit: AuditRepository | None = None) -> None:
        self._uow = uow
        self._audit = audit

    @contextmanager
    def batch(self) -> Iterator[RegistryRepository]:
        """The same methods, all in one transaction committed on leaving (a county
        import's hundreds of changes: all or none, and one commit instead of each)."""
        with self._uow.write() as session:
            yield RegistryRepository(cast(UnitOfWork, _OneTransaction(session)), self._audit)

    def _event(  # noqa: PLR0917 (called with the same six everywhere; keywords add noise)
        self,
        session: Session,
        kind: RegistryEventKind,
        subject: str,
        effective_at: datetime,
        detail: Mapping[str, Any],
        who: str = "system",
    ) -> None:
        """Append a registry event and its audit entry in the caller's transaction."""
        session.add(
            m.RegistryEvent(
                kind=kind,
                subject=subject,
                effective_at=aware("effective_at", effective_at),
                detail=jsonable(detail),
                recorded_by=who,
                recorded_at=now(),
            )
        )
        if self._audit is not None:
            self._audit.chain(
                session, who, f"registry.{kind}", f"registry:{subject}",
                {**detail, "effective_at": effective_at},
            )  # fmt: skip

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

    def upsert_device(
        self,
        device_id: str,
        site: str,
        *,
        label: str | None = None,
        latitude: float | None = None,
        longitude: float | None = None,
        who: str = "system",
    ) -> DeviceRecord:
        """Register a pole (idempotent); availability starts ``unknown``. Only a
        registered pole's readings are accepted; ingest drops an unknown pole's."""
        if device_id.startswith(SERVER_CLIENT_PREFIX):
            raise RegistryError(
                f"a pole's id may not begin with {SERVER_CLIENT_PREFIX!r}: the servers' MQTT"
                " client ids do, and a pole's login is its client id on the broker, so a pole"
                " under such an id would take over that server's session"
            )
        if (latitude is None) != (longitude is None):
            raise RegistryError("a pole's location needs both latitude and longitude")
        if latitude is not None and not -90 <= latitude <= 90:
            raise RegistryError(f"latitude {latitude} is not between -90 and 90")
        if longitude is not None and not -180 <= longitude <= 180:
            raise RegistryError(f"longitude {longitude} is not between -180 and 180")
        with self._uow.write() as session:
            row = session.get(m.Device, device_id)
            added = row is None
            if row is None:
                row = m.Device(id=device_id, availability="unknown")
                session.add(row)
            row.site = site
            if label is not None:
                row.label = label
            if latitude is not None:
                row.latitude, row.longitude = latitude, longitude
            row.retired_at = None
            session.flush()
            if added:
                self._event(
                    session, "pole.registered", f"pole:{device_id}", now(),
                    {"pole": device_id, "site": site, "label": label}, who,
                )  # fmt: skip
            return from_row(DeviceRecord, row)

    def get_device(self, device_id: str) -> DeviceRecord:
        with self._uow.read() as session:
            return from_row(DeviceRecord, self._uow.get(session, m.Device, device_id))

    def known_device_ids(self) -> set[str]:
        """Every registered pole not retired (ingest's known devices)."""
        with self._uow.read() as session:
            return set(session.scalars(select(m.Device.id).where(m.Device.retired_at.is_(None))))

    def assign_pole(
        self,
        device_id: str,
        frontage_ids: Sequence[str],
        *,
        at: datetime | None = None,
        who: str = "system",
    ) -> list[FrontageRecord]:
        """Make ``device_id`` the pole that watches each of ``frontage_ids`` from ``at``."""
        when = aware("at", at) if at is not None else now()
        changed: list[FrontageRecord] = []
        with self._uow.write() as session:
            self._uow.get(session, m.Device, device_id)
            for fid in frontage_ids:
                row = self._uow.get(session, m.Frontage, fid)
                if row.device_id == device_id:
                    changed.append(from_row(FrontageRecord, row))
                    continue
                previous = row.device_id
                row.device_id = device_id
                session.flush()
                self._event(
                    session, "pole.assigned", f"frontage:{fid}", when,
                    {"frontage": fid, "pole": device_id, "previous_pole": previous}, who,
                )  # fmt: skip
                changed.append(from_row(FrontageRecord, row))
        return changed

    def record_reported_calibration(self, device_id: str, digest: str, at: datetime) -> None:
        """What calibration the pole says it runs (its health message)."""
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Device, device_id)
            row.reported_calibration = digest
            row.reported_calibration_at = at

    def expected_calibration(self, device_id: str) -> str | None:
        """The hash the pole should report: over its cameras' calibrations, by frontage.

        ``None`` while the pole has no calibrated camera."""
        cameras = self.cameras(device_id=device_id)
        return pole_calibration_hash({c.frontage_id: c.calibration_hash for c in cameras})

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

    def retire_device(self, device_id: str, at: datetime, *, who: str = "system") -> DeviceRecord:
        """Take a pole out of service from ``at``: its readings are refused from then.
        A pole still watching frontages is refused: they would go unwatched unnoticed."""
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Device, device_id)
            watched = list(
                session.scalars(
                    select(m.Frontage.street_address).where(
                        m.Frontage.device_id == device_id, m.Frontage.retired_at.is_(None)
                    )
                )
            )
            if watched:
                raise RegistryError(
                    f"pole {device_id} still watches {', '.join(sorted(watched))}: assign"
                    " them to another pole first"
                )
            if row.retired_at is None:
                row.retired_at = at
                session.flush()
                self._event(
                    session, "pole.retired", f"pole:{device_id}", at, {"pole": device_id}, who
                )
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
        parcel_id: str | None = None,
        street: str | None = None,
        side: str | None = None,
        walk_width_ft: float | None = None,
        corner: bool = False,
        effective_at: datetime | None = None,
        who: str = "system",
    ) -> FrontageRecord:
        """Create or update a frontage; its owner (and device, parcel, if any) must exist.

        A change the clocks care about (new, pole, zone, § 370-10 C flag) is a
        registry event at ``effective_at``. With no date, a change takes effect now,
        and a new frontage counts as always having been there (``ALWAYS``): a replay
        of earlier readings watches it, as it would once registered."""
        given = aware("effective_at", effective_at) if effective_at is not None else None
        with self._uow.write() as session:
            self._uow.get(session, m.Owner, owner_id)
            if device_id is not None:
                self._uow.get(session, m.Device, device_id)
            if parcel_id is not None:
                self._uow.get(session, m.Parcel, parcel_id)
            row = session.get(m.Frontage, frontage_id)
            added = row is None
            if row is None:
                row = m.Frontage(id=frontage_id)
                session.add(row)
            before = (row.device_id, row.zone, row.may_deposit_on_street, row.retired_at)
            row.site = site
            row.parcel_number = parcel_number
            row.street_address = street_address
            row.length_ft = length_ft
            row.zone = zone
            row.owner_id = owner_id
            row.device_id = device_id
            row.may_deposit_on_street = may_deposit_on_street
            row.parcel_id = parcel_id
            row.street = street
            row.side = side
            row.walk_width_ft = walk_width_ft
            row.corner = corner
            row.retired_at = None
            session.flush()
            after = (row.device_id, row.zone, row.may_deposit_on_street, row.retired_at)
            if added or before != after:
                when = given or (ALWAYS if added else now())
                self._event(
                    session, "frontage.added" if added else "frontage.changed",
                    f"frontage:{frontage_id}", when,
                    {"frontage": frontage_id, "address": street_address, "pole": device_id,
                     "zone": zone, "site": site},
                    who,
                )  # fmt: skip
            return from_row(FrontageRecord, row)

    def retire_frontage(
        self, frontage_id: str, at: datetime, *, reason: str, who: str = "system"
    ) -> FrontageRecord:
        """Stop watching a frontage from ``at`` (a parcel gone or merged); its records stay."""
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Frontage, frontage_id)
            if row.retired_at is None:
                row.retired_at = at
                session.flush()
                self._event(
                    session, "frontage.retired", f"frontage:{frontage_id}", at,
                    {"frontage": frontage_id, "reason": reason}, who,
                )  # fmt: skip
            return from_row(FrontageRecord, row)

    def set_watched(
        self,
        frontage_ids: Sequence[str],
        watched: bool,
        *,
        reason: str,
        effective_at: datetime | None = None,
        who: str = "system",
    ) -> list[FrontageRecord]:
        """Mark frontages watched, or "not watched yet" (no automatic clock runs on
        them; the Village inspects them by hand), all in one transaction; each
        change is a registry event (``frontage.watched``/``frontage.unwatched``) so a
        running analytics follows it. A frontage already so is left alone."""
        when = aware("effective_at", effective_at) if effective_at is not None else now()
        kind: RegistryEventKind = "frontage.watched" if watched else "frontage.unwatched"
        with self._uow.write() as session:
            rows = [self._uow.get(session, m.Frontage, fid) for fid in frontage_ids]
            changed = []
            for row in rows:
                if row.watched == watched:
                    continue
                row.watched = watched
                session.flush()
                self._event(
                    session, kind, f"frontage:{row.id}", when,
                    {"frontage": row.id, "address": row.street_address, "watched": watched,
                     "reason": reason},
                    who,
                )  # fmt: skip
                changed.append(from_row(FrontageRecord, row))
            return changed

    def get_frontage(self, frontage_id: str) -> FrontageRecord:
        with self._uow.read() as session:
            return from_row(FrontageRecord, self._uow.get(session, m.Frontage, frontage_id))

    def list_frontages(
        self,
        *,
        site: str | None = None,
        device_id: str | None = None,
        include_retired: bool = False,
    ) -> list[FrontageRecord]:
        """The frontages being watched (``include_retired``: and those no longer)."""
        query = select(m.Frontage).order_by(m.Frontage.id)
        if not include_retired:
            query = query.where(m.Frontage.retired_at.is_(None))
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

    # -- streets and parcels

    def upsert_street(self, name: str) -> StreetRecord:
        """A street by name (idempotent)."""
        sid = street_id(name)
        with self._uow.write() as session:
            row = session.get(m.Street, sid)
            if row is None:
                row = m.Street(id=sid, name=name)
                session.add(row)
                session.flush()
            return from_row(StreetRecord, row)

    def list_streets(self) -> list[StreetRecord]:
        with self._uow.read() as session:
            return [
                from_row(StreetRecord, r)
                for r in session.scalars(select(m.Street).order_by(m.Street.name))
            ]

    def upsert_parcel(
        self,
        parcel_id: str,
        *,
        tax_parcel_id: str | None,
        site_address: str | None,
        place: str | None = None,
        zip_code: str | None = None,
        geometry: Mapping[str, Any] | None = None,
        source: str,
        who: str = "system",
    ) -> ParcelRecord:
        """Create or update a parcel as the county's file describes it (audited)."""
        with self._uow.write() as session:
            row = session.get(m.Parcel, parcel_id)
            added = row is None
            if row is None:
                row = m.Parcel(id=parcel_id)
                session.add(row)
            row.tax_parcel_id = tax_parcel_id
            row.site_address = site_address
            row.place = place
            row.zip_code = zip_code
            row.geometry = None if geometry is None else jsonable(geometry)
            row.source = source
            row.updated_at = now()
            row.retired_at = None
            session.flush()
            if self._audit is not None:
                self._audit.chain(
                    session, who, "registry.parcel." + ("added" if added else "updated"),
                    f"registry:parcel:{parcel_id}",
                    {"tax_parcel_id": tax_parcel_id, "site_address": site_address,
                     "source": source},
                )  # fmt: skip
            return from_row(ParcelRecord, row)

    def retire_parcel(
        self, parcel_id: str, at: datetime, *, reason: str, who: str = "system"
    ) -> ParcelRecord:
        """A parcel gone from the county's file (split, merged, vacated) from ``at``;
        its frontages are retired with it. Open cases keep their records."""
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Parcel, parcel_id)
            if row.retired_at is None:
                row.retired_at = at
                for f in session.scalars(
                    select(m.Frontage).where(
                        m.Frontage.parcel_id == parcel_id, m.Frontage.retired_at.is_(None)
                    )
                ):
                    f.retired_at = at
                    self._event(
                        session, "frontage.retired", f"frontage:{f.id}", at,
                        {"frontage": f.id, "reason": reason}, who,
                    )  # fmt: skip
                if self._audit is not None:
                    self._audit.chain(
                        session, who, "registry.parcel.retired", f"registry:parcel:{parcel_id}",
                        {"reason": reason, "at": at},
                    )  # fmt: skip
            session.flush()
            return from_row(ParcelRecord, row)

    def get_parcel(self, parcel_id: str) -> ParcelRecord:
        with self._uow.read() as session:
            return from_row(ParcelRecord, self._uow.get(session, m.Parcel, parcel_id))

    def list_parcels(self, *, include_retired: bool = False) -> list[ParcelRecord]:
        query = select(m.Parcel).order_by(m.Parcel.id)
        if not include_retired:
            query = query.where(m.Parcel.retired_at.is_(None))
        with self._uow.read() as session:
            return [from_row(ParcelRecord, r) for r in session.scalars(query)]

    # -- owners of record, with effective dates

    def set_owner_of_record(
        self,
        parcel_id: str,
        owner_id: str,
        effective_from: datetime,
        *,
        source: str,
        who: str = "system",
    ) -> OwnershipRecord:
        """``owner_id`` owns ``parcel_id`` from ``effective_from`` (a sale, or the first
        import). The previous ownership ends then; notices issued before keep the
        name and address they were mailed to. The frontages' current owner follows
        once the date has come. Recording the same owner again changes nothing."""
        effective_from = aware("effective_from", effective_from)
        with self._uow.write() as session:
            self._uow.get(session, m.Parcel, parcel_id)
            self._uow.get(session, m.Owner, owner_id)
            current = session.scalars(
                select(m.Ownership)
                .where(m.Ownership.parcel_id == parcel_id, m.Ownership.effective_to.is_(None))
                .order_by(m.Ownership.effective_from.desc())
            ).first()
            if current is not None and current.owner_id == owner_id:
                return from_row(OwnershipRecord, current)
            if current is not None:
                if effective_from < current.effective_from:
                    raise RegistryError(
                        f"parcel {parcel_id}: a new owner from {effective_from:%Y-%m-%d} is "
                        f"before the current owner's date ({current.effective_from:%Y-%m-%d})"
                    )
                current.effective_to = effective_from
            row = m.Ownership(
                parcel_id=parcel_id, owner_id=owner_id, effective_from=effective_from,
                effective_to=None, source=source, recorded_at=now(),
            )  # fmt: skip
            session.add(row)
            if effective_from <= now():
                for f in session.scalars(
                    select(m.Frontage).where(m.Frontage.parcel_id == parcel_id)
                ):
                    f.owner_id = owner_id
            session.flush()
            self._event(
                session, "owner.changed", f"parcel:{parcel_id}", effective_from,
                {"parcel": parcel_id, "owner": owner_id,
                 "previous_owner": None if current is None else current.owner_id,
                 "source": source},
                who,
            )  # fmt: skip
            return from_row(OwnershipRecord, row)

    def ownerships(self, parcel_id: str) -> list[OwnershipRecord]:
        """The parcel's owners of record, oldest first."""
        with self._uow.read() as session:
            query = (
                select(m.Ownership)
                .where(m.Ownership.parcel_id == parcel_id)
                .order_by(m.Ownership.effective_from, m.Ownership.id)
            )
            return [from_row(OwnershipRecord, r) for r in session.scalars(query)]

    def current_ownerships(self) -> dict[str, OwnershipRecord]:
        """``{parcel id: its open ownership}`` in one query (the county import's comparison)."""
        with self._uow.read() as session:
            query = (
                select(m.Ownership)
                .where(m.Ownership.effective_to.is_(None))
                .order_by(m.Ownership.effective_from, m.Ownership.id)
            )
            return {r.parcel_id: from_row(OwnershipRecord, r) for r in session.scalars(query)}

    def owner_of_record(self, frontage_id: str, at: datetime) -> OwnerRecord:
        """Who a notice about ``frontage_id`` issued at ``at`` goes to."""
        at = aware("at", at)
        with self._uow.read() as session:
            frontage = self._uow.get(session, m.Frontage, frontage_id)
            return from_row(OwnerRecord, owner_row_at(session, frontage, at))

    def owners_of_record(self, at: datetime) -> dict[str, OwnerRecord]:
        """``{frontage id: its owner of record at at}`` for every frontage, in one read
        (``owner_of_record`` for thousands: ``sidewalk check``, ``registry list``)."""
        by_parcel = self._parcel_owner_ids(at)
        with self._uow.read() as session:
            owners = {o.id: from_row(OwnerRecord, o) for o in session.scalars(select(m.Owner))}
            rows = session.execute(select(m.Frontage.id, m.Frontage.parcel_id, m.Frontage.owner_id))
            return {
                fid: owners[by_parcel.get(parcel_id, owner_id) if parcel_id else owner_id]
                for fid, parcel_id, owner_id in rows
            }

    def parcel_owners(self, at: datetime) -> dict[str, str]:
        """``{parcel id: owner id}`` of every parcel with an owner of record at ``at``."""
        return self._parcel_owner_ids(at)

    def _parcel_owner_ids(self, at: datetime) -> dict[str, str]:
        at = aware("at", at)
        query = (
            select(m.Ownership.parcel_id, m.Ownership.owner_id)
            .where(
                m.Ownership.effective_from <= at,
                or_(m.Ownership.effective_to.is_(None), m.Ownership.effective_to > at),
            )
            .order_by(m.Ownership.effective_from, m.Ownership.id)
        )
        with self._uow.read() as session:
            # The latest ownership in force wins, as in ``owner_row_at``.
            return {parcel_id: owner_id for parcel_id, owner_id in session.execute(query)}

    # -- occupants and persons in charge (§ 370-10 B(1))

    def add_occupant(
        self,
        parcel_id: str,
        name: str,
        *,
        role: OccupantRole = "occupant",
        phone: str | None = None,
        email: str | None = None,
        address_lines: Sequence[str] = (),
        effective_from: datetime | None = None,
        who: str = "system",
    ) -> OccupantRecord:
        """Record an occupant or person in charge of a parcel (audited)."""
        when = aware("effective_from", effective_from) if effective_from is not None else now()
        if not name.strip():
            raise RegistryError("an occupant needs a name")
        with self._uow.write() as session:
            self._uow.get(session, m.Parcel, parcel_id)
            row = m.Occupant(
                parcel_id=parcel_id, name=name.strip(), role=role, phone=phone, email=email,
                address_lines=list(address_lines), effective_from=when, effective_to=None,
                recorded_at=now(),
            )  # fmt: skip
            session.add(row)
            session.flush()
            if self._audit is not None:
                self._audit.chain(
                    session, who, "registry.occupant.added", f"registry:parcel:{parcel_id}",
                    {"occupant": row.id, "name": row.name, "role": role, "from": when},
                )  # fmt: skip
            return from_row(OccupantRecord, row)

    def end_occupant(self, occupant_id: int, at: datetime, *, who: str = "system") -> None:
        at = aware("at", at)
        with self._uow.write() as session:
            row = self._uow.get(session, m.Occupant, occupant_id)
            row.effective_to = at
            if self._audit is not None:
                self._audit.chain(
                    session, who, "registry.occupant.ended", f"registry:parcel:{row.parcel_id}",
                    {"occupant": occupant_id, "at": at},
                )  # fmt: skip

    def occupants(self, parcel_id: str, at: datetime | None = None) -> list[OccupantRecord]:
        """The parcel's occupants and persons in charge (at ``at``; all if ``None``)."""
        query = select(m.Occupant).where(m.Occupant.parcel_id == parcel_id)
        if at is not None:
            at = aware("at", at)
            query = query.where(
                m.Occupant.effective_from <= at,
                or_(m.Occupant.effective_to.is_(None), m.Occupant.effective_to > at),
            )
        with self._uow.read() as session:
            return [
                from_row(OccupantRecord, r) for r in session.scalars(query.order_by(m.Occupant.id))
            ]

    # -- cameras: each pole camera's calibrated view of a frontage

    def set_camera(
        self,
        device_id: str,
        frontage_id: str,
        *,
        region: Sequence[Sequence[float]],
        homography: Sequence[Sequence[float]],
        calibrated_at: datetime,
        who: str,
    ) -> CameraRecord:
        """Store (or replace) the pole camera's region and ground homography for a frontage."""
        calibrated_at = aware("calibrated_at", calibrated_at)
        if len(region) < 3 or any(len(p) != 2 for p in region):
            raise RegistryError("the walk's region needs at least three corners (x, y)")
        if len(homography) != 3 or any(len(r) != 3 for r in homography):
            raise RegistryError("the ground mapping must be a 3 × 3 matrix")
        digest = calibration_hash(region, homography)
        with self._uow.write() as session:
            self._uow.get(session, m.Device, device_id)
            self._uow.get(session, m.Frontage, frontage_id)
            row = session.scalars(
                select(m.Camera).where(
                    m.Camera.device_id == device_id, m.Camera.frontage_id == frontage_id
                )
            ).first()
            if row is None:
                row = m.Camera(device_id=device_id, frontage_id=frontage_id)
                session.add(row)
            row.region = [[float(x), float(y)] for x, y in region]
            row.homography = [[float(v) for v in r] for r in homography]
            row.calibrated_at = calibrated_at
            row.calibrated_by = who
            row.calibration_hash = digest
            session.flush()
            self._event(
                session, "camera.calibrated", f"frontage:{frontage_id}", calibrated_at,
                {"pole": device_id, "frontage": frontage_id, "hash": digest}, who,
            )  # fmt: skip
            return from_row(CameraRecord, row)

    def cameras(
        self, *, device_id: str | None = None, frontage_id: str | None = None
    ) -> list[CameraRecord]:
        query = select(m.Camera).order_by(m.Camera.device_id, m.Camera.frontage_id)
        if device_id is not None:
            query = query.where(m.Camera.device_id == device_id)
        if frontage_id is not None:
            query = query.where(m.Camera.frontage_id == frontage_id)
        with self._uow.read() as session:
            return [from_row(CameraRecord, r) for r in session.scalars(query)]

    # -- events, for a running analytics

    def events_since(self, after_id: int = 0, limit: int = 1000) -> list[RegistryEventRecord]:
        """Registry events with id > ``after_id``, oldest first."""
        query = (
            select(m.RegistryEvent)
            .where(m.RegistryEvent.id > after_id)
            .order_by(m.RegistryEvent.id)
            .limit(limit)
        )
        with self._uow.read() as session:
            return [from_row(RegistryEventRecord, r) for r in session.scalars(query)]

    def last_event_id(self) -> int:
        with self._uow.read() as session:
            return int(session.scalar(select(func.max(m.RegistryEvent.id))) or 0)
