"""``sidewalk edge``: the pole's own commands (``run``, ``command``) and ``simulate``.

``simulate`` plays a scenario through the real publisher path, so it needs the
scenarios, which a pole does not install: it lives here, on the server side,
and the pole's ``sidewalk-edge`` has only ``run`` and ``command``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sidewalk.core.config import ConfigError, load_settings, mqtt_settings
from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.edge.cli import ServerConfig
from sidewalk.edge.cli import edge_app as pole_app
from sidewalk.edge.publisher import Publisher
from sidewalk.edge.simulated import SimulatedPole
from sidewalk.scenarios import ScenarioError, expand, load_scenario

edge_app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Run a pole (run), simulate one (simulate), or send one a command (command).",
)
# The very commands the pole's ``sidewalk-edge`` has, not copies of them.
edge_app.registered_commands.extend(pole_app.registered_commands)


def _fail(message: str) -> typer.Exit:
    typer.echo(message, err=True)
    return typer.Exit(2)


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
