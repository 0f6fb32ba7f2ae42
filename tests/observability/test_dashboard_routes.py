"""The dashboard's /metrics, /healthz and /readyz: who may read them and what they say."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.metrics import add_observability_routes
from sidewalk.scenarios import load_scenario
from sidewalk.storage.cases import CaseStore
from sidewalk.system import open_cases, replay_in_process
from tests.observability.scrape import value

TOKEN = "metrics-token-for-tests-0123456789"
LOOPBACK = ("127.0.0.1", 40000)
ELSEWHERE = ("203.0.113.7", 40000)


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[CaseStore]:
    """Case records after the first storm: notices for B and C."""
    path: Path = tmp_path_factory.mktemp("dash") / "cases.db"
    profile = load_profile()
    store = open_cases(f"sqlite:///{path}", profile)
    replay_in_process(load_scenario("first-storm"), store, profile)
    yield store
    store.close()


@pytest.fixture(scope="module")
def app(cases: CaseStore) -> FastAPI:
    app = create_app(cases, None, load_profile(), secret_key="dashboard-secret-0123456789")
    # The route create_app added reads SIDEWALK_METRICS_TOKEN; this one is given the token.
    tokened = FastAPI()
    add_observability_routes(tokened, cases, metrics_token=TOKEN)
    app.state.tokened = tokened
    return app


def test_metrics_from_loopback_without_login(app: FastAPI, cases: CaseStore) -> None:
    response = TestClient(app, client=LOOPBACK).get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    notices = cases.notices.list()
    assert notices, "the storm issues notices"
    for kind, count in Counter(n.kind for n in notices).items():
        assert value(response.text, "sidewalk_notices_total", kind=kind) == count
    for status, count in Counter(n.status for n in notices).items():
        assert value(response.text, "sidewalk_notices_by_status", status=status) == count


def test_metrics_from_elsewhere_need_the_bearer_token(app: FastAPI) -> None:
    tokened: FastAPI = app.state.tokened
    outside = TestClient(tokened, client=ELSEWHERE)
    refused = outside.get("/metrics")
    assert refused.status_code == 403
    assert refused.headers["www-authenticate"] == "Bearer"
    assert "sidewalk_" not in refused.text
    wrong = outside.get("/metrics", headers={"Authorization": "Bearer not-the-token"})
    assert wrong.status_code == 403
    right = outside.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
    assert right.status_code == 200
    assert "sidewalk_notices_total" in right.text
    # Without a configured token nothing from elsewhere gets in.
    assert TestClient(app, client=ELSEWHERE).get("/metrics").status_code == 403


def test_a_reverse_proxy_on_loopback_does_not_open_metrics(app: FastAPI) -> None:
    proxied = TestClient(app, client=LOOPBACK, headers={"X-Forwarded-For": "198.51.100.4"})
    assert proxied.get("/metrics").status_code == 403
    tokened = TestClient(app.state.tokened, client=LOOPBACK)
    response = tokened.get(
        "/metrics", headers={"X-Forwarded-For": "198.51.100.4", "Authorization": f"Bearer {TOKEN}"}
    )
    assert response.status_code == 200


def test_health_routes_carry_no_owner_data(app: FastAPI, cases: CaseStore) -> None:
    outside = TestClient(app, client=ELSEWHERE)
    live = outside.get("/healthz")
    assert live.status_code == 200
    assert live.json() == {"status": "ok", "checks": {}}
    ready = outside.get("/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"status": "ok", "checks": {"database": "ok"}}
    owners = {n.owner_name for n in cases.notices.list()}
    for text in (live.text, ready.text):
        assert not any(owner in text for owner in owners)


def test_readiness_fails_when_the_database_does_not_answer(tmp_path: Path) -> None:
    broken = open_cases(f"sqlite:///{tmp_path / 'cases.db'}", load_profile())
    app = FastAPI()
    add_observability_routes(app, broken, metrics_token=None)
    (tmp_path / "cases.db").unlink()
    (tmp_path / "cases.db").mkdir()  # the path is now a directory: SQLite cannot open it
    broken.close()  # drop pooled connections so the next query opens the path again
    response = TestClient(app, client=LOOPBACK).get("/readyz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "unavailable"
    assert "OperationalError" in body["checks"]["database"]
