"""Inspection records on both backends: idempotent by file, latest survey per block wins."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from sidewalk.storage.cases import CaseStore, InspectionRecord

from .conftest import T0, seed_owner


@pytest.fixture(
    params=[
        pytest.param("sqlite", id="sqlite"),
        pytest.param("postgresql", id="postgresql", marks=pytest.mark.services),
    ]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[CaseStore]:
    url = (
        f"sqlite:///{tmp_path / 'cases.db'}"
        if request.param == "sqlite"
        else str(request.getfixturevalue("postgres_fresh_url"))
    )
    s = CaseStore(url)
    s.create_schema()
    seed_owner(s)
    yield s
    s.close()


def _blocks(*flags: bool, first: int = 0) -> list[dict[str, object]]:
    return [{"block": first + i, "defective": f, "checks": []} for i, f in enumerate(flags)]


def test_same_file_is_one_row(store: CaseStore) -> None:
    def put(frontage: str, blocks: list[dict[str, object]]) -> InspectionRecord:
        return store.inspections.record(
            frontage, surveyed_at=T0, kind="depth", source_name="a.png", source_sha256="a" * 64,
            result={"x": 1.5}, blocks=blocks,
        )  # fmt: skip

    a = put("main-101", _blocks(True))
    again = put("main-101", _blocks(False))
    other_frontage = put("main-103", [])
    assert again.id == a.id
    assert again.blocks[0]["defective"] is True  # the first row stands
    assert other_frontage.id != a.id
    assert (a.status, a.result) == ("ok", {"x": 1.5})
    assert [r.id for r in store.inspections.list(frontage_id="main-101")] == [a.id]
    assert len(store.inspections.list(owner_id="owner-smith")) == 2
    assert store.inspections.list(owner_id="nobody") == []


def test_failed_files_are_kept_with_the_reason(store: CaseStore) -> None:
    rec = store.inspections.record(
        "main-101", surveyed_at=T0, kind="photo", source_name="b.jpg", source_sha256="b" * 64,
        result={}, failure="overexposed: 40 % clipped",
    )  # fmt: skip
    assert (rec.status, rec.failure) == ("failed", "overexposed: 40 % clipped")
    assert store.inspections.owner_block_conditions("owner-smith") == []


def test_latest_survey_of_a_block_wins_across_frontages(store: CaseStore) -> None:
    def put(frontage: str, sha: str, at_hours: int, blocks: list[dict[str, object]]) -> None:
        store.inspections.record(
            frontage, surveyed_at=T0 + timedelta(hours=at_hours), kind="depth",
            source_name=sha, source_sha256=sha * 64, result={}, blocks=blocks,
        )  # fmt: skip

    put("main-101", "c", 2, _blocks(False, False))  # the re-survey: blocks 0, 1 repaired
    put("main-101", "d", 1, _blocks(True, True, True))  # older: 0, 1, 2 defective
    put("main-103", "e", 1, _blocks(True))
    got = [
        (c.frontage_id, c.block, c.defective)
        for c in store.inspections.owner_block_conditions("owner-smith")
    ]
    assert got == [
        ("main-101", 0, False),
        ("main-101", 1, False),
        ("main-101", 2, True),
        ("main-103", 0, True),
    ]
