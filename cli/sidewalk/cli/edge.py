"""``sidewalk edge``: the pole's own commands (``run``, ``command``) and ``simulate``.

``simulate`` plays a scenario through the real publisher path, so it needs the
scenarios, which a pole does not install: it lives here, on the server side,
and the pole's ``sidewalk-edge`` has only ``run`` and ``command``. The root
application loads this group only when it is used (``main._Mounted``).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sidewalk.cli.common import (
    ConfigOption,
    command_group,
    console,
    fail,
    load_settings,
    require_broker,
    unreachable_broker,
    village,
)
from sidewalk.cli.demo import load_story
from sidewalk.edge.cli import edge_app as pole_app

if TYPE_CHECKING:
    from sidewalk.scenarios import Scenario

edge_app = command_group(
    "Run a pole (run), simulate one (simulate), or send one a command (command)."
)
# The very commands the pole's ``sidewalk-edge`` has, not copies of them.
edge_app.registered_commands.extend(pole_app.registered_commands)


@edge_app.command()
def simulate(  # noqa: PLR0917 (Typer maps parameters to options)
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
    device: Annotated[
        str | None,
        typer.Option(
            help="stand in for this registered pole: its id, the frontages the registry"
            " assigns it, readings stamped up to now (default: the scenario's own pole and"
            " dates, for a scenario's own street)"
        ),
    ] = None,
    frontage: Annotated[
        list[str] | None,
        typer.Option(help="with --device: only this frontage (address or id; repeat for more)"),
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
    if frontage and device is None:
        fail("--frontage needs --device (the registered pole that watches it)")
    if device is not None:
        story = _on_registered_pole(config, story, device, frontage or [], speed)
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


def _on_registered_pole(
    config: Path | None, story: Scenario, device: str, wanted: list[str], speed: float | None
) -> Scenario:
    """The story laid on the registry's pole and frontages, ending now (or, played at
    ``speed``, ending as the last reading is sent: no reading is stamped ahead of the
    wall clock, so ingest accepts every one)."""
    from datetime import UTC, datetime

    from sidewalk.scenarios import PoleFrontage, ScenarioError, on_pole
    from sidewalk.storage.cases import CaseStoreError

    place = village(config)
    with place.cases() as cases:
        try:
            pole = cases.registry.get_device(device)
        except CaseStoreError:
            pole = None
        if pole is None or pole.retired_at is not None:
            fail(
                f"no registered pole {device!r}: register it on the dashboard's Poles page"
                " (or `sidewalk registry pole add`), then assign its frontages"
            )
        watched = cases.registry.list_frontages(device_id=device)
    if not watched:
        fail(
            f"pole {device!r} watches no frontage yet: assign some with"
            f" `sidewalk registry pole assign {device} FRONTAGE …`"
        )
    if wanted:
        chosen = []
        for name in wanted:
            match = [f for f in watched
                     if name in (f.id, f.street_address)
                     or f.street_address.upper() == name.strip().upper()]  # fmt: skip
            if not match:
                fail(f"--frontage {name!r}: pole {device!r} does not watch it")
            chosen += match
        watched = chosen
    frontages = [PoleFrontage(f.id, f.street_address, f.length_ft, f.walk_width_ft)
                 for f in watched]  # fmt: skip
    length = story.scenario.end - story.scenario.start
    now = datetime.now(UTC)
    ending = now if speed is None else now + length / speed
    try:
        laid = on_pole(story, device, frontages, ending)
    except ScenarioError as exc:
        fail(str(exc))
    console().print(
        f"pole {device}, {len(frontages)} frontage(s): {laid.scenario.start:%Y-%m-%d %H:%M}"
        f" to {laid.scenario.end:%Y-%m-%d %H:%M} UTC"
    )
    for k, f in enumerate(frontages):
        script = story.frontage[k % len(story.frontage)]
        console().print(f"  {f.address}: plays {script.address} of the {story.scenario.name}")
    return laid
