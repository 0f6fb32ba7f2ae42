"""The overview says when the stores' disk is below ingest's free-space floor."""

from __future__ import annotations

from pathlib import Path

from argon2 import PasswordHasher
from fastapi.testclient import TestClient

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.space import FreeSpaceFloor
from tests.dashboard.conftest import PASSWORD, SECRET_KEY


def test_the_overview_shows_free_space_and_the_floor(tmp_path: Path) -> None:
    cases = CaseStore(f"sqlite:///{tmp_path / 'cases.db'}")
    cases.create_schema()
    cheap = PasswordHasher(time_cost=1, memory_cost=1024, parallelism=1)
    cases.dashboard.add_user("viewer", cheap.hash(PASSWORD), "viewer", who="test")
    space = FreeSpaceFloor([tmp_path], min_free_bytes=0, min_free_percent=0, cache_s=0)
    app = create_app(cases, None, load_profile(), secret_key=SECRET_KEY, space=space)
    try:
        with TestClient(app, client=("127.0.0.1", 40000)) as client:
            login = {"username": "viewer", "password": PASSWORD}
            assert client.post("/api/session", json=login).status_code == 200
            storage = client.get("/api/overview").json()["storage"]
            assert storage["ok"] is True
            assert storage["reason"] is None
            assert storage["free_bytes"] > 0
            # The floor above what is free: ingest refuses, and the overview says why.
            space.min_free_bytes = storage["free_bytes"] + 10 * 1024**4
            storage = client.get("/api/overview").json()["storage"]
            assert storage["ok"] is False
            assert storage["floor_bytes"] == space.min_free_bytes
            assert storage["reason"].startswith("disk space low:")
    finally:
        cases.close()
