"""A VictoriaMetrics the fault tests may stop and start (the session one must stay up)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.faults.harness import VictoriaServer


@pytest.fixture(scope="module")
def stoppable_victoria(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VictoriaServer]:
    """Our own VictoriaMetrics, stopped at the end of the module."""
    binary = shutil.which("victoria-metrics")
    if binary is None:
        pytest.skip("victoria-metrics not found (apt install victoria-metrics)")
    server = VictoriaServer(tmp_path_factory.mktemp("victoria"), binary)
    server.start()
    try:
        yield server
    finally:
        server.stop()
