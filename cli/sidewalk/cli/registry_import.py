"""``sidewalk registry import FILE``: the county's parcel file into the registry.

FILE is the county's parcel layer in the Wisconsin Statewide Parcel Map schema:
GeoJSON, a Shapefile (``.shp`` with its ``.dbf``/``.prj``, or a ``.zip`` of
them; ``--layer`` picks one of several in a zip) or a CSV with a WKT column
(``--crs`` says its coordinate system). It prints what it read, the records it
cannot take and why, and the difference with the registry (new parcels, sales,
changed mailing addresses, splits and merges, parcels gone, and open cases on
parcels that change); ``--dry-run`` stops there, otherwise the difference is
applied from ``--effective`` (default today in the Village's zone).
docs/registry.md says what is derived and how, and the bounds on what it reads
(sizes, a zip's packing ratio, records, memory: each refusal one line, exit 2,
nothing written).

pyproj and shapely load when the command runs (``common``: a fast --help).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sidewalk.cli.common import ConfigOption, console, day, fail, refusals, village

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sidewalk.registry.apply import Applied, Difference, Snapshot
    from sidewalk.registry.county import ParcelFile, Reject
    from sidewalk.registry.frontages import Derived

SHOWN = 25  # lines of one kind before "… and N more"
GROUP_FROM = 3  # records refused for one reason from which they are one line
BIG_FILE = 2000  # parcels: above this, say what it is doing while it works


def import_command(  # noqa: PLR0917 (Typer maps parameters to options)
    file: Annotated[
        Path, typer.Argument(help="the county's parcel file: .geojson, .shp, .zip or .csv")
    ],
    layer: Annotated[
        str | None, typer.Option(help="the layer to read from a .zip holding several")
    ] = None,
    crs: Annotated[
        str | None,
        typer.Option(
            help="coordinate system when the file does not say (CSV), e.g. 3071 (Wisconsin"
            " Transverse Mercator) or 4326 (longitude/latitude)"
        ),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="show the difference; write nothing")
    ] = False,
    effective: Annotated[
        str | None,
        typer.Option(help="YYYY-MM-DD the changes take effect (default: today in the Village)"),
    ] = None,
    site: Annotated[
        str | None, typer.Option(help="the site new frontages belong to (default: site)")
    ] = None,
    commercial_class: Annotated[
        list[str] | None,
        typer.Option(
            "--commercial-class",
            metavar="<class>",
            help="a class of property (PROPCLASS) whose walks are commercial, e.g. 2;"
            " repeat for more (default: every walk residential)",
        ),
    ] = None,
    who: Annotated[str, typer.Option(help="the person importing (goes in the audit log)")] = (
        "county import"
    ),
    config: ConfigOption = None,
) -> None:
    """Import the county's parcel file: parcels, owners of record, frontages."""
    from datetime import UTC, datetime, time

    from sidewalk.registry.apply import (
        ImportRefused,
        apply,
        compare,
        far_from_registry,
        snapshot,
    )
    from sidewalk.registry.county import ParcelFileError, parse_records, read_parcel_file
    from sidewalk.registry.frontages import derive_frontages

    place = village(config)
    zone = place.profile.zone
    when = (
        day("--effective", effective)
        if effective is not None
        else datetime.now(UTC).astimezone(zone).date()
    )
    starts = datetime.combine(when, time(0), tzinfo=zone)
    out = console()
    memory = place.settings.registry.import_memory_mb << 20
    try:
        with out.status(f"reading {file.name}…"):
            raw = read_parcel_file(file, layer=layer, crs=crs, memory_limit=memory)
            parsed = parse_records(
                raw, commercial_classes=commercial_class or (), memory_limit=memory
            )
            del raw  # the parcels hold what is needed; the raw records are as big again
    except ParcelFileError as exc:
        fail(str(exc))
    with place.cases() as cases:
        far = far_from_registry(parsed, cases.registry.list_parcels())
    if far is not None:
        fail(far)
    try:
        if len(parsed.parcels) > BIG_FILE:
            with out.status(f"finding the frontages of {len(parsed.parcels)} parcels…"):
                derived = derive_frontages(parsed.parcels, refused_ground=parsed.refused_ground,
                                           source=parsed.source, memory_limit=memory)  # fmt: skip
        else:
            derived = derive_frontages(parsed.parcels, refused_ground=parsed.refused_ground,
                                       source=parsed.source, memory_limit=memory)  # fmt: skip
    except ParcelFileError as exc:
        fail(str(exc))
    _print_read(parsed, derived)
    with place.cases() as cases:
        snap = snapshot(cases)
        diff = compare(parsed, snap, starts)
        _print_difference(diff, snap, dry_run=dry_run, day=f"{when:%Y-%m-%d}")
        if dry_run or diff.is_empty():
            return
        with refusals(ImportRefused):
            if len(parsed.parcels) > BIG_FILE:
                with out.status("writing the registry…"):
                    done = apply(cases, parsed, derived, diff, snap, effective=starts,
                                 site=site or place.settings.site, who=who,
                                 memory_limit=memory)  # fmt: skip
            else:
                done = apply(cases, parsed, derived, diff, snap, effective=starts,
                             site=site or place.settings.site, who=who,
                             memory_limit=memory)  # fmt: skip
        _print_applied(done, f"{when:%Y-%m-%d}")


def _listed(title: str, lines: list[str]) -> None:
    out = console()
    if not lines:
        return
    out.print(f"{title} ({len(lines)}):", soft_wrap=True)
    for line in lines[:SHOWN]:
        out.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
    if len(lines) > SHOWN:
        out.print(f"  … and {len(lines) - SHOWN} more")


def _grouped_rejects(rejects: Sequence[Reject]) -> list[str]:
    """Records refused for the same reason: one line with a count and examples, the
    commonest first (a file whose every record fails alike said it 76 times)."""
    by_reason: dict[str, list[Reject]] = {}
    for r in rejects:
        by_reason.setdefault(r.reason, []).append(r)
    lines = []
    for reason, same in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        if len(same) < GROUP_FROM:
            lines += [r.describe() for r in same]
            continue
        eg = ", ".join(r.describe().split(": ", 1)[0] for r in same[:3])
        lines.append(f"{len(same)} records: {reason} (e.g. {eg}{' …' if len(same) > 3 else ''})")
    return lines


def _print_read(parsed: ParcelFile, derived: Derived) -> None:
    out = console()
    frontages = derived.all()
    streets = {f.street for f in frontages}
    corners = sum(1 for fs in derived.frontages.values() if len(fs) > 1)
    out.print(
        f"{parsed.source}: {len(parsed.parcels) + len(parsed.rejects)} records in"
        f" {parsed.crs_name}; {len(parsed.parcels)} parcels read,"
        f" {len(parsed.rejects)} not imported",
        soft_wrap=True,
        markup=False,
        highlight=False,
    )
    out.print(
        f"frontages: {len(frontages)} on {len(streets)} streets ({corners} corner lots with two)",
        highlight=False,
    )
    _listed("not imported", _grouped_rejects(parsed.rejects))
    _listed(
        "to check",
        [f"parcel {pid}: {note}" for pid, note in sorted(derived.notes.items())],
    )


def _print_difference(diff: Difference, snap: Snapshot, *, dry_run: bool, day: str) -> None:
    out = console()
    if diff.is_empty():
        out.print(f"no difference with the registry: {diff.unchanged} parcels as they are")
        return
    lines = diff.lines(snap)
    heading = "difference (dry run: nothing written)" if dry_run else f"changes from {day}"
    counts = [
        (len(diff.new), "new"), (len(diff.sold), "sold"), (len(diff.moved), "new mailing address"),
        (len(diff.changed), "changed"), (len(diff.split), "split"), (len(diff.merged), "merged"),
        (len(diff.gone), "gone"), (diff.unchanged, "unchanged"),
    ]  # fmt: skip
    out.print(f"{heading}: " + ", ".join(f"{n} {what}" for n, what in counts if n), highlight=False)
    # A first import is all new parcels: show some; every other change in full.
    new, rest = lines[: len(diff.new)], lines[len(diff.new) :]
    for line in [*new[:SHOWN], *rest]:
        out.print(f"  {line}", soft_wrap=True, markup=False, highlight=False)
    if len(new) > SHOWN:
        out.print(f"  … and {len(new) - SHOWN} more new parcels")
    _listed("open cases on parcels that change", diff.open_cases)


def _print_applied(done: Applied, day: str) -> None:
    console().print(
        f"applied from {day}: {done.parcels} parcels written, {done.owners} new owners,"
        f" {done.ownerships} owners of record set, {done.frontages} frontages written,"
        f" {done.retired_frontages} frontages and {done.retired_parcels} parcels retired",
        highlight=False,
    )
