"""Injection: Flux built by ``flux_range_query`` and SQL reached from the dashboard and the CLI.

Flux: VictoriaMetrics does not run Flux, so the query is checked by parsing
it with Flux's own string-literal rules: every argument comes back exactly as
one literal, nothing opens an interpolation, and the query with its literals
blanked is the same shape as with harmless arguments.

SQL: hostile text goes through every string parameter of the dashboard API
that reaches a query, and through the CLI's identifiers, on SQLite and on
PostgreSQL; afterwards every table is still there with its rows, and the
text that was stored comes back byte for byte.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import create_engine, func, inspect, select, table
from typer.testing import CliRunner

from sidewalk.cli import app as cli
from sidewalk.core.contract import WeatherReading
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import hash_password
from sidewalk.scenarios import load_scenario
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.influx import flux_range_query, flux_string
from sidewalk.storage.timeseries import SqliteTimeSeriesStore
from sidewalk.system import open_cases, seed_scenario

HOSTILE = [
    'x") |> drop(columns: ["_value"]) |> yield(name: "',
    '"',
    "\\",
    '\\"',
    '\\\\"',
    "${secret}",
    "$",
    "\\${x}",
    "a\nb\r\nc\td",
    "' OR '1'='1",
    "'; DROP TABLE notices; --",
    '"; DROP TABLE dashboard_users; --',
    "1; DELETE FROM frontages",
    "%' OR 1=1 --",
    "Robert'); DROP TABLE owners;--",
    "pole-main-01' --",
    "❄ Ωmega \u202etxt.exe \u2028 \u200b",
    "nul\x00byte",
    "",
]


# ---------------------------------------------------------------- Flux


class FluxSyntaxError(ValueError):
    pass


_ESCAPES = {"n": "\n", "r": "\r", "t": "\t", '"': '"', "\\": "\\", "$": "$"}


def flux_literals(query: str) -> tuple[list[str], str]:
    """The string literals of a Flux query (unescaped) and the query with each one as "?".

    Flux's rules (docs.influxdata.com, Flux spec, string literals): a literal
    runs from ``"`` to the next unescaped ``"``; ``\\`` escapes ``n r t " \\ $``;
    an unescaped ``${`` starts an interpolation: code inside the literal.
    """
    literals: list[str] = []
    shape: list[str] = []
    i = 0
    while i < len(query):
        char = query[i]
        if char != '"':
            shape.append(char)
            i += 1
            continue
        i += 1
        text: list[str] = []
        while True:
            if i >= len(query):
                raise FluxSyntaxError("unterminated string literal")
            char = query[i]
            if char == "\\":
                if i + 1 >= len(query) or query[i + 1] not in _ESCAPES:
                    raise FluxSyntaxError(f"bad escape at {i}")
                text.append(_ESCAPES[query[i + 1]])
                i += 2
            elif char == "$" and query[i + 1 : i + 2] == "{":
                raise FluxSyntaxError(f"interpolation at {i}")
            elif char == '"':
                i += 1
                break
            else:
                text.append(char)
                i += 1
        literals.append("".join(text))
        shape.append('"?"')
    return literals, "".join(shape)


START = datetime(2026, 12, 10, tzinfo=UTC)
STOP = START + timedelta(hours=1)


def _query(**kw: Any) -> str:
    args: dict[str, Any] = {"bucket": "b", "measurement": "weather", "device": "pole-1"}
    args.update(kw)
    return flux_range_query(
        args["bucket"], args["measurement"], args["device"], START, STOP,
        fields=args.get("fields", ("air_temp_c",)),
    )  # fmt: skip


def test_the_parser_sees_an_injection_when_there_is_one() -> None:
    """The checker itself: naive quoting is caught, so its silence below means something."""
    naive = 'from(bucket: "' + HOSTILE[0] + '")'
    literals, _ = flux_literals(naive)
    assert literals != [HOSTILE[0]]
    with pytest.raises(FluxSyntaxError):
        flux_literals('r.device == "${secret}"')


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
@pytest.mark.parametrize("param", ["bucket", "measurement", "device", "field", "second field"])
def test_flux_arguments_stay_one_literal(param: str, value: str) -> None:
    benign_literals, benign_shape = flux_literals(_query(fields=("air_temp_c", "snow_depth_mm")))
    fields = ["air_temp_c", "snow_depth_mm"]
    kw: dict[str, Any] = {}
    if param == "field":
        fields[0] = value
    elif param == "second field":
        fields[1] = value
    else:
        kw[param] = value
    query = _query(fields=tuple(fields), **kw)
    literals, shape = flux_literals(query)
    assert shape == benign_shape, query
    expected = [kw.get("bucket", "b"), kw.get("measurement", "weather"), kw.get("device", "pole-1")]
    assert literals == [*expected, *fields]
    assert len(literals) == len(benign_literals)


@pytest.mark.parametrize("value", HOSTILE, ids=range(len(HOSTILE)))
def test_flux_string_round_trips(value: str) -> None:
    literals, shape = flux_literals(flux_string(value))
    assert (literals, shape) == ([value], '"?"')
    assert "\n" not in flux_string(value)  # one line: nothing reads past a line break


def test_flux_times_are_rendered_not_passed_through() -> None:
    with pytest.raises(ValueError, match="naive"):
        flux_range_query("b", "m", "d", datetime(2026, 1, 1), STOP)  # noqa: DTZ001
    query = _query()
    assert re.search(r"range\(start: 2026-12-10T00:00:00\.000000Z, stop: 2026-12-10T01", query)


# ---------------------------------------------------------------- SQL


BACKENDS = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.services),
]
SQL_HOSTILE = [v for v in HOSTILE if v and "\r" not in v]
ADMIN_PASSWORD = "admin password 123"


@dataclass
class Site:
    url: str
    cases: CaseStore
    timeseries: SqliteTimeSeriesStore
    client: TestClient

    def counts(self) -> dict[str, int]:
        """Rows per table, straight from the database."""
        engine = create_engine(self.cases.url)
        try:
            names = inspect(engine).get_table_names()
            with engine.connect() as conn:
                return {n: int(conn.scalar(select(func.count()).select_from(table(n))) or 0)
                        for n in names}  # fmt: skip
        finally:
            engine.dispose()


@pytest.fixture(params=BACKENDS)
def site(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Site]:
    if request.param == "sqlite":
        url = f"sqlite:///{tmp_path / 'cases.db'}"
    else:
        url = request.getfixturevalue("postgres_fresh_url")
    profile = load_profile()
    cases = open_cases(url, profile)
    seed_scenario(cases, load_scenario("first-storm"))
    cases.dashboard.add_user("admin", hash_password(ADMIN_PASSWORD), "admin", "test")
    timeseries = SqliteTimeSeriesStore(tmp_path / "ts.db")
    ts = int((START - timedelta(hours=1)).timestamp() * 1000)
    reading = WeatherReading(device="pole-main-01", seq=1, ts=ts, air_temp_c=-3.0)
    timeseries.write_batch([reading], sites={"pole-main-01": "clyman"})
    app = create_app(cases, timeseries, profile, secret_key="k" * 32, now=lambda: START)
    client = TestClient(app, base_url="http://dash.test", client=("10.1.1.1", 1))
    login = client.post("/api/session", json={"username": "admin", "password": ADMIN_PASSWORD})
    assert login.status_code == 200
    client.headers.update(
        {"X-CSRF-Token": login.json()["csrf_token"], "Origin": "http://dash.test"}
    )
    yield Site(url, cases, timeseries, client)
    client.close()
    timeseries.close()
    cases.close()


def test_hostile_text_in_every_api_parameter_is_data(site: Site) -> None:
    before = site.counts()
    c = site.client
    for value in SQL_HOSTILE:
        path = quote(value, safe="")
        # NUL is refused up front (PostgreSQL cannot store it); the rest finds nothing.
        missing = 422 if "\x00" in value else 404
        assert c.get(f"/api/notices/{path}").status_code == missing, value
        assert c.get("/print/notices", params={"n": value}).status_code == missing, value
        batch = c.post("/api/notices/print-batch", json={"numbers": [value]})
        assert batch.status_code == missing, value
        act = c.post(f"/api/notices/{path}/actions", json={"kind": "confirm_hazard"})
        assert act.status_code in (404, 405, 422), value
        assert c.get(f"/api/frames/{path}").status_code == missing, value
        series = c.get(f"/api/sites/{path}/series")
        if missing == 422:
            assert series.status_code == 422, value
            continue
        assert series.status_code == 200, value
        assert series.json()["device"] == value
        assert series.json()["weather"]["ts"] == []
    # Logins (argon2 makes each refusal slow on purpose: a sample of the payloads).
    for value in SQL_HOSTILE[::3]:
        # Refused, counted under exactly that name, audited with it.
        login = c.post(
            "/api/session", json={"username": value or "-", "password": "wrong password"}
        )
        assert login.status_code in (401, 422), (value, login.text)
        if login.status_code == 401:
            audit = site.cases.audit.list(subject=f"user:{value}")
            assert [a.action for a in audit] == ["session.login_failed"], value
    for value in SQL_HOSTILE:
        # Account names are restricted to a slug-like alphabet.
        body = {"username": value, "password": "long enough pw", "role": "viewer"}
        assert c.post("/api/users", json=body).status_code == 422, value
    # The real device still has its reading, and every table its rows.
    assert c.get("/api/sites/pole-main-01/series").json()["weather"]["ts"] != []
    after = site.counts()
    assert set(after) == set(before)
    changed = {t for t in after if after[t] != before[t]}
    # Only the failed logins' own rows and their audit entries were written.
    assert changed <= {"audit_log", "login_failures"}, changed
    assert c.get("/api/overview").status_code == 200


def test_hostile_text_stored_through_the_api_comes_back_exactly(site: Site) -> None:
    abatement = site.cases.bills.order_abatement(
        "test/inj", "main-st-105", "notice_period_over", START
    )
    stored = [v for v in SQL_HOSTILE if "\x00" not in v]
    for value in SQL_HOSTILE:  # as the name of a worker in the crew's hours
        crew = site.client.post(
            f"/api/abatements/{abatement.id}/crew-work",
            json={"workers": [{"name": value, "hours": "1"}], "equipment": []},
        )
        if value not in stored:
            assert crew.status_code == 422, value
            continue
        assert crew.status_code == 200, crew.text
        assert crew.json()["workers"] == [{"name": value, "hours": "1"}]
        kept = site.cases.bills.get_abatement(abatement.id).detail["crew_work"]
        assert kept["workers"] == [{"name": value, "hours": "1"}], value


def test_cli_identifiers_are_data(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SIDEWALK_CASES__DATABASE_URL", site.url)
    before = site.counts()
    runner = CliRunner()
    for value in SQL_HOSTILE:  # as a notice number or an address: looked up, not found
        for kind in ("confirm_hazard", "record_treated"):
            result = runner.invoke(cli, ["act", kind, value, "--who", "Pat Clerk"])
            assert result.exit_code == 2, result.output
    for value in SQL_HOSTILE[:8]:  # as a name: stored as given
        result = runner.invoke(
            cli, ["act", "record_treated", "105 Main St", "--who", value, "--at", START.isoformat()]
        )
        assert result.exit_code == 0, result.output
        action = site.cases.actions.list(target="main-st-105")[-1]
        assert action.who == value
    names = ["o'brien", 'x"; DROP TABLE dashboard_users; --', "%' OR 1=1 --"]
    for name in names:  # the CLI takes any name up to 64 characters (the API a slug)
        result = runner.invoke(
            cli, ["dashboard", "add-user", name, "--role", "viewer"],
            input="long enough pw\nlong enough pw\n",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
        account = site.cases.dashboard.get_user(name)
        assert account is not None
        assert (account.username, account.role) == (name, "viewer")
    after = site.counts()
    assert after["person_actions"] == before["person_actions"] + 8
    assert after["dashboard_users"] == before["dashboard_users"] + len(names)
    changed = {t for t in after if after[t] != before[t]}
    assert changed <= {"person_actions", "audit_log", "dashboard_users"}
