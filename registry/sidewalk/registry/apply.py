"""The county file against the registry: the difference, then applying it.

``snapshot`` reads what the registry holds; ``compare`` (pure) finds new
parcels, sales (the owner's name changed), changed mailing addresses (same
name, new address), parcels whose details or outline changed, splits and
merges (a parcel number gone with new ones on its ground) and parcels gone,
and the open cases on parcels that change; ``apply`` writes it with an
effective date.

What the registry keeps across imports:

* An owner's id comes from the name and mailing address, so one owner of
  several parcels is one owner, and a new address is a new owner of record
  from the effective date (a notice already issued keeps the address it went
  to; the registry copies it onto the notice).
* Frontages are derived only for parcels new in the file or whose outline or
  address changed: an unchanged parcel's frontages keep whatever was edited
  by hand (length, zone, pole, walk width). A re-derived frontage keeps its
  pole, zone, walk width and street-deposit flag.
* Retiring a parcel (gone, split, merged) retires its frontages from the
  effective date; their clocks, notices and bills keep their records.
* Parcels added by hand (not from a county file) are never retired by an import.

Importing the same file twice changes nothing.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Final

from sidewalk.registry.county import (
    MAX_MEMORY_BYTES,
    Parcel,
    ParcelFile,
    ParcelFileError,
    check_memory,
)
from sidewalk.registry.frontages import Derived, Frontage

if TYPE_CHECKING:
    from sidewalk.storage.cases import CaseStore, FrontageRecord, OwnerRecord
    from sidewalk.storage.cases.records import ParcelRecord
    from sidewalk.storage.cases.registry import RegistryRepository

SOURCE_PREFIX: Final = "county file "
OVERLAP: Final = 0.2  # of the smaller parcel's area: the same ground, for splits and merges
SAME_OUTLINE_DEG: Final = 1e-6  # about 10 cm
CHUNK: Final = 250  # parcels written in one transaction


class ImportRefused(Exception):
    """The import cannot be applied as asked (said in one line)."""


@dataclass(frozen=True)
class Snapshot:
    """What the registry holds, as the import compares it."""

    parcels: dict[str, ParcelRecord]  # retired ones too
    owners: dict[str, OwnerRecord]
    current_owner: dict[str, str]  # parcel id → owner id
    owner_since: dict[str, datetime]  # parcel id → that ownership's start
    frontages: dict[str, list[FrontageRecord]]  # parcel id → its frontages, retired too
    open_cases: dict[str, int]  # frontage id → open clocks


def snapshot(cases: CaseStore) -> Snapshot:
    """The registry's parcels, owners, ownerships, frontages and open clocks (a few queries)."""
    registry = cases.registry
    current = registry.current_ownerships()
    frontages: dict[str, list[FrontageRecord]] = defaultdict(list)
    for f in registry.list_frontages(include_retired=True):
        if f.parcel_id is not None:
            frontages[f.parcel_id].append(f)
    open_cases: dict[str, int] = defaultdict(int)
    for clock in cases.clocks.list(active_only=True):
        open_cases[clock.frontage_id] += 1
    return Snapshot(
        parcels={p.id: p for p in registry.list_parcels(include_retired=True)},
        owners={o.id: o for o in registry.list_owners()},
        current_owner={pid: o.owner_id for pid, o in current.items()},
        owner_since={pid: o.effective_from for pid, o in current.items()},
        frontages=dict(frontages),
        open_cases=dict(open_cases),
    )


@dataclass
class Difference:
    new: list[Parcel] = field(default_factory=list)
    sold: list[tuple[Parcel, str]] = field(default_factory=list)  # (parcel, previous owner's name)
    moved: list[tuple[Parcel, tuple[str, ...]]] = field(default_factory=list)  # previous address
    changed: list[tuple[Parcel, list[str]]] = field(default_factory=list)  # what changed
    split: list[tuple[str, list[str]]] = field(default_factory=list)  # old → new parcel ids
    merged: list[tuple[list[str], str]] = field(default_factory=list)  # old ids → new id
    gone: list[str] = field(default_factory=list)
    owner_set: list[Parcel] = field(default_factory=list)  # in the registry with no owner yet
    open_cases: list[str] = field(default_factory=list)
    unchanged: int = 0
    reshaped: set[str] = field(default_factory=set)  # parcels whose frontages are re-derived

    @property
    def retired(self) -> list[str]:
        return [*(old for old, _ in self.split), *(o for olds, _ in self.merged for o in olds),
                *self.gone]  # fmt: skip

    def is_empty(self) -> bool:
        return not (
            self.new or self.sold or self.moved or self.changed or self.retired or self.owner_set
        )

    def lines(self, snap: Snapshot) -> list[str]:
        """The difference in the words of the person importing, one line each."""

        def where(pid: str) -> str:
            record = snap.parcels.get(pid)
            address = record.site_address if record is not None else None
            return f"{address} (parcel {pid})" if address else f"parcel {pid}"

        out = [f"new parcel: {p.site_address} (parcel {p.parcel_id}), owner {p.owner_name}"
               for p in self.new]  # fmt: skip
        out += [f"sold: {p.site_address} (parcel {p.parcel_id}) from {old} to {p.owner_name}"
                for p, old in self.sold]  # fmt: skip
        out += [
            f"mailing address changed: {p.owner_name} at {p.site_address}:"
            f" {', '.join(old)} → {', '.join(p.mailing_lines)}"
            for p, old in self.moved
        ]
        out += [f"changed: {p.site_address} (parcel {p.parcel_id}): {', '.join(what)}"
                for p, what in self.changed]  # fmt: skip
        for old, new in self.split:
            verb = "split into" if len(new) > 1 else "replaced by"
            out.append(f"{verb}: {where(old)} → parcels {', '.join(new)}")
        out += [f"merged: {', '.join(where(o) for o in olds)} → parcel {new}"
                for olds, new in self.merged]  # fmt: skip
        out += [f"gone from the county's file: {where(pid)}" for pid in self.gone]
        out += [f"owner of record set: {p.site_address} (parcel {p.parcel_id}), {p.owner_name}"
                for p in self.owner_set]  # fmt: skip
        return out


def _same_outline(stored: dict[str, Any] | None, geometry: Any) -> bool:
    import shapely
    from shapely.geometry import shape

    if stored is None:
        return False
    return bool(
        shapely.equals_exact(
            shapely.normalize(shape(stored)), shapely.normalize(geometry), SAME_OUTLINE_DEG
        )
    )


def _name(text: str) -> str:
    return " ".join(text.upper().split())


# A county's file overlaps the Village's registry; a file of which no parcel lies within
# this many degrees (about 10 km) of the registry's parcels is of another place, or in
# another coordinate system than it says (the area check of county.py passes a
# Wisconsin system read as another Wisconsin one).
NEAR_DEG: Final = 0.1


def far_from_registry(parsed: ParcelFile, registry: Iterable[ParcelRecord]) -> str | None:
    """Why the file's parcels cannot be the Village's, or None: some lie near those the
    registry holds, or it holds none yet (a first import is checked by its area alone)."""
    import math

    import numpy as np
    import shapely
    from shapely.geometry import box, shape

    held = [shape(p.geometry) for p in registry if p.retired_at is None and p.geometry]
    if not held or not parsed.parcels:
        return None
    west, south, east, north = shapely.total_bounds(np.asarray(held, dtype=object))
    near = box(west - NEAR_DEG, south - NEAR_DEG, east + NEAR_DEG, north + NEAR_DEG)
    outlines = np.asarray([p.geometry for p in parsed.parcels], dtype=object)
    if bool(np.any(shapely.intersects(near, outlines))):
        return None
    fw, fs, fe, fn = shapely.total_bounds(outlines)
    lat = math.radians((south + north) / 2)
    dx = ((fw + fe) - (west + east)) / 2 * 111.32 * math.cos(lat)
    dy = ((fs + fn) - (south + north)) / 2 * 110.57
    return (
        f"{parsed.source}: none of its {len(parsed.parcels):,} parcels lies within about 10 km"
        f" of the {len(held):,} the registry holds (they are about {math.hypot(dx, dy):,.0f} km"
        f" away): a file of another place, or its coordinates are not in {parsed.crs_name};"
        " give their coordinate system with --crs"
    )


def compare(  # noqa: PLR0912, PLR0915 (each kind of change in turn)
    parsed: ParcelFile, snap: Snapshot, effective: datetime
) -> Difference:
    """What importing ``parsed`` at ``effective`` would change (pure)."""
    import shapely
    from shapely.geometry import shape

    diff = Difference()
    in_file = {p.parcel_id for p in parsed.parcels}
    for parcel in parsed.parcels:
        record = snap.parcels.get(parcel.parcel_id)
        if record is None or record.retired_at is not None:
            diff.new.append(parcel)
            diff.reshaped.add(parcel.parcel_id)
            continue
        what = []
        if record.site_address != parcel.site_address:
            what.append(f"site address was {record.site_address}")
        if record.tax_parcel_id != parcel.tax_parcel_id:
            what.append(f"tax parcel number was {record.tax_parcel_id}")
        if (record.place, record.zip_code) != (parcel.place, parcel.zip_code):
            what.append("place or ZIP code")
        if not _same_outline(record.geometry, parcel.geometry):
            what.append("outline (the frontage is measured again)")
        if what:
            diff.changed.append((parcel, what))
            if record.site_address != parcel.site_address or what[-1].startswith("outline"):
                diff.reshaped.add(parcel.parcel_id)
        current = snap.current_owner.get(parcel.parcel_id)
        owner = snap.owners.get(current) if current is not None else None
        if owner is None:
            diff.owner_set.append(parcel)
        elif owner.id != parcel.owner_id:
            if _name(owner.name) == _name(parcel.owner_name):
                diff.moved.append((parcel, owner.address_lines))
            else:
                diff.sold.append((parcel, owner.name))
        elif not what:
            diff.unchanged += 1
    # Parcels the file no longer has: split, merged, or gone.
    gone = [
        r for pid, r in snap.parcels.items()
        if pid not in in_file and r.retired_at is None and r.source.startswith(SOURCE_PREFIX)
    ]  # fmt: skip
    fresh = [p for p in diff.new if p.parcel_id not in snap.parcels]
    partners_of_new: dict[str, list[str]] = defaultdict(list)
    partners_of_old: dict[str, list[str]] = {}
    if gone and fresh:
        tree = shapely.STRtree([p.geometry for p in fresh])
        for record in gone:
            partners_of_old[record.id] = []
            if record.geometry is None:
                continue
            old = shape(record.geometry)
            for i in tree.query(old, predicate="intersects"):
                new = fresh[int(i)]
                shared = old.intersection(new.geometry).area
                if shared >= OVERLAP * min(old.area, new.geometry.area):
                    partners_of_old[record.id].append(new.parcel_id)
                    partners_of_new[new.parcel_id].append(record.id)
    merged_into: dict[str, list[str]] = defaultdict(list)
    for record in gone:
        partners = sorted(set(partners_of_old.get(record.id, [])))
        if not partners:
            diff.gone.append(record.id)
        elif len(partners) == 1 and len(set(partners_of_new[partners[0]])) > 1:
            merged_into[partners[0]].append(record.id)
        else:
            diff.split.append((record.id, partners))
    diff.merged = [(sorted(olds), new) for new, olds in sorted(merged_into.items())]
    diff.open_cases = _open_cases(diff, snap, effective)
    return diff


def _open_cases(diff: Difference, snap: Snapshot, effective: datetime) -> list[str]:
    """A sentence per changing parcel that has open cases, saying what happens to them."""
    day = f"{effective:%Y-%m-%d}"

    def count(pid: str) -> tuple[int, str]:
        live = [f for f in snap.frontages.get(pid, []) if f.retired_at is None]
        n = sum(snap.open_cases.get(f.id, 0) for f in live)
        address = live[0].street_address if live else pid
        return n, address

    out = []
    for parcel, old in diff.sold:
        n, address = count(parcel.parcel_id)
        if n:
            out.append(
                f"{address}: {n} open case(s); notices already issued stay with {old}, new"
                f" ones go to {parcel.owner_name} from {day}"
            )
    for parcel, _ in diff.moved:
        n, address = count(parcel.parcel_id)
        if n:
            out.append(
                f"{address}: {n} open case(s); notices from {day} go to the new mailing address"
            )
    for pid in diff.retired:
        n, address = count(pid)
        if n:
            out.append(
                f"{address}: {n} open case(s) on a frontage retired from {day}; its clocks,"
                " notices and bills keep their records — close or carry them on by hand"
            )
    for parcel, _ in diff.changed:
        n, address = count(parcel.parcel_id)
        if n and parcel.parcel_id in diff.reshaped:
            out.append(f"{address}: {n} open case(s); the frontage is measured again")
    return out


@dataclass
class Applied:
    parcels: int = 0
    owners: int = 0
    ownerships: int = 0
    frontages: int = 0
    retired_frontages: int = 0
    retired_parcels: int = 0


def check_effective(diff: Difference, snap: Snapshot, effective: datetime) -> None:
    """Refuse an effective date before an owner of record's own (nothing written)."""
    late = [
        snap.owner_since[p.parcel_id]
        for p, _ in (*diff.sold, *diff.moved)
        if snap.owner_since.get(p.parcel_id) is not None
        and snap.owner_since[p.parcel_id] > effective
    ]
    if late:
        raise ImportRefused(
            f"--effective {effective:%Y-%m-%d} is before the current owner of record's date"
            f" for {len(late)} parcel(s) (the latest {max(late):%Y-%m-%d}): give a later date"
        )


def apply(
    cases: CaseStore,
    parsed: ParcelFile,
    derived: Derived,
    diff: Difference,
    snap: Snapshot,
    *,
    effective: datetime,
    site: str,
    who: str,
    memory_limit: int = MAX_MEMORY_BYTES,
) -> Applied:
    """Write the difference into the registry from ``effective`` (idempotent).

    ``memory_limit`` (bytes): the memory the process may hold, checked before the
    first write and after every ``CHUNK`` parcels written; past it, ``ImportRefused``
    in one line (the parcels written by then stay, and importing again finishes)."""
    import numpy as np
    import shapely
    from shapely.geometry import mapping

    check_effective(diff, snap, effective)
    source = SOURCE_PREFIX + parsed.source
    done = Applied()
    touched = {p.parcel_id for p in diff.new} | {p.parcel_id for p, _ in diff.changed}
    owners_changed = {p.parcel_id for p, _ in (*diff.sold, *diff.moved)}
    owners_changed |= {p.parcel_id for p in diff.owner_set}
    to_write = touched | owners_changed  # once: made per parcel, it cost minutes on 50,000
    work = [p for p in parsed.parcels if p.parcel_id in to_write]
    del to_write

    def check(written: int) -> None:
        try:
            check_memory(
                parsed.source, memory_limit,
                f"writing the registry, {written:,} of {len(work):,} parcels written",
            )  # fmt: skip
        except ParcelFileError as exc:
            raise ImportRefused(str(exc)) from exc

    check(0)
    streets = {f.street for pid in diff.reshaped for f in derived.frontages.get(pid, [])}
    known_owners = set(snap.owners)
    with cases.registry.batch() as registry:
        for street in sorted(streets):
            registry.upsert_street(street)
    # A few hundred parcels a transaction: fast, and SQLite's write lock is never
    # held long enough to make a running analytics wait. A failure part-way leaves
    # whole parcels written, and importing again finishes the job.
    for start in range(0, len(work), CHUNK):
        if start:
            check(start)
        with cases.registry.batch() as registry:
            for parcel in work[start : start + CHUNK]:
                pid = parcel.parcel_id
                if pid in touched:
                    outline = shapely.transform(parcel.geometry, lambda c: np.round(c, 7))
                    registry.upsert_parcel(
                        pid, tax_parcel_id=parcel.tax_parcel_id,
                        site_address=parcel.site_address, place=parcel.place,
                        zip_code=parcel.zip_code, geometry=mapping(outline), source=source,
                        who=who,
                    )  # fmt: skip
                    done.parcels += 1
                if parcel.owner_id not in known_owners:
                    registry.upsert_owner(
                        parcel.owner_id, parcel.owner_name, parcel.owner_address_lines
                    )
                    known_owners.add(parcel.owner_id)
                    done.owners += 1
                if snap.current_owner.get(pid) != parcel.owner_id:
                    registry.set_owner_of_record(
                        pid, parcel.owner_id, effective, source=source, who=who
                    )
                    done.ownerships += 1
                if pid in diff.reshaped:
                    _frontages(registry, parcel, derived.frontages.get(pid, []), snap, done,
                               effective=effective, site=site, who=who)  # fmt: skip
    with cases.registry.batch() as registry:
        for pid in diff.retired:
            registry.retire_parcel(pid, effective, reason=_retire_reason(pid, diff), who=who)
            done.retired_parcels += 1
    return done


def _retire_reason(pid: str, diff: Difference) -> str:
    for old, new in diff.split:
        if old == pid:
            return f"split into parcels {', '.join(new)} in the county's file"
    for olds, into in diff.merged:
        if pid in olds:
            return f"merged into parcel {into} in the county's file"
    return "gone from the county's parcel file"


def _frontages(
    registry: RegistryRepository,
    parcel: Parcel,
    derived: Sequence[Frontage],
    snap: Snapshot,
    done: Applied,
    *,
    effective: datetime,
    site: str,
    who: str,
) -> None:
    """Add or re-measure a parcel's derived frontages, keeping what was set by hand."""
    existing = {f.id: f for f in snap.frontages.get(parcel.parcel_id, [])}
    for f in derived:
        before = existing.get(f.frontage_id)
        registry.upsert_frontage(
            f.frontage_id,
            site=before.site if before is not None else site,
            parcel_number=parcel.tax_parcel_id or parcel.parcel_id,
            street_address=f.street_address,
            length_ft=f.length_ft,
            zone="commercial"
            if (before.zone if before else parcel.zone) == "commercial"
            else "residential",
            owner_id=parcel.owner_id,
            device_id=before.device_id if before is not None else None,
            may_deposit_on_street=before.may_deposit_on_street if before is not None else False,
            parcel_id=parcel.parcel_id,
            street=f.street,
            side=f.side,
            walk_width_ft=before.walk_width_ft if before is not None else None,
            corner=f.corner,
            effective_at=effective,
            who=who,
        )
        registry.set_frontage_geometry(f.frontage_id, f.line)
        done.frontages += 1
    wanted = {f.frontage_id for f in derived}
    for fid, record in existing.items():
        if fid not in wanted and record.retired_at is None:
            registry.retire_frontage(
                fid, effective, reason="the county's file no longer shows this frontage", who=who
            )
            done.retired_frontages += 1
