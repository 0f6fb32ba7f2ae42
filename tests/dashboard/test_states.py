"""Every clock state the engine can be in shows on the dashboard in plain words."""

from __future__ import annotations

from enum import StrEnum

import pytest

from sidewalk.analytics.clocks.states import STATE_ENUMS
from sidewalk.dashboard.states import CATEGORIES, SHOWN, category, label


def test_every_clock_state_enum_has_a_table() -> None:
    assert set(SHOWN) == set(STATE_ENUMS)


@pytest.mark.parametrize("states", STATE_ENUMS, ids=lambda e: e.__name__)
def test_every_state_has_a_category_and_a_plain_words_label(states: type[StrEnum]) -> None:
    table = SHOWN[states]
    missing = [s.value for s in states if s not in table]
    assert missing == [], f"{states.__name__} states with no dashboard entry: {missing}"
    for state in states:
        shown = table[state]
        assert shown.category in CATEGORIES
        assert shown.label.strip()
        assert shown.label != state.value
        assert isinstance(state, str)  # a StrEnum: stored and compared as its value


def test_a_state_name_two_clocks_share_shows_the_same() -> None:
    seen: dict[str, str] = {}
    for states in STATE_ENUMS:
        for state in states:
            shown = SHOWN[states][state].category
            assert seen.setdefault(state.value, shown) == shown, state.value


def test_only_a_clock_that_does_not_exist_yet_shows_as_none() -> None:
    for states in STATE_ENUMS:
        for state in states:
            if state.value in {"none", "unknown"}:
                assert category(state) == "none"
            else:
                assert category(state) != "none", f"{states.__name__}.{state.name}"
    assert category("no-such-state") == "none"
    assert label("snowing") == "Snowing"
