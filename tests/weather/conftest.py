"""Fixtures for the real weather records; tests skip (naming the path) only if it is absent."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidewalk.scenarios.weather import WeatherDataMissing, record_path


def _path_or_skip(source: str) -> Path:
    try:
        return record_path("minneapolis" if source == "minneapolis" else "milwaukee")
    except WeatherDataMissing as exc:
        pytest.skip(f"shared weather data absent: {exc}")


@pytest.fixture
def minneapolis_csv() -> Path:
    return _path_or_skip("minneapolis")


@pytest.fixture
def milwaukee_csv() -> Path:
    return _path_or_skip("milwaukee")
