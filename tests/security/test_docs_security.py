"""docs/security.md's table of hostile input: each row names tests that exist.

Every case of the table under "Hostile input to the dashboard and the county import"
names the test that holds it, as `test_file.py`, `test_file.py::test_name` or
`::test_name` (of the file named before it in the cell), a test's name cut short
with `…` standing for its beginning, a file under `tests/security/` unless its
folder is given. Each such name must be a test file that exists and, with a test
name, a test in it (a renamed or deleted test fails here, naming the row).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SECTION = "## Hostile input to the dashboard and the county import"
# Every case the table must have a row for (words of the row's first cell).
CASES = (
    "Formula injection in the exports",
    "Request bodies",
    "Image decompression bomb",
    "Hostile text in the county's parcel file",
    "Over-long text",
    "A live event stream after its session ended",
    "The import's memory",
    "A zip bomb",
    "A million-row CSV",
    "Longitude/latitude numbers",
    "Validation errors that echo the input",
    "DNS rebinding",
    "The docs",
    "`SIDEWALK_DB_PASSWORD` with a SQLite URL",
)


def _rows() -> list[list[str]]:
    text = (ROOT / "docs" / "security.md").read_text()
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    rows = [row for row in rows[1:] if not re.fullmatch(r"[|\s:-]+", row)]  # header, rule
    cells = [[c.strip() for c in row.strip("|").split(" | ")] for row in rows]
    assert cells, "the table is empty"
    return cells


def _tests(cell: str) -> list[tuple[Path, str | None]]:
    """The (file, test name or None) each `…` reference of ``cell`` names."""
    out: list[tuple[Path, str | None]] = []
    last: Path | None = None
    for ref in re.findall(r"`([^`]*test_[^`]*)`", cell):
        file, _, name = ref.partition("::")
        if file:
            path = ROOT / file if "/" in file else ROOT / "tests" / "security" / file
            last = path
        assert last is not None, f"{ref!r} names a test before any file"
        out.append((last, name or None))
    return out


def test_every_case_has_a_row() -> None:
    firsts = [row[0] for row in _rows()]
    for case in CASES:
        assert any(first.startswith(case) for first in firsts), f"no row for {case!r}"


def test_every_row_names_tests_that_exist() -> None:
    for row in _rows():
        assert len(row) == 4, f"{row[0]!r}: {len(row)} cells"
        named = _tests(row[2])
        assert named, f"{row[0]!r} names no test"
        for path, name in named:
            assert path.is_file(), f"{row[0]!r}: {path.relative_to(ROOT)} does not exist"
            if name is None:
                continue
            defined = re.findall(r"^(?:async )?def (test_\w+)", path.read_text(), re.M)
            if name.endswith("…"):
                found = [d for d in defined if d.startswith(name[:-1])]
            else:
                found = [d for d in defined if d == name]
            assert found, f"{row[0]!r}: no {name} in {path.relative_to(ROOT)}"
