"""A service the command cannot reach, or a database it cannot open: one line naming
the setting and what to do, exit status 2, no traceback.

The broker cases run the real ``python -m sidewalk.cli`` process; the database cases
run the root application in-process. Nothing listens on the ports used.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sidewalk.cli import app


def _closed_port() -> int:
    """A loopback port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(tmp_path: Path, database_url: str, mqtt_url: str | None = None) -> Path:
    config = tmp_path / "sidewalk.toml"
    broker = "" if mqtt_url is None else f'[mqtt]\nurl = "{mqtt_url}"\n'
    config.write_text(
        f'data_dir = "{tmp_path / "var"}"\n{broker}[cases]\ndatabase_url = "{database_url}"\n',
        encoding="utf-8",
    )
    return config


def _one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text
    return lines[0]


def _sqlite(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'cases.sqlite3'}"


@pytest.mark.parametrize("command", ["ingest", "analytics"])
def test_an_unreachable_broker(tmp_path: Path, command: str) -> None:
    port = _closed_port()
    config = _config(tmp_path, _sqlite(tmp_path), f"mqtt://127.0.0.1:{port}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDEWALK_")}
    done = subprocess.run(
        [sys.executable, "-m", "sidewalk.cli", command, "--config", str(config)],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    # The start-up's own log lines (migrations, the scheduler) are held: the line is alone.
    line = _one_line(done.stderr)
    assert line.startswith(f"cannot reach the MQTT broker at 127.0.0.1:{port}")
    assert line.endswith("start it, or fix mqtt.url (SIDEWALK_MQTT__URL)")


def test_no_broker_configured(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["ingest", "--config", str(_config(tmp_path, "x"))])
    assert result.exit_code == 2
    assert _one_line(result.output).startswith("mqtt.url (SIDEWALK_MQTT__URL) is not set")


@pytest.mark.parametrize(
    ("database_url", "said"),
    [
        (
            "postgresql+psycopg://sidewalk@127.0.0.1:{port}/cases",
            "cannot open the case database at 127.0.0.1:{port} (",
        ),
        (
            "sqlite:////nonexistent/folder/cases.sqlite3",
            "cannot open the SQLite case database '/nonexistent/folder/cases.sqlite3' (",
        ),
        ("not a database url", "cases.database_url (SIDEWALK_CASES__DATABASE_URL) = 'not a"),
        ("nosuchdb://host/cases", "is not a database URL"),
    ],
    ids=["postgresql-down", "sqlite-bad-path", "junk", "unknown-dialect"],
)
@pytest.mark.parametrize(
    "command",
    [
        ["notices", "register"],
        ["cold", "status"],
        ["act", "record_delivery", "CLY-2026-000001", "--who", "Pat Clerk"],
        ["analytics"],
    ],
    ids=["notices", "cold", "act", "analytics"],
)
def test_a_database_that_cannot_be_opened(
    tmp_path: Path, database_url: str, said: str, command: list[str]
) -> None:
    port = _closed_port()
    url = database_url.format(port=port)
    config = _config(tmp_path, url, "mqtt://127.0.0.1:1")
    result = CliRunner().invoke(app, [*command, "--config", str(config)], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    line = _one_line(result.output)
    assert said.format(port=port) in line
    assert "cases.database_url (SIDEWALK_CASES__DATABASE_URL)" in line


def test_add_user_refuses_a_bad_role_before_asking_for_the_password(tmp_path: Path) -> None:
    config = _config(tmp_path, _sqlite(tmp_path))
    result = CliRunner().invoke(
        app, ["dashboard", "add-user", "pat", "--role", "mayor", "--config", str(config)]
    )
    assert result.exit_code == 2
    line = _one_line(result.output)  # no password prompt came first
    assert line == "--role: unknown role 'mayor'; one of viewer, inspector, clerk, admin"
    assert not (tmp_path / "cases.sqlite3").exists()


def test_add_user_on_an_unreachable_database(tmp_path: Path) -> None:
    url = f"postgresql+psycopg://sidewalk@127.0.0.1:{_closed_port()}/cases"
    result = CliRunner().invoke(
        app,
        [
            "dashboard",
            "add-user",
            "pat",
            "--role",
            "clerk",
            "--config",
            str(_config(tmp_path, url)),
        ],
        input="long enough pw\nlong enough pw\n",
        env={"COLUMNS": "300"},
    )
    assert result.exit_code == 2
    assert "cannot open the case database" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(
    ("command", "setting"), [("ingest", "ingest_port"), ("analytics", "analytics_port")]
)
def test_a_metrics_port_in_use(tmp_path: Path, command: str, setting: str) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        config = _config(tmp_path, _sqlite(tmp_path), "mqtt://127.0.0.1:1")
        config.write_text(
            config.read_text() + f"[observability]\n{setting} = {port}\n", encoding="utf-8"
        )
        result = CliRunner().invoke(app, [command, "--config", str(config)], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    line = _one_line(result.output)
    assert line.startswith(f"port {port} on 127.0.0.1 is in use by another program")
    assert f"observability.{setting}" in line
    assert "--metrics-port" in line
    assert not (tmp_path / "cases.sqlite3").exists()  # nothing started before the check


def test_the_dashboard_port_in_use(tmp_path: Path) -> None:
    """The real process, as the unit file starts it: one line naming --port, nothing opened."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = int(taken.getsockname()[1])
        config = _config(tmp_path, _sqlite(tmp_path), "mqtt://127.0.0.1:1")
        env = {k: v for k, v in os.environ.items() if not k.startswith("SIDEWALK_")}
        env["SIDEWALK_DASHBOARD_SECRET"] = "a long enough secret for the test"
        done = subprocess.run(
            [sys.executable, "-m", "sidewalk.cli", "dashboard", "--config", str(config),
             "--host", "127.0.0.1", "--port", str(port)],
            capture_output=True, text=True, timeout=120, env=env, check=False,
        )  # fmt: skip
    assert done.returncode == 2, done.stderr
    line = _one_line(done.stderr + done.stdout)
    assert line.startswith(f"port {port} on 127.0.0.1 is in use by another program"), line
    assert "--port" in line
    assert not (tmp_path / "cases.sqlite3").exists()  # refused before the database opened


def test_add_user_takes_the_groups_config_and_fails_before_the_prompt(tmp_path: Path) -> None:
    """``sidewalk dashboard --config F add-user NAME``: F is used (its database is the
    unreachable one) and the refusal comes before any password is asked for."""
    url = f"postgresql+psycopg://sidewalk@127.0.0.1:{_closed_port()}/cases"
    result = CliRunner().invoke(
        app,
        ["dashboard", "--config", str(_config(tmp_path, url)),
         "add-user", "pat", "--role", "clerk"],
        input="",  # a prompt would read end-of-file and abort instead
        env={"COLUMNS": "300"},
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "cannot open the case database" in result.output
    assert "password:" not in result.output.lower()  # the prompt's text


def test_add_user_refuses_a_taken_name_before_the_prompt(tmp_path: Path) -> None:
    config = str(_config(tmp_path, _sqlite(tmp_path)))
    first = CliRunner().invoke(
        app, ["dashboard", "--config", config, "add-user", "pat", "--role", "clerk"],
        input="long enough pw\nlong enough pw\n",
    )  # fmt: skip
    assert first.exit_code == 0, first.output
    again = CliRunner().invoke(
        app, ["dashboard", "--config", config, "add-user", "pat", "--role", "viewer"], input=""
    )
    assert again.exit_code == 2, again.output
    assert "already an account called 'pat'" in again.output
    assert "password:" not in again.output.lower()


def _run(config: Path, *argv: str, secret: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real process as a unit file starts it, with no SIDEWALK_ settings but ours."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIDEWALK_")}
    if secret is not None:
        env["SIDEWALK_DASHBOARD_SECRET"] = secret
    return subprocess.run(
        [sys.executable, "-m", "sidewalk.cli", *argv, "--config", str(config)],
        capture_output=True, text=True, timeout=120, env=env, check=False,
    )  # fmt: skip


@pytest.mark.parametrize("command", ["ingest", "dashboard"])  # analytics: in-process above
def test_a_wrong_database_url_in_the_real_process(tmp_path: Path, command: str) -> None:
    url = f"postgresql+psycopg://sidewalk@127.0.0.1:{_closed_port()}/cases"
    done = _run(
        _config(tmp_path, url, "mqtt://127.0.0.1:1"), command, secret="a long enough secret here"
    )
    assert done.returncode == 2, done.stdout + done.stderr
    line = _one_line(done.stderr + done.stdout)  # no migration log lines before it
    assert "cannot open the case database" in line


def test_the_dashboard_without_its_secret_in_the_real_process(tmp_path: Path) -> None:
    done = _run(_config(tmp_path, _sqlite(tmp_path)), "dashboard")
    assert done.returncode == 2
    line = _one_line(done.stderr + done.stdout)
    assert line.startswith("set SIDEWALK_DASHBOARD_SECRET to a random string")
    assert not (tmp_path / "cases.sqlite3").exists()


@pytest.mark.parametrize(
    ("state", "said"),
    [("{not json", "Invalid JSON"), ('{"version": 999}', "Field required")],
    ids=["not-json", "not-a-state"],
)
def test_analytics_refuses_a_damaged_saved_state_in_one_line(
    tmp_path: Path, state: str, said: str
) -> None:
    from sidewalk.core.profile import load_profile
    from sidewalk.system import open_cases

    url = _sqlite(tmp_path)
    cases = open_cases(url, load_profile())
    cases.clocks.save_engine_snapshot("sidewalk-analytics", None, state)
    cases.close()
    config = _config(tmp_path, url, "mqtt://127.0.0.1:1")
    result = CliRunner().invoke(app, ["analytics", "--config", str(config)], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    line = _one_line(result.output)
    assert line.startswith(
        "analytics: the clocks' saved state 'sidewalk-analytics' in the case database cannot"
        " be read ("
    )
    assert said in line
    assert line.endswith(
        "would forget every open clock and case. Nothing was started. To rebuild the state"
        f" from the stored readings, run: sidewalk analytics --config {config} --rebuild"
    )
    # Refused, not replaced: the damaged row is still there to be looked at.
    cases = open_cases(url, load_profile())
    try:
        assert cases.clocks.load_engine_snapshot("sidewalk-analytics") == state
    finally:
        cases.close()


@pytest.fixture(scope="module")
def case_on_record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A case database (made once, copied per test): the first storm's street, one
    clearing clock running on a frontage of it, no saved engine state."""
    from datetime import UTC, datetime

    from sidewalk.core.profile import load_profile
    from sidewalk.scenarios import load_scenario
    from sidewalk.storage.cases import Cause
    from sidewalk.system import open_cases, seed_scenario

    path = tmp_path_factory.mktemp("case-on-record") / "cases.sqlite3"
    profile = load_profile()
    cases = open_cases(f"sqlite:///{path}", profile)
    try:
        seed_scenario(cases, load_scenario("first-storm"), profile=profile)
        at = datetime(2026, 12, 10, 12, 5, tzinfo=UTC)
        cause = Cause(kind="reading", ts=int(at.timestamp() * 1000), device="pole-main-01")
        cases.clocks.open("main-st-101", "clearing", "clearing_period", at, cause)
    finally:
        cases.close()
    return path


def _copy(template: Path, tmp_path: Path) -> str:
    import shutil

    shutil.copyfile(template, tmp_path / "cases.sqlite3")
    return _sqlite(tmp_path)


def _analytics_line(tmp_path: Path, url: str) -> str:
    config = tmp_path / "sidewalk.toml"
    config.write_text(
        f'site = "clyman"\n[mqtt]\nurl = "mqtt://127.0.0.1:1"\n[cases]\ndatabase_url = "{url}"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["analytics", "--config", str(config)], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    line = _one_line(result.output)
    assert line.endswith(
        ". Nothing was started. To rebuild the state from the stored readings, run:"
        f" sidewalk analytics --config {config} --rebuild"
    ), line
    return line


def test_analytics_refuses_to_start_from_nothing_where_cases_exist(
    tmp_path: Path, case_on_record: Path
) -> None:
    line = _analytics_line(tmp_path, _copy(case_on_record, tmp_path))
    assert line.startswith(
        "analytics: the case database holds 0 open cases, 0 notices and 1 clock record (1 still"
        " running) for site clyman but no saved engine state for client id 'sidewalk-analytics'"
        " (was analytics.client_id changed?)."
    ), line


def test_analytics_refuses_a_saved_state_that_is_not_this_databases(
    tmp_path: Path, case_on_record: Path
) -> None:
    from sidewalk.analytics.clocks.engine import ClockEngine
    from sidewalk.analytics.runner import DATABASE_MARK, SnapshotIdentity
    from sidewalk.core.profile import load_profile
    from sidewalk.system import open_cases

    url = _copy(case_on_record, tmp_path)
    state = ClockEngine(load_profile(), []).snapshot().decode()
    ours = "1" * 32  # this database's mark, as a runner gives it on its first save
    for site, database, said in [
        ("dousman", ours, "was saved for site dousman, not for site clyman (does another"),
        ("clyman", "0" * 32, "was saved in another case database, not in this one"),
    ]:
        cases = open_cases(url, load_profile())
        try:
            cases.clocks.save_engine_snapshot(DATABASE_MARK, None, ours)
            saved = SnapshotIdentity(site, database).wrap(state)
            cases.clocks.save_engine_snapshot("sidewalk-analytics", None, saved)
        finally:
            cases.close()
        line = _analytics_line(tmp_path, url)
        assert line.startswith(
            "analytics: the saved engine state for client id 'sidewalk-analytics' "
        ), line
        assert said in line
        # Refused, not replaced.
        cases = open_cases(url, load_profile())
        try:
            assert cases.clocks.load_engine_snapshot("sidewalk-analytics") == saved
        finally:
            cases.close()


def test_analytics_takes_a_saved_state_from_before_identities(
    tmp_path: Path, case_on_record: Path
) -> None:
    """A snapshot saved without an identity is read as this database's: start-up goes
    past it to the broker (unreachable here), and nothing is refused."""
    from sidewalk.analytics.clocks.engine import ClockEngine
    from sidewalk.core.profile import load_profile
    from sidewalk.system import open_cases

    url = _copy(case_on_record, tmp_path)
    cases = open_cases(url, load_profile())
    try:
        legacy = ClockEngine(load_profile(), []).snapshot().decode()
        assert not legacy.startswith('{"identity"')
        cases.clocks.save_engine_snapshot("sidewalk-analytics", None, legacy)
    finally:
        cases.close()
    config = _config(tmp_path, url, "mqtt://127.0.0.1:1")
    result = CliRunner().invoke(app, ["analytics", "--config", str(config)], env={"COLUMNS": "300"})
    assert result.exit_code == 2, result.output
    assert _one_line(result.output).startswith("cannot reach the MQTT broker at 127.0.0.1:1")


def test_rebuild_without_the_readings_store_changes_nothing(
    tmp_path: Path, case_on_record: Path
) -> None:
    url = _copy(case_on_record, tmp_path)
    missing = tmp_path / "nowhere" / "timeseries.sqlite3"
    config = _config(tmp_path, url)
    config.write_text(
        config.read_text(encoding="utf-8") + f'[timeseries]\nsqlite_path = "{missing}"\n',
        encoding="utf-8",
    )
    result = CliRunner().invoke(
        app, ["analytics", "--rebuild", "--config", str(config)], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 2, result.output
    assert _one_line(result.output) == (
        f"analytics --rebuild: no time-series store at {str(missing)!r}: point"
        " timeseries.sqlite_path (SIDEWALK_TIMESERIES__SQLITE_PATH) at the file ingest"
        " writes. Nothing was changed"
    )
    assert not missing.parent.exists()
