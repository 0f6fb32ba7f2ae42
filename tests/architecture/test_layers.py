"""DESIGN.md's layers hold, checked by import-linter against the contracts in pyproject.toml.

``[tool.importlinter]`` in the root ``pyproject.toml`` holds the contracts:
the layers (wiring/CLI → dashboard → alerts, scenarios → analytics, ingest →
storage, edge → core), no component importing the wiring, the pole importing
only core, and no import cycles. The second test shows the check can fail: a
copy of the tree with forbidden imports added breaks each contract by name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

from tests.architecture.components import ROOT, components

CONFIG = ROOT / "pyproject.toml"
LINTER = tomllib.loads(CONFIG.read_text("utf-8"))["tool"]["importlinter"]
CONTRACTS = {c["id"]: c["name"] for c in LINTER["contracts"]}
# import-linter's own entry point, run by this interpreter (no cache: nothing left behind).
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def lint(python_path: list[Path] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the contracts on the workspace; with ``python_path``, on the ``sidewalk``
    found there instead."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["COLUMNS"] = "500"  # a contract's name must not wrap across lines
    isolate = []
    if python_path is not None:
        # -S: no site-packages .pth files, so the workspace's editable installs
        # stay off the path and only the copies' portions make up `sidewalk`.
        isolate = ["-S"]
        packages = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
        env["PYTHONPATH"] = os.pathsep.join([*map(str, python_path), *sorted(packages)])
    return subprocess.run(
        [sys.executable, *isolate, "-c", LINT, "--no-cache", str(CONFIG)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def verdicts(output: str) -> dict[str, str]:
    """Contract name → KEPT or BROKEN, from the report."""
    found = re.findall(r"^(.+?) (KEPT|BROKEN)(?: \(\d+ ignored imports?\))?$", output, re.M)
    return {name.strip(): verdict for name, verdict in found}


def test_every_part_of_the_namespace_has_a_layer() -> None:
    # A package the layers do not name would be bound by none of them.
    (layers,) = [c["layers"] for c in LINTER["contracts"] if c["type"] == "layers"]
    named = {m.strip() for layer in layers for m in layer.split("|")}
    present = {
        f"sidewalk.{p.name.removesuffix('.py')}"
        for component in components()
        for p in (component.path / "sidewalk").iterdir()
        if p.suffix == ".py" or (p / "__init__.py").exists()
    }
    assert present == named


def test_the_repository_keeps_every_contract() -> None:
    result = lint()
    assert result.returncode == 0, result.stdout + result.stderr
    assert verdicts(result.stdout) == dict.fromkeys(CONTRACTS.values(), "KEPT")


def test_forbidden_imports_break_the_contracts_they_name(tmp_path: Path) -> None:
    roots = []
    for component in components():
        copy = tmp_path / component.folder
        shutil.copytree(
            component.path / "sidewalk",
            copy / "sidewalk",
            ignore=shutil.ignore_patterns("__pycache__", "static", "templates"),
        )
        roots.append(copy)
    core, edge = tmp_path / "core/sidewalk/core", tmp_path / "edge/sidewalk/edge"
    # Inside a function, as the imports that hid from a reader did.
    with (core / "units.py").open("a") as f:
        f.write("\n\ndef _late() -> None:\n    import sidewalk.system  # noqa\n")
    with (edge / "buffer.py").open("a") as f:
        f.write("\nfrom sidewalk.storage import timeseries  # noqa\n")
    with (core / "contract.py").open("a") as f:  # config imports contract: a cycle
        f.write("\nfrom sidewalk.core import config  # noqa\n")

    result = lint(roots)
    out = result.stdout
    assert result.returncode != 0, out
    assert verdicts(out) == dict.fromkeys(CONTRACTS.values(), "BROKEN"), out
    # Each broken contract names the import that broke it.
    assert "sidewalk.core.units -> sidewalk.system" in out
    assert "sidewalk.edge.buffer -> sidewalk.storage.timeseries" in out
    assert ".contract -> .config" in out
