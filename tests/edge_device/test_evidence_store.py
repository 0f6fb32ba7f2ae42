"""The server's content-addressed evidence store (not yet wired into ingest)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from sidewalk.storage.evidence import EvidenceStore


def test_bytes_are_stored_once_under_their_hash(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path / "evidence")
    body = b"\xff\xd8\xff\xe0 not really a jpeg"
    sha = store.put(body)
    assert sha == hashlib.sha256(body).hexdigest()
    assert sha in store
    assert store.get(sha) == body
    assert store.path(sha) == tmp_path / "evidence" / sha[:2] / f"{sha}.jpg"
    mtime = store.path(sha).stat().st_mtime_ns
    assert store.put(body) == sha  # a re-sent frame changes nothing
    assert store.path(sha).stat().st_mtime_ns == mtime
    assert [p.name for p in store.path(sha).parent.iterdir()] == [f"{sha}.jpg"]


def test_bad_or_unknown_hashes(tmp_path: Path) -> None:
    store = EvidenceStore(tmp_path)
    assert "0" * 64 not in store
    assert "../etc/passwd" not in store
    with pytest.raises(FileNotFoundError):
        store.get("0" * 64)
    with pytest.raises(ValueError, match="sha256"):
        store.path("../../x")
