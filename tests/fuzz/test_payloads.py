"""Payload validation under malformed input: ``classify`` never raises, and
everything it does not take is a dead letter with a known reason and a detail."""

from __future__ import annotations

import json
import math
import sys
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sidewalk.core.contract import (
    MAX_DETAIL_CHARS,
    MAX_JSON_NESTING,
    STREAM_MODELS,
    FrameRef,
    SnowMeasurement,
    WeatherReading,
    parse_payload,
)
from sidewalk.core.mqtt import MqttMessage
from sidewalk.ingest.validate import (
    Accepted,
    Availability,
    Evidence,
    Ignored,
    Rejected,
    SizeLimits,
    Verdict,
    classify,
)
from tests.fuzz.payloads import (
    DEVICE,
    REASONS,
    SITE,
    T0,
    any_topics,
    bad_topics,
    broken_payloads,
    json_values,
    valid_readings,
)

FAST = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _msg(topic: str, payload: bytes) -> MqttMessage:
    return MqttMessage(topic=topic, payload=payload, qos=1, retain=False, mid=1)


def _topic(stream: str, site: str = SITE, device: str = DEVICE) -> str:
    return f"sidewalk/v1/{site}/{device}/{stream}"


def check_verdict(msg: MqttMessage, verdict: Verdict) -> None:
    """The property every verdict must have, whatever the input."""
    if isinstance(verdict, Rejected):
        letter = verdict.dead_letter
        assert letter.reason in REASONS, letter
        assert letter.reason != "internal_error", letter  # a validator bug
        assert letter.detail.strip(), letter
        assert len(letter.detail) <= MAX_DETAIL_CHARS + 40
        # Kept byte for byte, where it came from.
        assert (letter.topic, letter.payload, letter.received_at_ms) == (msg.topic, msg.payload, T0)
        levels = msg.topic.split("/")
        if letter.device is not None:
            assert len(levels) == 5
            assert letter.device == levels[3]
    elif isinstance(verdict, Accepted):
        reading = verdict.reading
        assert isinstance(reading, WeatherReading | SnowMeasurement | FrameRef)
        # Round trip: what is stored parses back to the same reading on its topic.
        assert parse_payload(msg.topic, reading.to_json()) == reading
        for name, value in reading.model_dump().items():
            if isinstance(value, float):
                assert math.isfinite(value), (name, value)
        assert msg.topic.split("/")[2:4] == [verdict.site, reading.device]
    elif isinstance(verdict, Evidence):
        assert msg.payload.startswith(b"\xff\xd8\xff")
        assert msg.payload.endswith(b"\xff\xd9")
        assert msg.topic.split("/")[3] == verdict.device
    else:
        assert isinstance(verdict, Availability | Ignored)


def classify_and_check(topic: str, payload: bytes) -> Verdict:
    msg = _msg(topic, payload)
    verdict = classify(msg, T0)
    check_verdict(msg, verdict)
    return verdict


@FAST
@given(topic=any_topics(), payload=st.binary(max_size=300))
def test_arbitrary_bytes_on_any_topic(topic: str, payload: bytes) -> None:
    classify_and_check(topic, payload)


@FAST
@given(stream=st.sampled_from(sorted(STREAM_MODELS)), value=json_values)
@example(stream="weather", value={"schema": 1.0})
@example(stream="stored", value=[])
def test_arbitrary_json_is_never_accepted_by_chance(stream: str, value: Any) -> None:
    verdict = classify_and_check(_topic(stream), json.dumps(value).encode())
    if stream != "stored":
        assert isinstance(verdict, Rejected)


@FAST
@given(reading=valid_readings())
def test_valid_readings_are_accepted_and_round_trip(reading: tuple[str, dict[str, Any]]) -> None:
    stream, body = reading
    verdict = classify_and_check(_topic(stream), json.dumps(body).encode())
    assert isinstance(verdict, Accepted), verdict


@FAST
@given(broken=broken_payloads())
# Regressions: a 5000-digit number was an internal_error (int-digit limit), and
# schema 1.0 was accepted as version 1.
@example(
    broken=("weather", b'{"schema":1,"device":"pole-1","seq":1,"ts":1,"x":' + b"9" * 5000 + b"}")
)
@example(broken=("weather", b'{"schema":1.0,"device":"pole-1","seq":1,"ts":1764460800000,'
                            b'"air_temp_c":1}'))  # fmt: skip
def test_broken_payloads_are_rejected_with_a_reason(broken: tuple[str, bytes]) -> None:
    stream, payload = broken
    verdict = classify_and_check(_topic(stream), payload)
    assert isinstance(verdict, Rejected), (payload[:200], verdict)
    assert verdict.dead_letter.device == DEVICE


@FAST
@given(reading=valid_readings(), topic=bad_topics())
# Regression: a trailing newline passed the slug check ("$" matches before it).
@example(reading=("weather", {"schema": 1, "device": DEVICE, "seq": 1, "ts": T0, "air_temp_c": 1}),
         topic=f"sidewalk/v1/{SITE}\n/{DEVICE}/weather")  # fmt: skip
def test_valid_payload_on_a_bad_topic_is_rejected(
    reading: tuple[str, dict[str, Any]], topic: str
) -> None:
    _, body = reading
    verdict = classify_and_check(topic, json.dumps(body).encode())
    assert isinstance(verdict, Rejected), (topic, verdict)


@FAST
@given(reading=valid_readings(), other=st.sampled_from([DEVICE, "pole-2", "pole-10", "x"]))
def test_topic_and_payload_must_agree(reading: tuple[str, dict[str, Any]], other: str) -> None:
    stream, body = reading
    verdict = classify_and_check(_topic(stream, device=other), json.dumps(body).encode())
    if other == DEVICE:
        assert isinstance(verdict, Accepted)
    else:
        assert isinstance(verdict, Rejected)
        assert verdict.dead_letter.reason == "topic_mismatch"


@FAST
@given(
    body=st.binary(max_size=200),
    device=st.sampled_from([DEVICE, "POLE", "pole-1\n", "", "a/b"]),
    stored=st.booleans(),
)
# Regressions: a cut-off JPEG was kept as evidence; "x/y/z/w/stored" was ignored
# silently; a non-slug device was trusted on the jpeg topic.
@example(body=b"\xff\xd8\xff\xe0 cut off", device=DEVICE, stored=False)
@example(body=b"{}", device="POLE", stored=True)
@example(body=b"\xff\xd8\xff\xd9", device="POLE", stored=False)
def test_jpeg_and_watermark_topics(body: bytes, device: str, stored: bool) -> None:
    stream = "stored" if stored else "jpeg"
    jpeg = b"\xff\xd8\xff" + body + b"\xff\xd9"
    for payload in (body, jpeg, jpeg[:-1]):
        verdict = classify_and_check(_topic(stream, device=device), payload)
        slug_device = device == DEVICE
        if stored and slug_device:
            assert isinstance(verdict, Ignored)
        elif payload is jpeg and slug_device:
            assert isinstance(verdict, Evidence)
        else:
            assert isinstance(verdict, Rejected)


def test_an_oversized_jpeg_is_too_large() -> None:
    # Over ingest's JPEG limit (4 MiB by default, at most the contract's 20 MB):
    # refused by size before anything looks inside (docs/storage.md).
    body = b"\xff\xd8\xff" + bytes(20_000_000) + b"\xff\xd9"
    verdict = classify_and_check(_topic("jpeg"), body)
    assert isinstance(verdict, Rejected)
    assert verdict.dead_letter.reason == "too_large"


def test_detail_of_an_oversized_value_is_clipped() -> None:
    body = {"schema": 1, "device": DEVICE, "seq": 1, "ts": T0, "air_temp_c": "x" * 10_000}
    verdict = classify_and_check(_topic("weather"), json.dumps(body).encode())
    assert isinstance(verdict, Rejected)
    assert len(verdict.dead_letter.detail) <= MAX_DETAIL_CHARS
    stream = {**body, "air_temp_c": 1.0, "stream": "s" * 10_000}
    verdict = classify_and_check(_topic("weather"), json.dumps(stream).encode())
    assert isinstance(verdict, Rejected)
    assert verdict.dead_letter.reason == "topic_mismatch"
    assert len(verdict.dead_letter.detail) <= MAX_DETAIL_CHARS


ROOMY = SizeLimits(message_bytes=1_000_000)


def test_the_verdict_on_deep_nesting_does_not_depend_on_the_callers_stack() -> None:
    """json.loads gives up at Python's recursion limit, which counts the caller's frames too."""
    topic = f"sidewalk/v1/{SITE}/{DEVICE}/snow"

    def verdict_at(depth: int, nesting: int) -> str:
        if depth:
            return verdict_at(depth - 1, nesting)
        body = b'{"schema": 1, "x": ' + b"[" * nesting + b"]" * nesting + b"}"
        # The parser's verdict, not the size limit's (10 x the recursion limit is 20 KB).
        result = classify(MqttMessage(topic, body, 1, False, 0), 0, ROOMY)
        assert isinstance(result, Rejected)
        return result.dead_letter.reason

    limit = sys.getrecursionlimit()
    for nesting in (5, 31, 32, 40, limit // 2, limit - 50, 10 * limit):
        shallow = verdict_at(0, nesting)
        deep = verdict_at(limit // 2, nesting)
        assert shallow == deep, (nesting, shallow, deep)
        assert (shallow == "malformed_json") == (nesting + 1 > MAX_JSON_NESTING), (nesting, shallow)
