"""Docs and code say why, not which ticket: no "issue N" or "session N" in them.

A decision is written where the code is, as a plain fact; the history of who
found what lives in git. Scans every tracked ``.py`` and ``.md`` file.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The word, then a space, a hyphen, an underscore or nothing, an optional "#",
# and the number (the forms are spelled out in test_a_ticket_number_is_found).
_TICKET = re.compile(r"\b(issue|session)s?(?: |-|_)?#?[0-9]+", re.IGNORECASE)

_WORD = "Iss" + "ue"  # never spelled with its number here, so a grep finds none


def _hits(files: dict[str, str]) -> list[str]:
    return [
        f"{path}:{number}: {line.strip()}"
        for path, text in sorted(files.items())
        for number, line in enumerate(text.splitlines(), 1)
        if _TICKET.search(line)
    ]


def _tracked() -> dict[str, str]:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--", "*.py", "*.md"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout.decode()
    files = {}
    for name in filter(None, listed.split("\0")):
        path = ROOT / name
        if path.is_file():
            files[name] = path.read_text(encoding="utf-8", errors="replace")
    return files


def test_no_ticket_numbers_in_docs_or_code() -> None:
    files = _tracked()
    assert "DESIGN.md" in files
    assert "edge/sidewalk/edge/config.py" in files
    assert _hits(files) == []


def test_a_ticket_number_is_found() -> None:
    word = _WORD
    files = {
        "docs/x.md": f"{word} 28 found the gap reading narrow.\n",
        "a.py": "# see sess" + "ion #4\n# an issue with numbers 1 2\n",
        "b.md": "the sess"
        + f"ion-4 figures\nsee {word.lower()}-27 and {word}s_3\nno issue-free run\n",
    }
    assert _hits(files) == [
        "a.py:1: # see sess" + "ion #4",
        "b.md:1: the sess" + "ion-4 figures",
        f"b.md:2: see {word.lower()}-27 and {word}s_3",
        f"docs/x.md:1: {word} 28 found the gap reading narrow.",
    ]
