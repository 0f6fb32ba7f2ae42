from __future__ import annotations

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
