"""The county import under hostile files: bounded in size, ratio, records and memory,
its coordinates checked against their coordinate system, each refusal one line.

The zip bomb and the million-row CSV run the real ``sidewalk registry import`` as its
own process, its peak resident memory read from the kernel (``wait4``'s ``ru_maxrss``,
that child's alone); the other files go through the same command in this process.
Every hostile file is made here: sizes past a bound are sparse files (nothing on disk),
and the bomb's 1 GiB is deflated once per MiB block and the block repeated.
"""

from __future__ import annotations

import json
import os
import re
import struct
import subprocess
import sys
import time
import zlib
from collections.abc import Callable
from pathlib import Path

import pytest
import shapefile
import shapely
from pyproj import CRS
from typer.testing import CliRunner

from sidewalk.cli import app
from sidewalk.registry import county as bounds
from sidewalk.registry.county import parse_records, read_parcel_file
from sidewalk.storage.cases import CaseStore
from tests.registry.parcels import generate, write_geojson, write_shapefile

MB = 1 << 20
PEAK_MB = 300  # the command's own libraries (pyproj, shapely, SQLAlchemy) take 50-80 MB
V_SERIES = ("PARCELID", "OWNERNME1", "PSTLADRESS", "SITEADRESS", "STREETNAME")
# One valid record's row, for files whose size is the point.
ROW = (
    "206-1015-0001-000,SCHMIDT JOHN,PO BOX 12 CLYMAN WI 53016,101 MAIN ST,MAIN,"
    '"POLYGON ((624310 316443, 624327 316443, 624327 316483, 624310 316443))"\n'
)


def config(tmp_path: Path, extra: str = "") -> tuple[Path, str]:
    url = f"sqlite:///{tmp_path / 'cases.sqlite3'}"
    path = tmp_path / "sidewalk.toml"
    path.write_text(f'data_dir = "{tmp_path / "var"}"\n{extra}\n[cases]\ndatabase_url = "{url}"\n')
    return path, url


def parcels_written(url: str) -> int:
    """Parcels in the registry; none when the import never opened it (no file at all)."""
    if not Path(url.removeprefix("sqlite:///")).exists():
        return 0
    cases = CaseStore(url)
    try:
        return len(cases.registry.list_parcels())
    finally:
        cases.close()


# The CLI's peak without pytest's: a child started from this process would carry this
# process's high-water mark (``ru_maxrss`` is kept across exec), so a small Python parent
# starts it and writes its child's ``ru_maxrss`` (KiB) to the file named first.
MEASURED = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1], 'w').write(str(peak))\n"
    "sys.exit(code)\n"
)


def run_process(args: list[str], tmp_path: Path) -> tuple[int, str, float, float]:
    """(exit code, output, peak resident MB, seconds) of the CLI as its own process."""
    peak = tmp_path / "peak.txt"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, str(peak), sys.executable, "-m", "sidewalk.cli", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "400"},
        check=False,
        timeout=120,
    )
    seconds = time.monotonic() - started
    return done.returncode, done.stdout + done.stderr, int(peak.read_text()) / 1024, seconds


def run_here(args: list[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "400"})
    return result.exit_code, result.output


def one_line(output: str) -> str:
    lines = [x for x in output.splitlines() if x.strip()]
    assert len(lines) == 1, output
    assert "Traceback" not in output
    return lines[0]


# -- a zip bomb ------------------------------------------------------------------------


def _deflated(head: bytes, size: int) -> tuple[bytes, int]:
    """``head`` and spaces up to ``size`` bytes, deflated at level 9 (and its CRC-32):
    a full flush after each MiB block makes every block's output the same, so it is
    compressed once."""
    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    out = [packer.compress(head), packer.flush(zlib.Z_FULL_FLUSH)]
    block = b" " * MB
    packed = packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH)
    assert packer.compress(block) + packer.flush(zlib.Z_FULL_FLUSH) == packed
    blocks, rest = divmod(size - len(head), MB)
    crc = zlib.crc32(head)
    for _ in range(blocks):
        crc = zlib.crc32(block, crc)
    out += [packed] * blocks + [packer.compress(block[:rest]), packer.flush()]
    return b"".join(out), zlib.crc32(block[:rest], crc)


def write_zip(path: Path, members: dict[str, tuple[bytes, int, int, int]]) -> Path:
    """A zip by hand: name → (deflated data, CRC-32, declared size, method)."""
    local, central = bytearray(), bytearray()
    for name, (data, crc, size, method) in members.items():
        raw = name.encode()
        head = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, method, 0, 0, crc, len(data),
                           size, len(raw), 0)  # fmt: skip
        central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, method, 0, 0,
                               crc, len(data), size, len(raw), 0, 0, 0, 0, 0,
                               len(local)) + raw  # fmt: skip
        local += head + raw + data
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members),
                      len(central), len(local), 0)  # fmt: skip
    path.write_bytes(bytes(local + central + end))
    return path


def bomb(path: Path, size: int, *, declared: int | None = None) -> Path:
    """A one-parcel Shapefile whose .dbf is padded to ``size`` bytes; ``declared`` is
    the size the zip's directory claims for it (a lying zip)."""
    folder = path.parent / "bomb_shp"
    folder.mkdir(exist_ok=True)
    with shapefile.Writer(str(folder / "bomb"), shapeType=shapefile.POLYGON) as writer:
        for name in V_SERIES:
            writer.field(name, "C", size=40)
        writer.poly([[(624310, 316443), (624310, 316483), (624327, 316483), (624310, 316443)]])
        writer.record("1", "SCHMIDT JOHN", "PO BOX 12 CLYMAN WI 53016", "101 MAIN ST", "MAIN")
    (folder / "bomb.prj").write_text(CRS.from_epsg(3071).to_wkt("WKT1_ESRI"))
    stored = {}
    for suffix in (".shp", ".shx", ".prj"):
        data = (folder / f"bomb{suffix}").read_bytes()
        stored[f"bomb{suffix}"] = (data, zlib.crc32(data), len(data), 0)
    data, crc = _deflated((folder / "bomb.dbf").read_bytes(), size)
    return write_zip(path, {**stored, "bomb.dbf": (data, crc, declared or size, 8)})


def test_a_zip_bomb_is_refused_in_one_line_within_bounded_memory(tmp_path: Path) -> None:
    # Before: the 1 GiB .dbf read whole, twice over (2.1 GB peak), and imported.
    path = bomb(tmp_path / "bomb.zip", 1 << 30)
    assert path.stat().st_size < 2 * MB
    toml, url = config(tmp_path)
    code, output, peak_mb, seconds = run_process(
        ["registry", "import", str(path), "--config", str(toml)], tmp_path
    )
    line = one_line(output)
    assert code != 0
    assert re.fullmatch(
        r"bomb\.zip: bomb\.dbf unpacks to [\d,]+ times its packed size \(1 MB to 1,024 MB\),"
        r" more than the 100 times a parcel file packs: a zip bomb",
        line,
    ), line
    assert peak_mb < PEAK_MB, f"peak {peak_mb:.0f} MB"
    assert parcels_written(url) == 0
    print(f"zip bomb: {seconds:.1f} s, peak {peak_mb:.0f} MB")


def test_a_zip_lying_about_its_sizes_is_cut_off_at_what_it_declares(tmp_path: Path) -> None:
    # Its directory says 4 MB for a 64 MB .dbf: the ratio passes, and unpacking stops
    # at the declared size, where the checksum fails.
    path = bomb(tmp_path / "bomb.zip", 64 * MB, declared=4 * MB)
    toml, url = config(tmp_path)
    code, output = run_here(["registry", "import", str(path), "--config", str(toml)])
    assert code != 0
    assert one_line(output) == "bomb.zip cannot be read: Bad CRC-32 for file 'bomb.dbf'"
    assert parcels_written(url) == 0


# -- a million rows --------------------------------------------------------------------


def test_a_csv_past_the_record_bound_is_refused_before_it_is_read(tmp_path: Path) -> None:
    # Before: a million rows all read, checked and compared, 191 s and a 10.1 GB peak.
    rows = bounds.MAX_RECORDS + 1
    path = tmp_path / "county.csv"
    # Rows are counted before one is read: a short one does (and writes quickest).
    row = b"1,SCHMIDT JOHN,PO BOX 12 CLYMAN WI 53016,101 MAIN ST,MAIN,POINT (624310 316443)\n"
    path.write_bytes((",".join((*V_SERIES, "WKT")) + "\n").encode() + row * rows)
    toml, url = config(tmp_path)
    code, output, peak_mb, seconds = run_process(
        ["registry", "import", str(path), "--crs", "3071", "--dry-run", "--config", str(toml)],
        tmp_path,
    )
    assert code != 0
    assert one_line(output) == (
        "county.csv holds 500,001 records, more than the 500,000 one import reads"
        " (a county's parcel file holds about 100,000)"
    )
    assert peak_mb < PEAK_MB, f"peak {peak_mb:.0f} MB"
    assert parcels_written(url) == 0
    print(f"{rows:,}-row CSV: {seconds:.1f} s, peak {peak_mb:.0f} MB")


# -- sizes, counts and memory, each its own bound ------------------------------------


def _sparse(path: Path, size: int, head: bytes = b"") -> Path:
    with path.open("wb") as out:
        out.write(head)
        out.truncate(size)  # a hole: the size without the disk
    return path


def _shapefile_declaring(tmp_path: Path, records: int) -> Path:
    shp = write_shapefile(generate(blocks_x=1, blocks_y=1, lots=2), tmp_path / "p.shp")
    dbf = shp.with_suffix(".dbf")
    data = bytearray(dbf.read_bytes())
    data[4:8] = struct.pack("<I", records)  # the header's record count
    dbf.write_bytes(bytes(data))
    return shp


def _many_members(tmp_path: Path) -> Path:
    import zipfile

    path = tmp_path / "many.zip"
    with zipfile.ZipFile(path, "w") as archive:
        for n in range(bounds.MAX_ZIP_MEMBERS + 1):
            archive.writestr(f"f{n}.txt", b"")
    return path


CASES: dict[str, tuple[Callable[[Path], Path], str]] = {
    "geojson": (
        lambda t: _sparse(t / "big.geojson", bounds.MAX_GEOJSON_BYTES + MB, b'{"type":'),
        # Streamed feature by feature: a parcel file's bound (was 256 MB, read whole).
        "big.geojson: the file is 1,025 MB, more than the 1,024 MB a parcel file may be",
    ),
    "csv": (
        lambda t: _sparse(t / "big.csv", bounds.MAX_TOTAL_BYTES + MB, b"PARCELID,WKT\n"),
        "big.csv: the file is 1,025 MB, more than the 1,024 MB a parcel file may be",
    ),
    "dbf": (
        lambda t: _sparse(
            write_shapefile(generate(blocks_x=1, blocks_y=1, lots=2), t / "p.shp").with_suffix(
                ".dbf"
            ),
            bounds.MAX_MEMBER_BYTES + MB,
        ).with_suffix(".shp"),
        "p.shp: p.dbf is 513 MB, more than the 512 MB one file of a Shapefile may be",
    ),
    "records": (
        lambda t: _shapefile_declaring(t, 1_000_000),
        "p.shp says it holds 1,000,000 records, more than the 500,000 one import reads"
        " (a county's parcel file holds about 100,000)",
    ),
    "members": (
        _many_members,
        "many.zip holds 1,001 files, more than the 1,000 a parcel zip may hold",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_bound_refuses_in_one_line_naming_it(tmp_path: Path, case: str) -> None:
    make, said = CASES[case]
    path = make(tmp_path)
    toml, url = config(tmp_path)
    code, output = run_here(["registry", "import", str(path), "--config", str(toml)])
    assert code != 0
    assert one_line(output) == said
    assert parcels_written(url) == 0


def test_the_import_stops_at_its_memory_limit(tmp_path: Path) -> None:
    # The setting at its least: the command's own libraries are already past 64 MB, so
    # the look after the first thousand records stops it (and says which setting).
    path = tmp_path / "p.csv"
    path.write_text(",".join((*V_SERIES, "WKT")) + "\n" + ROW * 2 * bounds.MEMORY_EVERY)
    toml, url = config(tmp_path, "[registry]\nimport_memory_mb = 64")
    code, output = run_here(
        ["registry", "import", str(path), "--crs", "3071", "--config", str(toml)]
    )
    assert code != 0
    line = one_line(output)
    assert line.startswith("p.csv: the import holds "), line
    assert line.endswith(
        " MB of memory at record 1,000, more than the 64 MB the import may use"
        " (registry.import_memory_mb)"
    ), line
    assert parcels_written(url) == 0


# -- coordinates and their coordinate system ------------------------------------------


def _labelled_3071(county_path: Path) -> Path:
    data = json.loads(county_path.read_text())
    data["crs"] = {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::3071"}}
    county_path.write_text(json.dumps(data))
    return county_path


def test_longitude_latitude_labelled_transverse_mercator_is_refused(tmp_path: Path) -> None:
    # Before: imported, every parcel a few yards across, read as condominium units.
    county = generate(blocks_x=2, blocks_y=1, lots=3)
    path = _labelled_3071(write_geojson(county, tmp_path / "p.geojson", epsg=4326))
    toml, url = config(tmp_path)
    code, output = run_here(["registry", "import", str(path), "--config", str(toml)])
    assert code != 0
    line = one_line(output)
    assert line.startswith("p.geojson: these look like longitude/latitude degrees (the first"
                           " outline starts at -88.7"), line  # fmt: skip
    assert line.endswith(
        "but the file says EPSG:3071 (NAD83(HARN) / Wisconsin Transverse Mercator), whose"
        " coordinates are metres: if they are longitude/latitude, import it with --crs 4326"
    ), line
    assert parcels_written(url) == 0
    # Said as what it is, the same file reads: no parcel a condominium unit of another.
    parsed = parse_records(read_parcel_file(path, crs="4326"))
    assert {p.parcel_id for p in parsed.parcels} >= set(county.expected)


def _moved(county_path: Path, records: set[int] | None, metres: float) -> Path:
    data = json.loads(county_path.read_text())
    for n, feature in enumerate(data["features"]):
        if feature["geometry"] and (records is None or n in records):
            geom = shapely.affinity.translate(shapely.geometry.shape(feature["geometry"]), metres)
            feature["geometry"] = shapely.geometry.mapping(geom)
    county_path.write_text(json.dumps(data))
    return county_path


def test_outlines_outside_the_coordinate_systems_area_are_refused(tmp_path: Path) -> None:
    county = generate(blocks_x=2, blocks_y=1, lots=3)
    toml, url = config(tmp_path)
    # Every outline 900 km east of Wisconsin: the file's system is not the one it says.
    far = _moved(write_geojson(county, tmp_path / "far.geojson"), None, 900_000)
    code, output = run_here(["registry", "import", str(far), "--config", str(toml)])
    assert code != 0
    assert one_line(output).startswith(
        "far.geojson: every outline lies outside the area EPSG:3071 (NAD83(HARN) / Wisconsin"
        " Transverse Mercator) is made for (United States (USA) - Wisconsin: longitude -92.89"
        " to -86.25, latitude 42.48 to 47.31; the first at -77.7"
    ), output
    assert parcels_written(url) == 0
    # One outline astray: that record is refused with the reason, the rest read.
    first = next(iter(county.expected))
    at = next(n for n, r in enumerate(county.records) if r.attributes["PARCELID"] == first)
    one = _moved(write_geojson(county, tmp_path / "one.geojson"), {at}, 900_000)
    parsed = parse_records(read_parcel_file(one))
    (refused,) = [r for r in parsed.rejects if "outside the area EPSG:3071" in r.reason]
    assert refused.parcel_id == first
    assert refused.reason.endswith("so it cannot be in the Village; the county's file must be"
                                   " corrected")  # fmt: skip
    assert {p.parcel_id for p in parsed.parcels} == set(county.expected) - {first}
