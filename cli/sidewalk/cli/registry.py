"""``sidewalk registry …``: the village's frontages, parcels, owners and poles, by hand.

A TARGET is what a person has in hand: the street address ("105 Main St",
any case and spacing), the parcel number on the tax roll, or a frontage's
id. An address that names two places, or none, is refused at once (exit 2)
with the close matches. Every change names who made it (``--by``) and is
written to the audit log; a change the records cannot take exits 1.

The county file comes in with ``sidewalk registry import`` (docs/registry.md);
``sidewalk check`` says when everything is ready to go live (docs/going-live.md).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from sidewalk.cli.common import (
    ConfigOption,
    command_group,
    console,
    fail,
    no_nul,
    refusals,
    village,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime
    from zoneinfo import ZoneInfo

    from sidewalk.cli.common import Village
    from sidewalk.core.profile import Profile
    from sidewalk.storage.cases import CaseStore, FrontageRecord, OwnerRecord
    from sidewalk.storage.cases.records import ParcelRecord

registry_app = command_group(__doc__)
edit_app = command_group("Change a frontage's measurements or an owner of record.")
add_app = command_group("Add what a village without a county file enters by hand.")
occupant_app = command_group("Occupants and persons in charge (§ 370-10 B(1) notices go to them).")
pole_app = command_group("Poles: register one, say which frontages it watches, list, retire.")
unwatched_app = command_group(
    'Frontages "not watched yet": no automatic clock runs on them; the Village inspects'
    " them by hand until a pole watches them (docs/going-live.md)."
)
registry_app.add_typer(edit_app, name="edit")
registry_app.add_typer(add_app, name="add")
registry_app.add_typer(occupant_app, name="occupant")
registry_app.add_typer(pole_app, name="pole")
registry_app.add_typer(unwatched_app, name="unwatched")

ByOption = Annotated[
    str, typer.Option("--by", "--who", help="who makes the change (goes in the audit log)")
]
ZONES = ("residential", "commercial")
SIDES = ("north", "south", "east", "west")
ROLES = ("occupant", "person in charge")
KINDS = ("frontages", "parcels", "owners", "poles", "streets")
# What a person would type as a length: a frontage is a lot's width, a walk a few feet.
LENGTH_FT = (1.0, 2000.0)
WALK_WIDTH_FT = (1.0, 30.0)


def _mount_import() -> None:
    """``registry import`` lives in registry_import.py, written alongside; the group
    works before it exists (an error inside that module is not hidden)."""
    name = "sidewalk.cli.registry_import"
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name != name:
            raise
        return
    registry_app.command("import")(module.import_command)


# -- targets -----------------------------------------------------------------------


def plain(text: str) -> str:
    """How a typed address or number is compared: any case, spacing, periods, commas."""
    return " ".join(text.replace(".", " ").replace(",", " ").split()).casefold()


@dataclass(frozen=True)
class Place:
    """What a TARGET names: a parcel and its frontages (a corner lot has two), or a
    frontage registered without a parcel."""

    frontages: tuple[FrontageRecord, ...]
    parcel: ParcelRecord | None

    @property
    def address(self) -> str:
        if self.frontages:
            return self.frontages[0].street_address
        return (self.parcel and self.parcel.site_address) or "(no site address)"


class Places:
    """The registry's frontages and parcels, indexed by what a person types for them
    (read once: ``pole assign`` resolves many targets)."""

    def __init__(self, cases: CaseStore, *, include_retired: bool = False) -> None:
        registry = cases.registry
        self.frontages = registry.list_frontages(include_retired=include_retired)
        self.parcels = {p.id: p for p in registry.list_parcels(include_retired=include_retired)}
        self._ids = {plain(f.id): f for f in self.frontages}
        self._frontages: dict[str, list[FrontageRecord]] = {}
        self._bare: dict[str, list[ParcelRecord]] = {}
        for p in self.parcels.values():
            for key in self._keys(p):
                self._bare.setdefault(key, []).append(p)
        for f in self.frontages:
            keys = {plain(f.street_address), plain(f.parcel_number)}
            if f.parcel_id in self.parcels:
                keys |= self._keys(self.parcels[f.parcel_id])
            for key in keys - {""}:
                self._frontages.setdefault(key, []).append(f)

    @staticmethod
    def _keys(p: ParcelRecord) -> set[str]:
        return {plain(p.id), plain(p.site_address or ""), plain(p.tax_parcel_id or "")} - {""}

    def find(self, target: str) -> Place:
        """The one place ``target`` names (address, parcel number, frontage id); an
        unknown or ambiguous target exits 2 with the close matches."""
        key = plain(target)
        if key in self._ids:
            f = self._ids[key]
            return Place((f,), self.parcels.get(f.parcel_id) if f.parcel_id else None)
        groups: dict[str, list[FrontageRecord]] = {}
        for f in self._frontages.get(key, []):
            group = groups.setdefault(f.parcel_id or f"number:{f.parcel_number}", [])
            if f not in group:
                group.append(f)
        bare = [p for p in self._bare.get(key, []) if p.id not in groups]
        if len(groups) + len(bare) > 1:
            named = [
                f"{g[0].street_address} (parcel {g[0].parcel_number})" for g in groups.values()
            ]
            named += [f"{p.site_address or 'no address'} (parcel {p.tax_parcel_id or p.id})"
                      for p in bare]  # fmt: skip
            fail(
                f"{target!r} names {len(named)} places: {'; '.join(named)}; give the parcel number"
            )
        if groups:
            group = sorted(next(iter(groups.values())), key=lambda f: f.id)
            pid = group[0].parcel_id
            return Place(tuple(group), self.parcels.get(pid) if pid else None)
        if bare:
            return Place((), bare[0])
        fail(
            f"no frontage, parcel or address {target!r} in the registry{self._close(target)}"
            " (`sidewalk registry list` shows them)"
        )

    def _close(self, target: str) -> str:
        import difflib

        known = {f.street_address for f in self.frontages} | {f.id for f in self.frontages}
        known |= {f.parcel_number for f in self.frontages}
        known |= {p.site_address for p in self.parcels.values() if p.site_address}
        close = difflib.get_close_matches(target, sorted(known), n=4, cutoff=0.6)
        return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def resolve(cases: CaseStore, target: str, *, include_retired: bool = False) -> Place:
    """The one place ``target`` names; unknown or ambiguous exits 2 (``Places.find``)."""
    return Places(cases, include_retired=include_retired).find(target)


def one_frontage(place: Place, target: str) -> FrontageRecord:
    """The single frontage a command changes; a corner lot needs the frontage's id."""
    if not place.frontages:
        fail(f"{target!r} has no frontage: add one with `sidewalk registry add frontage`")
    if len(place.frontages) > 1:
        each = ", ".join(f"{f.id} ({f.street or 'street not set'})" for f in place.frontages)
        fail(f"{target!r} has {len(place.frontages)} frontages: give one's id ({each})")
    return place.frontages[0]


# -- values typed on the command line ------------------------------------------------


def _number(option: str, text: str, bounds: tuple[float, float]) -> float:
    low, high = bounds
    try:
        value = float(text)
    except ValueError:
        fail(f"{option} {text!r}: write a number of feet, e.g. 66 or 5.5")
    if not low <= value <= high:
        fail(f"{option} {text!r}: must be between {low:g} and {high:g} feet")
    return value


def _choice(option: str, text: str, choices: tuple[str, ...]) -> str:
    value = " ".join(text.split()).casefold()
    if value not in choices:
        fail(f"{option} {text!r}: write {' or '.join(choices)}")
    return value


def _text(option: str, text: str, most: int = 200) -> str:
    value = " ".join(text.split())
    if not value:
        fail(f"{option} must not be empty")
    if len(value) > most:
        fail(f"{option}: at most {most} characters")
    return value


def _email(option: str, text: str | None) -> str | None:
    import re

    if text is None:
        return None
    if not re.fullmatch(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}", text.strip()):
        fail(f"{option} {text!r}: write an e-mail address, e.g. owner@example.com")
    return text.strip()


def _mailing(option: str, name: str, lines: list[str]) -> list[str]:
    """Mailing address lines that fit the window envelope the letters are mailed in."""
    from sidewalk.cli.check import envelope_problem

    cleaned = [_text(option, line, 80) for line in lines]
    if not cleaned:
        fail(f"{option}: give the mailing address, one {option} per line")
    problem = envelope_problem(name, cleaned)
    if problem is not None:
        fail(f"{option}: {problem}")
    return cleaned


def _start_of(option: str, text: str, zone: ZoneInfo) -> datetime:
    """A date typed as YYYY-MM-DD: from the start of that day in the village's zone."""
    from datetime import datetime, time

    from sidewalk.cli.common import day

    return datetime.combine(day(option, text), time(0), tzinfo=zone)


def _day(at: datetime | None, zone: ZoneInfo) -> str:
    if at is None:
        return "never"
    local = at.astimezone(zone)
    return f"{local:%B} {local.day}, {local.year}"


def _moment(at: datetime | None, zone: ZoneInfo) -> str:
    if at is None:
        return "never"
    local = at.astimezone(zone)
    return f"{_day(at, zone)} {local:%H:%M %Z}"


def _now() -> datetime:
    from datetime import UTC, datetime

    return datetime.now(UTC)


def _owner_id(name: str, lines: list[str]) -> str:
    """The county import's owner id (a digest of the name and mailing address): the same
    owner of two parcels is one record, and a later import finds the owner typed here."""
    from sidewalk.registry.county import owner_id

    return owner_id(name, lines)


def _feet(value: float | None) -> str:
    return "—" if value is None else f"{value:g} ft"


def _address(owner: OwnerRecord) -> str:
    return ", ".join(owner.address_lines) or "(no mailing address)"


# -- list, show, export --------------------------------------------------------------


@registry_app.command("list")
def list_(
    kind: Annotated[str, typer.Argument(help=" | ".join(KINDS))] = "frontages",
    street: Annotated[str | None, typer.Option(help="only this street's frontages")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="JSON instead of a table")] = False,
    config: ConfigOption = None,
) -> None:
    """The registry's frontages (default), parcels, owners, poles or streets."""
    import json

    from rich.table import Table

    kind = _choice("KIND", kind, KINDS)
    place = village(config)
    with place.cases() as cases:
        rows = _rows(cases, kind, street, place.profile.zone)
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        return
    if not rows:
        on = f" on {street!r}" if street is not None and kind == "frontages" else ""
        console().print(f"no {kind}{on} in the registry", markup=False)
        return
    out = console()
    columns = list(rows[0])
    if kind == "frontages" and out.width < WIDE_TABLE:
        columns = [c for c in columns if c in NARROW_FRONTAGE_COLUMNS]
    table = Table(title=f"{kind} ({len(rows)})")
    for column in columns:
        table.add_column(column.replace("_", " "))
    for row in rows:
        table.add_row(*(_cell(row[c]) for c in columns))
    out.print(table)
    if len(columns) < len(rows[0]):
        out.print(
            "(a wider terminal shows every column; --json or registry export has them all)",
            markup=False,
        )


# Below this many columns of terminal, the frontage table keeps what a person reads.
WIDE_TABLE = 160
NARROW_FRONTAGE_COLUMNS = ("address", "owner_of_record", "pole", "watched", "length_ft")


def _cell(value: object) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def _rows(cases: CaseStore, kind: str, street: str | None, zone: ZoneInfo) -> list[dict[str, Any]]:
    registry = cases.registry
    if kind == "frontages":
        return [r for r in _frontage_rows(cases) if street is None or _on(r, street)]
    if kind == "parcels":
        names = {o.id: o.name for o in registry.list_owners()}
        current = registry.parcel_owners(_now())
        return [
            {"parcel": p.tax_parcel_id or p.id, "site_address": p.site_address, "place": p.place,
             "owner_of_record": names.get(current.get(p.id, "")), "source": p.source}
            for p in registry.list_parcels()
        ]  # fmt: skip
    if kind == "owners":
        return [
            {"name": o.name, "mailing_address": _address(o), "email": o.email}
            for o in registry.list_owners()
        ]
    if kind == "poles":
        return [
            {"pole": d.id, "label": d.label, "last_heard": _moment(d.last_seen, zone),
             "calibration": calibration_words(cases, d.id, zone),
             "watches": [f.street_address for f in registry.list_frontages(device_id=d.id)]}
            for d in registry.list_devices() if d.retired_at is None
        ]  # fmt: skip
    return [{"street": s.name} for s in registry.list_streets()]


# The street types a person may write out, leave off, or abbreviate (USPS Pub. 28).
STREET_TYPES = {
    "street": "st", "avenue": "ave", "road": "rd", "drive": "dr", "lane": "ln",
    "court": "ct", "boulevard": "blvd", "place": "pl", "circle": "cir", "terrace": "ter",
    "highway": "hwy", "parkway": "pkwy", "trail": "trl", "way": "way",
}  # fmt: skip
_TYPE_WORDS = {*STREET_TYPES, *STREET_TYPES.values()}


def _street_words(text: str) -> tuple[str, ...]:
    words = [STREET_TYPES.get(w, w) for w in plain(text).split()]
    return tuple(words)


def street_matches(street: str, wanted: str) -> bool:
    """``--street Main`` finds MAIN ST; ``Main Street`` and ``main st.`` too; an
    ``Oak Ave`` asked for is not an Oak St."""
    have, want = _street_words(street), _street_words(wanted)
    if not want:
        return False
    if have == want:
        return True
    # The type left off: the street's name without its type word.
    return want[-1] not in _TYPE_WORDS and have[:-1] == want and have[-1] in _TYPE_WORDS


def _on(row: dict[str, Any], street: str) -> bool:
    if row["street"]:
        return street_matches(row["street"], street)
    # A frontage with no street recorded: the address after its number.
    number, _, rest = str(row["address"]).partition(" ")
    return bool(rest) and any(ch.isdigit() for ch in number) and street_matches(rest, street)


def _frontage_rows(cases: CaseStore) -> list[dict[str, Any]]:
    """One row per frontage, in the words the export and the list share."""
    registry = cases.registry
    owners = registry.owners_of_record(_now())
    out = []
    for f in registry.list_frontages():
        owner = owners[f.id]
        out.append({
            "address": f.street_address, "parcel": f.parcel_number, "owner_of_record": owner.name,
            "mailing_address": _address(owner), "pole": f.device_id,
            "watched": "yes" if f.watched else "not yet", "length_ft": f.length_ft,
            "zone": f.zone, "street": f.street, "side": f.side, "frontage": f.id,
        })  # fmt: skip
    return out


def calibration_words(cases: CaseStore, device_id: str, zone: ZoneInfo) -> str:
    """In words: calibrated on a date, not calibrated, or the pole runs another one."""
    registry = cases.registry
    cameras = registry.cameras(device_id=device_id)
    if not cameras:
        return "not calibrated"
    reported = registry.get_device(device_id).reported_calibration
    if reported is not None and reported != registry.expected_calibration(device_id):
        return "pole runs a different calibration"
    words = f"calibrated on {_day(max(c.calibrated_at for c in cameras), zone)}"
    return words if reported is not None else f"{words} (the pole has not confirmed it yet)"


@registry_app.command("show")
def show(
    target: Annotated[str, typer.Argument(help='address ("105 Main St"), parcel number or id')],
    config: ConfigOption = None,
) -> None:
    """Everything the Village knows about one place: parcel, owners, occupants, frontages."""
    place = village(config)
    zone = place.profile.zone
    with place.cases() as cases:
        found = resolve(cases, target, include_retired=True)
        lines = _describe(cases, found, zone, place.profile)
    for line in lines:
        console().print(line, markup=False, highlight=False, soft_wrap=True)


def _describe(cases: CaseStore, place: Place, zone: ZoneInfo, profile: Profile) -> list[str]:
    from sidewalk.alerts.accounts import place_owner_changes
    from sidewalk.analytics.casework import open_cases

    registry, at = cases.registry, _now()
    violations = cases.clocks.list_violations()
    abatements = cases.bills.list_abatements() if violations else []
    owners = {o.id: o for o in registry.list_owners()}
    lines = [place.address]
    parcel = place.parcel
    if parcel is not None:
        where = ", ".join(x for x in (parcel.place, parcel.zip_code) if x)
        number = parcel.tax_parcel_id or parcel.id
        lines.append(
            f"  parcel {number}{f' (county id {parcel.id})' if number != parcel.id else ''}"
            f"{', ' + where if where else ''}; source: {parcel.source}"
            + (f"; gone since {_day(parcel.retired_at, zone)}" if parcel.retired_at else "")
        )
        history = registry.ownerships(parcel.id)
        for o in reversed(history):
            who = owners[o.owner_id]
            until = f" until {_day(o.effective_to, zone)}" if o.effective_to else ""
            label = "owner of record" if o.effective_to is None else "earlier owner"
            lines.append(
                f"  {label}: {who.name}, {_address(who)}"
                f"{' <' + who.email + '>' if who.email else ''}"
                f" (from {_day(o.effective_from, zone)}{until})"
            )
        people = registry.occupants(parcel.id)
        for person in people:
            ended = f" until {_day(person.effective_to, zone)}" if person.effective_to else ""
            contact = ", ".join(x for x in (person.phone, person.email) if x)
            lines.append(
                f"  {person.role} (no. {person.id}): {person.name}"
                f"{'; ' + contact if contact else ''} (from {_day(person.effective_from, zone)}"
                f"{ended})"
            )
        if not people:
            lines.append("  occupant or person in charge: none recorded")
    else:
        lines.append("  parcel: no parcel record (entered without the county file)")
    for f in place.frontages:
        if parcel is None:
            owner = registry.owner_of_record(f.id, at)
            lines.append(f"  owner of record: {owner.name}, {_address(owner)}")
        side = f", {f.side} side" if f.side else ""
        walk = f"walk {_feet(f.walk_width_ft)} wide" if f.walk_width_ft else "walk width not set"
        lines.append(
            f"  frontage {f.id}: {f.street or 'street not set'}{side}; {_feet(f.length_ft)} long,"
            f" {walk}; {f.zone}; corner lot: {_cell(f.corner)};"
            f" may put snow on the street: {_cell(f.may_deposit_on_street)}"
            + (f"; retired {_day(f.retired_at, zone)}" if f.retired_at else "")
        )
        if f.device_id is None:
            lines.append("    pole: none watches it")
        else:
            device = registry.get_device(f.device_id)
            lines.append(
                f"    pole {device.id}{' (' + device.label + ')' if device.label else ''}:"
                f" last heard {_moment(device.last_seen, zone)};"
                f" {calibration_words(cases, device.id, zone)}"
            )
            cams = registry.cameras(device_id=device.id, frontage_id=f.id)
            lines.append(
                f"    camera view: calibrated on {_day(cams[0].calibrated_at, zone)}"
                f" by {cams[0].calibrated_by}"
                if cams
                else "    camera view: not calibrated"
            )
        # Counted from the cases: one whose notice awaits service has no clock record yet.
        mine = [v for v in violations if v.frontage_id == f.id]
        running = open_cases(mine, cases.clocks.list(frontage_id=f.id), abatements) if mine else []
        lines.append(f"    open cases: {len(running)}")
    for said in place_owner_changes(cases, profile, [f.id for f in place.frontages]):
        lines.append(f"  {said}")
    return lines


@registry_app.command("export")
def export(
    file: Annotated[Path, typer.Argument(help="the file to write")],
    fmt: Annotated[str, typer.Option("--format", help="csv | geojson")] = "csv",
    config: ConfigOption = None,
) -> None:
    """Every frontage with its address, parcel, owner of record, mailing address, pole,
    whether it is watched yet, and length (GeoJSON: with the frontage's line on the map)."""
    import csv
    import json

    from sidewalk.alerts.documents import csv_cell

    fmt = _choice("--format", fmt, ("csv", "geojson"))
    place = village(config)
    with place.cases() as cases:
        rows = _frontage_rows(cases)
        lines = cases.registry.frontage_geometries()
    try:
        if fmt == "csv":
            with file.open("w", newline="", encoding="utf-8") as out:
                writer = csv.DictWriter(out, fieldnames=list(_frontage_rows_header()))
                writer.writeheader()
                # Owner names and addresses come from the county's file: cells stay text.
                writer.writerows([{k: csv_cell(v) for k, v in r.items()} for r in rows])
        else:
            features = [
                {"type": "Feature", "id": r["frontage"], "properties": r,
                 "geometry": lines.get(r["frontage"])}
                for r in rows
            ]  # fmt: skip
            file.write_text(
                json.dumps({"type": "FeatureCollection", "features": features}, indent=1),
                encoding="utf-8",
            )
    except OSError as exc:
        fail(f"cannot write {file}: {exc.strerror or exc}")
    console().print(f"wrote {len(rows)} frontages to {file}", markup=False)


def _frontage_rows_header() -> tuple[str, ...]:
    return ("address", "parcel", "owner_of_record", "mailing_address", "pole", "watched",
            "length_ft", "zone", "street", "side", "frontage")  # fmt: skip


# -- edit ------------------------------------------------------------------------------


@edit_app.command("frontage")
def edit_frontage(  # noqa: PLR0917 (Typer maps parameters to options)
    target: Annotated[str, typer.Argument(help="address, parcel number or frontage id")],
    by: ByOption,
    length_ft: Annotated[str | None, typer.Option("--length-ft", metavar="FEET")] = None,
    walk_width_ft: Annotated[str | None, typer.Option("--walk-width-ft", metavar="FEET")] = None,
    zone: Annotated[str | None, typer.Option(help="residential | commercial (§ 370-5)")] = None,
    side: Annotated[str | None, typer.Option(help=" | ".join(SIDES))] = None,
    corner: Annotated[bool | None, typer.Option("--corner/--no-corner")] = None,
    may_deposit: Annotated[
        bool | None,
        typer.Option(
            "--may-deposit-on-street/--no-may-deposit-on-street",
            help="§ 370-10 C: snow from this walk may go onto the street",
        ),
    ] = None,
    street: Annotated[str | None, typer.Option(help="the street it fronts")] = None,
    config: ConfigOption = None,
) -> None:
    """Change a frontage's length, walk width, zone, side, corner, § 370-10 C or street."""
    no_nul(target=target, by=by, side=side, street=street, zone=zone)
    by = _text("--by", by, 80)
    changes: dict[str, Any] = {}
    if length_ft is not None:
        changes["length_ft"] = _number("--length-ft", length_ft, LENGTH_FT)
    if walk_width_ft is not None:
        changes["walk_width_ft"] = _number("--walk-width-ft", walk_width_ft, WALK_WIDTH_FT)
    if zone is not None:
        changes["zone"] = _choice("--zone", zone, ZONES)
    if side is not None:
        changes["side"] = _choice("--side", side, SIDES)
    if corner is not None:
        changes["corner"] = corner
    if may_deposit is not None:
        changes["may_deposit_on_street"] = may_deposit
    if street is not None:
        changes["street"] = _text("--street", street, 200)
    if not changes:
        fail("nothing to change: give --length-ft, --walk-width-ft, --zone, --side, --corner,"
             " --may-deposit-on-street or --street")  # fmt: skip
    place = village(config)
    with place.cases() as cases, refusals():
        f = one_frontage(resolve(cases, target), target)
        before = {k: getattr(f, k) for k in changes}
        if "street" in changes:
            cases.registry.upsert_street(changes["street"])
        _save_frontage(cases, f, changes, by)
        cases.audit.append(
            by, "registry.frontage.edited", f"registry:frontage:{f.id}",
            {"changed": {k: [before[k], v] for k, v in changes.items() if before[k] != v}},
        )  # fmt: skip
    said = ", ".join(f"{k.replace('_', ' ')} {_cell(v)}" for k, v in changes.items())
    console().print(f"{f.street_address}: {said} (by {by})", markup=False)


def _save_frontage(cases: CaseStore, f: FrontageRecord, changes: dict[str, Any], by: str) -> None:
    fields: dict[str, Any] = {
        "site": f.site, "parcel_number": f.parcel_number, "street_address": f.street_address,
        "length_ft": f.length_ft, "zone": f.zone, "owner_id": f.owner_id,
        "device_id": f.device_id, "may_deposit_on_street": f.may_deposit_on_street,
        "parcel_id": f.parcel_id, "street": f.street, "side": f.side,
        "walk_width_ft": f.walk_width_ft, "corner": f.corner,
    }  # fmt: skip
    cases.registry.upsert_frontage(f.id, **{**fields, **changes}, who=by)


# Frontages entered before the registry kept parcels have an owner but no ownership
# history; a sale needs one, so their owner is taken as the owner of record since here.
_SINCE_EVER = "1970-01-01T00:00:00+00:00"


def _parcel_of(cases: CaseStore, place: Place, by: str) -> str:
    """The parcel's id; a frontage entered without one gets its parcel record now."""
    from datetime import datetime

    if place.parcel is not None:
        return place.parcel.id
    f = place.frontages[0]
    registry = cases.registry
    parcel = registry.upsert_parcel(
        f.parcel_number, tax_parcel_id=f.parcel_number, site_address=f.street_address,
        zip_code=_zip_at(registry.get_owner(f.owner_id).address_lines, f.street_address),
        source="entered by hand", who=by,
    )  # fmt: skip
    registry.set_owner_of_record(
        parcel.id, f.owner_id, datetime.fromisoformat(_SINCE_EVER), source="entered by hand",
        who=by,
    )  # fmt: skip
    for other in place.frontages:
        _save_frontage(cases, other, {"parcel_id": parcel.id}, by)
    return parcel.id


def _zip_at(mailing: Sequence[str], site_address: str) -> str | None:
    """The property's ZIP code from an owner's mailing address at the property itself
    (a notice handed over or posted there is addressed with it); else unknown."""
    import re

    if len(mailing) < 2 or " ".join(mailing[0].split()).casefold() != (
        " ".join(site_address.split()).casefold()
    ):
        return None
    found = re.search(r"\b(\d{5}(?:-\d{4})?)\s*$", mailing[-1])
    return found.group(1) if found else None


def _current_owner(cases: CaseStore, parcel_id: str) -> OwnerRecord | None:
    current = [o for o in cases.registry.ownerships(parcel_id) if o.effective_to is None]
    return cases.registry.get_owner(current[-1].owner_id) if current else None


@edit_app.command("owner")
def edit_owner(  # noqa: PLR0917 (Typer maps parameters to options)
    target: Annotated[str, typer.Argument(help="address, parcel number or frontage id")],
    by: ByOption,
    name: Annotated[str | None, typer.Option(help="the owner's name as on the tax roll")] = None,
    address_line: Annotated[
        list[str] | None,
        typer.Option("--address-line", help="a mailing address line (repeat for each line)"),
    ] = None,
    email: Annotated[str | None, typer.Option(help="the owner's e-mail address")] = None,
    effective: Annotated[
        str | None,
        typer.Option(
            help="YYYY-MM-DD: a NEW owner of record from this date (a sale); without it,"
            " the current owner's name or address is corrected"
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record a sale (--effective) or correct the current owner's name or mailing address."""
    no_nul(target=target, by=by, name=name, address_line=address_line, email=email)
    by = _text("--by", by, 80)
    lines = address_line or []
    mail = _email("--email", email)
    place = village(config)
    with place.cases() as cases, refusals():
        found = resolve(cases, target)
        if effective is not None:
            if name is None or not lines:
                fail("--effective records a new owner: give --name and the --address-line(s)")
            owner_name = _text("--name", name, 120)
            lines = _mailing("--address-line", owner_name, lines)
            since = _start_of("--effective", effective, place.profile.zone)
            parcel_id = _parcel_of(cases, found, by)
            owner_id = _owner_id(owner_name, lines)
            cases.registry.upsert_owner(owner_id, owner_name, lines, mail)
            cases.registry.set_owner_of_record(
                parcel_id, owner_id, since, source=f"entered by {by}", who=by
            )
            said = f"owner of record from {_day(since, place.profile.zone)}: {owner_name}"
        else:
            if name is None and not lines and mail is None:
                fail("nothing to change: give --name, --address-line or --email"
                     " (with --effective for a new owner)")  # fmt: skip
            owner = (
                _current_owner(cases, found.parcel.id) if found.parcel is not None else None
            ) or cases.registry.owner_of_record(one_frontage(found, target).id, _now())
            owner_name = owner.name if name is None else _text("--name", name, 120)
            lines = lines or list(owner.address_lines)
            lines = _mailing("--address-line", owner_name, lines)
            cases.registry.upsert_owner(owner.id, owner_name, lines, mail or owner.email)
            cases.audit.append(
                by, "registry.owner.corrected", f"registry:owner:{owner.id}",
                {"before": {"name": owner.name, "address_lines": list(owner.address_lines),
                            "email": owner.email},
                 "after": {"name": owner_name, "address_lines": lines,
                           "email": mail or owner.email}},
            )  # fmt: skip
            said = f"owner of record corrected: {owner_name}"
    console().print(f"{found.address}: {said}, {', '.join(lines)} (by {by})", markup=False)


# -- add a frontage by hand ----------------------------------------------------------------


@add_app.command("frontage")
def add_frontage(  # noqa: PLR0917 (Typer maps parameters to options)
    address: Annotated[str, typer.Option(help='the site address, e.g. "105 Main St"')],
    parcel: Annotated[str, typer.Option(help="the parcel number on the tax roll")],
    length_ft: Annotated[str, typer.Option("--length-ft", metavar="FEET")],
    by: ByOption,
    owner: Annotated[str | None, typer.Option(help="the owner of record's name")] = None,
    mailing_line: Annotated[
        list[str] | None,
        typer.Option("--mailing-line", help="the owner's mailing address (repeat for each line)"),
    ] = None,
    zone: Annotated[str, typer.Option(help="residential | commercial (§ 370-5)")] = "residential",
    street: Annotated[str | None, typer.Option(help="the street it fronts")] = None,
    side: Annotated[str | None, typer.Option(help=" | ".join(SIDES))] = None,
    frontage_id: Annotated[
        str | None, typer.Option("--id", help="the frontage's id (default: from the address)")
    ] = None,
    owner_since: Annotated[
        str | None, typer.Option(help="YYYY-MM-DD: owner of record since (default: today)")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """A frontage entered by hand (no county file): its parcel, owner and ownership too.

    A corner lot's second frontage: the same --parcel with the other --street; the
    owner is then the parcel's and need not be given again."""
    from sidewalk.storage.cases.registry import street_id

    no_nul(address=address, parcel=parcel, by=by, owner=owner, mailing_line=mailing_line,
           street=street, id=frontage_id)  # fmt: skip
    by = _text("--by", by, 80)
    address, parcel = _text("--address", address), _text("--parcel", parcel, 64)
    length = _number("--length-ft", length_ft, LENGTH_FT)
    zone = _choice("--zone", zone, ZONES)
    side = None if side is None else _choice("--side", side, SIDES)
    street = None if street is None else _text("--street", street)
    fid = frontage_id or street_id(
        address
        if street is None or plain(address).endswith(plain(street))
        else f"{address} {street}"
    )
    place = village(config)
    since = _start_of("--owner-since", owner_since or _today(place), place.profile.zone)
    with place.cases() as cases, refusals():
        registry = cases.registry
        if fid in {f.id for f in registry.list_frontages(include_retired=True)}:
            fail(f"frontage {fid} is already registered: change it with `sidewalk registry edit"
                 " frontage`, or give another --id")  # fmt: skip
        existing = {p.id for p in registry.list_parcels(include_retired=True)}
        current = _current_owner(cases, parcel) if parcel in existing else None
        if current is None:
            if owner is None or not mailing_line:
                fail("a new parcel needs its owner: give --owner and the --mailing-line(s)")
            name = _text("--owner", owner, 120)
            lines = _mailing("--mailing-line", name, mailing_line)
            registry.upsert_parcel(parcel, tax_parcel_id=parcel, site_address=address,
                                   source="entered by hand", who=by)  # fmt: skip
            owner_id = _owner_id(name, lines)
            registry.upsert_owner(owner_id, name, lines)
            registry.set_owner_of_record(
                parcel, owner_id, since,
                source=f"entered by {by}", who=by,
            )  # fmt: skip
        else:
            if owner is not None and plain(owner) != plain(current.name):
                fail(f"parcel {parcel}'s owner of record is {current.name}: record a sale with"
                     " `sidewalk registry edit owner … --effective`")  # fmt: skip
            owner_id, name = current.id, current.name
        if street is not None:
            registry.upsert_street(street)
        registry.upsert_frontage(
            fid, site=place.settings.site, parcel_number=parcel, street_address=address,
            # Ignored: ``zone`` is a str checked against ZONES; the store takes ``Zone``.
            length_ft=length, zone=zone, owner_id=owner_id,  # type: ignore[arg-type]
            parcel_id=parcel, street=street, side=side, who=by,
        )  # fmt: skip
    console().print(
        f"added {address} (frontage {fid}, parcel {parcel}, owner {name}, {length:g} ft, {zone});"
        f" next: `sidewalk registry pole assign POLE {fid}`",
        markup=False,
    )


def _today(place: Village) -> str:
    return _now().astimezone(place.profile.zone).date().isoformat()


# -- occupants and persons in charge ---------------------------------------------------


@occupant_app.command("add")
def occupant_add(  # noqa: PLR0917 (Typer maps parameters to options)
    target: Annotated[str, typer.Argument(help="address, parcel number or frontage id")],
    name: Annotated[str, typer.Argument(help="the person's name")],
    by: ByOption,
    role: Annotated[str, typer.Option(help='occupant | "person in charge"')] = "occupant",
    phone: Annotated[str | None, typer.Option(help="a number the Village can call")] = None,
    email: Annotated[str | None, typer.Option()] = None,
    since: Annotated[
        str | None,
        typer.Option(help="YYYY-MM-DD: there since this date (default: from now)"),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Record the occupant or person in charge of a place (§ 370-10 B(1))."""
    import re

    no_nul(target=target, name=name, by=by, phone=phone, email=email, since=since)
    by, name = _text("--by", by, 80), _text("NAME", name, 120)
    role = _choice("--role", role, ROLES)
    if phone is not None and not 7 <= len(re.sub(r"\D", "", phone)) <= 15:
        fail(f"--phone {phone!r}: write a number with its area code, e.g. (920) 555-0142")
    mail = _email("--email", email)
    place = village(config)
    start = None if since is None else _start_of("--since", since, place.profile.zone)
    with place.cases() as cases, refusals():
        found = resolve(cases, target)
        parcel_id = _parcel_of(cases, found, by)
        person = cases.registry.add_occupant(
            # Ignored: ``role`` is a str checked against ROLES; the store takes ``OccupantRole``.
            parcel_id, name, role=role, phone=phone, email=mail, who=by,  # type: ignore[arg-type]
            effective_from=start,
        )  # fmt: skip
    console().print(
        f"{found.address}: {role} {person.name} recorded (no. {person.id}; by {by})", markup=False
    )


@occupant_app.command("end")
def occupant_end(
    occupant: Annotated[int, typer.Argument(help="the number `registry show` gives the person")],
    by: ByOption,
    at: Annotated[str | None, typer.Option(help="when they left (default: now)")] = None,
    config: ConfigOption = None,
) -> None:
    """The occupant or person in charge is no longer there."""
    from sidewalk.storage.cases import NotFoundError

    by = _text("--by", by, 80)
    place = village(config)
    when = place.instant("--at", at)
    with place.cases() as cases:
        try:
            cases.registry.end_occupant(occupant, when, who=by)
        except NotFoundError:
            fail(f"no occupant no. {occupant}: `sidewalk registry show ADDRESS` lists them")
    console().print(f"occupant no. {occupant} ended {_day(when, place.profile.zone)}", markup=False)


# -- poles -------------------------------------------------------------------------------


def _frontage_ids(cases: CaseStore, targets: list[str]) -> list[str]:
    places = Places(cases)
    return [one_frontage(places.find(t), t).id for t in targets]


def _device_id(text: str) -> str:
    import re

    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]{0,63}", text):
        fail(f"DEVICE_ID {text!r}: lower-case letters, digits, - and _ (as the pole's config)")
    return text


def _known_pole(cases: CaseStore, device_id: str) -> None:
    if device_id not in cases.registry.known_device_ids():
        fail(f"no pole {device_id!r} is registered: `sidewalk registry pole add {device_id}`")


@pole_app.command("add")
def pole_add(  # noqa: PLR0917 (Typer maps parameters to options)
    device_id: Annotated[str, typer.Argument(help="the pole's device id (its own config)")],
    by: ByOption,
    site: Annotated[str | None, typer.Option(help="the site (default: the settings' site)")] = None,
    label: Annotated[
        str | None, typer.Option(help='what staff call it, e.g. "Main St east"')
    ] = None,
    lat: Annotated[float | None, typer.Option(help="latitude, WGS 84 degrees")] = None,
    lon: Annotated[float | None, typer.Option(help="longitude, WGS 84 degrees")] = None,
    watches: Annotated[
        list[str] | None,
        typer.Option(help="a frontage it watches (repeat, or list several after it)"),
    ] = None,
    more: Annotated[
        list[str] | None,
        typer.Argument(
            help="more frontages it watches: --watches A B C is --watches A --watches B"
            " --watches C",
            show_default=False,
        ),
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Register a pole (only a registered pole's readings are taken) and what it watches."""
    watches = [*(watches or []), *(more or [])]
    no_nul(device_id=device_id, by=by, site=site, label=label, watches=watches)
    by, device_id = _text("--by", by, 80), _device_id(device_id)
    if (lat is None) != (lon is None):
        fail("--lat and --lon go together: give both, or neither")
    place = village(config)
    with place.cases() as cases, refusals():
        frontages = _frontage_ids(cases, watches or [])
        cases.registry.upsert_device(
            device_id, site or place.settings.site, label=label, latitude=lat, longitude=lon,
            who=by,
        )  # fmt: skip
        if frontages:
            cases.registry.assign_pole(device_id, frontages, who=by)
    console().print(
        f"pole {device_id} registered"
        + (f"; watches {', '.join(frontages)}" if frontages else "")
        + "; next: calibrate its camera on the dashboard's Poles page (docs/commissioning.md)",
        markup=False,
    )


@pole_app.command("assign")
def pole_assign(
    device_id: Annotated[str, typer.Argument(help="the pole's device id")],
    targets: Annotated[list[str], typer.Argument(help="the frontages it watches from now")],
    by: ByOption,
    at: Annotated[str | None, typer.Option(help="from when (default: now)")] = None,
    config: ConfigOption = None,
) -> None:
    """Make this pole the one watching each of these frontages."""
    no_nul(device_id=device_id, targets=targets, by=by)
    by = _text("--by", by, 80)
    place = village(config)
    when = place.instant("--at", at)
    with place.cases() as cases, refusals():
        _known_pole(cases, device_id)
        changed = cases.registry.assign_pole(
            device_id, _frontage_ids(cases, targets), at=when, who=by
        )
    console().print(
        f"pole {device_id} watches {', '.join(f.street_address for f in changed)}", markup=False
    )


@pole_app.command("list")
def pole_list(config: ConfigOption = None) -> None:
    """Every pole: when it was last heard, its calibration, the frontages it watches."""
    list_("poles", None, False, config)


@pole_app.command("retire")
def pole_retire(
    device_id: Annotated[str, typer.Argument(help="the pole's device id")],
    by: ByOption,
    config: ConfigOption = None,
) -> None:
    """Take a pole out of service; its readings are refused from now. Move the frontages
    it watches to another pole first (`sidewalk registry pole assign`)."""
    by = _text("--by", by, 80)
    place = village(config)
    with place.cases() as cases, refusals():
        _known_pole(cases, device_id)
        cases.registry.retire_device(device_id, _now(), who=by)
    console().print(f"pole {device_id} retired (by {by})", markup=False)


# -- frontages not watched yet ------------------------------------------------------


def _selected(
    cases: CaseStore, targets: list[str], streets: list[str], no_pole: bool
) -> list[FrontageRecord]:
    """The frontages named by address/parcel/id, on the given streets, or with no pole."""
    if not (targets or streets or no_pole):
        fail("say which frontages: addresses or parcel numbers, --street NAME, or --no-pole")
    places = Places(cases)
    chosen: dict[str, FrontageRecord] = {}
    for t in targets:
        place = places.find(t)
        if not place.frontages:
            fail(f"{t!r} has no frontage: add one with `sidewalk registry add frontage`")
        chosen.update((f.id, f) for f in place.frontages)
    for street in streets:
        on = [f for f in places.frontages if _on({"street": f.street, "address": f.street_address},
                                                  street)]  # fmt: skip
        if not on:
            known = sorted({f.street for f in places.frontages if f.street})
            fail(f"no frontage on {street!r}; the streets are: {', '.join(known) or 'none'}")
        chosen.update((f.id, f) for f in on)
    if no_pole:
        chosen.update((f.id, f) for f in places.frontages if f.device_id is None)
    return sorted(chosen.values(), key=lambda f: f.id)


def _mark(  # noqa: PLR0917 (the two commands' options, passed on)
    targets: list[str] | None,
    streets: list[str] | None,
    no_pole: bool,
    by: str,
    reason: str | None,
    config: Path | None,
    watched: bool,
) -> None:
    no_nul(targets=targets, streets=streets, by=by, reason=reason)
    by = _text("--by", by, 80)
    why = (
        _text("--reason", reason, 200)
        if reason
        else ("a pole watches it" if watched else "not watched yet: inspected by hand")
    )
    place = village(config)
    with place.cases() as cases, refusals():
        frontages = _selected(cases, targets or [], streets or [], no_pole)
        changed = cases.registry.set_watched([f.id for f in frontages], watched, reason=why, who=by)
        left = sum(1 for f in cases.registry.list_frontages() if not f.watched)
    word = "watched" if watched else "not watched yet"
    some = ", ".join(f.street_address for f in changed[:5])
    more = f" and {len(changed) - 5} more" if len(changed) > 5 else ""
    console().print(
        f"{len(changed)} frontage(s) marked {word}"
        + (f": {some}{more}" if changed else " (they already were)")
        + f" (by {by}); {left} frontage(s) not watched yet in all",
        markup=False,
    )


TargetsArg = Annotated[
    list[str] | None, typer.Argument(help="addresses, parcel numbers or frontage ids")
]
StreetOption = Annotated[
    list[str] | None, typer.Option("--street", help="every frontage on this street (repeat)")
]


@unwatched_app.command("add")
def unwatched_add(  # noqa: PLR0917 (Typer maps parameters to options)
    by: ByOption,
    targets: TargetsArg = None,
    street: StreetOption = None,
    no_pole: Annotated[
        bool, typer.Option("--no-pole", help="every frontage no pole watches yet")
    ] = False,
    reason: Annotated[str | None, typer.Option(help="why (goes in the audit log)")] = None,
    config: ConfigOption = None,
) -> None:
    """Mark frontages "not watched yet": no automatic clock runs on them and the
    Village inspects them by hand; `sidewalk check` counts them, it does not pass
    them as compliant. Undo with `sidewalk registry unwatched remove`."""
    _mark(targets, street, no_pole, by, reason, config, watched=False)


@unwatched_app.command("remove")
def unwatched_remove(  # noqa: PLR0917 (Typer maps parameters to options)
    by: ByOption,
    targets: TargetsArg = None,
    street: StreetOption = None,
    no_pole: Annotated[
        bool, typer.Option("--no-pole", help="every frontage no pole watches yet")
    ] = False,
    reason: Annotated[str | None, typer.Option(help="why (goes in the audit log)")] = None,
    config: ConfigOption = None,
) -> None:
    """Watch these frontages again: the clocks run on their pole's readings."""
    _mark(targets, street, no_pole, by, reason, config, watched=True)


@unwatched_app.command("list")
def unwatched_list(config: ConfigOption = None) -> None:
    """The frontages not watched yet."""
    place = village(config)
    with place.cases() as cases:
        rows = [f for f in cases.registry.list_frontages() if not f.watched]
    for f in rows:
        console().print(f"{f.street_address}  (parcel {f.parcel_number})", markup=False)
    console().print(f"{len(rows)} frontage(s) not watched yet", markup=False)


_mount_import()

__all__ = ["Place", "Places", "one_frontage", "plain", "registry_app", "resolve"]
