"""The test scenes (``sidewalk.testkit``) reach no pole and no server, and no
production module imports them.

The lock file says what each install gets: the server's (the workspace root
without the ``dev`` group, ``uv sync --no-dev``) and a pole's (``sidewalk-edge``)
must not pull ``sidewalk-testkit`` in. The layers contract puts the test scenes
above every component; a copy of the tree with a production module importing
them breaks it, naming the import. The one deferred import the contract lets
through (the demo walk of ``sidewalk inspect demo-scene``) is the only one in
the source.
"""

from __future__ import annotations

import shutil
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tests.architecture.components import ROOT, Component, components, imported_names, normalize
from tests.architecture.test_layers import LINTER, lint, verdicts

TESTKIT = "sidewalk-testkit"
# The demo walk's renderer, deferred inside write_demo_scene and declared as the
# `demo` extra of sidewalk-analytics (the dev group installs it).
DEMO = ("analytics/sidewalk/analytics/inspect.py", "sidewalk.testkit.defect_scenes")


def installed_with(lock: Mapping[str, Any], root: str, groups: tuple[str, ...] = ()) -> set[str]:
    """Every distribution an install of ``root`` gets from the lock file: its
    dependencies, theirs and so on, no extras, only the dependency ``groups`` named."""
    packages = {normalize(p["name"]): p for p in lock["package"]}
    wanted = [normalize(root)]
    seen: set[str] = set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        package = packages[name]
        deps = list(package.get("dependencies", []))
        if name == normalize(root):
            for group in groups:
                deps += package.get("dev-dependencies", {}).get(group, [])
        wanted += [normalize(d["name"]) for d in deps]
    return seen


def scene_imports(parts: list[Component]) -> list[tuple[str, str]]:
    """(module, imported name) for each import of ``sidewalk.testkit`` outside it."""
    return [
        (str(module.relative_to(part.root)), dotted)
        for part in parts
        if part.distribution != TESTKIT
        for module in part.modules()
        for dotted, _ in imported_names(module)
        if dotted == "sidewalk.testkit" or dotted.startswith("sidewalk.testkit.")
    ]


def _lock() -> dict[str, Any]:
    return tomllib.loads((ROOT / "uv.lock").read_text("utf-8"))


def test_neither_the_server_nor_a_pole_installs_the_test_scenes() -> None:
    lock = _lock()
    server = installed_with(lock, "sidewalk-watch")
    pole = installed_with(lock, "sidewalk-edge")
    assert {"sidewalk-analytics", "sidewalk-cli", "sidewalk-dashboard"} <= server
    assert "sidewalk-edge" in pole
    assert TESTKIT not in server
    assert TESTKIT not in pole
    # The development environment does have them (the suite and the benches use them).
    assert TESTKIT in installed_with(lock, "sidewalk-watch", ("dev",))


def test_an_install_that_pulls_the_test_scenes_is_found() -> None:
    lock = _lock()
    for package in lock["package"]:
        if package["name"] == "sidewalk-storage":
            package.setdefault("dependencies", []).append({"name": TESTKIT})
    assert TESTKIT in installed_with(lock, "sidewalk-watch")
    assert TESTKIT in installed_with(lock, "sidewalk-ingest")


def test_only_the_demo_walk_imports_the_test_scenes() -> None:
    assert scene_imports(components()) == [DEMO]
    (layers,) = [c for c in LINTER["contracts"] if c["type"] == "layers"]
    assert layers["layers"][0] == "sidewalk.testkit"
    assert layers["ignore_imports"] == [f"sidewalk.analytics.inspect -> {DEMO[1]}"]


def test_a_production_import_of_the_test_scenes_breaks_the_layers(tmp_path: Path) -> None:
    roots, parts = [], []
    for component in components():
        copy = tmp_path / component.folder
        shutil.copytree(
            component.path / "sidewalk",
            copy / "sidewalk",
            ignore=shutil.ignore_patterns("__pycache__", "static", "templates"),
        )
        roots.append(copy)
        parts.append(Component(component.folder, component.project, tmp_path))
    with (tmp_path / "analytics/sidewalk/analytics/defects/photo.py").open("a") as f:
        f.write("\n\ndef _late() -> None:\n    import sidewalk.testkit.defect_truth  # noqa\n")

    assert sorted(scene_imports(parts)) == [
        ("analytics/sidewalk/analytics/defects/photo.py", "sidewalk.testkit.defect_truth"),
        DEMO,
    ]
    result = lint(roots)
    out = result.stdout
    (layers,) = [c["name"] for c in LINTER["contracts"] if c["type"] == "layers"]
    assert result.returncode != 0, out
    assert verdicts(out)[layers] == "BROKEN", out
    assert "sidewalk.analytics.defects.photo -> sidewalk.testkit.defect_truth" in out
