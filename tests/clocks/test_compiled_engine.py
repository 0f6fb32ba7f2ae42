"""The clock engine compiled with mypyc decides exactly as its Python source.

``scripts/compile_clocks.py`` (run by ``scripts/bootstrap``) compiles the three
hot modules; ``sidewalk.analytics.clocks.native`` puts the build first only while
its stamp matches the sources. The same storm runs in two processes, compiled
and ``SIDEWALK_PURE_PYTHON=1``: every path's events and the state it leaves
(snapshot, restore, a registry change) must be byte for byte the same.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from sidewalk.analytics import clocks
from sidewalk.analytics.clocks import native

ROOT = Path(__file__).resolve().parents[2]

# Run in a child process: which build it loads is decided when the package is imported.
STORM = """
import hashlib, itertools, json, sys
from datetime import timedelta
from sidewalk.analytics import clocks
from sidewalk.analytics.clocks import engine as engine_module, native
from sidewalk.analytics.clocks.engine import ClockEngine, FrontageSpec
from sidewalk.core.profile import load_profile
from tests.clocks.test_engine_fast_path import _village_storm

specs, readings = _village_storm()
out = {"engine": native.describe(clocks.__path__), "file": engine_module.__file__}
one = ClockEngine(load_profile(), specs)
events = [e for r in readings for e in one.step(r)]
chunks = [list(g) for _, g in itertools.groupby(readings, key=lambda r: r.ts)]
batch = ClockEngine(load_profile(), specs)
events += [e for chunk in chunks for e in batch.step_many(chunk)]
stored = ClockEngine(load_profile(), specs)
events += stored.replay_rows([json.loads(r.to_json()) for r in readings])
# A restart from the snapshot, a week of offenses, a registry change.
resumed = ClockEngine(load_profile(), specs)
resumed.restore(one.snapshot())
events += resumed.advance(readings[-1].event_time + timedelta(days=7))
resumed.set_frontages(specs[:3] + [FrontageSpec("added", specs[0].weather_device)])
events += resumed.advance(readings[-1].event_time + timedelta(days=9))
states = b"".join(e.snapshot() for e in (one, batch, stored, resumed))
out["kinds"] = sorted({type(e).__name__ for e in events})
out["events"] = hashlib.sha256(repr(events).encode()).hexdigest()
out["states"] = hashlib.sha256(states).hexdigest()
print(json.dumps(out))
"""


def _run(pure: bool) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    env.pop("SIDEWALK_PURE_PYTHON", None)
    if pure:
        env["SIDEWALK_PURE_PYTHON"] = "1"
    done = subprocess.run(
        [sys.executable, "-c", STORM],
        check=False,
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout)
    return result


def _can_compile() -> bool:
    headers = Path(sysconfig.get_paths()["include"]) / "Python.h"
    return shutil.which("cc") is not None and headers.exists()


def test_the_compiled_engine_decides_exactly_as_the_python_source() -> None:
    if not native.usable():
        if native.built_for() is None and _can_compile():
            pytest.fail(f"the clock engine is not compiled here: {native.describe([])}")
        pytest.skip(native.describe(list(clocks.__path__)))
    compiled, python = _run(pure=False), _run(pure=True)
    assert compiled["engine"] == "compiled (mypyc)"
    assert str(compiled["file"]).endswith(".so")
    assert python["engine"] == "Python (SIDEWALK_PURE_PYTHON=1)"
    assert str(python["file"]).endswith("engine.py")
    # The storm reaches every kind of decision, so the comparison covers them.
    kinds = python["kinds"]
    assert isinstance(kinds, list)
    assert {"ClearingViolation", "ClearingUnverified", "OffenseCounted"} <= set(kinds)
    assert compiled["kinds"] == python["kinds"]
    assert compiled["events"] == python["events"]
    assert compiled["states"] == python["states"]


def test_a_build_is_used_only_while_it_matches_the_sources(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "engine.py"
    source.write_text("LIMIT = 1\n")
    monkeypatch.setattr(native, "sources", lambda: [source])
    monkeypatch.setattr(native, "NATIVE_DIR", tmp_path / "_mypyc")
    monkeypatch.delenv("SIDEWALK_PURE_PYTHON", raising=False)
    assert not native.usable()
    assert "not compiled" in native.describe([])
    (tmp_path / "_mypyc").mkdir()
    (tmp_path / "_mypyc" / "STAMP").write_text(f"mypyc 9\n{native.source_stamp('mypyc 9')}\n")
    assert native.usable()
    monkeypatch.setenv("SIDEWALK_PURE_PYTHON", "1")
    assert not native.usable()
    monkeypatch.delenv("SIDEWALK_PURE_PYTHON")
    # Another compiler, or a source edited after the build: the build is stale.
    assert native.source_stamp("mypyc 10") != native.source_stamp("mypyc 9")
    source.write_text("LIMIT = 2\n")
    assert not native.usable()
    assert "older than the sources" in native.describe([])
