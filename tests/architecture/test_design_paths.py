"""DESIGN.md's "where does X live" tables name only paths that exist, so the doc cannot rot."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "DESIGN.md"

# A backticked path: has a slash or a file suffix, and is not an API route.
_PATH = re.compile(r"`([A-Za-z0-9_.][A-Za-z0-9_./-]*)`")


def _table_paths(text: str) -> list[str]:
    """Backticked paths in the table rows after the "Where does X live" heading."""
    section = text.split("## Where does X live", 1)[1]
    paths: list[str] = []
    for line in section.splitlines():
        if not line.startswith("|"):
            continue
        for token in _PATH.findall(line):
            if "/" in token or re.search(r"\.[a-z]+$", token):
                paths.append(token)
    return paths


def test_design_table_names_paths() -> None:
    paths = _table_paths(DESIGN.read_text(encoding="utf-8"))
    # The table covers every component, so it names far more than a handful of paths.
    assert len(paths) >= 40, paths


def test_every_path_in_design_exists() -> None:
    missing = [
        p for p in _table_paths(DESIGN.read_text(encoding="utf-8")) if not (ROOT / p).exists()
    ]
    assert missing == [], f"DESIGN.md names paths that do not exist: {missing}"


def test_a_missing_path_is_caught() -> None:
    text = "## Where does X live\n\n| a | `analytics/no_such_module.py` |\n"
    paths = _table_paths(text)
    assert paths == ["analytics/no_such_module.py"]
    assert not (ROOT / paths[0]).exists()
