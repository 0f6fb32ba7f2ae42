"""Fixtures for the storage tests: a migrated ``CaseStore`` on each backend."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sidewalk.storage.cases import CaseStore

# A fixed event time keeps every test's clocks and notice years predictable.
T0 = datetime(2026, 12, 10, 18, 0, tzinfo=UTC)


def _url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'cases.db'}"
    url: str = request.getfixturevalue("postgres_fresh_url")
    return url


BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.services),
]


@pytest.fixture(params=BACKENDS)
def empty_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CaseStore]:
    """A ``CaseStore`` on an empty database (no schema yet), SQLite or PostgreSQL."""
    store = CaseStore(_url(request.param, request, tmp_path))
    yield store
    store.close()


@pytest.fixture
def case_store(empty_store: CaseStore) -> CaseStore:
    """A migrated ``CaseStore`` with one owner, one device and one frontage."""
    empty_store.create_schema()
    empty_store.registry.upsert_owner(
        "owner-smith", "Jane Smith", ["101 Main St", "Clyman, WI 53016"]
    )
    empty_store.registry.upsert_device("pole-1", "clyman")
    empty_store.registry.upsert_frontage(
        "main-101",
        site="clyman",
        parcel_number="026-0915-0001",
        street_address="101 Main St",
        length_ft=66.0,
        zone="residential",
        owner_id="owner-smith",
        device_id="pole-1",
    )
    return empty_store
