"""Sorting messages into readings, availability, ignored and dead letters."""

from __future__ import annotations

from sidewalk.core.contract import Status, WeatherReading
from sidewalk.core.mqtt import MqttMessage
from sidewalk.ingest.validate import (
    Accepted,
    Availability,
    Ignored,
    Rejected,
    SizeLimits,
    classify,
)

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
    # Limits raised: the default 16 KiB would refuse it as too_large before parsing.
    roomy = SizeLimits(message_bytes=1_000_000)
    verdict = classify(_msg("sidewalk/v1/clyman/pole-1/weather", payload), T0, roomy)
    assert isinstance(verdict, Rejected)
    assert verdict.dead_letter.reason == "malformed_json"
    assert verdict.dead_letter.device == "pole-1"
    assert verdict.dead_letter.payload == payload


def test_an_oversize_message_is_too_large_before_any_parsing() -> None:
    limits = SizeLimits(message_bytes=2048, jpeg_bytes=8192)
    big = b"{" + b" " * 4000 + b"}"
    verdict = classify(_msg("sidewalk/v1/clyman/pole-1/weather", big), T0, limits)
    assert isinstance(verdict, Rejected)
    assert (verdict.dead_letter.reason, verdict.dead_letter.device) == ("too_large", "pole-1")
    assert "4002 bytes" in verdict.dead_letter.detail
    # The jpeg stream has its own, larger limit.
    jpeg = b"\xff\xd8\xff" + b"\0" * 5000 + b"\xff\xd9"
    assert not isinstance(
        classify(_msg("sidewalk/v1/clyman/pole-1/jpeg", jpeg), T0, limits), Rejected
    )
    huge = b"\xff\xd8\xff" + b"\0" * 9000 + b"\xff\xd9"
    refused = classify(_msg("sidewalk/v1/clyman/pole-1/jpeg", huge), T0, limits)
    assert isinstance(refused, Rejected)
    assert refused.dead_letter.reason == "too_large"
    # A topic that is not ours gets the small limit, and no device.
    stray = classify(_msg("elsewhere/x", big), T0, limits)
    assert isinstance(stray, Rejected)
    assert (stray.dead_letter.reason, stray.dead_letter.device) == ("too_large", None)


def test_judge_many_agrees_with_classify_message_by_message() -> None:
    from sidewalk.core.contract import FrameRef, SnowMeasurement
    from sidewalk.ingest.validate import judge_many

    weather = WeatherReading(device="pole-1", seq=3, ts=T0, air_temp_c=-2.0)
    snow = SnowMeasurement(
        device="pole-1", seq=4, ts=T0, frontage="main-101", snow_cover_fraction=0.5,
        cleared_width_mm=1300.0,
    )  # fmt: skip
    frame = FrameRef(device="pole-1", seq=5, ts=T0, sha256="a" * 64, bytes_len=10)
    base = "sidewalk/v1/clyman/pole-1"
    msgs = [
        _msg(f"{base}/weather", weather.to_json()),
        _msg(f"{base}/snow", snow.to_json()),
        _msg(f"{base}/frame", frame.to_json()),
        _msg("sidewalk/v1/clyman/pole-2/weather", weather.to_json()),  # device differs
        _msg(f"{base}/weather", b'{"schema":1,"device":"pole-1","seq":3,"ts":1}'),
        _msg(f"{base}/weather", b'{"device":"pole-1","seq":3,"ts":1764460800000,"air_temp_c":1}'),
        _msg(f"{base}/weather", b"not json"),
        _msg(f"{base}/weather", b"{" + b" " * 20_000 + b"}"),
        _msg(f"{base}/status", Status(device="pole-1", state="online", ts=T0).to_json()),
        _msg(f"{base}/stored", b"{}"),
        _msg(f"{base}/jpeg", b"\xff\xd8\xff\xd9"),
        _msg("elsewhere/pole-1", b"{}"),
    ]
    judged = judge_many(msgs)
    assert len(judged) == len(msgs)
    for msg, got in zip(msgs, judged, strict=True):
        want = classify(msg, 0)
        if isinstance(got, tuple):
            site, device, reading = got
            assert want == Accepted(site, reading)
            assert device == reading.device
            # The same model as the slow path's, down to the fields it was given.
            assert want.reading.model_fields_set == reading.model_fields_set
        else:
            assert got == want
    assert [type(j) is tuple for j in judged[:4]] == [True, True, True, False]
