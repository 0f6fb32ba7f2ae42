"""Fixtures shared by the attack tests of this package."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.security.attack_village import Village, serve_hostile_village


@pytest.fixture(scope="package")
def hostile_village(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Village]:
    """One dashboard on the hostile storm for every attack module: they change no records
    (sessions of their own aside), so they share it whatever their order."""
    with serve_hostile_village(tmp_path_factory.mktemp("hostile")) as served:
        yield served
