"""Each parcel's frontage: the edge of its outline that faces its street.

A county parcel file has outlines and addresses but no street centrelines, so
the street is found from the parcels themselves:

1. Everything is measured in a local transverse Mercator (metres, reported in
   feet) centred on the file, so lengths are true to well under 0.1 %.
2. A street's axis is fitted through the centroids of the parcels addressed
   on it (their principal direction, or the one across it when that gives
   more of them a frontage: a short street of deep lots). With lots on both sides the centroids
   fall in two rows and the axis is the middle of the gap between them; with
   lots on one side only, the street is on the side of the row whose lots
   have an open edge there (their rear edges back onto other lots), half a
   66-ft right-of-way out from the row's front line.
3. An edge is open when the ground just outside it (2 m out, at a quarter,
   half and three quarters of its length) is in no other parcel: the
   right-of-way is not a parcel. The frontage is the open edge(s) roughly
   parallel to the axis (within 30°), facing it and nearest to it (within 25 m).
4. A corner lot is one with an open edge facing another street's axis: it gets
   a second frontage. An open side that faces no street named in the file
   leaves one frontage and a "check corner lot" note.
5. Condominium units share one footprint: the walk is derived once and put on
   the common-element record (the one without a unit number) if the file has
   it, else on the first unit by parcel number, with a note.

Memory: the edges are found and their ground probed a chunk of parcels at a time
(``DERIVE_CHUNK``) against one STRtree of the outlines, and the frontages' map lines
made a chunk at a time, so what is held beyond the outlines and their edges stays
small; the memory the process holds is checked after every chunk against the
import's limit (``registry.import_memory_mb``), refused in one line as reading is.

Limits: a street is taken as straight (a curved street, or one that bends at
an intersection, fits badly: its frontages come out missing or on the wrong
edge and are listed for checking); a street with one parcel on it has no
axis; gaps between outlines wider than 2 m read as open edges. Every
frontage can be corrected afterwards with ``sidewalk registry edit``.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from sidewalk.registry.county import MAX_MEMORY_BYTES, Parcel, check_memory

if TYPE_CHECKING:
    from shapely.geometry.base import BaseGeometry

FEET_PER_METRE: Final = 1 / 0.3048
PROBE_M: Final = 2.0
HALF_RIGHT_OF_WAY_M: Final = 33 * 0.3048
MAX_AXIS_DISTANCE_M: Final = 25.0
PARALLEL_COS: Final = math.cos(math.radians(30))
TWO_ROWS_GAP_M: Final = 15.0
SAME_FRONT_M: Final = 3.0
# Parcels whose edges are probed (three points each) in one query, and frontages whose
# map lines are made in one transform: 2,000 parcels are about 10,000 edges and 30,000
# probe points, a few MB, where the whole county at once was hundreds.
DERIVE_CHUNK: Final = 2000


@dataclass(frozen=True)
class Frontage:
    frontage_id: str
    parcel_id: str
    street: str
    street_address: str
    side: str  # the side of the street the parcel is on: N, S, E or W
    length_ft: float
    corner: bool
    line: dict[str, Any]  # GeoJSON LineString or MultiLineString in WGS 84


@dataclass
class Derived:
    """Frontages by parcel id, and what a person should check, by parcel id."""

    frontages: dict[str, list[Frontage]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)

    def all(self) -> list[Frontage]:
        return [f for fs in self.frontages.values() for f in fs]


@dataclass(frozen=True)
class Axis:
    """A street as a straight line: a point, its unit direction and unit normal (metres)."""

    origin: tuple[float, float]
    direction: tuple[float, float]
    normal: tuple[float, float]
    offset: float  # the street's line, along ``normal`` from ``origin``
    extent: tuple[float, float]  # along ``direction``, from its parcels


@dataclass(frozen=True, slots=True)
class _Edge:
    a: tuple[float, float]
    b: tuple[float, float]
    normal: tuple[float, float]  # outward, unit
    open: bool

    @property
    def length(self) -> float:
        return math.dist(self.a, self.b)

    @property
    def direction(self) -> tuple[float, float]:
        n = self.length or 1.0
        return ((self.b[0] - self.a[0]) / n, (self.b[1] - self.a[1]) / n)

    @property
    def middle(self) -> tuple[float, float]:
        return ((self.a[0] + self.b[0]) / 2, (self.a[1] + self.b[1]) / 2)


def frontage_id(parcel_id: str, street: str) -> str:
    """``"026-0915-0001"`` on ``"N MAIN ST"`` → ``"026-0915-0001-n-main-st"``."""
    slug = re.sub(r"[^a-z0-9]+", "-", f"{parcel_id} {street}".lower()).strip("-")
    return slug[:120]


def footprint_key(geom: BaseGeometry) -> str:
    """Outlines equal to about 10 cm share a key (condominium units on one footprint)."""
    import shapely

    return str(
        shapely.to_wkt(shapely.normalize(shapely.set_precision(geom, 1e-6)), rounding_precision=6)
    )


def derive_frontages(  # noqa: PLR0912, PLR0915 (the method's five steps, in order)
    parcels: Sequence[Parcel],
    *,
    refused_ground: Sequence[Any] = (),
    source: str = "",
    memory_limit: int = MAX_MEMORY_BYTES,
    chunk: int = DERIVE_CHUNK,
) -> Derived:
    """Every parcel's frontage(s), by the method in the module's docstring.

    ``refused_ground``: outlines (WGS 84) of the file's records that were not
    imported; no street runs there, so a side against one is not open.
    ``memory_limit`` (bytes): the memory the process may hold, checked after every
    ``chunk`` parcels; past it, ``ParcelFileError`` in one line (``source``, the
    file's name, begins it). ``chunk`` changes nothing in what is derived."""
    import numpy as np
    import shapely
    from pyproj import Transformer

    out = Derived()
    if not parcels:
        return out
    chunk = max(1, chunk)
    total = len(parcels)

    def check(done: int) -> None:
        check_memory(
            source, memory_limit, f"finding the frontages, {done:,} of {total:,} parcels done"
        )

    check(0)
    # One outline per footprint: condominium units share theirs.
    groups: dict[str, list[Parcel]] = defaultdict(list)
    for parcel in parcels:
        groups[footprint_key(parcel.geometry)].append(parcel)
    holders: list[Parcel] = []
    for members in groups.values():
        members.sort(key=lambda p: (p.unit is not None, p.parcel_id))
        holder = members[0]
        holders.append(holder)
        if len(members) > 1:
            whose = "the common-element record" if holder.unit is None else "the first unit"
            for unit in members[1:]:
                out.notes[unit.parcel_id] = (
                    f"condominium unit: the building's walk is on {whose} (parcel"
                    f" {holder.parcel_id})"
                )
            if holder.unit is not None:
                out.notes[holder.parcel_id] = (
                    f"condominium of {len(members)} units with no common-element record: the"
                    " walk is put on this unit's owner; make the association the owner with"
                    " registry edit"
                )
    west, south, east, north = shapely.total_bounds(
        np.asarray([p.geometry for p in holders], dtype=object)
    )
    lon, lat = (west + east) / 2, (south + north) / 2
    to_local = Transformer.from_crs(
        "EPSG:4326",
        f"+proj=tmerc +lat_0={lat} +lon_0={lon} +k=1 +x_0=0 +y_0=0 +ellps=GRS80 +units=m",
        always_xy=True,
    )
    to_wgs84 = Transformer.from_crs(to_local.target_crs, "EPSG:4326", always_xy=True)

    def local(coords: Any) -> Any:
        x, y = to_local.transform(coords[:, 0], coords[:, 1])
        return np.column_stack([x, y])

    outlines = list(
        shapely.transform(np.asarray([p.geometry for p in holders], dtype=object), local)
    )
    ground = (
        list(shapely.transform(np.asarray(list(refused_ground), dtype=object), local))
        if refused_ground
        else []
    )
    edges = _all_edges(outlines, ground, chunk=chunk, check=check)
    by_street: dict[str, list[int]] = defaultdict(list)
    for i, parcel in enumerate(holders):
        by_street[parcel.street].append(i)
    axes: dict[str, Axis] = {}
    for street, on_street in by_street.items():
        axis = _fit_axis([outlines[i] for i in on_street], [edges[i] for i in on_street])
        if axis is not None:
            axes[street] = axis

    pending: list[tuple[Parcel, list[tuple[str, list[_Edge]]]]] = []
    for i, parcel in enumerate(holders):
        if i % chunk == 0:
            check(i)
        axis = axes.get(parcel.street)
        if axis is None:
            out.notes[parcel.parcel_id] = (
                f"no frontage: {parcel.street} has too few parcels in the file to tell where"
                " the street runs; add the frontage with registry edit"
            )
            continue
        front = _facing(edges[i], axis)
        if not front:
            out.notes[parcel.parcel_id] = (
                f"no frontage: no edge of the parcel is open to {parcel.street} (a rear or"
                " landlocked lot); imported without a walk to watch"
            )
            continue
        found = [(parcel.street, front)]
        unexplained = False
        for edge in edges[i]:
            if not edge.open or any(edge in part for _, part in found):
                continue
            if abs(_dot(edge.direction, axis.direction)) > math.sin(math.radians(30)):
                continue  # parallel to its own street: a rear edge, or the frontage itself
            other = _other_street(edge, axes, exclude=parcel.street)
            if other is None:
                unexplained = True
                continue
            side = _facing(edges[i], axes[other])
            if side and not any(s == other for s, _ in found):
                found.append((other, side))
        corner = len(found) > 1
        if unexplained and not corner:
            out.notes[parcel.parcel_id] = (
                "check corner lot: a side is open to no street named in the file; one"
                " frontage recorded"
            )
        pending.append((parcel, found))
    lines = _wgs84_lines(
        [part for _, found in pending for _, part in found], to_wgs84, chunk=chunk,
        check=lambda _n: check(total),
    )  # fmt: skip
    for parcel, found in pending:
        corner = len(found) > 1
        out.frontages[parcel.parcel_id] = [
            Frontage(
                frontage_id=frontage_id(parcel.parcel_id, street),
                parcel_id=parcel.parcel_id,
                street=street,
                street_address=(
                    parcel.site_address if n == 0 else f"{parcel.site_address} ({street} side)"
                ),
                side=_compass(part),
                length_ft=round(sum(e.length for e in part) * FEET_PER_METRE, 1),
                corner=corner,
                line=next(lines),
            )
            for n, (street, part) in enumerate(found)
        ]
    check(total)
    return out


def _wgs84_lines(
    parts: Sequence[Sequence[_Edge]],
    to_wgs84: Any,
    *,
    chunk: int = DERIVE_CHUNK,
    check: Callable[[int], None] = lambda _n: None,
) -> Iterator[dict[str, Any]]:
    """Each frontage's edges as one GeoJSON line in WGS 84 (7 decimals, about 1 cm),
    made ``chunk`` frontages at a time (the transform is point by point: the same
    lines whatever the chunk); ``check`` is given the frontages made so far."""
    import numpy as np
    import shapely
    from shapely.geometry import MultiLineString, mapping
    from shapely.ops import linemerge

    def back(coords: Any) -> Any:
        x, y = to_wgs84.transform(coords[:, 0], coords[:, 1])
        return np.round(np.column_stack([x, y]), 7)

    for start in range(0, len(parts), chunk):
        if start:
            check(start)
        merged = [
            linemerge(MultiLineString([[e.a, e.b] for e in part]))
            for part in parts[start : start + chunk]
        ]
        for line in shapely.transform(np.asarray(merged, dtype=object), back):
            yield dict(mapping(line))


def _dot(a: tuple[float, float], b: tuple[float, float]) -> float:
    return a[0] * b[0] + a[1] * b[1]


def _all_edges(
    outlines: Sequence[Any],
    ground: Sequence[Any] = (),
    *,
    chunk: int = DERIVE_CHUNK,
    check: Callable[[int], None] = lambda _n: None,
) -> list[list[_Edge]]:
    """Each outline's edges (collinear runs merged), each with its outward normal and
    whether the ground outside it is open (in no other parcel, nor in ``ground``):
    one STRtree of every outline, queried ``chunk`` outlines' probes at a time (each
    probe's answer is its own: the same edges whatever the chunk); ``check`` is given
    the outlines done so far."""
    import numpy as np
    import shapely

    tree = shapely.STRtree(np.asarray([*outlines, *ground], dtype=object))
    found: list[list[_Edge]] = [[] for _ in outlines]
    for start in range(0, len(outlines), chunk):
        if start:
            check(start)
        _edges_of(outlines, range(start, min(start + chunk, len(outlines))), tree, found)
    return found


def _edges_of(outlines: Sequence[Any], indices: range, tree: Any, found: list[list[_Edge]]) -> None:
    """The edges of the outlines at ``indices``, into ``found``: one bulk query."""
    import numpy as np
    import shapely
    from shapely.geometry import Polygon

    rough: list[tuple[int, tuple[float, float], tuple[float, float], tuple[float, float]]] = []
    probes: list[tuple[float, float]] = []
    for index in indices:
        outline = outlines[index]
        for polygon in getattr(outline, "geoms", [outline]):
            ring = shapely.simplify(polygon, 0.2, preserve_topology=True)
            assert isinstance(ring, Polygon)
            points = list(shapely.geometry.polygon.orient(ring, 1.0).exterior.coords)
            for a, b in itertools.pairwise(points):
                length = math.dist(a, b)
                if length < 0.5:
                    continue
                dx, dy = (b[0] - a[0]) / length, (b[1] - a[1]) / length
                normal = (dy, -dx)  # outward for a counter-clockwise ring
                # An edge's end is the next one's start: one tuple for both (a county's
                # 200,000 edges hold half the points).
                rough.append((index, _xy(a), _xy(b), normal))
                probes.extend(
                    (a[0] + dx * length * t + normal[0] * PROBE_M,
                     a[1] + dy * length * t + normal[1] * PROBE_M)
                    for t in (0.25, 0.5, 0.75)
                )  # fmt: skip
    if not rough:
        return
    probe_points = shapely.points(np.asarray(probes, dtype=float).reshape(-1, 2))
    hit_probe, hit_outline = tree.query(probe_points, predicate="intersects")
    owner = np.repeat([r[0] for r in rough], 3)
    covered = np.zeros(len(probes), dtype=bool)
    others = hit_outline != owner[hit_probe]
    covered[hit_probe[others]] = True
    per_edge = covered.reshape(-1, 3).sum(axis=1)
    for (index, a, b, normal), n_covered in zip(rough, per_edge, strict=True):
        found[index].append(_Edge(a, b, normal, int(n_covered) < 2))


def _xy(point: tuple[float, ...]) -> tuple[float, float]:
    """The point itself when it is (x, y); its x and y when it has a z too."""
    return point if len(point) == 2 else (point[0], point[1])


def _fit_axis(outlines: Sequence[Any], edges: Sequence[list[_Edge]]) -> Axis | None:
    """The street's straight line from the parcels addressed on it (None if it cannot tell).

    The centroids' principal direction is the street's when the street is longer
    than its lots are deep; a short street of deep lots has them the other way
    round, so both directions are tried and the one that gives more of its
    parcels a frontage wins (the principal one on a tie)."""
    import numpy as np
    import shapely

    if len(outlines) < 2:
        return None
    points = shapely.get_coordinates(shapely.centroid(np.asarray(outlines, dtype=object)))
    origin = points.mean(axis=0)
    centred = points - origin
    _, vectors = np.linalg.eigh(centred.T @ centred)
    best: tuple[int, Axis] | None = None
    for column in (-1, 0):
        direction = (float(vectors[0, column]), float(vectors[1, column]))
        axis = _axis_along(direction, outlines, edges, centred, origin)
        if axis is None:
            continue
        score = sum(1 for parcel_edges in edges if _facing(parcel_edges, axis))
        if best is None or score > best[0]:
            best = (score, axis)
    return None if best is None or best[0] == 0 else best[1]


def _axis_along(
    direction: tuple[float, float],
    outlines: Sequence[Any],
    edges: Sequence[list[_Edge]],
    centred: Any,
    origin: Any,
) -> Axis | None:
    """The street's line in ``direction``: between two rows of lots, or beside one."""
    import numpy as np

    normal = (-direction[1], direction[0])
    offsets = centred @ np.array(normal)
    along = centred @ np.array(direction)
    extent = (float(along.min()), float(along.max()))
    ordered = np.sort(offsets)
    gaps = np.diff(ordered)
    o = (float(origin[0]), float(origin[1]))
    if len(gaps) and float(gaps.max()) > TWO_ROWS_GAP_M:
        k = int(gaps.argmax())
        middle = float(ordered[k] + ordered[k + 1]) / 2
        return Axis(o, direction, normal, middle, extent)
    # One row of lots: the street is on the side where their edges are open.
    votes = 0
    for parcel_edges in edges:
        for edge in parcel_edges:
            if edge.open and abs(_dot(edge.direction, direction)) >= PARALLEL_COS:
                votes += 1 if _dot(edge.normal, normal) > 0 else -1
    if votes == 0:
        return None
    side = 1.0 if votes > 0 else -1.0
    fronts = [
        max(side * ((x - o[0]) * normal[0] + (y - o[1]) * normal[1]) for x, y in _coords(g))
        for g in outlines
    ]
    line = side * (statistics.median(fronts) + HALF_RIGHT_OF_WAY_M)
    return Axis(o, direction, normal, line, extent)


def _coords(outline: Any) -> list[tuple[float, float]]:
    return [c for g in getattr(outline, "geoms", [outline]) for c in g.exterior.coords]


def _offset(axis: Axis, point: tuple[float, float]) -> float:
    return (point[0] - axis.origin[0]) * axis.normal[0] + (point[1] - axis.origin[1]) * axis.normal[
        1
    ]


def _facing(parcel_edges: Sequence[_Edge], axis: Axis) -> list[_Edge]:
    """The open edges parallel to the street, facing it, nearest to it."""
    candidates: list[tuple[float, _Edge]] = []
    for edge in parcel_edges:
        if not edge.open or abs(_dot(edge.direction, axis.direction)) < PARALLEL_COS:
            continue
        gap = axis.offset - _offset(axis, edge.middle)
        if gap * _dot(edge.normal, axis.normal) <= 0 or abs(gap) > MAX_AXIS_DISTANCE_M:
            continue
        candidates.append((abs(gap), edge))
    if not candidates:
        return []
    nearest = min(d for d, _ in candidates)
    return [e for d, e in candidates if d <= nearest + SAME_FRONT_M]


def _other_street(edge: _Edge, axes: dict[str, Axis], *, exclude: str) -> str | None:
    """The street another open edge faces, if one named in the file runs there."""
    best: tuple[float, str] | None = None
    for street, axis in axes.items():
        if street == exclude or abs(_dot(edge.direction, axis.direction)) < PARALLEL_COS:
            continue
        gap = axis.offset - _offset(axis, edge.middle)
        if gap * _dot(edge.normal, axis.normal) <= 0 or abs(gap) > MAX_AXIS_DISTANCE_M:
            continue
        along = _dot(
            (edge.middle[0] - axis.origin[0], edge.middle[1] - axis.origin[1]), axis.direction
        )
        if not axis.extent[0] - 60 <= along <= axis.extent[1] + 60:
            continue
        if best is None or abs(gap) < best[0]:
            best = (abs(gap), street)
    return None if best is None else best[1]


def _compass(part: Sequence[_Edge]) -> str:
    """The side of the street the parcel is on: opposite its frontage's outward normal."""
    nx = -sum(e.normal[0] * e.length for e in part)
    ny = -sum(e.normal[1] * e.length for e in part)
    if abs(ny) >= abs(nx):
        return "N" if ny > 0 else "S"
    return "E" if nx > 0 else "W"
