"""Fixtures: rendered demo scenes (known geometry), a real SQLite case store
with one owner's frontages, and a real evidence store."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sidewalk.analytics.inspect import write_demo_scene
from sidewalk.core.profile import Profile, load_profile
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore

T0 = datetime(2026, 6, 1, 15, 0, tzinfo=UTC)
FRONTAGES = ("main-101", "main-103", "main-105", "main-107")


@pytest.fixture(scope="session")
def faulted(demo_scene: dict[str, Path]) -> dict[str, Path]:
    """A walk whose first joint is faulted 1 in (limit 3/4 in): both blocks defective.

    That is the demo scene's default, rendered once for the session (tests/conftest.py).
    """
    return demo_scene


@pytest.fixture(scope="session")
def sound(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The same walk with no fault: no block defective."""
    return write_demo_scene(tmp_path_factory.mktemp("sound"), fault_mm=0.0)


@pytest.fixture
def profile() -> Profile:
    return load_profile()


def seed_owner(store: CaseStore) -> None:
    """One owner with four frontages (the 80 % rule spans all of them)."""
    store.registry.upsert_owner("owner-smith", "Jane Smith", ["101 Main St", "Clyman, WI 53016"])
    for n, fid in enumerate(FRONTAGES):
        store.registry.upsert_frontage(
            fid,
            site="clyman",
            parcel_number=f"026-0915-000{n}",
            street_address=f"{101 + 2 * n} Main St",
            length_ft=66.0,
            zone="residential",
            owner_id="owner-smith",
        )


@pytest.fixture
def db_url(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cases.db'}"


@pytest.fixture
def cases(db_url: str, profile: Profile) -> Iterator[CaseStore]:
    store = CaseStore(db_url, zone=profile.village.timezone)
    store.create_schema()
    seed_owner(store)
    yield store
    store.close()


@pytest.fixture
def evidence(tmp_path: Path) -> EvidenceStore:
    return EvidenceStore(tmp_path / "evidence")
