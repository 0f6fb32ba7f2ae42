"""Fuzzer over the three bad-input surfaces: MQTT payloads, the ordinance
profile (and the two config files), and image inputs.

Drives the same Hypothesis strategies as ``tests/fuzz`` with a large
``max_examples``, generation only and ``derandomize`` (a fixed seed: the same
inputs every run). For each target it prints the inputs tried, how many were
rejected with a reason, how many were taken (valid after all), crashes (an
exception other than the target's own error type, or a verdict that hides a
bug: ``internal_error``, ``measurement_failed``, a broken payload accepted, an
error that does not name its field) which must be 0, the reasons, and the
inputs per second beside a reference rate: the same code on a valid input,
timed in the same run.

    uv run python -m bench.fuzz [--scale 1.0]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from sidewalk.analytics.defects import CameraCalibration, DepthIntrinsics, InputProblem
from sidewalk.analytics.defects.io import ImageFailure, inspect_depth_maps, inspect_photos
from sidewalk.core.config import ConfigError, load_settings
from sidewalk.core.mqtt import MqttMessage
from sidewalk.core.profile import ProfileError, parse_profile
from sidewalk.edge.config import EdgeConfigError, load_edge_settings
from sidewalk.ingest.validate import Rejected, classify
from sidewalk.testkit.defect_scenes import depth_survey_camera, random_scene
from tests.fuzz.images import image_inputs
from tests.fuzz.payloads import (
    DEVICE,
    SITE,
    T0,
    any_topics,
    bad_topics,
    broken_payloads,
    json_values,
    valid_readings,
)
from tests.fuzz.test_configs import POLE, POLE_REQUIRED, SERVER
from tests.fuzz.test_profile import REQUIRED, TEXT, value_changes
from tests.fuzz.toml_mutations import (
    Mutation,
    deletions,
    noise,
    syntax_errors,
    unknown_keys,
    wrong_types,
)

X = TypeVar("X")


@dataclass
class Tally:
    """What one target did with its inputs."""

    name: str
    tried: int = 0
    rejected: int = 0
    taken: int = 0
    crashes: list[str] = field(default_factory=list)
    odd: list[str] = field(default_factory=list)  # rejections of no known category
    reasons: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    reference_per_s: float = 0.0


def drive(strategy: st.SearchStrategy[X], n: int, one: Callable[[X], None]) -> None:
    """Run ``one`` on ``n`` generated inputs (generation only, fixed seed)."""

    @settings(
        max_examples=n,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(strategy)
    def body(x: X) -> None:
        one(x)

    body()


def rate(fn: Callable[[], object], seconds: float = 0.5) -> float:
    """Calls per second of ``fn`` over about ``seconds``."""
    n, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        fn()
        n += 1
    return n / (time.perf_counter() - t0)


def crash(tally: Tally, what: str) -> None:
    tally.crashes.append(what)
    tally.tried += 1


# --- payloads ---------------------------------------------------------------------


def fuzz_payloads(n: int) -> Tally:
    tally = Tally("payloads")
    proper = broken_payloads().map(lambda b: (f"sidewalk/v1/{SITE}/{DEVICE}/{b[0]}", b[1], True))
    on_bad_topic = st.tuples(
        bad_topics(), valid_readings().map(lambda r: json.dumps(r[1]).encode()), st.just(True)
    )
    anything = st.tuples(any_topics(), st.binary(max_size=300), st.just(False))
    any_json = st.tuples(
        st.sampled_from([f"sidewalk/v1/{SITE}/{DEVICE}/{s}" for s in ("weather", "snow", "frame")]),
        json_values.map(lambda v: json.dumps(v).encode()),
        st.just(True),
    )

    def one(case: tuple[str, bytes, bool]) -> None:
        topic, payload, must_reject = case
        try:
            verdict = classify(MqttMessage(topic, payload, 1, False, 0), T0)
        except Exception as exc:
            crash(tally, f"{type(exc).__name__}: {exc} on {topic!r} {payload[:80]!r}")
            return
        tally.tried += 1
        if isinstance(verdict, Rejected):
            letter = verdict.dead_letter
            if letter.reason == "internal_error" or not letter.detail.strip():
                tally.crashes.append(f"{letter.reason} {letter.detail!r} on {topic!r}")
            tally.rejected += 1
            tally.reasons[letter.reason] += 1
        elif must_reject:
            tally.crashes.append(f"accepted a broken input on {topic!r}: {payload[:80]!r}")
        else:
            tally.taken += 1
            tally.reasons[f"({type(verdict).__name__.lower()})"] += 1

    t0 = time.perf_counter()
    drive(st.one_of(proper, on_bad_topic, anything, any_json), n, one)
    tally.seconds = time.perf_counter() - t0
    good = MqttMessage(
        f"sidewalk/v1/{SITE}/{DEVICE}/weather",
        json.dumps({"schema": 1, "device": DEVICE, "seq": 1, "ts": T0, "air_temp_c": 1}).encode(),
        1,
        False,
        0,
    )
    tally.reference_per_s = rate(lambda: classify(good, T0))
    return tally


# --- profile and configs ------------------------------------------------------------


# Profile/config rejections by the words of the message (they carry no code).
_CATEGORIES = (
    ("not valid TOML", "toml_syntax"),
    ("not UTF-8", "unreadable"),
    ("cannot read", "unreadable"),
    ("not a configuration field", "unknown_key"),
    ("Extra inputs", "unknown_key"),
    ("Field required", "missing_field"),
    ("Value error", "rule_check"),
    ("should be", "wrong_type"),
    ("not a valid path", "wrong_type"),
    ("tag", "wrong_type"),  # a sensor table whose kind is no known kind
)


def _category(message: str) -> str:
    return next((c for words, c in _CATEGORIES if words in message), "other")


def _names_field(message: str, m: Mutation) -> bool:
    if m.kind == "noise":
        return True
    if m.kind == "syntax":
        return re.search(r"line \d+", message) is not None
    if m.kind in {"negative", "huge", "fraction_days"}:  # a rule-level check names the rule
        return m.table in message
    # Arrays of tables add the index (sensors.2.sht31.bus); a rule's own check
    # names the rule and the key (citation is required …).
    dotted = f"{m.table}.{m.key}" if m.table else m.key
    return dotted in message or (m.table in message and m.key in message)


def fuzz_toml(
    name: str,
    n: int,
    *,
    strategy: st.SearchStrategy[tuple[str, Mutation]],
    load: Callable[[str], Any],
    error: type[Exception],
    reference: str,
) -> Tally:
    tally = Tally(name)

    def one(case: tuple[str, Mutation]) -> None:
        text, m = case
        try:
            load(text)
        except error as exc:
            message = str(exc)
            tally.tried += 1
            tally.rejected += 1
            category = _category(message)
            tally.reasons[category] += 1
            if category == "other":
                tally.odd.append(message[:200])
            if not _names_field(message, m):
                tally.crashes.append(f"{m}: does not name the field: {message[:200]}")
            return
        except Exception as exc:
            crash(tally, f"{m}: {type(exc).__name__}: {exc}")
            return
        tally.tried += 1
        tally.taken += 1
        tally.reasons["(loaded)"] += 1
        if m.kind not in {"noise", "delete"}:
            tally.crashes.append(f"{m}: a broken file loaded")

    t0 = time.perf_counter()
    drive(strategy, n, one)
    tally.seconds = time.perf_counter() - t0
    tally.reference_per_s = rate(lambda: load(reference))
    return tally


def _file_loader(loader: Callable[[Path], Any], path: Path) -> Callable[[str], Any]:
    def load(text: str) -> Any:
        path.write_text(text, "utf-8", errors="surrogatepass")
        return loader(path)

    return load


# --- images ---------------------------------------------------------------------------


def fuzz_images(n: int) -> Tally:
    tally = Tally("images")
    rng = np.random.default_rng(5)
    k = depth_survey_camera(random_scene(rng), rng, 0).matrix
    intrinsics = DepthIntrinsics(k[0, 0], k[1, 1], k[0, 2], k[1, 2])
    calibration = CameraCalibration(k, np.zeros(5))

    def one(raw: bytes) -> None:
        try:
            results = [*inspect_photos([raw], calibration), *inspect_depth_maps([raw], intrinsics)]
        except Exception as exc:
            crash(tally, f"{type(exc).__name__}: {exc} on {raw[:40]!r}")
            return
        tally.tried += 1
        failures = [r for r in results if isinstance(r, ImageFailure)]
        for f in failures:
            if f.problem is InputProblem.MEASUREMENT_FAILED:
                tally.crashes.append(f"measurement_failed: {f.detail} on {raw[:40]!r}")
            tally.reasons[f.problem.value] += 1
        tally.reasons.update("(measured)" for _ in range(len(results) - len(failures)))
        if failures:
            tally.rejected += 1
        else:
            tally.taken += 1

    t0 = time.perf_counter()
    drive(image_inputs, n, one)
    tally.seconds = time.perf_counter() - t0
    good = cv2.imencode(".png", rng.integers(0, 255, (48, 64, 3), dtype=np.uint8))[1].tobytes()
    tally.reference_per_s = rate(
        lambda: (inspect_photos([good], calibration), inspect_depth_maps([good], intrinsics))
    )
    return tally


# --- report ---------------------------------------------------------------------------


def report(tallies: list[Tally]) -> int:
    print(f"{'target':<10} {'tried':>7} {'rejected':>9} {'taken':>7} {'crashes':>8} "
          f"{'inputs/s':>9} {'valid input/s':>14}")  # fmt: skip
    for t in tallies:
        print(
            f"{t.name:<10} {t.tried:>7} {t.rejected:>9} {t.taken:>7} {len(t.crashes):>8} "
            f"{t.tried / t.seconds:>9.0f} {t.reference_per_s:>14.0f}"
        )
    total = sum(t.tried for t in tallies)
    crashes = sum(len(t.crashes) for t in tallies)
    print(f"{'total':<10} {total:>7} {sum(t.rejected for t in tallies):>9} "
          f"{sum(t.taken for t in tallies):>7} {crashes:>8}")  # fmt: skip
    for t in tallies:
        reasons = ", ".join(f"{r} {c}" for r, c in t.reasons.most_common())
        each = " (a photo and a depth read of each)" if t.name == "images" else ""
        print(f"\n{t.name} reasons{each}: {reasons}")
        for c in t.crashes[:10]:
            print(f"  CRASH {c}")
        for o in t.odd[:3]:
            print(f"  other: {o!r}")
    return 1 if crashes else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every target's count")
    args = parser.parse_args()
    count = {"payloads": 5000, "profile": 2500, "server": 500, "pole": 500, "images": 2500}
    n = {k: max(1, round(v * args.scale)) for k, v in count.items()}
    for name in [k for k in os.environ if k.startswith("SIDEWALK_")]:
        del os.environ[name]  # environment overrides would mask what the files say
    profile = st.one_of(
        wrong_types(TEXT),
        deletions(TEXT, REQUIRED),
        deletions(TEXT, frozenset({"citation"})),
        value_changes(),
        unknown_keys(TEXT),
        syntax_errors(TEXT),
        noise(TEXT),
    )
    with tempfile.TemporaryDirectory(prefix="sidewalk-fuzz-") as tmp:
        server_path, pole_path = Path(tmp) / "server.toml", Path(tmp) / "pole.toml"
        server = st.one_of(
            wrong_types(SERVER), unknown_keys(SERVER), syntax_errors(SERVER), noise(SERVER)
        )
        pole = st.one_of(
            wrong_types(POLE),
            deletions(POLE, POLE_REQUIRED),
            unknown_keys(POLE),
            syntax_errors(POLE),
            noise(POLE),
        )
        tallies = [
            fuzz_payloads(n["payloads"]),
            fuzz_toml(
                "profile",
                n["profile"],
                strategy=profile,
                load=parse_profile,
                error=ProfileError,
                reference=TEXT,
            ),
            fuzz_toml(
                "server",
                n["server"],
                strategy=server,
                load=_file_loader(load_settings, server_path),
                error=ConfigError,
                reference=SERVER,
            ),
            fuzz_toml(
                "pole",
                n["pole"],
                strategy=pole,
                load=_file_loader(load_edge_settings, pole_path),
                error=EdgeConfigError,
                reference=POLE,
            ),
            fuzz_images(n["images"]),
        ]
    return report(tallies)


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except Exception:
        traceback.print_exc()
        raise SystemExit(2) from None
