"""Hypothesis strategies for MQTT messages: valid readings and their malformed kin.

Shared by the property tests and ``bench/fuzz.py``. ``broken_*`` strategies
are malformed by construction (each draws from values the contract refuses),
so a test may demand ``Rejected``; ``mutated_*`` may or may not be valid.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from hypothesis import strategies as st

from sidewalk.core.contract import REJECTION_REASONS

T0 = 1_764_460_800_000  # 2025-11-30T00:00:00Z
TS_MIN, TS_MAX = 946_684_800_000, 4_102_444_800_000
SITE = "clyman"
DEVICE = "pole-1"
READING_STREAMS = ("weather", "snow", "frame")
REASONS = frozenset(REJECTION_REASONS)

slugs = st.from_regex(r"[a-z0-9][a-z0-9-]{0,20}", fullmatch=True)
hex64 = st.binary(min_size=32, max_size=32).map(bytes.hex)

# JSON scalars and containers, including the NaN/Infinity that json.loads accepts.
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=40)
)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner),
    max_leaves=12,
)


def weather_fields() -> st.SearchStrategy[dict[str, Any]]:
    """A valid weather sample: at least one value, ground temperature with its depth."""
    optional = {
        "snow_depth_mm": st.floats(0, 5000),
        "precip_mm": st.floats(0, 500),
        "air_temp_c": st.floats(-60, 60),
        "surface_temp_c": st.floats(-60, 80),
        "relative_humidity_pct": st.floats(0, 100),
    }
    base = st.fixed_dictionaries({}, optional=optional)
    ground = st.none() | st.tuples(st.floats(-60, 60), st.integers(0, 3000))

    def combine(values: dict[str, Any], g: tuple[float, int] | None) -> dict[str, Any]:
        if g is not None:
            values = {**values, "ground_temp_c": g[0], "ground_probe_depth_mm": g[1]}
        return values or {"air_temp_c": -1.5}

    return st.builds(combine, base, ground)


def snow_fields() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "frontage": slugs,
            "snow_cover_fraction": st.floats(0, 1),
            "cleared_width_mm": st.floats(0, 20_000),
        },
        optional={
            "ice_suspected": st.booleans(),
            "frame_sha256": hex64,
            # § 370-10 A's ice: what the camera sees, and the pavement temperature.
            "surface_state": st.sampled_from(["dry", "wet", "ice", "treated"]),
            "surface_temp_c": st.floats(-60, 80),
        },
    )


def frame_fields() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"sha256": hex64, "bytes_len": st.integers(1, 20_000_000)},
        optional={"frontage": slugs},
    )


_FIELDS = {"weather": weather_fields, "snow": snow_fields, "frame": frame_fields}


@st.composite
def valid_readings(draw: st.DrawFn, device: str = DEVICE) -> tuple[str, dict[str, Any]]:
    """(stream, payload dict) that the contract accepts."""
    stream = draw(st.sampled_from(READING_STREAMS))
    body: dict[str, Any] = {
        "schema": 1,
        "device": device,
        "seq": draw(st.integers(0, 2**63 - 1)),
        "ts": draw(st.integers(TS_MIN, TS_MAX)),
    }
    body.update(draw(_FIELDS[stream]()))
    if draw(st.booleans()):
        body["stream"] = stream
    return stream, body


# Values each field refuses, whatever else the payload holds.
_BAD_NUMBERS = [math.nan, math.inf, -math.inf, 1e308, -1e308, "12", [], {}, True]
_BAD: dict[str, list[Any]] = {
    "schema": [0, 2, -1, 1.0, "1", True, None, [1], 2**64],
    "device": ["", "POLE-1", "pole 1", "-pole", "p" * 64, 7, None, "pölé", "pole-1\n"],
    "seq": [-1, 2**63, 2**70, 1.5, "1", None, True, [], math.nan],
    "ts": [0, TS_MIN - 1, TS_MAX + 1, -(2**63), 1.5e12, "2025-11-30", None, False],
    "snow_depth_mm": [-0.1, 5000.5, *_BAD_NUMBERS],
    "precip_mm": [-1, 501, *_BAD_NUMBERS],
    "air_temp_c": [-60.5, 99, *_BAD_NUMBERS],
    "surface_temp_c": [-61, 80.1, *_BAD_NUMBERS],
    "relative_humidity_pct": [-0.001, 100.5, *_BAD_NUMBERS],
    "ground_temp_c": [-61, 61, *_BAD_NUMBERS],
    "ground_probe_depth_mm": [-1, 3001, 1.5, "10", math.nan],
    "frontage": ["", "Main St", None, 5, "-x"],
    "snow_cover_fraction": [-0.01, 1.01, *_BAD_NUMBERS],
    "cleared_width_mm": [-1, 20_000.1, *_BAD_NUMBERS],
    "ice_suspected": ["yes", 1, None, 0.0],
    "surface_state": ["slush", "", "ICE", 1, True],  # null is "not seen", like frame_sha256
    "frame_sha256": ["0" * 63, "G" * 64, "A" * 64, 5],
    "sha256": ["", "0" * 65, "z" * 64, None],
    "bytes_len": [0, -5, 20_000_001, 1.0, "10"],
    "stream": ["snow!", "", None, 3, "status"],
}
_COMMON = {"schema", "device", "seq", "ts"}
_REQUIRED = {
    "weather": _COMMON,
    "snow": _COMMON | {"frontage", "snow_cover_fraction", "cleared_width_mm"},
    "frame": _COMMON | {"sha256", "bytes_len"},
}


@st.composite
def broken_payloads(draw: st.DrawFn, device: str = DEVICE) -> tuple[str, bytes]:
    """(stream, payload bytes) that break the contract in one chosen way."""
    stream, body = draw(valid_readings(device))
    kind = draw(
        st.sampled_from(["bad_value", "drop", "extra", "nest", "oversize", "not_object", "bytes"])
    )
    if kind == "bad_value":
        # A field of this stream (or "stream" itself) set to a value it refuses.
        field = draw(st.sampled_from(sorted((set(body) | {"stream"}) & set(_BAD))))
        # A frame may name no frontage (``frontage: null`` is valid there, not elsewhere).
        frame_frontage = field == "frontage" and stream == "frame"
        refused = [v for v in _BAD[field] if v is not None or not frame_frontage]
        value = draw(st.sampled_from(refused))
        if field == "stream" and value == stream:
            value = "snow!"
        # A weather field set to NaN beside other fields is still refused (bounds).
        body[field] = value
    elif kind == "drop":
        required = sorted(_REQUIRED[stream] & set(body))
        del body[draw(st.sampled_from(required))]
    elif kind == "extra":
        name = draw(st.text(min_size=1, max_size=20).filter(lambda k: k not in _ALL_FIELDS))
        body[name] = draw(json_values)
    elif kind == "nest":
        depth = draw(st.integers(1_000, 50_000))
        return stream, b'{"schema": 1, "x": ' + b"[" * depth + b"]" * depth + b"}"
    elif kind == "oversize":
        field = draw(st.sampled_from(["device", "frontage", "sha256", "note"]))
        body[field] = "a" * draw(st.integers(10_000, 300_000))
    elif kind == "not_object":
        return stream, json.dumps(draw(st.lists(json_values, max_size=3) | json_scalars)).encode()
    else:
        raw = draw(st.binary(max_size=200).filter(lambda b: not _is_json_object(b)))
        return stream, raw
    return stream, json.dumps(body, allow_nan=True).encode()


_ALL_FIELDS = frozenset(_BAD) | {"stream"}


def _is_json_object(raw: bytes) -> bool:
    try:
        return isinstance(json.loads(raw), dict)
    except (ValueError, RecursionError):
        return False


def bad_topics(site: str = SITE) -> st.SearchStrategy[str]:
    """Topics under ``sidewalk/v1/<site>/+/+`` (what ingest receives) that break the contract."""
    # Printable only: Mosquitto refuses control characters and non-characters in topics.
    printable = st.characters(
        whitelist_categories=("L", "N", "P", "S", "Zs"), blacklist_characters="/+#"
    )
    bad_level = st.sampled_from(["", "POLE", "a b", "-x", "x" * 70, "pölé", "$sys", "é"]) | st.text(
        printable, max_size=12
    ).filter(lambda s: not _slug(s))
    stream = st.sampled_from(READING_STREAMS)
    return st.one_of(
        st.builds(lambda d, s: f"sidewalk/v1/{site}/{d}/{s}", bad_level, stream),
        st.builds(lambda s: f"sidewalk/v1/{site}/{DEVICE}/{s}", bad_level | st.just("cmd")),
    )


def any_topics() -> st.SearchStrategy[str]:
    """Any topic string at all: extra and empty levels, wildcards, other roots."""
    level = st.text(max_size=8) | st.sampled_from(["sidewalk", "v1", SITE, DEVICE, "+", "#", ""])
    known = st.sampled_from([*READING_STREAMS, "status", "stored", "jpeg", "cmd"])
    return st.one_of(
        st.lists(level, min_size=0, max_size=8).map("/".join),
        st.builds(lambda a, b, s: f"sidewalk/v1/{a}/{b}/{s}", level, level, known),
        st.builds(lambda s, extra: f"sidewalk/v1/{SITE}/{DEVICE}/{s}/{extra}", known, level),
    )


def _slug(text: str) -> bool:
    return re.fullmatch(r"[a-z0-9][a-z0-9-]{0,62}", text) is not None
