"""What the CLI mounts for the dashboard: ``sidewalk dashboard`` and ``… add-user``.

The CLI owns argument parsing; these functions own the work.
"""

from __future__ import annotations

import os
import secrets
from datetime import datetime
from pathlib import Path

from sidewalk.core.config import Settings
from sidewalk.core.profile import Profile, load_profile
from sidewalk.dashboard.app import create_app, serve
from sidewalk.dashboard.auth import add_user
from sidewalk.dashboard.demo import ActionTicker, replay_storm
from sidewalk.scenarios import Scenario
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

SECRET_ENV = "SIDEWALK_DASHBOARD_SECRET"


def secret_from_env() -> str:
    """The cookie-signing secret; refuses to start without one (it is never in a file)."""
    secret = os.environ.get(SECRET_ENV, "")
    if len(secret) < 16:
        raise SystemExit(f"set {SECRET_ENV} to a random string of at least 16 characters")
    return secret


def add_user_command(settings: Settings, username: str, password: str, role: str) -> None:
    """Create a dashboard account in the configured case database."""
    from sidewalk.system import open_cases  # the password comes from the environment

    cases = open_cases(settings.cases.database_url, load_profile(settings.profile))
    try:
        add_user(cases, username, password, role, who="cli")
    finally:
        cases.close()


def dashboard_command(
    settings: Settings,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
    geojson: Path | None = None,
    now: datetime | None = None,
) -> None:
    """Serve the dashboard over the configured stores until interrupted.

    ``now`` freezes the dashboard's clock (a replayed storm's end); default wall time.
    """
    profile = load_profile(settings.profile)
    from sidewalk.system import open_cases  # the password comes from the environment

    cases = open_cases(settings.cases.database_url, profile)
    path = settings.timeseries.sqlite_path
    timeseries = SqliteTimeSeriesStore(path) if path.exists() else None
    # Where ingest keeps evidence JPEGs (the CLI's ingest uses the same directory).
    frames = settings.data_dir / "evidence"
    app = create_app(
        cases, timeseries, profile, secret_key=secret_from_env(), geojson_path=geojson,
        now=(lambda: now) if now is not None else None,
        evidence=EvidenceStore(frames) if frames.exists() else None,
    )  # fmt: skip
    try:
        serve(app, host, port)
    finally:
        if timeseries is not None:
            timeseries.close()
        cases.close()


def demo_command(
    scenario: Scenario,
    workdir: Path,
    profile: Profile,
    *,
    host: str = "127.0.0.1",
    port: int = 8080,
) -> None:
    """Replay ``scenario`` into ``workdir`` and serve the dashboard on it until interrupted.

    Creates a ``demo`` admin account with a fresh random password (printed once);
    the dashboard's clock is the storm's last event time.
    """
    storm = replay_storm(scenario, workdir, profile)
    password = secrets.token_urlsafe(12)
    add_user(storm.cases, "demo", password, "admin", who="demo")
    ticker = ActionTicker(storm.runner)
    ticker.start()
    app = create_app(
        storm.cases, storm.timeseries, profile, secret_key=secrets.token_urlsafe(32),
        now=lambda: storm.end,
    )  # fmt: skip
    print(f"dashboard on http://{host}:{port}/  user: demo  password: {password}")
    try:
        serve(app, host, port)
    finally:
        ticker.stop()
        storm.close()
