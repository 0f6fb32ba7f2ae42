"""Fixtures for the county import: the generated county, its files, a case store."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from sidewalk.storage.cases import CaseStore
from tests.registry.parcels import County, generate, raw_file

FIRST = datetime(2025, 1, 1, 6, 0, tzinfo=UTC)  # midnight in Clyman: the first import


@pytest.fixture(scope="session")
def county() -> County:
    """Several hundred parcels: 5 × 4 blocks of 16 lots, and the odd records."""
    return generate()


@pytest.fixture(scope="session")
def small_county() -> County:
    """2 × 2 blocks of 8 lots: enough for the registry's round trips, quick to write
    (a smaller grid leaves north-south streets with one parcel: no axis to fit)."""
    return generate(blocks_x=2, blocks_y=2, lots=4)


@pytest.fixture(scope="session")
def migrated_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An empty, migrated SQLite case database, made once and copied for each test."""
    path = tmp_path_factory.mktemp("registry") / "cases.db"
    store = CaseStore(f"sqlite:///{path}")
    store.create_schema()
    store.close()
    return path


@pytest.fixture(scope="session")
def imported_db(migrated_db: Path, small_county: County) -> Path:
    """The small county imported once, effective 1 January 2025 (copied for each test)."""
    from sidewalk.registry.apply import apply, compare, snapshot
    from sidewalk.registry.county import parse_records
    from sidewalk.registry.frontages import derive_frontages

    path = migrated_db.with_name("imported.db")
    shutil.copy(migrated_db, path)
    cases = CaseStore(f"sqlite:///{path}")
    parsed = parse_records(raw_file(small_county, "dodge.geojson"))
    snap = snapshot(cases)
    diff = compare(parsed, snap, FIRST)
    apply(cases, parsed, derive_frontages(parsed.parcels), diff, snap, effective=FIRST,
          site="clyman", who="it")  # fmt: skip
    cases.close()
    return path


def _copy(source: Path, path: Path) -> Iterator[CaseStore]:
    shutil.copy(source, path)
    cases = CaseStore(f"sqlite:///{path}")
    yield cases
    cases.close()


@pytest.fixture
def imported(imported_db: Path, tmp_path: Path) -> Iterator[CaseStore]:
    """A case store of this test's own holding the small county's first import."""
    yield from _copy(imported_db, tmp_path / "imported.db")


@pytest.fixture
def store(migrated_db: Path, tmp_path: Path) -> Iterator[CaseStore]:
    """A migrated, empty SQLite ``CaseStore`` of this test's own."""
    yield from _copy(migrated_db, tmp_path / "empty.db")
