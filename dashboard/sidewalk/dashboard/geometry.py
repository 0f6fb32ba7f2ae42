"""Where each frontage is drawn on the map: GeoJSON, with no tile server.

Sources, first match wins per frontage: a GeoJSON file given to the app
(a FeatureCollection whose features carry ``properties.frontage``), then the
geometry stored in the case records, then a generated street layout. The
generated layout follows § 370-16 as the demo village's addresses do: a
street per name, frontages in house-number order, odd numbers on the north side, each
frontage as long as its record says. The registry's parcel boundaries
(``parcel_features``) are drawn under the frontages on the map page.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from sidewalk.storage.cases.records import ParcelRecord

# The generated layout sits at the Village of Clyman; coordinates are WGS 84.
ORIGIN_LON: Final = -88.7240
ORIGIN_LAT: Final = 43.3125
FT_PER_DEG_LAT: Final = 364_000.0
STREET_SPACING_FT: Final = 400.0
HALF_STREET_FT: Final = 30.0
WALK_FT: Final = 5.0
TERRACE_FT: Final = 8.0  # grass between the walk and the curb
_ADDRESS = re.compile(r"^\s*(\d+)\s+(.+?)\s*$")


class Placed(Protocol):
    """What drawing a frontage reads: a ``FrontageRecord`` or a lean ``FrontageLine``."""

    @property
    def id(self) -> str: ...
    @property
    def street_address(self) -> str: ...
    @property
    def length_ft(self) -> float: ...


class GeometryError(ValueError):
    """A GeoJSON source that cannot be used; the message says why."""


def load_geojson(path: Path) -> dict[str, dict[str, Any]]:
    """Geometries by frontage id from a FeatureCollection file."""
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise GeometryError(f"{path}: {exc}") from None
    if data.get("type") != "FeatureCollection":
        raise GeometryError(f"{path}: not a GeoJSON FeatureCollection")
    out: dict[str, dict[str, Any]] = {}
    for feature in data.get("features", []):
        frontage = (feature.get("properties") or {}).get("frontage")
        geometry = feature.get("geometry")
        if isinstance(frontage, str) and isinstance(geometry, dict):
            out[frontage] = geometry
    return out


def _to_lonlat(x_ft: float, y_ft: float) -> list[float]:
    lat = ORIGIN_LAT + y_ft / FT_PER_DEG_LAT
    lon = ORIGIN_LON + x_ft / (FT_PER_DEG_LAT * math.cos(math.radians(ORIGIN_LAT)))
    return [round(lon, 7), round(lat, 7)]


def _rectangle(x0: float, x1: float, y0: float, y1: float) -> dict[str, Any]:
    ring = [_to_lonlat(x, y) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0))]
    return {"type": "Polygon", "coordinates": [ring]}


def generated_streets(frontages: Sequence[Placed]) -> list[dict[str, Any]]:
    """The generated streets' carriageways (curb to curb), as GeoJSON features named by street."""
    layout = generated_rings(frontages)
    by_street: dict[str, list[float]] = defaultdict(list)
    for f in frontages:
        ring = layout[f.id]
        by_street[_street_of(f)[1]] += [ring[0][0], ring[1][0]]
    features = []
    origin_lon = _to_lonlat(0.0, 0.0)[0]
    for row, street in enumerate(sorted(by_street)):
        y = -row * STREET_SPACING_FT
        # Longitudes back to feet along the street, so the band spans every frontage on it.
        ft_per_lon = FT_PER_DEG_LAT * math.cos(math.radians(ORIGIN_LAT))
        xs = [(lon - origin_lon) * ft_per_lon for lon in by_street[street]]
        curb = HALF_STREET_FT - TERRACE_FT
        geometry = _rectangle(min(xs), max(xs), y - curb, y + curb)
        features.append(
            {"type": "Feature", "id": f"street:{street}", "geometry": geometry,
             "properties": {"street": street}}
        )  # fmt: skip
    return features


def _street_of(f: Placed) -> tuple[int, str]:
    match = _ADDRESS.match(f.street_address)
    return (int(match[1]), match[2]) if match else (0, f.street_address)


def generated_layout(frontages: Iterable[Placed]) -> dict[str, dict[str, Any]]:
    """A simple street plan: one east-west street per street name, walks on both sides.

    The plan depends only on the frontages' ids, addresses and lengths, and the map asks
    for the same one on every request (twice: the walks, then the streets), so it is
    worked out once per set of frontages; each call gets lists of its own to change."""
    plan = _plan(tuple((f.id, f.street_address, f.length_ft) for f in frontages))
    return {
        fid: {"type": "Polygon", "coordinates": [[[lon, lat] for lon, lat in ring]]}
        for fid, ring in plan.items()
    }


def generated_rings(
    frontages: Iterable[Placed],
) -> Mapping[str, tuple[tuple[float, float], ...]]:
    """``generated_layout``'s outer rings, shared and read-only (nothing copied: the
    Overview sends 2,000 of them as they are)."""
    return _plan(tuple((f.id, f.street_address, f.length_ft) for f in frontages))


@functools.lru_cache(maxsize=8)
def _plan(
    frontages: tuple[tuple[str, str, float], ...],
) -> dict[str, tuple[tuple[float, float], ...]]:
    by_street: dict[str, list[tuple[int, str, float]]] = defaultdict(list)
    for fid, address, length_ft in frontages:
        match = _ADDRESS.match(address)
        number, street = (int(match[1]), match[2]) if match else (0, address)
        by_street[street].append((number, fid, length_ft))
    out: dict[str, tuple[tuple[float, float], ...]] = {}
    for row, street in enumerate(sorted(by_street)):
        y = -row * STREET_SPACING_FT
        cursor = {1: 0.0, 0: 0.0}  # x along the street, per side (odd=1, even=0)
        for number, fid, length_ft in sorted(by_street[street], key=lambda p: (p[0], p[1])):
            side = number % 2
            x0 = cursor[side]
            x1 = x0 + max(length_ft, 10.0)
            cursor[side] = x1 + 4.0
            # Odd numbers on the north side of the street (§ 370-16).
            y0 = y + HALF_STREET_FT if side else y - HALF_STREET_FT - WALK_FT
            ring = _rectangle(x0, x1, y0, y0 + WALK_FT)["coordinates"][0]
            out[fid] = tuple((lon, lat) for lon, lat in ring)
    return out


def frontage_features(
    frontages: Iterable[Placed],
    stored: Mapping[str, Mapping[str, Any]],
    from_file: Mapping[str, Mapping[str, Any]],
) -> list[dict[str, Any]]:
    """One GeoJSON feature per frontage, with the source of its geometry."""
    frontages = list(frontages)
    missing = [f for f in frontages if f.id not in from_file and f.id not in stored]
    generated = generated_layout(missing) if missing else {}
    features = []
    for f in frontages:
        if f.id in from_file:
            geometry, source = from_file[f.id], "file"
        elif f.id in stored:
            geometry, source = stored[f.id], "records"
        else:
            geometry, source = generated[f.id], "generated"
        features.append(
            {
                "type": "Feature",
                "id": f.id,
                "geometry": dict(geometry),
                "properties": {
                    "frontage": f.id,
                    "address": f.street_address,
                    "geometry_source": source,
                },
            }
        )
    return features


def parcel_features(parcels: Iterable[ParcelRecord]) -> list[dict[str, Any]]:
    """The registry's parcels that have a boundary, as GeoJSON features (WGS 84)."""
    return [
        {
            "type": "Feature",
            "id": f"parcel:{p.id}",
            "geometry": dict(p.geometry),
            "properties": {"parcel": p.id, "address": p.site_address or ""},
        }
        for p in parcels
        if p.geometry
    ]
