"""The ordinance profile loader on mutations of the real Clyman profile: it raises
``ProfileError`` (never KeyError, TypeError, OverflowError …) naming the dotted
field, and the line for TOML syntax errors."""

from __future__ import annotations

import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sidewalk.core.profile import ProfileError, load_profile, parse_profile
from tests.fuzz.toml_mutations import (
    Mutation,
    deletions,
    key_lines,
    noise,
    syntax_errors,
    unknown_keys,
    wrong_types,
)

TEXT = resources.files("sidewalk.core.profiles").joinpath("clyman.toml").read_text("utf-8")
DATA: dict[str, Any] = tomllib.loads(TEXT)
SOURCE = "p.toml"
REQUIRED = frozenset({"value", "unit", "start", "end", "name", "state", "timezone",
                      "code_source", "business_weekdays"})  # fmt: skip
_TEMPERATURE = {"degF", "degC"}

FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _rule(table: str) -> dict[str, Any]:
    node: Any = DATA
    for part in table.split("."):
        node = node[part]
    assert isinstance(node, dict)
    return node


def _load_error(text: str) -> str:
    with pytest.raises(ProfileError) as caught:
        parse_profile(text, SOURCE)
    return str(caught.value)


def _names(message: str, m: Mutation, *, key_level: bool = True) -> None:
    field = f"{m.table}.{m.key}" if m.table else m.key
    expected = field if key_level else m.table
    assert expected in message, (m, message)


@st.composite
def value_changes(draw: st.DrawFn) -> tuple[str, Mutation]:
    """A rule's value or unit made invalid: negative, enormous, or an unknown unit."""
    lines = TEXT.splitlines()
    kind = draw(st.sampled_from(["negative", "huge", "unit", "fraction_days"]))
    targets = [k for k in key_lines(TEXT) if "." in k.table and "unit" in _rule(k.table)]
    if kind == "negative":
        targets = [
            k for k in targets if k.key == "value" and _rule(k.table)["unit"] not in _TEMPERATURE
        ]
        new = draw(st.sampled_from(["-1", "-0.5", "-1e-9", '"-1 1/4"']))
    elif kind == "huge":
        targets = [k for k in targets if k.key == "value"]
        new = draw(st.sampled_from(["1e300", "1e30", "9223372036854775807", '"1e999"', "1000001"]))
    elif kind == "unit":
        targets = [k for k in targets if k.key == "unit"]
        new = draw(st.sampled_from(['"fortnights"', '""', '"HOURS"', '"hours "']))
    else:
        days = {"calendar_days", "business_days", "months"}
        targets = [k for k in targets if k.key == "value" and _rule(k.table)["unit"] in days]
        new = draw(st.sampled_from(["10.5", '"1/3"', "0.25"]))
    target = draw(st.sampled_from(targets))
    lines[target.index] = f"{target.key} = {new}"
    return "\n".join(lines) + "\n", Mutation(kind, target.table, target.key, target.index + 1)


def test_the_real_profile_loads() -> None:
    assert parse_profile(TEXT, SOURCE) == load_profile()


@FAST
@given(case=wrong_types(TEXT))
def test_wrong_type_names_the_field_and_its_line(case: tuple[str, Mutation]) -> None:
    text, m = case
    message = _load_error(text)
    _names(message, m)
    assert f"{SOURCE}:{m.line}:" in message, (m, message)


@FAST
@given(case=deletions(TEXT, REQUIRED))
def test_missing_required_key_names_the_field(case: tuple[str, Mutation]) -> None:
    text, m = case
    _names(_load_error(text), m)


@FAST
@given(case=deletions(TEXT, frozenset({"citation"})))
def test_missing_citation_names_the_rule(case: tuple[str, Mutation]) -> None:
    text, m = case
    if _rule(m.table).get("unconfirmed"):
        parse_profile(text, SOURCE)  # an unconfirmed value needs no citation
    else:
        message = _load_error(text)
        _names(message, m, key_level=False)
        assert "citation" in message


@FAST
@given(case=value_changes())
# Regressions: these overflowed timedelta (OverflowError, not ProfileError) in
# the keep-off cross-check, or loaded and failed only when a clock read them.
@example(case=(TEXT.replace("keep_off_normal]\nvalue = 48", "keep_off_normal]\nvalue = 1e30"),
               Mutation("huge", "cold_weather.keep_off_normal", "value", 0)))  # fmt: skip
@example(case=(TEXT.replace("bill_payable]\nvalue = 10", "bill_payable]\nvalue = 10.5"),
               Mutation("fraction_days", "billing.bill_payable", "value", 0)))  # fmt: skip
def test_bad_values_and_units_name_the_rule(case: tuple[str, Mutation]) -> None:
    text, m = case
    _names(_load_error(text), m, key_level=m.kind == "unit")


@FAST
@given(case=unknown_keys(TEXT))
def test_unknown_key_names_itself(case: tuple[str, Mutation]) -> None:
    text, m = case
    _names(_load_error(text), m)


@FAST
@given(case=syntax_errors(TEXT))
# Regression: a cut-off file said "(at end of document)" and no line.
@example(case=(TEXT[:500], Mutation("syntax", "", "", 0)))
def test_syntax_error_names_a_line(case: tuple[str, Mutation]) -> None:
    text, _ = case
    message = _load_error(text)
    assert "not valid TOML" in message
    assert re.search(r"line \d+", message), message


@FAST
@given(case=noise(TEXT))
def test_noise_never_escapes_as_another_error(case: tuple[str, Mutation]) -> None:
    text, _ = case
    message = ""
    try:
        parse_profile(text, SOURCE)
        message = "loaded"
    except ProfileError as exc:  # any other exception fails the test
        message = str(exc).strip()
    assert message


@pytest.mark.parametrize("body", [b"\xff\xfe\x00bad", b""])
def test_unreadable_files_are_profile_errors(tmp_path: Path, body: bytes) -> None:
    path = tmp_path / "p.toml"
    path.write_bytes(body)
    with pytest.raises(ProfileError, match=r"p\.toml"):
        load_profile(path)
    with pytest.raises(ProfileError, match="cannot read"):
        load_profile(tmp_path)  # a directory
