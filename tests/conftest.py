from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest_plugins = ["tests.harness.mosquitto", "tests.harness.postgres", "tests.harness.victoria"]


@pytest.fixture(scope="session")
def demo_scene(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``write_demo_scene``'s default walk (first joint faulted 1 in), rendered once.

    Rendering takes seconds of CPU and the scene is seeded, so every test that
    only reads it shares one copy. Tests must not change its files.
    """
    from sidewalk.analytics.inspect import write_demo_scene

    return write_demo_scene(tmp_path_factory.mktemp("demo-scene"))


@pytest.fixture(autouse=True)
def _process_state_as_found() -> Iterator[None]:
    """Give every test the logging and console a fresh command would have.

    Services configure the root logger (a stderr handler at INFO) and the CLI
    caches its Rich consoles with the width COLUMNS had at first use; left in
    place, a later test's CliRunner output carries Alembic's or fontTools' INFO
    lines, or a table drawn at another test's width, depending only on which
    tests ran before it in the same process (as pytest-xdist's workers order them).
    """
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    _clear_console_caches()
    yield
    for handler in list(root.handlers):
        if handler not in handlers:
            root.removeHandler(handler)
    for handler in handlers:
        if handler not in root.handlers:
            root.addHandler(handler)
    root.setLevel(level)
    _clear_console_caches()


def _clear_console_caches() -> None:
    common = sys.modules.get("sidewalk.cli.common")
    if common is not None:
        for name in ("console", "_errors"):
            cached = getattr(common, name, None)
            if cached is not None and hasattr(cached, "cache_clear"):
                cached.cache_clear()
