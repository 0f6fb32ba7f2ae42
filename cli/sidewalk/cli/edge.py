"""``sidewalk edge``: the pole's own commands (``run``, ``command``) and ``simulate``.

``simulate`` plays a scenario through the real publisher path, so it needs the
scenarios, which a pole does not install: it lives here, on the server side,
and the pole's ``sidewalk-edge`` has only ``run`` and ``command``. The root
application loads this group only when it is used (``main._Mounted``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sidewalk.cli.common import (
    ConfigOption,
    command_group,
    console,
    load_settings,
    require_broker,
    unreachable_broker,
)
from sidewalk.cli.demo import load_story
from sidewalk.edge.cli import edge_app as pole_app

edge_app = command_group(
    "Run a pole (run), simulate one (simulate), or send one a command (command)."
)
# The very commands the pole's ``sidewalk-edge`` has, not copies of them.
edge_app.registered_commands.extend(pole_app.registered_commands)


@edge_app.command()
def simulate(
    scenario: Annotated[
        str, typer.Option(help="scenario the simulated pole plays")
    ] = "first-storm",
    config: ConfigOption = None,
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
    from sidewalk.core.config import mqtt_settings
    from sidewalk.core.mqtt import MqttError
    from sidewalk.edge.buffer import ReadingBuffer
    from sidewalk.edge.publisher import Publisher
    from sidewalk.edge.simulated import SimulatedPole
    from sidewalk.scenarios import expand

    settings = load_settings(config)
    story = load_story(scenario)
    require_broker(settings)
    device = story.scenario.device
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    buf = ReadingBuffer(buffer or settings.data_dir / f"{device}-buffer.sqlite3", device)
    publisher = Publisher(buf, mqtt_settings(settings, device), site=settings.site)
    try:
        publisher.start()
    except MqttError as exc:
        buf.close()
        unreachable_broker(settings, exc)
    played = SimulatedPole(publisher, expand(story), speed=speed).run()
    console().print(f"buffered {len(played)} readings; waiting for the server's stored watermark …")
    stored = publisher.wait_stored(timeout_s=300)
    publisher.stop()
    buf.close()
    console().print("all stored" if stored else "not all stored yet; they stay buffered")
