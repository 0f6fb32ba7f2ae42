"""``sidewalk-edge``: run a pole, or send one a command.

``run --config pole.toml``       the device loop (what systemd starts on the pole)
``command DEVICE NAME --arg k=v`` send a command from the server side, print the reply

Imports only the edge and core packages: a pole installs nothing else. The
server's ``sidewalk edge`` adds ``simulate`` (which needs the scenarios). Each
command imports what it uses when it runs, so ``--help`` (on the server, of every
``sidewalk edge`` command) loads none of the device, MQTT or settings code.
"""

from __future__ import annotations

import json
import signal
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from sidewalk.core.contract import CommandArg

edge_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Run a pole (run), or send one a command (command).",
)

ServerConfig = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="server TOML configuration (secrets come from the environment)"
    ),
]


def _fail(message: str) -> typer.Exit:
    typer.echo(message, err=True)
    return typer.Exit(2)


@edge_app.command()
def run(
    config: Annotated[Path, typer.Option("--config", "-c", help="the pole's TOML file")],
    metrics_port: Annotated[
        int | None,
        typer.Option(
            "--metrics-port",
            help="serve /metrics, /healthz, /readyz on 127.0.0.1:PORT (e.g. 9466; default off)",
        ),
    ] = None,
    log_format: Annotated[
        str, typer.Option("--log-format", help="text | json (JSON lines for a log shipper)")
    ] = "text",
) -> None:
    """Run the device loop until SIGTERM/SIGINT (systemd: Type=notify, watchdog)."""
    from sidewalk.core.logs import configure_logging
    from sidewalk.core.mqtt import MqttConnectRefused
    from sidewalk.edge.config import load_edge_settings
    from sidewalk.edge.device import Device
    from sidewalk.edge.metrics import device_observability

    if log_format not in {"text", "json"}:
        raise _fail("--log-format is text or json")
    configure_logging("json" if log_format == "json" else "text", "INFO")
    try:
        settings = load_edge_settings(config)
        device = Device(settings)
    except ValueError as exc:  # EdgeConfigError, or degenerate homography points
        raise _fail(f"configuration error: {exc}") from None
    except OSError as exc:
        raise _fail(f"cannot open a sensor: {exc}") from None
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: device.stop())
    try:
        device.start()
    except MqttConnectRefused as exc:
        raise _fail(f"{settings.device}: {exc} (check the device's login and ACL)") from None
    endpoints = None
    if metrics_port:
        endpoints = device_observability(device).serve("127.0.0.1", metrics_port)
    try:
        device.run()
    finally:
        if endpoints is not None:
            endpoints.stop()
        device.close()


def parse_arg(text: str) -> tuple[str, CommandArg]:
    """``key=value``; the value is read as JSON when it parses as a scalar, else a string."""
    key, sep, raw = text.partition("=")
    if not sep or not key:
        raise typer.BadParameter(f"{text!r} is not key=value")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return key, raw
    if not isinstance(value, str | int | float | bool):
        return key, raw
    return key, value


@edge_app.command()
def command(
    device: Annotated[str, typer.Argument(help="device id")],
    name: Annotated[str, typer.Argument(help="capture_now | recalibrate | set_interval")],
    arg: Annotated[
        list[str] | None, typer.Option("--arg", "-a", help="key=value, repeatable")
    ] = None,
    config: ServerConfig = None,
    timeout: Annotated[float, typer.Option(help="seconds to wait for the reply")] = 15.0,
) -> None:
    """Send a command to a device and print its reply (exit 1 on error or timeout)."""
    from sidewalk.core.config import ConfigError, load_settings, mqtt_settings
    from sidewalk.core.mqtt import MqttError
    from sidewalk.edge.commands import CommandClient, CommandTimeout

    try:
        settings = load_settings(config)
    except ConfigError as exc:
        raise _fail(str(exc)) from None
    if settings.mqtt.url is None:
        raise _fail("mqtt.url is not set (set SIDEWALK_MQTT__URL)")
    args = dict(parse_arg(a) for a in arg or [])
    mqtt = mqtt_settings(settings, f"cmd-{uuid.uuid4().hex[:8]}")
    try:
        with CommandClient(mqtt, settings.site) as client:
            result = client.call(device, name, args, timeout_s=timeout)
    except CommandTimeout as exc:
        typer.echo(f"timeout: {exc}", err=True)
        raise typer.Exit(1) from None
    except (MqttError, ValueError) as exc:
        raise _fail(str(exc)) from None
    reply = result.reply
    typer.echo(json.dumps(reply.model_dump(mode="json", by_alias=True), indent=2))
    typer.echo(
        f"round trip {result.round_trip_ms} ms; device clock offset "
        f"{result.clock_offset_ms:+.0f} ms (± {result.round_trip_ms / 2:.0f})"
    )
    if reply.status != "ok":
        raise typer.Exit(1)
