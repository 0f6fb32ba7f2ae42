"""The Devices and Admin pages' words for codes, topics, times and units (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from sidewalk.core.contract import REJECTION_REASONS
from sidewalk.dashboard.routes.admin import value_words
from sidewalk.dashboard.routes.devices import heard_words, reason_words, topic_pole

ZONE = ZoneInfo("America/Chicago")
NOW = datetime(2026, 12, 7, 18, 0, tzinfo=UTC)  # 12:00 PM in Clyman


@pytest.mark.parametrize("code", [*REJECTION_REASONS, "unknown_device"])
def test_every_reason_a_message_is_refused_for_has_words(code: str) -> None:
    words = reason_words(code)
    assert words != REJECTION_REASONS.get(code), code  # ours, not the contract's note
    assert "_" not in words
    assert code not in words


def test_the_pole_a_message_was_sent_as_is_read_from_its_topic() -> None:
    assert topic_pole("sidewalk/v1/clyman/pole-oak-07/weather") == "pole-oak-07"
    assert topic_pole("sidewalk/v1/clyman") is None
    assert topic_pole("other/v1/clyman/pole-1/snow") is None


def test_availability_says_what_is_known() -> None:
    heard = NOW - timedelta(minutes=5)
    assert heard_words("unknown", heard, NOW, ZONE) == "Reporting: last heard today 11:55 AM"
    assert heard_words("online", heard, NOW, ZONE) == "Online, last heard today 11:55 AM"
    assert heard_words("offline", NOW - timedelta(days=1), NOW, ZONE) == (
        "Offline, last heard yesterday 12:00 PM"
    )
    assert heard_words("unknown", None, NOW, ZONE) == "Never heard from"


@pytest.mark.parametrize(
    ("text", "shown"),
    [("0 degC", "0 °C"), ("0.5 degC", "0.5 °C"), ("35 degF", "35 °F"),
     ("0.25 in per ft", "0.25 inch per foot"), ("20 percent", "20%"), ("24 hours", "24 hours"),
     ("owner served", "owner served"), ("$45.00", "$45.00")],
)  # fmt: skip
def test_a_profile_value_is_shown_with_its_unit_as_people_write_it(text: str, shown: str) -> None:
    assert value_words(text) == shown
