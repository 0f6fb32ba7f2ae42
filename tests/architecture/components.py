"""The workspace's components as the architecture tests see them: folder, distribution, modules."""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
# The wiring (``sidewalk.system``) and the command line (``sidewalk.cli``) share a folder.
WIRING = {"system": "cli", "cli": "cli"}


def normalize(name: str) -> str:
    """A distribution name as package indexes compare them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    """``"psycopg[binary]>=3.2"`` → ``"psycopg"``."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    if match is None:
        raise ValueError(f"not a requirement: {requirement!r}")
    return normalize(match.group(1))


@dataclass(frozen=True)
class Component:
    folder: str
    project: dict[str, Any]
    root: Path = ROOT  # a test's copy lives elsewhere

    @property
    def path(self) -> Path:
        return self.root / self.folder

    @property
    def distribution(self) -> str:
        return normalize(str(self.project["name"]))

    @property
    def declared(self) -> set[str]:
        """The distributions its ``pyproject.toml`` depends on, its extras' included
        (an extra's import is a deferred one that only its feature makes)."""
        extras = self.project.get("optional-dependencies", {}).values()
        wanted = [*self.project.get("dependencies", []), *(r for e in extras for r in e)]
        return {requirement_name(r) for r in wanted}

    def modules(self) -> Iterator[Path]:
        yield from sorted((self.path / "sidewalk").rglob("*.py"))


def components() -> list[Component]:
    """Every workspace member, in the root ``pyproject.toml``'s order."""
    root = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    found = []
    for folder in root["tool"]["uv"]["workspace"]["members"]:
        data = tomllib.loads((ROOT / folder / "pyproject.toml").read_text("utf-8"))
        found.append(Component(folder, data["project"]))
    return found


def imported_names(path: Path) -> Iterator[tuple[str, int]]:
    """Every absolute import in the module, anywhere in it (inside functions and
    ``if TYPE_CHECKING:`` too), as (dotted name, line)."""
    tree = ast.parse(path.read_text("utf-8"), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module, node.lineno
