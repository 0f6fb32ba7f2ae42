"""``sidewalk dashboard`` and ``sidewalk dashboard add-user``.

FastAPI, uvicorn and argon2 load when a command runs (``common``: a fast --help).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sidewalk.cli.common import (
    ConfigOption,
    LogFormatOption,
    command_group,
    configure_logging,
    console,
    fail,
    no_nul,
    refusals,
    village,
)

if TYPE_CHECKING:
    from sidewalk.cli.common import Village
    from sidewalk.dashboard.survey_photos import PhoneCamera

SECRET_ENV = "SIDEWALK_DASHBOARD_SECRET"
ROLES = "viewer | inspector | clerk | admin"  # sidewalk.dashboard.auth.ROLES checks them

dashboard_app = command_group(
    "The public-works dashboard (FastAPI + a UI in the same process).", no_args_is_help=False
)


def secret_from_env() -> str:
    """The cookie-signing secret; refuses to start without one (it is never in a file)."""
    import os

    secret = os.environ.get(SECRET_ENV, "")
    if len(secret) < 16:
        fail(f"set {SECRET_ENV} to a random string of at least 16 characters")
    return secret


@dashboard_app.callback(invoke_without_command=True)
def dashboard(  # noqa: PLR0917 (Typer maps parameters to options)
    ctx: typer.Context,
    config: ConfigOption = None,
    host: Annotated[str, typer.Option(help="listen address")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="listen port")] = 8080,
    geojson: Annotated[Path | None, typer.Option(help="frontage geometry (GeoJSON)")] = None,
    log_format: LogFormatOption = None,
) -> None:
    """Serve the dashboard over the configured stores (secret: SIDEWALK_DASHBOARD_SECRET)."""
    if ctx.invoked_subcommand is not None:
        # ``sidewalk dashboard --config F add-user …``: the group's --config serves the
        # subcommand too, as a clerk reading the help would expect.
        ctx.obj = {"config": config}
        return
    secret = secret_from_env()
    place = village(config)
    configure_logging(place.settings, log_format)
    port_free(host, port)
    serve(place, secret, host=host, port=port, geojson=geojson)


def port_free(host: str, port: int) -> None:
    """Exit 2 in one line when the dashboard's own port is taken (before any store opens)."""
    from sidewalk.core.observability import port_problem

    why = port_problem(host, port)
    if why is not None:
        fail(
            f"port {port} on {host} is in use by another program ({why}): stop it, or start"
            f" the dashboard with --port set to a free port (the unit file's ExecStart line)"
        )


def serve(place: Village, secret: str, *, host: str, port: int, geojson: Path | None) -> None:
    """Serve the dashboard over the configured stores until interrupted."""
    from sidewalk.core.config import mqtt_settings
    from sidewalk.dashboard.app import create_app
    from sidewalk.dashboard.app import serve as run
    from sidewalk.dashboard.poles import PoleLink
    from sidewalk.storage.evidence import EvidenceStore
    from sidewalk.storage.space import FreeSpaceFloor
    from sidewalk.storage.timeseries import SqliteTimeSeriesStore

    settings = place.settings
    tls = _tls(settings.dashboard.tls_certfile)
    with place.cases() as cases:
        # Opened (made, when missing) whether or not ingest has written yet: a
        # dashboard started first would otherwise show no reading and no pole's
        # picture until it was restarted.
        path = settings.timeseries.sqlite_path
        path.parent.mkdir(parents=True, exist_ok=True)
        timeseries = SqliteTimeSeriesStore(path)
        # Where ingest keeps evidence JPEGs (the CLI's ingest uses the same directory).
        frames = settings.data_dir / "evidence"
        space = FreeSpaceFloor(
            [path.parent, frames],
            min_free_bytes=settings.ingest.min_free_bytes,
            min_free_percent=settings.ingest.min_free_percent,
        )
        app = create_app(
            cases, timeseries, place.profile, secret_key=secret, geojson_path=geojson,
            evidence=EvidenceStore(frames),
            space=space, trusted_proxies=settings.dashboard.trusted_proxies,
            secure_cookies=tls is not None, host_names=[*settings.dashboard.host_names, host],
        )  # fmt: skip
        # The Admin page's letterhead view reads the settings' [village] table.
        app.state.village = settings.village
        app.state.phone_camera = _phone_camera(settings.data_dir)
        # Commissioning: commands to the poles and their health reports (docs/commissioning.md).
        mqtt = mqtt_settings(settings, f"{settings.mqtt.client_id}-dashboard")
        app.state.poles = poles = PoleLink(mqtt, settings.site, cases)
        poles.start()
        try:
            run(app, host, port, ssl_certfile=tls and tls[0], ssl_keyfile=tls and tls[1])
        finally:
            poles.close()
            if timeseries is not None:
                timeseries.close()


# The one calibration every phone once shared: now one per phone model (phone-cameras/).
PHONE_CAMERA = "phone-camera.json"


def _phone_camera(data_dir: Path) -> PhoneCamera:
    """The inspectors' phones (docs/dashboard.md, Rounds): each photo measured with its
    phone's calibration from ``<data_dir>/phone-cameras/``, else the marker alone."""
    from sidewalk.analytics.phone_cameras import PHONE_CAMERAS_DIR
    from sidewalk.dashboard.survey_photos import PhoneCamera

    old = data_dir / PHONE_CAMERA
    if old.exists():  # not applied to every phone any more; said, not silently dropped
        typer.echo(
            f"{old}: one calibration no longer serves every phone; add it for its phone with"
            f" `sidewalk inspect phone-camera --intrinsics {old} --make … --model …`",
            err=True,
        )
    return PhoneCamera(registry=data_dir / PHONE_CAMERAS_DIR)


TLS_KEY_ENV = "SIDEWALK_DASHBOARD_TLS_KEYFILE"


def _tls(certfile: Path | None) -> tuple[str, str] | None:
    """(certificate, key) paths for HTTPS, or None; the key's path only from the environment."""
    import os

    if certfile is None:
        return None
    key = os.environ.get(TLS_KEY_ENV, "")
    if not key:
        fail(f"dashboard.tls_certfile is set: set {TLS_KEY_ENV} to its private key's path")
    for what, path in (("dashboard.tls_certfile", str(certfile)), (TLS_KEY_ENV, key)):
        if not Path(path).is_file():
            fail(f"{what}: no such file {path!r}")
    return str(certfile), key


@dashboard_app.command("add-user")
def add_user(
    ctx: typer.Context,
    name: Annotated[str, typer.Argument(help="login name")],
    role: Annotated[str, typer.Option(help=ROLES)],
    config: ConfigOption = None,
) -> None:
    """Create a dashboard account (the password is asked for, never a flag)."""
    from sidewalk.dashboard import auth

    try:
        auth.role_of(role)  # before asking for a password that would be thrown away
    except ValueError as exc:
        fail(f"--role: {exc}")
    no_nul(name=name)
    if not name.strip() or len(name) > 64:
        fail("the login name has 1 to 64 characters")
    if config is None and isinstance(ctx.obj, dict):
        config = ctx.obj.get("config")
    place = village(config)
    # Everything that can refuse is checked before the password is asked for: the
    # database (a wrong URL fails here) and a name already taken.
    with place.cases() as cases, refusals(ValueError):
        if cases.dashboard.get_user(name) is not None:
            fail(f"there is already an account called {name!r}: choose another login name")
        password = typer.prompt("password", hide_input=True, confirmation_prompt=True)
        auth.add_user(cases, name, password, role, who="cli")
    console().print(f"account {name} ({role}) created")
