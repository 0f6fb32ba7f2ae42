"""``sidewalk edge``: run a pole, simulate one, or send one a command.

``run --config pole.toml``       the device loop (what systemd starts on the pole)
``simulate --scenario NAME``     play a scenario through the real publisher path
``command DEVICE NAME --arg k=v`` send a command from the server side, print the reply
"""

from __future__ import annotations

import json
import signal
from pathlib import Path
from typing import Annotated

import typer

from sidewalk.core.contract import CommandArg

edge_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Run a pole (run), simulate one (simulate), or send one a command (command).",
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
        from sidewalk.observability.process import device_observability

        endpoints = device_observability(device).serve("127.0.0.1", metrics_port)
    try:
        device.run()
    finally:
        if endpoints is not None:
            endpoints.stop()
        device.close()


@edge_app.command()
def simulate(
    scenario: Annotated[
        str, typer.Option(help="scenario the simulated pole plays")
    ] = "first-storm",
    config: ServerConfig = None,
    speed: Annotated[
        float | None,
        typer.Option(help="scenario seconds per wall second (default: as fast as possible)"),
    ] = None,
    buffer: Annotated[
        Path | None,
        typer.Option(help="the pole's disk buffer (default: <data_dir>/<device>-buffer.sqlite3)"),
    ] = None,
) -> None:
    """Run a simulated pole: buffer the scenario's readings and publish them at QoS 1."""
    from sidewalk.core.config import ConfigError, load_settings
    from sidewalk.edge.buffer import ReadingBuffer
    from sidewalk.edge.publisher import Publisher
    from sidewalk.edge.simulated import SimulatedPole
    from sidewalk.scenarios import ScenarioError, expand, load_scenario
    from sidewalk.system import mqtt_settings

    try:
        settings = load_settings(config)
        story = load_scenario(scenario)
    except (ConfigError, ScenarioError) as exc:
        raise _fail(str(exc)) from None
    if settings.mqtt.url is None:
        raise _fail("mqtt.url is not set: a pole needs a broker (set SIDEWALK_MQTT__URL)")
    device = story.scenario.device
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    buf = ReadingBuffer(buffer or settings.data_dir / f"{device}-buffer.sqlite3", device)
    publisher = Publisher(buf, mqtt_settings(settings, device), site=settings.site)
    publisher.start()
    played = SimulatedPole(publisher, expand(story), speed=speed).run()
    typer.echo(f"buffered {len(played)} readings; waiting for the server's stored watermark …")
    stored = publisher.wait_stored(timeout_s=300)
    publisher.stop()
    buf.close()
    typer.echo("all stored" if stored else "not all stored yet; they stay buffered")


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
    import uuid

    from sidewalk.core.config import ConfigError, load_settings
    from sidewalk.core.mqtt import MqttError
    from sidewalk.edge.commands import CommandClient, CommandTimeout
    from sidewalk.system import mqtt_settings

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
