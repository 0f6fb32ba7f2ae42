"""A made-up county parcel file on a small street grid at Clyman, Wisconsin.

The grid is laid out in Wisconsin Transverse Mercator (EPSG:3071, metres)
around the village's real location: east-west streets and north-south
streets 66 ft wide, blocks of two back-to-back rows of lots. Each block's
south-west and north-east corner lots are addressed on the north-south
street, every other lot on the east-west street it faces. Among them: owners
with PO boxes, two owners, absentee owners, a landlord with many parcels,
condominium units (one building with a common-element record, one without),
rear lots with no street frontage, and bad records (no site address, no
outline, an address too wide for a window envelope, one that cannot be split,
a duplicated parcel number) placed off the grid so they leave no hole in it.

``expected`` holds what the frontage derivation should find, from the
geometry itself: street, side of street and length in feet per parcel.
Writers put the same records out as GeoJSON, Shapefile (and .zip) and CSV
with WKT, in EPSG:3071 or WGS 84.
"""

from __future__ import annotations

import csv
import functools
import json
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import shapefile
import shapely
from pyproj import CRS, Transformer
from shapely.geometry import Polygon, box, mapping
from shapely.geometry.base import BaseGeometry

FT = 0.3048
# Clyman, Dodge County, in EPSG:3071 (metres).
ORIGIN = (624_310.0, 316_443.0)
ROW = 66 * FT
DEPTH = 130 * FT
FIELDS = (
    "PARCELID", "TAXPARCELID", "OWNERNME1", "OWNERNME2", "PSTLADRESS", "SITEADRESS", "ADDNUM",
    "PREFIX", "STREETNAME", "STREETTYPE", "SUFFIX", "UNITID", "PLACENAME", "ZIPCODE", "CONAME",
    "PROPCLASS",
)  # fmt: skip
SURNAMES = (
    "SCHMIDT", "MUELLER", "KRUEGER", "BECKER", "HOFFMANN", "WAGNER", "SCHULTZ", "KOCH",
    "RICHTER", "KLEIN", "WOLF", "NEUMANN", "SCHWARZ", "ZIMMERMANN", "BRAUN", "HARTMANN",
    "LANGE", "WERNER", "KRAUSE", "LEHMANN", "OLSON", "JOHNSON", "PETERSON", "NELSON",
)  # fmt: skip
GIVEN = ("JOHN", "MARY", "ROBERT", "LINDA", "JAMES", "SUSAN", "DAVID", "KAREN", "PAUL", "ANN")
ELSEWHERE = ("WATERTOWN WI 53094", "JUNEAU WI 53039", "MILWAUKEE WI 53202", "MADISON WI 53703")
LANDLORD = "CLYMAN RENTALS LLC"
EW_NAMES = ("MAIN", "PARK", "DODGE", "MILL", "NORTH", "FRONT", "LAKE", "HILL")
NS_NAMES = ("WEST", "CHURCH", "SCHOOL", "ELM", "OAK", "EAST", "PINE", "CEDAR", "MAPLE")


@dataclass
class Record:
    attributes: dict[str, str]
    geometry: BaseGeometry | None  # EPSG:3071


@dataclass
class County:
    records: list[Record]
    # parcel id → [(street, side, length in feet)], primary first; [] = no frontage
    expected: dict[str, list[tuple[str, str, float]]] = field(default_factory=dict)
    # parcel id (or site address when it has none) → a word the reject's reason has
    expected_rejects: dict[str, str] = field(default_factory=dict)
    condo_holders: dict[str, list[str]] = field(default_factory=dict)  # holder → other units
    lots: dict[tuple[int, int, int, int], str] = field(default_factory=dict)  # → parcel id

    def by_id(self, parcel_id: str) -> Record:
        return next(r for r in self.records if r.attributes["PARCELID"] == parcel_id)


def _ordinal(n: int) -> str:
    return f"{n}{'TH' if 10 <= n % 100 <= 20 else {1: 'ST', 2: 'ND', 3: 'RD'}.get(n % 10, 'TH')}"


def _ew(r: int) -> str:
    return f"{EW_NAMES[r]} ST" if r < len(EW_NAMES) else f"{_ordinal(r)} ST"


def _ns(c: int) -> str:
    return f"{NS_NAMES[c]} AVE" if c < len(NS_NAMES) else f"{_ordinal(c)} AVE"


def generate(  # noqa: PLR0912, PLR0915 (the layout reads best as one walk over the grid)
    blocks_x: int = 5, blocks_y: int = 4, lots: int = 8, lot_ft: float = 55.0
) -> County:
    """The county file for a ``blocks_x`` × ``blocks_y`` grid, ``lots`` lots per row."""
    width = lot_ft * FT
    block_w, block_h = lots * width, 2 * DEPTH
    county = County([])
    n = 0

    def owner(i: int) -> tuple[str, str, str]:
        """(name 1, name 2, mailing address) for the i-th owner: PO boxes, two owners, away,
        and a landlord owning every 13th parcel."""
        if i % 13 == 6:
            return LANDLORD, "", "PO BOX 13 CLYMAN WI 53016"
        surname, given = SURNAMES[i % len(SURNAMES)], GIVEN[(i // 3) % len(GIVEN)]
        second = f"{GIVEN[(i + 5) % len(GIVEN)]} {surname}" if i % 5 == 0 else ""
        if i % 7 == 3:
            postal = f"PO BOX {100 + i} CLYMAN WI 53016"
        elif i % 11 == 4:
            postal = f"{1200 + i} RIVER DR {ELSEWHERE[i % len(ELSEWHERE)]}"
        else:
            postal = f"{100 + i} MAIN ST CLYMAN WI 53016"
        return f"{surname} {given}", second, postal

    def add(
        geom: BaseGeometry | None,
        number: int,
        street: str,
        *,
        unit: str = "",
        parcel_id: str | None = None,
        owner_index: int | None = None,
        **overrides: str,
    ) -> str:
        nonlocal n
        n += 1
        pid = parcel_id or f"206-1015-{n:04d}-000"
        name1, name2, postal = owner(n if owner_index is None else owner_index)
        words = street.split()
        site = f"{number} {street}" + (f" UNIT {unit}" if unit else "")
        attributes = {
            "PARCELID": pid,
            "TAXPARCELID": "206" + pid[4:].replace("-", ""),
            "OWNERNME1": name1,
            "OWNERNME2": name2,
            "PSTLADRESS": postal,
            "SITEADRESS": site,
            "ADDNUM": str(number),
            "PREFIX": "",
            "STREETNAME": " ".join(words[:-1]),
            "STREETTYPE": words[-1],
            "SUFFIX": "",
            "UNITID": unit,
            "PLACENAME": "VILLAGE OF CLYMAN",
            "ZIPCODE": "53016",
            "CONAME": "DODGE",
            "PROPCLASS": "2" if n % 23 == 0 else "1",
        }
        attributes.update(overrides)
        county.records.append(Record(attributes, geom))
        return pid

    x0, y0 = ORIGIN
    for r in range(blocks_y):
        for c in range(blocks_x):
            bx = x0 + ROW + c * (block_w + ROW)
            by = y0 + ROW + r * (block_h + ROW)
            south, north = _ew(r), _ew(r + 1)
            west, east = _ns(c), _ns(c + 1)
            for row in (0, 1):
                for k in range(lots):
                    lot = box(bx + k * width, by + row * DEPTH, bx + (k + 1) * width,
                              by + (row + 1) * DEPTH)  # fmt: skip
                    ew_street, ew_side = (south, "N") if row == 0 else (north, "S")
                    ew_number = 100 * (c + 1) + 2 * k + (0 if row == 0 else 1)
                    ns_number = 100 * (r + 1) + 2 * row + (1 if k == 0 else 0)
                    front = (ew_street, ew_side, round(lot_ft, 1))
                    corner_west, corner_east = k == 0, k == lots - 1
                    # Rear lots: the middle lot of every other block's south row, split in depth.
                    if row == 0 and k == lots // 2 and (r + c) % 2 == 1:
                        front_lot = box(bx + k * width, by, bx + (k + 1) * width, by + 70 * FT)
                        rear_lot = box(bx + k * width, by + 70 * FT, bx + (k + 1) * width,
                                       by + DEPTH)  # fmt: skip
                        pid = add(front_lot, ew_number, ew_street)
                        county.expected[pid] = [front]
                        county.lots[(r, c, row, k)] = pid
                        pid = add(
                            rear_lot, ew_number, ew_street, SITEADRESS=f"{ew_number}R {ew_street}"
                        )
                        county.expected[pid] = []
                        county.lots[(r, c, row, 100 + k)] = pid
                        continue
                    # Condominiums: one building in block (1, 1) without a common-element
                    # record, one in block (2, 3) with one.
                    if row == 1 and k == 2 and (r, c) in {(1, 1), (2, 3)}:
                        units = []
                        if (r, c) == (2, 3):
                            holder = add(
                                lot, ew_number, ew_street,
                                OWNERNME1="MAPLE COURT CONDOMINIUM ASSN", OWNERNME2="",
                                PSTLADRESS=f"{ew_number} {ew_street} CLYMAN WI 53016",
                            )  # fmt: skip
                        for u in range(1, 5):
                            units.append(add(lot, ew_number, ew_street, unit=str(u)))
                        if (r, c) == (1, 1):
                            holder = units.pop(0)
                        county.expected[holder] = [front]
                        county.condo_holders[holder] = units
                        for unit_id in units:
                            county.expected[unit_id] = []
                        county.lots[(r, c, row, k)] = holder
                        continue
                    if row == 0 and corner_west:  # addressed on the west north-south street
                        pid = add(lot, ns_number, west)
                        county.expected[pid] = [(west, "E", 130.0), (south, "N", round(lot_ft, 1))]
                    elif row == 1 and corner_east:  # addressed on the east north-south street
                        pid = add(lot, ns_number, east)
                        county.expected[pid] = [(east, "W", 130.0), (north, "S", round(lot_ft, 1))]
                    else:
                        pid = add(lot, ew_number, ew_street)
                        county.expected[pid] = [front]
                        if corner_west:
                            county.expected[pid].append((west, "E", 130.0))
                        elif corner_east:
                            county.expected[pid].append((east, "W", 130.0))
                    county.lots[(r, c, row, k)] = pid
    # Bad records, off the grid to the south so they leave no hole in it.
    far = y0 - 500
    spot = iter(range(10))

    def off_grid() -> BaseGeometry:
        i = next(spot)
        return box(x0 + i * 30, far, x0 + i * 30 + 20, far + 40)

    pid = add(off_grid(), 1, "MAIN ST", SITEADRESS="", ADDNUM="")
    county.expected_rejects[pid] = "no site address"
    pid = add(None, 901, "MAIN ST")
    county.expected_rejects[pid] = "no outline"
    trust = "THE JOHNSON FAMILY IRREVOCABLE LIVING TRUST DATED MARCH 3 2004"
    pid = add(off_grid(), 903, "MAIN ST", OWNERNME1=trust)
    county.expected_rejects[pid] = "window envelope"
    pid = add(off_grid(), 905, "MAIN ST", PSTLADRESS="SOMEWHERE ON THE FARM")
    county.expected_rejects[pid] = "cannot be split"
    dup = add(off_grid(), 907, "MAIN ST")
    add(off_grid(), 909, "MAIN ST", parcel_id=dup)
    county.expected_rejects[dup] = "appears 2 times"
    return county


def next_year(county: County) -> tuple[County, dict[str, Any]]:
    """The following year's file: two sales, one changed mailing address, a split
    (one lot into two new parcels) and a parcel gone (a rear lot), with what changed."""
    records = [Record(dict(r.attributes), r.geometry) for r in county.records]
    new = County(records, dict(county.expected), dict(county.expected_rejects))
    plain = [
        pid for key, pid in sorted(county.lots.items())
        if key[3] < 100 and len(county.expected[pid]) == 1 and pid not in county.condo_holders
    ]  # fmt: skip
    sold, moved, split = plain[1:3], plain[5], plain[9]
    for i, pid in enumerate(sold):
        record = new.by_id(pid)
        record.attributes.update(
            OWNERNME1=f"NEWCOMER {GIVEN[i]}", OWNERNME2="",
            PSTLADRESS=f"{record.attributes['SITEADRESS']} CLYMAN WI 53016",
        )  # fmt: skip
    new.by_id(moved).attributes["PSTLADRESS"] = "PO BOX 777 CLYMAN WI 53016"
    old = new.by_id(split)
    records.remove(old)
    assert old.geometry is not None
    minx, miny, maxx, maxy = old.geometry.bounds
    mid = (minx + maxx) / 2
    halves = []
    for j, part in enumerate((box(minx, miny, mid, maxy), box(mid, miny, maxx, maxy))):
        attributes = dict(old.attributes)
        attributes["PARCELID"] = f"{split[:-3]}{j + 1:03d}"
        attributes["TAXPARCELID"] = "206" + attributes["PARCELID"][4:].replace("-", "")
        attributes["SITEADRESS"] = f"{old.attributes['SITEADRESS']} {'AB'[j]}"
        records.append(Record(attributes, part))
        halves.append(attributes["PARCELID"])
        street, side, length = county.expected[split][0]
        new.expected[attributes["PARCELID"]] = [(street, side, round(length / 2, 1))]
    del new.expected[split]
    gone = next(pid for key, pid in sorted(county.lots.items()) if key[3] >= 100)
    records.remove(new.by_id(gone))
    del new.expected[gone]
    new.lots = {k: v for k, v in county.lots.items() if v not in {split, gone}}
    new.condo_holders = dict(county.condo_holders)
    return new, {"sold": sold, "moved": moved, "split": split, "halves": halves, "gone": gone}


# -- writers -----------------------------------------------------------------------


@functools.cache
def _transformer(epsg: int) -> Transformer:
    return Transformer.from_crs(3071, epsg, always_xy=True)


def _project(county: County, epsg: int) -> list[Record]:
    if epsg == 3071:
        return county.records
    transformer = _transformer(epsg)

    def move(coords: Any) -> Any:
        import numpy as np

        x, y = transformer.transform(coords[:, 0], coords[:, 1])
        return np.column_stack([x, y])

    return [
        replace(r, geometry=None if r.geometry is None else shapely.transform(r.geometry, move))
        for r in county.records
    ]


def write_geojson(county: County, path: Path, epsg: int = 3071) -> Path:
    """A FeatureCollection; EPSG:3071 says so in a ``crs`` member (as ArcGIS exports do)."""
    data: dict[str, Any] = {"type": "FeatureCollection", "features": []}
    if epsg != 4326:
        data["crs"] = {"type": "name", "properties": {"name": f"urn:ogc:def:crs:EPSG::{epsg}"}}
    for r in _project(county, epsg):
        data["features"].append({
            "type": "Feature",
            "properties": r.attributes,
            "geometry": None if r.geometry is None else mapping(r.geometry),
        })  # fmt: skip
    path.write_text(json.dumps(data), "utf-8")
    return path


def write_shapefile(county: County, path: Path, epsg: int = 3071) -> Path:
    """``path`` (.shp) with its .shx, .dbf and .prj (ESRI WKT, as counties ship it)."""
    with shapefile.Writer(str(path), shapeType=shapefile.POLYGON) as writer:
        for name in FIELDS:
            writer.field(name[:10], "C", size=80)  # dBASE names hold 10 characters
        for r in _project(county, epsg):
            if r.geometry is None:
                writer.null()
            else:
                assert isinstance(r.geometry, Polygon)
                writer.poly([list(r.geometry.exterior.coords)[::-1]])  # clockwise outer ring
            writer.record(*(r.attributes.get(f, "") for f in FIELDS))
    path.with_suffix(".prj").write_text(CRS.from_epsg(epsg).to_wkt("WKT1_ESRI"), "utf-8")
    return path


def write_zip(county: County, path: Path, epsg: int = 3071) -> Path:
    folder = path.parent / (path.stem + "_shp")
    folder.mkdir(exist_ok=True)
    shp = write_shapefile(county, folder / "V11_Parcels_Dodge.shp", epsg)
    with zipfile.ZipFile(path, "w") as archive:
        for suffix in (".shp", ".shx", ".dbf", ".prj"):
            archive.write(shp.with_suffix(suffix), shp.with_suffix(suffix).name)
    return path


def write_csv(county: County, path: Path, epsg: int = 3071) -> Path:
    """A spreadsheet export: the attributes and a WKT column (no coordinate system in it)."""
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow([*FIELDS, "WKT"])
        for r in _project(county, epsg):
            wkt = "" if r.geometry is None else shapely.to_wkt(r.geometry, rounding_precision=8)
            writer.writerow([*(r.attributes.get(f, "") for f in FIELDS), wkt])
    return path


def raw_file(county: County, name: str = "county.geojson") -> Any:
    """The records as the reader would hand them over (EPSG:3071), without a file."""
    from sidewalk.registry.county import RawFile, RawRecord

    records = [
        RawRecord(i, dict(r.attributes), r.geometry) for i, r in enumerate(county.records, 1)
    ]
    return RawFile(records, CRS.from_epsg(3071), name)
