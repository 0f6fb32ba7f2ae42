"""Sorting messages into readings, availability, ignored and dead letters."""

from __future__ import annotations

from sidewalk.core.contract import Status, WeatherReading
from sidewalk.core.mqtt import MqttMessage
from sidewalk.ingest.validate import Accepted, Availability, Ignored, Rejected, classify

T0 = 1_764_460_800_000


def _msg(topic: str, payload: bytes) -> MqttMessage:
    return MqttMessage(topic=topic, payload=payload, qos=1, retain=False, mid=1)


def test_a_reading_is_accepted_with_its_site() -> None:
    reading = WeatherReading(device="pole-1", seq=3, ts=T0, air_temp_c=-2.0)
    verdict = classify(_msg("sidewalk/v1/clyman/pole-1/weather", reading.to_json()), T0)
    assert verdict == Accepted("clyman", reading)


def test_status_is_availability_and_our_own_watermark_is_ignored() -> None:
    status = Status(device="pole-1", state="offline", ts=T0)
    verdict = classify(_msg("sidewalk/v1/clyman/pole-1/status", status.to_json()), T0)
    assert isinstance(verdict, Availability)
    assert verdict.update.status == status
    assert verdict.update.site == "clyman"
    assert isinstance(classify(_msg("sidewalk/v1/clyman/pole-1/stored", b"{}"), T0), Ignored)


def test_a_bad_topic_has_no_device() -> None:
    verdict = classify(_msg("elsewhere/pole-1", b"{}"), T0)
    assert isinstance(verdict, Rejected)
    assert (verdict.dead_letter.reason, verdict.dead_letter.device) == ("bad_topic", None)


def test_deeply_nested_json_is_malformed_not_a_crash() -> None:
    payload = b"[" * 100_000 + b"]" * 100_000
    verdict = classify(_msg("sidewalk/v1/clyman/pole-1/weather", payload), T0)
    assert isinstance(verdict, Rejected)
    assert verdict.dead_letter.reason == "malformed_json"
    assert verdict.dead_letter.device == "pole-1"
    assert verdict.dead_letter.payload == payload
