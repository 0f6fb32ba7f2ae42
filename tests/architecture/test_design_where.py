"""DESIGN.md's "Where does X live" table answers a newcomer's change in full.

Every row names the code (second column) and the tests that hold it (third
column, under ``tests/``), every one of those paths exists, and the table has a
row for each thing a newcomer comes to change.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "DESIGN.md"

_PATH = re.compile(r"`([A-Za-z0-9_.][A-Za-z0-9_./-]*)`")

# What a newcomer wants to change, as the row's first column says it.
NEWCOMER_CHANGES = (
    "§ 370-10 A",
    "cessation",
    "cold-weather rules",
    "obstructions",
    "permits",
    "notice rendering and letters",
    "register's numbering",
    "billing",
    "tax-roll",
    "MQTT message contract",
    "dead letters",
    "time sanity",
    "county parcel import",
    "frontage derivation",
    "dashboard's pages",
    "roles and sign-in",
    "disk buffer",
    "camera drivers",
    "snow cover",
    "defect measurement",
    "ordinance profile",
    "profile's confirmations",
    "configuration loading",
)


def _paths(cell: str) -> list[str]:
    return [t for t in _PATH.findall(cell) if "/" in t or re.search(r"\.[a-z]+$", t)]


def _rows(text: str) -> list[tuple[str, list[str], list[str]]]:
    """(what, code paths, test paths) per row of the first table after the heading."""
    section = text.split("## Where does X live", 1)[1].split("\n### ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not line.startswith("|") or len(cells) < 2 or set(cells[0]) <= {"-"}:
            continue
        if cells[0] == "what":
            assert cells[1:] == ["where", "tests"], cells
            continue
        tests = _paths(cells[2]) if len(cells) > 2 else []
        rows.append((cells[0], _paths(cells[1]), tests))
    return rows


def _problems(text: str) -> list[str]:
    problems = []
    rows = _rows(text)
    for what, code, tests in rows:
        if not code:
            problems.append(f"{what}: no code path")
        if not tests or not all(t.startswith("tests/") for t in tests):
            problems.append(f"{what}: no test folder under tests/")
        problems += [f"{what}: {p} does not exist" for p in code + tests if not (ROOT / p).exists()]
    whats = " | ".join(what for what, _, _ in rows)
    problems += [f"no row for {c!r}" for c in NEWCOMER_CHANGES if c not in whats]
    return problems


def test_every_row_names_existing_code_and_tests() -> None:
    text = DESIGN.read_text(encoding="utf-8")
    assert len(_rows(text)) >= len(NEWCOMER_CHANGES)
    assert _problems(text) == []


def test_a_row_without_tests_or_with_a_missing_path_is_caught() -> None:
    text = (
        "## Where does X live\n\n| what | where | tests |\n|---|---|---|\n"
        "| § 370-10 A | `analytics/sidewalk/analytics/no_such_clock.py` | `tests/clocks/` |\n"
        "| cessation | `analytics/sidewalk/analytics/clocks/cessation.py` | |\n"
    )
    problems = _problems(text)
    assert "§ 370-10 A: analytics/sidewalk/analytics/no_such_clock.py does not exist" in (problems)
    assert "cessation: no test folder under tests/" in problems
    assert "no row for 'dead letters'" in problems
