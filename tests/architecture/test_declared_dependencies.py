"""Each component's ``pyproject.toml`` declares every distribution its code imports.

A pole installs ``sidewalk-edge`` with only what that file declares, and so does
any other install of one component: an import that works here only because the
workspace environment holds everything would fail there. Imports are read from
the source (``ast``), so those inside functions and under ``TYPE_CHECKING``
count as much as those at the top.
"""

from __future__ import annotations

import sys
from functools import cache
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

from tests.architecture.components import (
    WIRING,
    Component,
    components,
    imported_names,
    normalize,
)

COMPONENTS = components()


@cache
def provides() -> dict[str, list[str]]:
    """Import name → the installed distributions that provide it (``cv2`` → opencv-…)."""
    return dict(packages_distributions())


def sibling_distribution(dotted: str) -> str:
    """``sidewalk.storage.cases`` → ``sidewalk-storage``; the wiring's names → ``sidewalk-cli``."""
    part = dotted.split(".")[1]
    return f"sidewalk-{WIRING.get(part, part)}"


def undeclared(component: Component, providers: dict[str, list[str]]) -> list[str]:
    """What the component imports without declaring it, one line per import."""
    declared = component.declared | {component.distribution}
    problems = []
    for module in component.modules():
        where = module.relative_to(component.root)
        for dotted, line in imported_names(module):
            top = dotted.split(".")[0]
            if top in sys.stdlib_module_names:
                continue
            if top == "sidewalk":
                if dotted == "sidewalk":
                    problems.append(f"{where}:{line}: imports the bare namespace 'sidewalk'")
                elif (dist := sibling_distribution(dotted)) not in declared:
                    problems.append(f"{where}:{line}: {dotted} needs {dist}")
                continue
            dists = {normalize(d) for d in providers.get(top, [])}
            if not dists:
                problems.append(f"{where}:{line}: no installed distribution provides {top!r}")
            elif not dists & declared:
                problems.append(f"{where}:{line}: {dotted} needs {' or '.join(sorted(dists))}")
    return problems


@pytest.mark.parametrize("component", COMPONENTS, ids=[c.folder for c in COMPONENTS])
def test_every_import_is_declared(component: Component) -> None:
    problems = undeclared(component, provides())
    assert not problems, (
        f"{component.folder}/pyproject.toml does not declare what its code imports:\n  "
        + "\n  ".join(problems)
    )


def test_an_undeclared_import_is_found(tmp_path: Path) -> None:
    # The check itself can fail: a core module importing jinja2 and the wiring, late.
    package = tmp_path / "core" / "sidewalk" / "core"
    package.mkdir(parents=True)
    (package / "bad.py").write_text(
        "import json\n\n\ndef later() -> None:\n    import jinja2\n"
        "    from sidewalk.system import x\n"
    )
    fake = Component("core", {"name": "sidewalk-core", "dependencies": ["pydantic>=2"]}, tmp_path)
    assert undeclared(fake, provides()) == [
        "core/sidewalk/core/bad.py:5: jinja2 needs jinja2",
        "core/sidewalk/core/bad.py:6: sidewalk.system needs sidewalk-cli",
    ]
