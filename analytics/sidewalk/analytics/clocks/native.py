"""The clock engine compiled with mypyc, used only while it matches these sources.

The engine's hot loop (``engine``, ``cessation``, ``enforcement``) is plain
Python; ``scripts/compile_clocks.py`` (run by ``scripts/bootstrap``) compiles
those three modules with mypyc into ``_mypyc/`` beside them, with a stamp: the
hash of every source the compiler read from this repository, the Python and the
compiler. The package puts ``_mypyc/`` first on its path only when the stamp
matches the sources as they are now, so an edited module is never shadowed by
a stale build: it runs as Python until the next bootstrap compiles it again.
``SIDEWALK_PURE_PYTHON=1`` keeps the Python modules (the compiled ones must
decide exactly as they do; a test runs both).
"""

from __future__ import annotations

import ast
import hashlib
import os
import sys
from pathlib import Path

import sidewalk.core

#: The modules compiled (the rest of the package is cheap per reading).
COMPILED = ("engine", "cessation", "enforcement")
#: Where the compiled modules go, and the stamp they were built for.
NATIVE_DIR = Path(__file__).with_name("_mypyc")
STAMP = "STAMP"
_CLOCKS = Path(__file__).parent
# mypyc reads the types of everything the compiled modules import from the
# repository (and may fold its constants in): the clocks and the core.
_CORE = Path(sidewalk.core.__file__).parent


def sources() -> list[Path]:
    """Every repository source the compiled build depends on, in a fixed order."""
    return sorted(_CLOCKS.glob("*.py")) + sorted(_CORE.rglob("*.py"))


def source_stamp(compiler: str) -> str:
    """The stamp a build from the sources as they are now carries."""
    digest = hashlib.sha256(f"{sys.version}\n{compiler}\n".encode())
    for path in sources():
        digest.update(path.name.encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def built_for() -> tuple[str, str] | None:
    """(compiler, stamp) of the build in ``_mypyc/``, None if there is none."""
    try:
        compiler, stamp = (NATIVE_DIR / STAMP).read_text().split("\n")[:2]
    except (OSError, ValueError):
        return None
    return compiler, stamp


def usable() -> bool:
    """Whether the compiled build matches the sources (and is not turned off)."""
    if os.environ.get("SIDEWALK_PURE_PYTHON") == "1":
        return False
    built = built_for()
    return built is not None and built[1] == source_stamp(built[0])


def restore_annotations() -> None:
    """Give the compiled modules' classes the annotations of their source (idempotent).

    A compiled class keeps only erased types in ``__annotations__`` (``dict`` for
    ``dict[str, ClearingClock]``, ``type`` for any union); pydantic, which writes
    and reads the engine's snapshot, needs them whole: the source's own (strings,
    as ``from __future__ import annotations`` leaves them) are put back before
    its codec is built (``engine._state_codec``). Python modules are left alone."""
    for name in COMPILED:
        module = sys.modules.get(f"{__package__}.{name}")
        if module is None or str(module.__file__).endswith(".py"):
            continue  # not imported, or Python
        tree = ast.parse((_CLOCKS / f"{name}.py").read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.ClassDef):
                continue
            cls = getattr(module, node.name)
            annotations = {
                item.target.id: ast.unparse(item.annotation)
                for item in node.body
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)
            }
            if not annotations:
                continue
            cls.__annotations__ = annotations
            fields = getattr(cls, "__dataclass_fields__", None)
            if fields is None:
                continue
            for field in fields.values():
                field.type = annotations.get(field.name, field.type)
            # A compiled instance has no ``__dict__``: pydantic then sets each field
            # by name, as it does for a dataclass with ``__slots__``.
            if not hasattr(cls, "__slots__"):
                cls.__slots__ = tuple(fields)


def describe(path: list[str]) -> str:
    """How the clock engine runs in this process, in an operator's words."""
    if str(NATIVE_DIR) in path:
        return "compiled (mypyc)"
    if os.environ.get("SIDEWALK_PURE_PYTHON") == "1":
        return "Python (SIDEWALK_PURE_PYTHON=1)"
    if built_for() is None:
        return "Python (not compiled: run scripts/bootstrap)"
    return "Python (the compiled build is older than the sources: run scripts/bootstrap)"
