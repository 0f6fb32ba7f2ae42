"""The message contract: every malformed message gets a stable reason."""

from __future__ import annotations

import json

import pytest

from sidewalk.core.contract import (
    ContractError,
    SnowMeasurement,
    WeatherReading,
    fast_reading_validator,
    parse_payload,
    parse_topic,
    topic_for,
)

TOPIC = "sidewalk/v1/clyman/pole-1/weather"
GOOD = {"schema": 1, "device": "pole-1", "seq": 7, "ts": 1_765_000_000_000, "snow_depth_mm": 12.5}


def reason_of(topic: str, payload: bytes) -> str:
    with pytest.raises(ContractError) as caught:
        parse_payload(topic, payload)
    return caught.value.reason


def test_a_good_weather_reading_round_trips() -> None:
    msg = parse_payload(TOPIC, json.dumps(GOOD).encode())
    assert isinstance(msg, WeatherReading)
    assert msg.seq == 7
    assert msg.snow_depth_mm == 12.5
    again = parse_payload(TOPIC, msg.to_json())
    assert again == msg
    assert json.loads(msg.to_json())["schema"] == 1


def test_a_snow_measurement_names_its_frontage() -> None:
    payload = {
        "schema": 1,
        "device": "pole-1",
        "seq": 1,
        "ts": 1_765_000_000_000,
        "frontage": "main-st-101",
        "snow_cover_fraction": 0.25,
        "cleared_width_mm": 1300,
    }
    msg = parse_payload("sidewalk/v1/clyman/pole-1/snow", json.dumps(payload).encode())
    assert isinstance(msg, SnowMeasurement)
    assert msg.cleared_width_mm == 1300.0
    # A pole that states no uncertainty (every pole before it could): none stated.
    assert msg.width_uncertainty_mm is None
    assert "width_uncertainty_mm" not in json.loads(msg.to_json())


SNOW = {
    "schema": 1, "device": "pole-1", "seq": 1, "ts": 1_765_000_000_000,
    "frontage": "main-st-101", "snow_cover_fraction": 0.25, "cleared_width_mm": 1300,
}  # fmt: skip


def test_a_snow_measurement_may_state_its_one_sigma_uncertainty() -> None:
    topic = "sidewalk/v1/clyman/pole-1/snow"
    msg = parse_payload(topic, json.dumps({**SNOW, "width_uncertainty_mm": 21.4}).encode())
    assert isinstance(msg, SnowMeasurement)
    assert msg.width_uncertainty_mm == 21.4
    assert parse_payload(topic, msg.to_json()) == msg
    # The receive loop's fast path reads it the same way.
    stated = json.dumps({**SNOW, "width_uncertainty_mm": 21.4}).encode()
    fast = fast_reading_validator("snow")(stated)
    assert isinstance(fast, SnowMeasurement)
    assert fast.width_uncertainty_mm == 21.4
    for bad, reason in ((-1.0, "out_of_range"), (5001.0, "out_of_range"), ("x", "invalid_value")):
        payload = json.dumps({**SNOW, "width_uncertainty_mm": bad}).encode()
        assert reason_of(topic, payload) == reason


@pytest.mark.parametrize(
    ("topic", "payload", "reason"),
    [
        (TOPIC, b"{not json", "malformed_json"),
        (TOPIC, b"\xff\xfe", "malformed_json"),
        (TOPIC, b"[1, 2]", "malformed_json"),
        (TOPIC, json.dumps({**GOOD, "schema": 2}).encode(), "unknown_schema"),
        (TOPIC, json.dumps({**GOOD, "schema": True}).encode(), "unknown_schema"),
        (
            TOPIC,
            json.dumps({k: v for k, v in GOOD.items() if k != "seq"}).encode(),
            "missing_field",
        ),
        (TOPIC, json.dumps({**GOOD, "snow_depth_in": 3}).encode(), "extra_field"),
        (TOPIC, json.dumps({**GOOD, "snow_depth_mm": -4}).encode(), "out_of_range"),
        (TOPIC, json.dumps({**GOOD, "air_temp_c": 99}).encode(), "out_of_range"),
        (TOPIC, json.dumps({**GOOD, "ts": 5}).encode(), "out_of_range"),
        (TOPIC, json.dumps({**GOOD, "seq": "7"}).encode(), "invalid_value"),
        (TOPIC, json.dumps({**GOOD, "device": "pole-2"}).encode(), "topic_mismatch"),
        (TOPIC, json.dumps({**GOOD, "stream": "snow"}).encode(), "topic_mismatch"),
        ("sidewalk/v1/clyman/pole-1/humidity", json.dumps(GOOD).encode(), "unknown_stream"),
        ("sidewalk/v2/clyman/pole-1/weather", json.dumps(GOOD).encode(), "bad_topic"),
        ("sidewalk/v1/Clyman Village/pole-1/weather", json.dumps(GOOD).encode(), "bad_topic"),
    ],
)
def test_each_kind_of_bad_message_has_its_reason(topic: str, payload: bytes, reason: str) -> None:
    assert reason_of(topic, payload) == reason


def test_a_weather_reading_must_measure_something() -> None:
    bare = {k: v for k, v in GOOD.items() if k != "snow_depth_mm"}
    assert reason_of(TOPIC, json.dumps(bare).encode()) == "invalid_value"


def test_topics_are_built_only_from_slugs() -> None:
    assert topic_for("clyman", "pole-1", "snow") == "sidewalk/v1/clyman/pole-1/snow"
    assert parse_topic("sidewalk/v1/clyman/pole-1/snow").stream == "snow"
    with pytest.raises(ValueError, match="slug"):
        topic_for("clyman", "Pole #1", "snow")
    with pytest.raises(ValueError, match="unknown stream"):
        topic_for("clyman", "pole-1", "pictures")
