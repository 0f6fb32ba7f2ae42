"""Hypothesis strategies that break a real TOML file one line at a time.

Used on the ordinance profile and on the server and pole example configs. Each
draw is ``(text, Mutation)``: the mutated file and what was done where, so a
test can demand that the loader's error names that table and key (or, for a
syntax error, a line).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hypothesis import strategies as st

_HEADER = re.compile(r"^\s*(\[\[?)\s*([A-Za-z0-9_.-]+)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*=\s*(.*)$")

# Literals no scalar or list field of these files takes: a datetime and an
# inline table with a key no model has.
WRONG_TYPE = ("1979-05-27T07:32:00Z", "{ fuzz_key = 1 }")
SYNTAX_ERRORS = ("= 1", "key = ", "[unclosed", 'x = "unterminated', "x = [1, 2", "x = 1 2",
                 "[[", "x = 0x", "x = tru", "x.=1")  # fmt: skip


@dataclass(frozen=True, slots=True)
class KeyLine:
    """A single-line ``key = value`` and the table it sits in."""

    index: int
    table: str  # dotted, "" at top level
    array: bool  # the table is an [[array]] entry (errors add its index)
    key: str
    value: str


@dataclass(frozen=True, slots=True)
class Mutation:
    kind: str
    table: str
    key: str
    line: int  # 1-based line of the change


def key_lines(text: str) -> list[KeyLine]:
    """Every single-line key/value of the file (multi-line arrays are skipped)."""
    out: list[KeyLine] = []
    table, array = "", False
    for i, line in enumerate(text.splitlines()):
        if h := _HEADER.match(line):
            table, array = h.group(2), h.group(1) == "[["
            continue
        k = _KEY.match(line)
        if k is None:
            continue
        value = k.group(2).split("#")[0].strip() if not k.group(2).startswith('"') else k.group(2)
        if value.count("[") != value.count("]") or value.count("{") != value.count("}"):
            continue
        out.append(KeyLine(i, table, array, k.group(1), value))
    return out


def headers(text: str) -> list[tuple[int, str]]:
    return [
        (i, h.group(2)) for i, line in enumerate(text.splitlines()) if (h := _HEADER.match(line))
    ]


def _replace(lines: list[str], index: int, new: str | None) -> str:
    out = lines[:index] + ([] if new is None else [new]) + lines[index + 1 :]
    return "\n".join(out) + "\n"


@st.composite
def wrong_types(draw: st.DrawFn, text: str) -> tuple[str, Mutation]:
    """One key's value replaced by a literal of a type no field takes."""
    lines = text.splitlines()
    target = draw(st.sampled_from(key_lines(text)))
    literal = draw(st.sampled_from(WRONG_TYPE))
    new = _replace(lines, target.index, f"{target.key} = {literal}")
    return new, Mutation("wrong_type", target.table, target.key, target.index + 1)


@st.composite
def unknown_keys(draw: st.DrawFn, text: str) -> tuple[str, Mutation]:
    """A key no model has, added to a table (or at the top)."""
    lines = text.splitlines()
    name = draw(st.from_regex(r"fuzz_[a-z]{1,8}", fullmatch=True))
    places = [(-1, ""), *headers(text)]
    index, table = draw(st.sampled_from(places))
    out = [*lines[: index + 1], f"{name} = 1", *lines[index + 1 :]]
    return "\n".join(out) + "\n", Mutation("unknown_key", table, name, index + 2)


@st.composite
def syntax_errors(draw: st.DrawFn, text: str) -> tuple[str, Mutation]:
    """A line replaced by one that is not TOML, or a key given twice."""
    lines = text.splitlines()
    if draw(st.booleans()):
        target = draw(st.sampled_from(key_lines(text)))
        out = [*lines[: target.index + 1], lines[target.index], *lines[target.index + 1 :]]
        return "\n".join(out) + "\n", Mutation("syntax", target.table, target.key, target.index + 2)
    index = draw(st.integers(0, len(lines) - 1))
    bad = draw(st.sampled_from(SYNTAX_ERRORS))
    return _replace(lines, index, bad), Mutation("syntax", "", "", index + 1)


@st.composite
def deletions(
    draw: st.DrawFn, text: str, keys: frozenset[str] | None = None
) -> tuple[str, Mutation]:
    """One key line deleted (restricted to ``keys`` when given: the required ones)."""
    lines = text.splitlines()
    candidates = [k for k in key_lines(text) if keys is None or k.key in keys]
    target = draw(st.sampled_from(candidates))
    return _replace(lines, target.index, None), Mutation(
        "delete", target.table, target.key, target.index + 1
    )


@st.composite
def noise(draw: st.DrawFn, text: str) -> tuple[str, Mutation]:
    """Truncation, a random line or random text: any outcome but a crash."""
    kind = draw(st.sampled_from(["truncate", "line", "text"]))
    if kind == "truncate":
        return text[: draw(st.integers(0, len(text)))], Mutation("noise", "", "", 0)
    if kind == "line":
        lines = text.splitlines()
        index = draw(st.integers(0, len(lines) - 1))
        return _replace(lines, index, draw(st.text(max_size=40))), Mutation("noise", "", "", 0)
    return draw(st.text(max_size=200)), Mutation("noise", "", "", 0)
