"""A county parcel file in the Wisconsin Statewide Parcel Map schema, read and checked.

Wisconsin counties publish parcels in the State Cartographer's V-series schema:
``PARCELID`` (the county's parcel id), ``TAXPARCELID`` (the number on the tax
roll), ``OWNERNME1``/``OWNERNME2`` (primary and secondary owner names),
``PSTLADRESS`` (the owner's full mailing address in one field, city, state and
ZIP included), ``SITEADRESS`` (the parcel's full street address, without place
or ZIP), its parts ``ADDNUM``, ``PREFIX``, ``STREETNAME``, ``STREETTYPE``,
``SUFFIX``, ``UNITID``, then ``PLACENAME`` (the municipality), ``ZIPCODE``,
``CONAME`` and ``PROPCLASS`` (class of property: 1 residential, 2 commercial, …).

``read_parcel_file`` (I/O) turns GeoJSON, a Shapefile (``.shp`` with its
``.dbf``/``.prj``, or a ``.zip`` of them) or a CSV with a WKT column into raw
records and the file's coordinate system; ``parse_records`` (pure) turns those
into parcels in WGS 84 and the records it refuses, each with the reason in
the words of the person importing.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import io
import re
import zipfile
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from pyproj import CRS, Transformer
    from shapely.geometry.base import BaseGeometry

REQUIRED: Final = ("PARCELID", "OWNERNME1", "PSTLADRESS", "SITEADRESS", "STREETNAME")
OPTIONAL: Final = (
    "TAXPARCELID", "OWNERNME2", "ADDNUM", "PREFIX", "STREETTYPE", "SUFFIX", "UNITID",
    "PLACENAME", "ZIPCODE", "CONAME", "PROPCLASS",
)  # fmt: skip
# A Shapefile's field names hold 10 characters: TAXPARCELID arrives as TAXPARCELI.
_TRUNCATED: Final = {n[:10]: n for n in (*REQUIRED, *OPTIONAL) if len(n) > 10}
GEOMETRY_COLUMNS: Final = ("WKT", "GEOMETRY", "SHAPE", "THE_GEOM", "GEOM")
WGS84: Final = "EPSG:4326"

# The window envelope the notices are mailed in (alerts/pdf.py, which this layer
# cannot import): name and address in at most 5 lines of 10.5-pt DejaVu Sans,
# each at most 3.75 in wide.
ENVELOPE_LINES: Final = 5
ENVELOPE_WIDTH_PT: Final = 3.75 * 72
ENVELOPE_FONT_PT: Final = 10.5
# DejaVu Sans advance widths (1/1000 em) for printable ASCII; other letters count as "M".
_WIDTHS: Final = dict(
    zip(
        map(chr, range(32, 127)),
        (318, 401, 460, 838, 636, 950, 780, 275, 390, 390, 500, 838, 318, 361, 318, 337, 636,
         636, 636, 636, 636, 636, 636, 636, 636, 636, 337, 337, 838, 838, 838, 531, 1000, 684,
         686, 698, 770, 632, 575, 775, 752, 295, 295, 656, 557, 863, 748, 787, 603, 787, 695,
         635, 611, 732, 684, 989, 685, 611, 685, 390, 337, 390, 838, 500, 500, 613, 635, 550,
         635, 615, 352, 635, 634, 278, 278, 579, 278, 974, 634, 612, 635, 635, 411, 521, 392,
         634, 592, 818, 592, 592, 525, 636, 337, 636, 838),
        strict=True,
    )
)  # fmt: skip


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STREET_TYPES: Final = _words(
    "ALY ALLEY AVE AVENUE BLVD BOULEVARD CIR CIRCLE CT COURT CV DR DRIVE EXPY HWY HIGHWAY"
    " LN LANE LOOP PASS PATH PIKE PKWY PARKWAY PL PLACE PLZ PLAZA PT RD ROAD RUN SQ ST"
    " STREET TER TERRACE TRL TRAIL WAY XING"
)
_DIRECTIONS: Final = _words("N S E W NE NW SE SW")
_UNIT_WORDS: Final = _words("APT UNIT STE SUITE LOT RM ROOM FL BLDG TRLR # SPC")
_ROUTE_WORDS: Final = _words("HWY HIGHWAY ROAD RD CTY COUNTY RR ROUTE")
_STATE_ZIP: Final = re.compile(
    r"^(?P<head>.*?)[\s,]+(?P<state>[A-Z]{2})[\s,]+(?P<zip>\d{5}(?:-?\d{4})?)$"
)
_PO_BOX: Final = re.compile(r"\b(?:P\.?\s?O\.?\s+)?BOX\s+\S+$")


# What a field may hold. A NUL cannot be stored by PostgreSQL (the whole import failed
# there) and SQLite would keep it; bidi embeddings, overrides and isolates make the screen
# and the mailed letter show a name in different orders; other control characters print
# as nothing or garbage. TAB, CR and LF are spacing and are read as a space.
_BIDI: Final = frozenset(
    map(chr, [*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C])
)
_SPACING: Final = frozenset("\t\n\r")
# The longest value each field is taken with (characters): a county's real addresses,
# names and numbers are well within these, a 3,000-character address is not an address.
FIELD_MAX: Final = {
    "PARCELID": 40, "TAXPARCELID": 40, "SITEADRESS": 100, "PLACENAME": 60,
    "OWNERNME1": 100, "OWNERNME2": 100, "PSTLADRESS": 200, "STREETNAME": 60,
    "ADDNUM": 20, "PREFIX": 10, "STREETTYPE": 20, "SUFFIX": 10, "UNITID": 20,
    "ZIPCODE": 10, "CONAME": 40, "PROPCLASS": 20,
}  # fmt: skip
FIELD_WORDS: Final = {
    "PARCELID": "parcel number", "TAXPARCELID": "tax parcel number",
    "SITEADRESS": "site address", "PLACENAME": "place", "OWNERNME1": "owner name",
    "OWNERNME2": "second owner name", "PSTLADRESS": "owner's mailing address",
    "STREETNAME": "street name", "ADDNUM": "house number", "PREFIX": "street prefix",
    "STREETTYPE": "street type", "SUFFIX": "street suffix", "UNITID": "unit",
    "ZIPCODE": "ZIP code", "CONAME": "county", "PROPCLASS": "class of property",
}  # fmt: skip


def _bad_character(text: str) -> str | None:
    """Words for the first character of ``text`` no record may carry, or None."""
    for ch in text:
        code = ord(ch)
        if code == 0:
            return "a NUL character (U+0000)"
        if ch in _BIDI:
            return (
                f"a text-direction control (U+{code:04X}), which would show it in one order"
                " on screen and another on the letter"
            )
        if (code < 0x20 and ch not in _SPACING) or 0x7F <= code <= 0x9F:
            return f"a control character (U+{code:04X}), which does not print"
    return None


def text_problem(attributes: Mapping[str, str]) -> tuple[str, str] | None:
    """(field, reason) for the first field the registry cannot take as text, or None."""
    for name, longest in FIELD_MAX.items():
        value = attributes.get(name, "")
        label = f"the {FIELD_WORDS[name]} ({name})"
        bad = _bad_character(value)
        if bad is not None:
            return name, f"{label} holds {bad}; the county's file must be corrected"
        if len(value) > longest:
            size = f"{len(value):,} characters long"
            return name, f"{label} is {size}; at most {longest} are taken"
    return None


class ParcelFileError(Exception):
    """The file cannot be imported at all (said in one line, naming what to fix)."""


@dataclass(frozen=True)
class RawRecord:
    """One record as the file holds it: attributes (names upper-cased) and geometry."""

    number: int  # 1-based, as a person counts records in the file
    attributes: Mapping[str, str]
    geometry: BaseGeometry | None


@dataclass(frozen=True)
class RawFile:
    records: list[RawRecord]
    crs: CRS
    source: str  # the file's name, recorded with each parcel
    crs_said: str = "the file says"  # whence the coordinate system: the file, --crs, neither


@dataclass(frozen=True)
class Parcel:
    """A parcel the registry can take, geometry in WGS 84 (longitude, latitude)."""

    record: int
    parcel_id: str
    tax_parcel_id: str | None
    owner_name: str
    second_owner: str | None
    mailing_lines: tuple[str, ...]  # street or PO box, then "CITY ST ZIP"
    site_address: str
    street: str  # "N MAIN ST": prefix, name, type, suffix
    unit: str | None
    place: str | None
    zip_code: str | None
    county: str | None
    zone: str  # "residential" | "commercial"
    geometry: BaseGeometry

    @property
    def owner_address_lines(self) -> tuple[str, ...]:
        """What goes under the owner's name in the window: the second owner, then the address."""
        return ((self.second_owner,) if self.second_owner else ()) + self.mailing_lines

    @property
    def owner_id(self) -> str:
        """Stable: the same name and mailing address is the same owner, on every parcel."""
        return owner_id(self.owner_name, self.owner_address_lines)


@dataclass(frozen=True)
class Reject:
    record: int
    parcel_id: str | None
    site_address: str | None
    reason: str

    def describe(self) -> str:
        what = self.site_address or (f"parcel {self.parcel_id}" if self.parcel_id else "")
        return f"record {self.record}" + (f" ({what})" if what else "") + f": {self.reason}"


@dataclass
class ParcelFile:
    parcels: list[Parcel] = field(default_factory=list)
    rejects: list[Reject] = field(default_factory=list)
    crs_name: str = WGS84
    source: str = ""
    # Outlines of records refused for their text (vacant land with no address, an
    # owner missing): still ground no walk runs across, so a neighbour's side
    # against them is not open to a street.
    refused_ground: list[Any] = field(default_factory=list)


def owner_id(name: str, address_lines: Sequence[str]) -> str:
    """``owner-`` and a digest of the normalised name and mailing address."""
    text = "|".join(" ".join(p.upper().split()) for p in (name, *address_lines))
    return "owner-" + hashlib.sha256(text.encode()).hexdigest()[:16]


def text_width_pt(text: str, size_pt: float = ENVELOPE_FONT_PT) -> float:
    """The printed width of ``text`` in the notices' font."""
    return sum(_WIDTHS.get(c, 863) for c in text) * size_pt / 1000


def fits_envelope(lines: Sequence[str]) -> str | None:
    """``None`` when the address block fits the window; else why not, in words."""
    if len(lines) > ENVELOPE_LINES:
        return (
            f"name and mailing address take {len(lines)} lines; a window envelope shows"
            f" {ENVELOPE_LINES}"
        )
    for line in lines:
        if text_width_pt(line) > ENVELOPE_WIDTH_PT:
            return f"'{line}' is wider than a window envelope's address block (3.75 in)"
    return None


def split_mailing_address(text: str) -> tuple[str, ...] | None:
    """``"PO BOX 12 CLYMAN WI 53016"`` → ``("PO BOX 12", "CLYMAN WI 53016")``; None when
    the street part and the city cannot be told apart (the field has no separators)."""
    clean = " ".join(text.upper().replace(" ,", ",").split())
    match = _STATE_ZIP.match(clean)
    if match is None:
        return None
    head, state, zip_code = match["head"].strip(" ,"), match["state"], match["zip"]
    if "," in head:
        street, city = (p.strip() for p in head.rsplit(",", 1))
    else:
        tokens = head.split()
        end = _street_end(tokens)
        street, city = " ".join(tokens[:end]), " ".join(tokens[end:])
    if not street or not city or any(c.isdigit() for c in city):
        return None
    if len(zip_code) == 9:
        zip_code = f"{zip_code[:5]}-{zip_code[5:]}"
    lines = [street]
    box = _PO_BOX.search(street)
    if box is not None and box.start() > 0:
        # A street and a PO box: the box is the delivery line, just above the city.
        lines = [street[: box.start()].strip(), box.group(0)]
    return (*lines, f"{city} {state} {zip_code}")


def _street_end(tokens: Sequence[str]) -> int:
    """The index just past the street, box or unit part of a mailing address."""
    end = 0
    i = 0
    while i < len(tokens):
        token = tokens[i].rstrip(".,")
        following = tokens[i + 1] if i + 1 < len(tokens) else None
        if token in STREET_TYPES and i > 0:
            end = i + 1
            if following in _DIRECTIONS:
                end = i + 2
        if token in _ROUTE_WORDS and following is not None:
            end = max(end, i + 2)  # HWY 16, COUNTY ROAD WW, RR 2
        if (token in _UNIT_WORDS or token == "BOX") and following is not None:
            end = max(end, i + 2)
        if token.startswith("#") and len(token) > 1:
            end = max(end, i + 1)
        i += 1
    return end


# -- bounds on what one import reads -------------------------------------------------
#
# A county's file is the largest a village ever imports: Clyman has about 800 parcels,
# a county about 100,000. 500,000 records is five counties' worth, room to spare; what
# one import holds reading and checking that many (about 2.3 GB, from 460 MB for
# 100,000) stays under MAX_MEMORY_BYTES, and more is not a village's parcel file.
MAX_RECORDS: Final = 500_000
# A county's Shapefile takes about 1 KB of attributes and 1 KB of outline per parcel:
# 500,000 records in about 1 GB. One file of the layer (.dbf, .shp) at most half of it.
MAX_TOTAL_BYTES: Final = 1 << 30  # a CSV or Shapefile on disk, or a zip's layer unpacked
MAX_MEMBER_BYTES: Final = 512 << 20  # one file of a Shapefile, on disk or in a zip
# A .dbf is mostly space-padded text and deflates 10 to 30 times; deflate itself tops out
# near 1,000. A member unpacking to over 100 times its packed size is a zip bomb. Small
# members are exempt (a 2 KB .prj of spaces is no threat).
MAX_RATIO: Final = 100
RATIO_FROM_BYTES: Final = 1 << 20
# The zip's directory is read whole before anything in it: a county zip holds a few
# layers of 4 to 8 files each.
MAX_ZIP_MEMBERS: Final = 1000
# GeoJSON is streamed feature by feature (ijson), so its bound is a parcel file's
# (MAX_TOTAL_BYTES); a county's is about 150 MB for 100,000 parcels. Parsed whole, the
# json module built every feature at once, several times the file in memory.
MAX_GEOJSON_BYTES: Final = MAX_TOTAL_BYTES
# The memory the import's process holds (resident set), looked at every MEMORY_EVERY
# records while it reads and checks them, every DERIVE_CHUNK parcels while it finds
# their frontages (frontages.py) and every CHUNK parcels while it writes the registry
# (apply.py): a file that would take the server's memory stops there, in one line,
# instead of in the kernel's OOM killer. The default of the
# setting registry.import_memory_mb (a server's memory varies): a county of 100,000
# parcels holds about 460 MB by the end of the checks (1.0 GB at the peak of the whole
# dry run), so 500,000 stay under it.
MAX_MEMORY_BYTES: Final = 4 << 30
MEMORY_EVERY: Final = 1000


def _mb(size: int) -> str:
    return f"{size / 2**20:,.0f} MB" if size >= 2**20 else f"{size:,} bytes"


def resident_memory() -> int:
    """The bytes of memory this process holds now (its resident set); where there is no
    /proc, its peak so far."""
    import os
    import resource
    import sys

    try:
        pages = Path("/proc/self/statm").read_text().split()[1]
        return int(pages) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, IndexError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return int(peak) if sys.platform == "darwin" else int(peak) * 1024  # macOS: bytes


def check_memory(name: str, limit: int, where: str) -> None:
    """Refuse, in one line naming the limit, when this process holds more than ``limit``
    bytes: the check of every phase of the import (reading, checking, finding the
    frontages, writing the registry). ``where``: "at record 1,000", "finding the
    frontages, at parcel 2,000 of 51,673"."""
    used = resident_memory()
    if used > limit:
        held = _mb(used)
        if held == _mb(limit):  # not "holds 320 MB, more than the 320 MB"
            held = f"{used / 2**20:,.1f} MB"
        raise ParcelFileError(
            f"{name + ': ' if name else ''}the import holds {held} of memory {where},"
            f" more than the {_mb(limit)} the import may use (registry.import_memory_mb)"
        )


@dataclass
class _Bound:
    """Counts one file's records as they are read; refuses past the bounds, in one line."""

    name: str
    memory_limit: int = MAX_MEMORY_BYTES

    def count(self, records: int, *, declared: bool = False) -> None:
        if records > MAX_RECORDS:
            said = "says it holds" if declared else "holds"
            raise ParcelFileError(
                f"{self.name} {said} {records:,} records, more than the {MAX_RECORDS:,} one"
                " import reads (a county's parcel file holds about 100,000)"
            )

    def record(self, number: int) -> None:
        self.count(number)
        if number % MEMORY_EVERY == 0:
            self.memory(number)

    def memory(self, number: int) -> None:
        check_memory(self.name, self.memory_limit, f"at record {number:,}")

    def size(self, what: str, size: int, limit: int, why: str) -> None:
        if size > limit:
            raise ParcelFileError(
                f"{self.name}: {what} is {_mb(size)}, more than the {_mb(limit)} {why}"
            )


# -- reading the file (I/O) --------------------------------------------------------


def read_parcel_file(
    path: Path,
    *,
    layer: str | None = None,
    crs: str | None = None,
    memory_limit: int = MAX_MEMORY_BYTES,
) -> RawFile:
    """The records and coordinate system of a GeoJSON, Shapefile (or .zip) or CSV file.

    ``crs`` (``EPSG:3071``, a number, or WKT) is the coordinate system when the
    file does not say (CSV, a Shapefile without .prj); given for one that does,
    it wins. CSV and Shapefiles are read record by record; every file is held to
    the bounds above, ``memory_limit`` (bytes) the memory the process may hold.
    Raises ``ParcelFileError`` with one line to show."""
    if not path.exists():
        raise ParcelFileError(f"{path}: no such file")
    suffix = path.suffix.lower()
    bound = _Bound(path.name, memory_limit)
    try:
        if suffix in {".geojson", ".json"}:
            records, file_crs = _read_geojson(path, bound)
        elif suffix == ".shp":
            records, file_crs = _read_shapefile_at(path, bound)
        elif suffix == ".zip":
            records, file_crs = _read_zip(path, layer, bound)
        elif suffix in {".csv", ".txt"}:
            records, file_crs = _read_csv(path, bound)
        else:
            raise ParcelFileError(
                f"{path.name}: not a parcel file this reads (.geojson, .json, .shp, .zip, .csv)"
            )
    except ParcelFileError:
        raise
    except MemoryError as exc:
        raise ParcelFileError(f"{path.name}: the server ran out of memory reading it") from exc
    except (OSError, ValueError, UnicodeDecodeError, zipfile.BadZipFile) as exc:
        raise ParcelFileError(f"{path.name} cannot be read: {_first_line(exc)}") from exc
    except Exception as exc:  # pyshp raises its own ShapefileException and kin
        raise ParcelFileError(f"{path.name} cannot be read: {_first_line(exc)}") from exc
    chosen = crs if crs is not None else file_crs
    said = "--crs says" if crs is not None else "the file says" if file_crs else "no --crs means"
    return RawFile(records, _crs(chosen, path.name), path.name, said)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def _crs(text: str | None, name: str) -> CRS:
    from pyproj import CRS
    from pyproj.exceptions import CRSError

    if text is None:
        return CRS.from_user_input(WGS84)
    value = text.strip()
    if value.isdigit():
        value = f"EPSG:{value}"
    try:
        return CRS.from_user_input(value)
    except CRSError as exc:
        shown = value if len(value) < 60 else value[:57] + "…"
        raise ParcelFileError(
            f"{name}: unknown coordinate system {shown!r}: give it with --crs, e.g. --crs 3071"
        ) from exc


def _upper_keys(attributes: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in attributes.items():
        if value is None:
            text = ""
        elif isinstance(value, float) and value.is_integer():
            text = str(int(value))
        else:
            text = str(value)
        name = str(key).strip().upper()
        out[_TRUNCATED.get(name, name)] = text.strip()
    return out


def _read_geojson(path: Path, bound: _Bound) -> tuple[list[RawRecord], str | None]:
    """Feature by feature (ijson): what the import holds is its records, never the
    file's text or its whole tree of objects."""
    import ijson

    bound.size("the file", path.stat().st_size, MAX_GEOJSON_BYTES, "a parcel file may be")
    try:
        crs_name = _geojson_crs(path)
        records = _geojson_records(path, bound)
        if not records and not isinstance(_geojson_member(path, "features"), list):
            raise ParcelFileError(f"{path.name} is not a GeoJSON FeatureCollection (no features)")
    except ijson.JSONError as exc:
        raise ParcelFileError(f"{path.name} is not GeoJSON: {_first_line(exc)}") from exc
    return records, crs_name


def _geojson_stream(path: Path) -> Any:
    """The file's bytes from past a UTF-8 byte order mark (as ``utf-8-sig`` read it)."""
    handle = path.open("rb")
    if handle.read(3) != b"\xef\xbb\xbf":
        handle.seek(0)
    return handle


def _geojson_member(path: Path, name: str) -> object:
    """The top-level member ``name`` (None: there is none), the file read up to it."""
    import ijson

    with _geojson_stream(path) as handle:
        return next(iter(ijson.items(handle, name, use_float=True)), None)


def _geojson_crs(path: Path) -> str | None:
    """The name of the file's ``crs`` member (GeoJSON 2008, as ArcGIS exports it)."""
    member = _geojson_member(path, "crs")
    if not isinstance(member, dict):
        return None
    return str((member.get("properties") or {}).get("name") or "") or None


def _geojson_records(path: Path, bound: _Bound) -> list[RawRecord]:
    import ijson
    from shapely.geometry import shape

    records = []
    with _geojson_stream(path) as handle:
        features = ijson.items(handle, "features.item", use_float=True)
        for number, feature in enumerate(features, start=1):
            bound.record(number)
            geometry = feature.get("geometry") if isinstance(feature, dict) else None
            properties = feature.get("properties") if isinstance(feature, dict) else None
            geom = None
            if geometry:
                try:
                    geom = shape(geometry)
                except (ValueError, TypeError, AttributeError, KeyError):
                    geom = None
            attributes = properties if isinstance(properties, dict) else {}
            records.append(RawRecord(number, _upper_keys(attributes), geom))
    return records


def _read_shapefile_at(path: Path, bound: _Bound) -> tuple[list[RawRecord], str | None]:
    prj = _optional_sibling(path, ".prj")
    dbf_path = _sibling(path, ".dbf")
    shx_path = _optional_sibling(path, ".shx")
    total = 0
    for part in (path, dbf_path, shx_path, prj):
        if part is not None:
            size = part.stat().st_size
            bound.size(part.name, size, MAX_MEMBER_BYTES, "one file of a Shapefile may be")
            total += size
    bound.size("the Shapefile", total, MAX_TOTAL_BYTES, "a parcel file may be")
    with path.open("rb") as shp, dbf_path.open("rb") as dbf:
        shx = shx_path.open("rb") if shx_path is not None else None
        try:
            records = _read_shapefile(shp, dbf, shx, bound)
        finally:
            if shx is not None:
                shx.close()
    return records, prj.read_text("utf-8", errors="replace") if prj is not None else None


def _sibling(path: Path, suffix: str) -> Path:
    found = _optional_sibling(path, suffix)
    if found is None:
        raise ParcelFileError(
            f"{path.name}: its {suffix} file (the attributes) is missing beside it"
        )
    return found


def _optional_sibling(path: Path, suffix: str) -> Path | None:
    for candidate in (path.with_suffix(suffix), path.with_suffix(suffix.upper())):
        if candidate.exists():
            return candidate
    return None


_EOCD: Final = b"PK\x05\x06"  # a zip's end-of-central-directory record
_ZIP64_LOCATOR: Final = b"PK\x06\x07"
_ZIP64_EOCD: Final = b"PK\x06\x06"


def zip_member_count(path: Path) -> int | None:
    """How many members a zip's own end record says it holds, before its directory is
    read (``zipfile`` builds an object per member); None when there is no end record."""
    with path.open("rb") as handle:
        size = handle.seek(0, io.SEEK_END)
        tail_size = min(size, 22 + 0xFFFF + 20)  # the record, its comment, a zip64 locator
        handle.seek(size - tail_size)
        tail = handle.read(tail_size)
        at = tail.rfind(_EOCD)
        if at < 0 or at + 22 > len(tail):
            return None
        count = int.from_bytes(tail[at + 10 : at + 12], "little")
        locator = tail[at - 20 : at] if at >= 20 else b""
        if count == 0xFFFF and locator.startswith(_ZIP64_LOCATOR):
            handle.seek(int.from_bytes(locator[8:16], "little"))
            record = handle.read(56)
            if record.startswith(_ZIP64_EOCD):
                count = int.from_bytes(record[32:40], "little")
        return count


def _read_zip(path: Path, layer: str | None, bound: _Bound) -> tuple[list[RawRecord], str | None]:
    import shutil
    import tempfile

    bound.size("the zip", path.stat().st_size, MAX_TOTAL_BYTES, "a parcel file may be")
    members = zip_member_count(path)
    if members is not None and members > MAX_ZIP_MEMBERS:
        raise ParcelFileError(
            f"{path.name} holds {members:,} files, more than the {MAX_ZIP_MEMBERS:,} a"
            " parcel zip may hold"
        )
    with zipfile.ZipFile(path) as archive:
        names = archive.namelist()
        layers = {Path(n).stem: n for n in names if n.lower().endswith(".shp")}
        if not layers:
            raise ParcelFileError(f"{path.name} holds no Shapefile (.shp)")
        if layer is None:
            if len(layers) > 1:
                raise ParcelFileError(
                    f"{path.name} holds several layers ({', '.join(sorted(layers))}):"
                    " choose one with --layer"
                )
            (layer,) = layers
        if layer not in layers:
            raise ParcelFileError(
                f"{path.name} has no layer {layer!r} (it has {', '.join(sorted(layers))})"
            )
        base = layers[layer][:-4]
        by_name = {n.lower(): n for n in names}
        chosen = {
            suffix: archive.getinfo(by_name[(base + suffix).lower()])
            for suffix in (".shp", ".shx", ".dbf", ".prj")
            if (base + suffix).lower() in by_name
        }
        if ".dbf" not in chosen:
            raise ParcelFileError(f"{path.name}: layer {layer!r} has no .dbf (the attributes)")
        _check_members(bound, list(chosen.values()))
        # Unpacked to disk, counted as it goes, then read record by record from there;
        # the files get fixed names, never the zip's own (which may hold "../").
        with tempfile.TemporaryDirectory(prefix="sidewalk-import-") as folder:
            for suffix, info in chosen.items():
                target = Path(folder, "layer" + suffix)
                with archive.open(info) as source, target.open("wb") as out:
                    shutil.copyfileobj(source, out, 1 << 20)
                    unpacked = out.tell()
                bound.size(info.filename, unpacked, MAX_MEMBER_BYTES, "a file of a zip may be")
            return _read_shapefile_at(Path(folder, "layer.shp"), bound)


def _check_members(bound: _Bound, infos: Sequence[zipfile.ZipInfo]) -> None:
    """The layer's files as the zip's directory declares them: each, their sum, the ratio."""
    for info in infos:
        name = info.filename
        if info.file_size > RATIO_FROM_BYTES:
            ratio = info.file_size / max(info.compress_size, 1)
            if ratio > MAX_RATIO:
                raise ParcelFileError(
                    f"{bound.name}: {name} unpacks to {ratio:,.0f} times its packed size"
                    f" ({_mb(info.compress_size)} to {_mb(info.file_size)}), more than the"
                    f" {MAX_RATIO} times a parcel file packs: a zip bomb"
                )
        bound.size(f"{name} unpacked", info.file_size, MAX_MEMBER_BYTES, "a file of a zip may be")
    total = sum(i.file_size for i in infos)
    bound.size("the layer unpacked", total, MAX_TOTAL_BYTES, "a parcel file may be")


def _read_shapefile(shp: Any, dbf: Any, shx: Any, bound: _Bound) -> list[RawRecord]:
    import shapefile
    from shapely.geometry import shape

    reader = shapefile.Reader(shp=shp, dbf=dbf, shx=shx, encoding="utf-8", encodingErrors="replace")
    bound.count(reader.numRecords, declared=True)
    names = [f[0] for f in reader.fields[1:]]
    records = []
    for number, item in enumerate(reader.iterShapeRecords(), start=1):
        bound.record(number)
        geom = None
        if item.shape.shapeType != shapefile.NULL and item.shape.points:
            try:
                geom = shape(item.shape.__geo_interface__)
            except (ValueError, TypeError, AttributeError, KeyError):
                geom = None
        records.append(
            RawRecord(number, _upper_keys(dict(zip(names, item.record, strict=True))), geom)
        )
    return records


def _read_csv(path: Path, bound: _Bound) -> tuple[list[RawRecord], str | None]:
    bound.size("the file", path.stat().st_size, MAX_TOTAL_BYTES, "a parcel file may be")
    try:
        return _read_csv_as(path, bound, "utf-8-sig", "strict"), None
    except UnicodeDecodeError:
        return _read_csv_as(path, bound, "cp1252", "replace"), None


def csv_records(path: Path) -> int:
    """The records of a CSV below its header, counted in its bytes, nothing kept: a line
    ends a record unless an odd number of quote marks has opened a field across it
    (a doubled quote inside a field counts twice), and a blank line is none."""
    records, inside = 0, False
    with path.open("rb") as handle:
        for line in handle:
            if line.count(b'"') % 2:
                inside = not inside
            if not inside and line.strip():
                records += 1
    return max(records - 1, 0)


def _read_csv_as(path: Path, bound: _Bound, encoding: str, errors: str) -> list[RawRecord]:
    """Row by row: counted first, then read."""
    from shapely import wkt
    from shapely.errors import ShapelyError

    bound.count(csv_records(path))
    with path.open(encoding=encoding, errors=errors, newline="") as handle:
        reader = csv.DictReader(handle)
        header = [h.strip().upper() for h in reader.fieldnames or []]
        column = next((c for c in GEOMETRY_COLUMNS if c in header), None)
        if column is None:
            raise ParcelFileError(
                f"{path.name}: no geometry column (one named {', '.join(GEOMETRY_COLUMNS)},"
                " holding WKT such as POLYGON ((…)))"
            )
        records = []
        for number, row in enumerate(reader, start=1):
            bound.record(number)
            attributes = _upper_keys({k: v for k, v in row.items() if k is not None})
            geom = None
            shape_text = attributes.pop(column, "")
            if shape_text:
                try:
                    geom = wkt.loads(shape_text)
                except (ShapelyError, ValueError):
                    geom = None
            records.append(RawRecord(number, attributes, geom))
    return records


# -- checking the records (pure) ---------------------------------------------------


def missing_columns(records: Iterable[RawRecord]) -> list[str]:
    """Required V-series fields no record has (a file with another schema)."""
    seen: set[str] = set()
    for record in records:
        seen.update(record.attributes)
        if seen.issuperset(REQUIRED):
            return []
    return [c for c in REQUIRED if c not in seen]


def to_wgs84(
    geometries: Sequence[BaseGeometry | None],
    crs: CRS,
    *,
    source: str = "",
    said: str = "the file says",
) -> list[BaseGeometry | None]:
    """Every geometry in longitude/latitude; raises ``ParcelFileError`` when the
    coordinates cannot be in ``crs``: degrees labelled metres, feet read as degrees,
    a wrong --crs. ``said`` is whence ``crs`` came, for the refusal."""
    import numpy as np
    import shapely

    present = [g for g in geometries if g is not None]
    if not present:
        return list(geometries)
    where = f"{source}: " if source else ""
    if not crs.is_geographic:
        raw = np.asarray(shapely.bounds(np.asarray(present, dtype=object)), dtype=float)
        if (
            np.all(np.isfinite(raw))
            and np.all(np.abs(raw[:, [0, 2]]) <= 180)
            and np.all(np.abs(raw[:, [1, 3]]) <= 90)
        ):
            # Metres or feet this small put a whole village in a few yards' square: every
            # parcel would read as a condominium unit.
            raise ParcelFileError(
                f"{where}these look like longitude/latitude degrees (the first outline starts"
                f" at {raw[0, 0]:.5f}, {raw[0, 1]:.5f}), but {said} {crs_label(crs)}, whose"
                f" coordinates are {_unit_words(crs)}: if they are longitude/latitude,"
                " import it with --crs 4326"
            )
    if crs.equals(WGS84):
        moved = present
    else:
        transformer = _to_wgs84(crs.to_wkt())

        def move(coords: Any) -> Any:
            x, y = transformer.transform(coords[:, 0], coords[:, 1])
            return np.column_stack([x, y])

        moved = list(shapely.transform(np.asarray(present, dtype=object), move))
    bounds = np.asarray(shapely.bounds(np.asarray(moved, dtype=object)), dtype=float)
    if (
        not np.all(np.isfinite(bounds))
        or np.any(np.abs(bounds[:, [0, 2]]) > 180)
        or np.any(np.abs(bounds[:, [1, 3]]) > 90)
    ):
        raise ParcelFileError(
            f"{where}the coordinates do not fit the coordinate system {crs.name!r}: give the"
            " file's with --crs (e.g. --crs 3071 for Wisconsin Transverse Mercator)"
        )
    it = iter(moved)
    return [None if g is None else next(it) for g in geometries]


def crs_label(crs: CRS) -> str:
    """``EPSG:3071 (NAD83(HARN) / Wisconsin Transverse Mercator)``, or its name alone."""
    code = crs.to_epsg(min_confidence=70)
    return f"EPSG:{code} ({crs.name})" if code is not None else crs.name


def _unit_words(crs: CRS) -> str:
    unit = crs.axis_info[0].unit_name if crs.axis_info else "metre"
    return {"metre": "metres", "foot": "feet", "US survey foot": "US survey feet"}.get(unit, unit)


# Outlines within this many degrees (about 5 km) of a coordinate system's area of use
# count as inside: the published areas are drawn along the state line.
AREA_MARGIN_DEG: Final = 0.05


def area_of_use(crs: CRS) -> tuple[str, tuple[float, float, float, float]] | None:
    """The area ``crs`` is made for (name; west, south, east, north in degrees), also for
    a .prj in ESRI's WKT (which carries no area) when it matches an EPSG system."""
    from pyproj import CRS as Crs

    area = crs.area_of_use
    if area is None:
        code = crs.to_epsg(min_confidence=70)
        area = None if code is None else Crs.from_epsg(code).area_of_use
    if area is None or area.west > area.east:  # none, or across the date line
        return None
    return area.name.rstrip(". "), (area.west, area.south, area.east, area.north)


def outside_area(geometries: Sequence[BaseGeometry | None], crs: CRS) -> dict[int, str]:
    """Index → where it lies ("-96.00012, 40.43051"), for each outline (in WGS 84)
    outside the area of use of ``crs``, the system the file's coordinates were in."""
    import numpy as np
    import shapely

    found = area_of_use(crs)
    present = [(i, g) for i, g in enumerate(geometries) if g is not None]
    if found is None or not present:
        return {}
    west, south, east, north = found[1]
    m = AREA_MARGIN_DEG
    b = np.asarray(shapely.bounds(np.asarray([g for _, g in present], dtype=object)), dtype=float)
    out = (
        (b[:, 0] < west - m) | (b[:, 2] > east + m) | (b[:, 1] < south - m) | (b[:, 3] > north + m)
    )
    return {present[k][0]: f"{b[k, 0]:.5f}, {b[k, 1]:.5f}" for k in np.flatnonzero(out)}


def outside_words(crs: CRS, said: str, at: str) -> str:
    """Why every outline lying outside the area of its coordinate system refuses the file."""
    found = area_of_use(crs)
    name, (west, south, east, north) = found if found is not None else ("", (0, 0, 0, 0))
    return (
        f"every outline lies outside the area {crs_label(crs)} is made for ({name}:"
        f" longitude {west:g} to {east:g}, latitude {south:g} to {north:g}; the first at {at});"
        f" {said} this system, but the coordinates must be in another: give it with --crs"
        " (e.g. --crs 3071 for Wisconsin Transverse Mercator, 4326 for longitude/latitude)"
    )


def _outside(record: RawRecord, crs: CRS, at: str) -> Reject:
    found = area_of_use(crs)
    clean = text_problem(record.attributes) is None
    return Reject(
        record.number,
        (record.attributes.get("PARCELID") or None) if clean else None,
        (" ".join(record.attributes.get("SITEADRESS", "").split()) or None) if clean else None,
        f"its outline lies at {at}, outside the area {crs_label(crs)} is made for"
        f" ({found[0] if found else ''}), so it cannot be in the Village; the county's file"
        " must be corrected",
    )


@functools.lru_cache(maxsize=8)
def _to_wgs84(wkt: str) -> Transformer:
    """Building a transformer searches PROJ's database (tenths of a second): keep a few."""
    from pyproj import CRS, Transformer

    return Transformer.from_crs(CRS.from_wkt(wkt), WGS84, always_xy=True)


def _polygonal(geom: BaseGeometry | None) -> BaseGeometry | None:
    """A polygon or multipolygon, repaired if its outline crosses itself; else None."""
    import shapely
    from shapely.geometry import MultiPolygon, Polygon

    if geom is None or geom.is_empty:
        return None
    if not geom.is_valid:
        geom = shapely.make_valid(geom)
    if isinstance(geom, Polygon | MultiPolygon):
        return geom
    parts = [g for g in getattr(geom, "geoms", []) if isinstance(g, Polygon) and not g.is_empty]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else MultiPolygon(parts)


def parse_records(
    raw: RawFile, *, commercial_classes: Sequence[str] = (), memory_limit: int = MAX_MEMORY_BYTES
) -> ParcelFile:
    """Parcels and rejects from a file's records (pure but for the projection).

    ``commercial_classes``: values of ``PROPCLASS`` (e.g. ``2`` commercial,
    ``3`` manufacturing) that make a parcel's walk commercial for § 370-5's
    widths; everything else is residential (changeable later with registry edit).
    """
    missing = missing_columns(raw.records)
    if missing:
        raise ParcelFileError(
            f"{raw.source}: the column {missing[0]} is missing"
            + (f" (and {', '.join(missing[1:])})" if missing[1:] else "")
            + ": this reads the Wisconsin Statewide Parcel Map schema (PARCELID, OWNERNME1,"
            " PSTLADRESS, SITEADRESS, STREETNAME, …)"
        )
    bound = _Bound(raw.source, memory_limit)
    geometries = to_wgs84(
        [_polygonal(r.geometry) for r in raw.records], raw.crs, source=raw.source,
        said=raw.crs_said,
    )  # fmt: skip
    outside = outside_area(geometries, raw.crs)
    if outside and len(outside) == sum(g is not None for g in geometries):
        first = outside[min(outside)]
        raise ParcelFileError(f"{raw.source}: {outside_words(raw.crs, raw.crs_said, first)}")
    counts = Counter(r.attributes.get("PARCELID", "") for r in raw.records)
    commercial = {c.strip().upper() for c in commercial_classes if c.strip()}
    out = ParcelFile(crs_name=raw.crs.name, source=raw.source)
    for index, (record, geom) in enumerate(zip(raw.records, geometries, strict=True)):
        if record.number % MEMORY_EVERY == 0:
            bound.memory(record.number)
        if index in outside:
            out.rejects.append(_outside(record, raw.crs, outside[index]))
            continue
        result = _parse_one(record, geom, counts, commercial)
        if isinstance(result, Reject):
            out.rejects.append(result)
            if geom is not None:
                out.refused_ground.append(geom)
        else:
            out.parcels.append(result)
    return out


def _parse_one(  # noqa: PLR0911 (one return per reason a record is refused)
    record: RawRecord,
    geom: BaseGeometry | None,
    counts: Counter[str],
    commercial: set[str],
) -> Parcel | Reject:
    a = record.attributes

    def get(name: str) -> str | None:
        value = " ".join(a.get(name, "").split())
        return value or None

    parcel_id = get("PARCELID")
    site = get("SITEADRESS")

    def reject(reason: str) -> Reject:
        return Reject(record.number, parcel_id, site, reason)

    problem = text_problem(a)
    if problem is not None:
        # The refusal names the record by what of it is fit to show.
        bad = problem[0]
        return Reject(
            record.number,
            parcel_id if bad != "PARCELID" else None,
            site if bad != "SITEADRESS" else None,
            problem[1],
        )

    if parcel_id is None:
        return reject("no parcel number (PARCELID is empty)")
    if counts[a.get("PARCELID", "")] > 1:
        return reject(
            f"parcel number {parcel_id} appears {counts[a['PARCELID']]} times in the file;"
            " none of them is imported until the county's file has it once"
        )
    if site is None:
        return reject(
            "no site address: the parcel has no street address, so there is no walk to watch"
            " (vacant land, a right-of-way or an outlot)"
        )
    if geom is None:
        return reject("no outline (geometry) in the file, so its frontage cannot be measured")
    owner = get("OWNERNME1")
    if owner is None:
        return reject("no owner name: a notice would have no one to go to")
    postal = get("PSTLADRESS")
    if postal is None:
        return reject("no mailing address for the owner: a notice could not be mailed")
    lines = split_mailing_address(postal)
    if lines is None:
        return reject(
            f"the owner's mailing address '{postal}' cannot be split into a street (or PO box)"
            " line and a city, state and ZIP line"
        )
    second = get("OWNERNME2")
    too_big = fits_envelope([owner, *((second,) if second else ()), *lines])
    if too_big is not None:
        return reject(f"the owner's address will not fit a window envelope: {too_big}")
    street = " ".join(
        p for p in (get("PREFIX"), get("STREETNAME"), get("STREETTYPE"), get("SUFFIX")) if p
    )
    if not get("STREETNAME"):
        return reject("no street name (STREETNAME is empty), so its street side is unknown")
    classes = {c.strip().upper() for c in (get("PROPCLASS") or "").split(",")}
    return Parcel(
        record=record.number,
        parcel_id=parcel_id,
        tax_parcel_id=get("TAXPARCELID"),
        owner_name=owner,
        second_owner=second,
        mailing_lines=lines,
        site_address=site,
        street=street,
        unit=get("UNITID"),
        place=get("PLACENAME"),
        zip_code=get("ZIPCODE"),
        county=get("CONAME"),
        zone="commercial" if classes & commercial else "residential",
        geometry=geom,
    )
