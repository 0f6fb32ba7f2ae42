"""Secrets come only from the environment and never come out again.

* A configuration file holding a secret is refused, naming the field and the
  variable to use, for every secret the configuration models know of (found
  by introspection; a new secret field without a refusal fails the test).
* A realistic run with every secret set (database password, dashboard key,
  SMTP password, broker password, InfluxDB token, webhook secret, a user's
  password): configuration loaded, case records on PostgreSQL, the first
  storm replayed into notices, a notice e-mailed through a real SMTP server
  that demands a login, the dashboard logged into and read. All logging at
  DEBUG (SQLAlchemy's statements and parameters included), every file
  written, every row of the case database, every HTTP response and the
  e-mails (PDF text included) are searched for each secret.
"""

from __future__ import annotations

import io
import logging
import secrets
from collections.abc import Iterator
from datetime import datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any, get_args

import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import SMTP, AuthResult, Envelope, LoginPassword, Session
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy import MetaData, create_engine, select
from typer.testing import CliRunner

from sidewalk.alerts.delivery import Deliverer, SmtpChannel, SmtpSettings, queue_notice
from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.cli import app as cli
from sidewalk.cli.dashboard import SECRET_ENV, secret_from_env
from sidewalk.core import config
from sidewalk.core.config import ConfigError, Secrets, Settings, load_settings
from sidewalk.core.mqtt import MqttSettings
from sidewalk.core.profile import load_profile
from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import add_user
from sidewalk.scenarios import expand, load_scenario, to_readings
from sidewalk.storage.cases import NoticeRecord
from sidewalk.system import build_analytics, mqtt_settings, open_cases, seed_scenario
from tests.harness.mosquitto import free_port

SECRET_FIELD_WORDS = ("password", "token", "secret", "key")


def _secret_env(field: str) -> str:
    return f"SIDEWALK_{field.upper()}"


# ---------------------------------------------------------------- config files


def test_every_secret_the_models_know_is_refused_in_a_file(tmp_path: Path) -> None:
    # Every field of Secrets (the env-only model) must have a refusal in the file loader.
    refused = {env for env in config.SECRET_KEYS.values()}
    fields = list(Secrets.model_fields)
    assert fields, "Secrets has no fields?"
    for field in fields:
        assert Secrets.model_fields[field].annotation is not None
        assert "SecretStr" in str(Secrets.model_fields[field].annotation), field
        assert _secret_env(field) in refused, f"{field}: no file refusal for {_secret_env(field)}"
        # from_env really reads that variable.
        value = secrets.token_hex(8)
        loaded = getattr(Secrets.from_env({_secret_env(field): value}), field)
        assert loaded is not None
        assert loaded.get_secret_value() == value
    for (section, key), env in config.SECRET_KEYS.items():
        path = tmp_path / f"{section}-{key}.toml"
        path.write_text(f'[{section}]\n{key} = "hunter2-in-a-file"\n')
        with pytest.raises(ConfigError) as caught:
            load_settings(path)
        message = str(caught.value)
        assert f"{section}.{key}" in message
        assert env in message
        assert "hunter2" not in message


def _model_fields(model: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    for name, info in model.model_fields.items():
        annotation = info.annotation
        nested = [a for a in (annotation, *get_args(annotation)) if hasattr(a, "model_fields")]
        if nested:
            yield from _model_fields(nested[0], f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", annotation


def test_no_configuration_field_can_hold_a_secret() -> None:
    """Settings has no field named like a secret (those live in Secrets, env only)."""
    names = [name for name, _ in _model_fields(Settings)]
    assert "cases.database_url" in names
    secretish = [n for n in names if any(w in n.rsplit(".", 1)[-1] for w in SECRET_FIELD_WORDS)]
    assert secretish == []


@pytest.mark.parametrize(
    ("toml", "field", "env"),
    [
        ('[cases]\ndatabase_url = "postgresql://u:hunter2@db/x"', "database_url", "DB_PASSWORD"),
        ('[mqtt]\nurl = "mqtt://u:hunter2@broker:1883"', "url", "MQTT_PASSWORD"),
        (
            '[timeseries]\ninflux_url = "https://u:hunter2@influx:8086"',
            "influx_url",
            "INFLUX_TOKEN",
        ),
    ],
)
def test_a_password_inside_a_url_is_refused(
    tmp_path: Path, toml: str, field: str, env: str
) -> None:
    path = tmp_path / "c.toml"
    path.write_text(toml + "\n")
    with pytest.raises(ConfigError) as caught:
        load_settings(path)
    assert field in str(caught.value)
    assert env in str(caught.value)
    assert "hunter2" not in str(caught.value)


def test_a_database_password_is_redacted_from_urls_and_errors(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    password = "pw-" + secrets.token_hex(12)
    monkeypatch.setenv("SIDEWALK_DB_PASSWORD", password)
    caplog.set_level(logging.DEBUG)
    # Nothing listens on port 1: the connection fails, and the error is what gets logged.
    with pytest.raises(Exception) as caught:  # noqa: PT011 - the driver's error, whatever it is
        open_cases("postgresql+psycopg://sidewalk@127.0.0.1:1/cases", load_profile())
    logging.getLogger("test").exception("open_cases failed", exc_info=caught.value)
    assert password not in str(caught.value)
    assert password not in repr(caught.value)
    assert password not in caplog.text
    assert "sidewalk@127.0.0.1" in caplog.text  # the URL was logged, redacted


# ---------------------------------------------------------------- a whole run


class Mailbox:
    def __init__(self) -> None:
        self.messages: list[Envelope] = []
        self.logins: list[tuple[bytes, bytes]] = []

    async def handle_DATA(self, server: SMTP, session: Session, envelope: Envelope) -> str:
        self.messages.append(envelope)
        return "250 OK"

    def authenticate(
        self, server: SMTP, session: Session, envelope: Envelope, mechanism: str, data: Any
    ) -> AuthResult:
        assert isinstance(data, LoginPassword)
        self.logins.append((data.login, data.password))
        return AuthResult(success=True)


def _pdf_text(data: bytes) -> str:
    return "\n".join(page.extract_text() for page in PdfReader(io.BytesIO(data)).pages)


def _database_dump(url: str) -> str:
    engine = create_engine(url)
    try:
        meta = MetaData()
        meta.reflect(engine)
        with engine.connect() as conn:
            return "\n".join(
                repr(row) for t in meta.sorted_tables for row in conn.execute(select(t))
            )
    finally:
        engine.dispose()


def _files(root: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.services
def test_no_secret_leaves_through_logs_files_rows_mail_or_pages(  # noqa: PLR0915 - one story
    tmp_path: Path,
    postgres_fresh_url: str,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    values = {
        "SIDEWALK_DB_PASSWORD": "db-" + secrets.token_hex(12),
        SECRET_ENV: "dash-" + secrets.token_hex(16),
        "SIDEWALK_SMTP_PASSWORD": "smtp-" + secrets.token_hex(12),
        "SIDEWALK_MQTT_PASSWORD": "mqtt-" + secrets.token_hex(12),
        "SIDEWALK_INFLUX_TOKEN": "influx-" + secrets.token_hex(12),
        "SIDEWALK_WEBHOOK_SECRET": "hook-" + secrets.token_hex(12),
    }
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    user_password = "user-" + secrets.token_hex(12)
    hidden = [*values.values(), user_password]
    caplog.set_level(logging.DEBUG)
    # SQLAlchemy pins its own logger at WARNING; its statements and parameters count too.
    caplog.set_level(logging.INFO, logger="sqlalchemy.engine")

    work = tmp_path / "var"
    config_file = tmp_path / "sidewalk.toml"
    config_file.write_text(
        f'site = "clyman"\ndata_dir = "{work}"\n'
        f'[cases]\ndatabase_url = "{postgres_fresh_url}"\n'
        '[mqtt]\nurl = "mqtts://broker.invalid:8883"\nusername = "ingest"\n'
        '[timeseries]\ninflux_url = "http://influx.invalid:8086"\n'
    )
    settings = load_settings(config_file)
    profile = load_profile(settings.profile)
    mqtt = mqtt_settings(settings, "secrets-test")
    assert mqtt.password == values["SIDEWALK_MQTT_PASSWORD"]  # it does arrive where it is used
    logging.getLogger("sidewalk.test").debug(
        "broker %s:%s as %s", mqtt.host, mqtt.port, mqtt.username
    )

    cases = open_cases(settings.cases.database_url, profile)
    try:
        story = load_scenario("first-storm")
        seed_scenario(cases, story)
        unused = MqttSettings(host="127.0.0.1", port=1, client_id="secrets-test")
        runner = build_analytics(
            cases, profile, unused, site="clyman", mode="stream", persist_jobs=False
        )
        for reading in to_readings(story, expand(story)):
            runner.handle(reading)
        issuer = NoticeIssuer(cases, profile)
        rendered = [issuer.render(n) for n in cases.notices.list()]
        assert rendered
        assert all(n.body_text for n in rendered)

        # One notice e-mailed through an SMTP server that wants a login.
        mailbox = Mailbox()
        port = free_port()
        controller = Controller(
            mailbox, hostname="127.0.0.1", port=port, authenticator=mailbox.authenticate,
            auth_require_tls=False,
        )  # fmt: skip
        controller.start()
        try:
            owner = cases.registry.get_owner(rendered[0].owner_id)
            cases.registry.upsert_owner(
                owner.id, owner.name, list(owner.address_lines), "bert@example.org"
            )
            at = story_end(rendered)
            queue_notice(cases, rendered[0].id, ["email"], at)
            smtp = SmtpSettings(
                "127.0.0.1", port, "dpw@clyman.example", "dpw", values["SIDEWALK_SMTP_PASSWORD"]
            )
            logging.getLogger("sidewalk.test").info("smtp settings %r", smtp)
            channels = {"email": SmtpChannel(smtp, profile, clock=lambda: at)}
            report = Deliverer(cases, profile, channels, clock=lambda: at).run_once()
        finally:
            controller.stop()
        assert len(report.sent) == 1
        # The password went to the server that asked for it, and only there.
        assert mailbox.logins == [(b"dpw", values["SIDEWALK_SMTP_PASSWORD"].encode())]
        mail_text = ""
        for envelope in mailbox.messages:
            raw = envelope.original_content or b""
            mail_text += raw.decode(errors="replace")
            msg = message_from_bytes(raw, policy=policy.default)
            assert isinstance(msg, EmailMessage)
            for part in msg.iter_attachments():
                payload = part.get_payload(decode=True)
                assert isinstance(payload, bytes)
                mail_text += _pdf_text(payload)
        assert rendered[0].number in mail_text

        # The CLI, in-process, on the same configuration.
        result = CliRunner().invoke(
            cli, ["notices", "deliver", "--config", str(config_file)], catch_exceptions=False
        )
        cli_output = result.output

        # The dashboard, with its key from the environment and a user's password.
        add_user(cases, "clerk", user_password, "clerk", who="test")
        app = create_app(cases, None, profile, secret_key=secret_from_env())
        pages = ""
        with TestClient(app, base_url="http://dash.test") as client:
            login = client.post(
                "/api/session", json={"username": "clerk", "password": user_password}
            )
            assert login.status_code == 200
            wrong = client.post(
                "/api/session", json={"username": "clerk", "password": "x" + user_password}
            )
            assert wrong.status_code == 401
            pages += str(login.headers) + login.text + wrong.text
            for path in ("/api/session", "/api/overview", "/api/notices", "/api/audit", "/"):
                response = client.get(path)
                assert response.status_code == 200, path
                pages += str(response.headers) + response.text
        database = _database_dump(postgres_fresh_url)
    finally:
        cases.close()

    assert "session.login_failed" in database  # the dump holds the rows it should
    files = _files(tmp_path)
    assert config_file in files
    logged = caplog.text
    assert "SELECT" in logged  # SQLAlchemy's statements were captured at DEBUG
    for value in hidden:
        assert value not in logged, "a secret in the log"
        assert value not in database, "a secret in the case database"
        assert value not in mail_text, "a secret in the e-mail"
        assert value not in pages, "a secret in a dashboard response"
        assert value not in cli_output, "a secret in the CLI's output"
        for file, data in files.items():
            assert value.encode() not in data, f"a secret in {file}"


def story_end(notices: list[NoticeRecord]) -> datetime:
    """A time after every notice was issued (queueing refuses nothing by time, but needs one)."""
    return max(n.issued_at for n in notices) + timedelta(minutes=1)
