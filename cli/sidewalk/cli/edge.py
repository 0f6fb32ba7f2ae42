"""``sidewalk edge``: the pole's own commands (``run``, ``command``) and ``simulate``.

``simulate`` plays a scenario through the real publisher path, so it needs the
scenarios, which a pole does not install: it lives here, on the server side,
and the pole's ``sidewalk-edge`` has only ``run`` and ``command``. The root
application loads this group only when it is used (``main._Mounted``).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

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
    from collections.abc import Iterator

    from sidewalk.core.config import Settings
    from sidewalk.edge.config import EdgeSettings
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
    camera: Annotated[
        bool,
        typer.Option(
            "--camera",
            help="with --device: a whole pole with a stand-in camera that draws its frontages,"
            " the snow and the shovelled path as the storm plays; the Poles page shows its"
            " picture and commissioning works on it. It stays on after the storm (Ctrl-C)",
        ),
    ] = False,
    stay: Annotated[
        float | None,
        typer.Option(
            help="with --camera: seconds to stay on after the storm (default: until Ctrl-C)"
        ),
    ] = None,
) -> None:
    """Run a simulated pole: buffer the scenario's readings and publish them at QoS 1."""
    from sidewalk.core.config import mqtt_settings
    from sidewalk.core.mqtt import MqttConnectRefused, MqttError
    from sidewalk.edge.buffer import ReadingBuffer
    from sidewalk.edge.config import EdgeSecrets, device_mqtt_settings
    from sidewalk.edge.publisher import Publisher
    from sidewalk.edge.simulated import SimulatedPole
    from sidewalk.scenarios import expand

    settings = load_settings(config)
    story = load_story(scenario)
    if frontage and device is None:
        fail("--frontage needs --device (the registered pole that watches it)")
    if (camera or stay is not None) and device is None:
        fail("--camera needs --device (the registered pole it stands in for)")
    if device is not None:
        story = _on_registered_pole(config, story, device, frontage or [], speed)
    require_broker(settings)
    if camera:
        _pole_with_camera(settings, story, buffer, speed, stay)
        return
    registered = device is not None
    device = story.scenario.device
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    buf = ReadingBuffer(buffer or settings.data_dir / f"{device}-buffer.sqlite3", device)
    # A registered pole's stand-in logs in as that pole: the broker's ACL lets only
    # the pole's own login write its readings (the server's login may not).
    mqtt = (
        device_mqtt_settings(_stand_in_settings(settings, device, buffer), EdgeSecrets.from_env())
        if registered
        else mqtt_settings(settings, device)
    )
    publisher = Publisher(buf, mqtt, site=settings.site)
    try:
        publisher.start()
    except MqttError as exc:
        buf.close()
        if registered and isinstance(exc, MqttConnectRefused):
            _pole_refused(settings, device, exc)
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


def _pole_refused(settings: Settings, device: str, exc: Exception) -> NoReturn:
    fail(
        f"the MQTT broker at {settings.mqtt.host}:{settings.mqtt.port} refused pole"
        f" {device!r} ({exc}): the stand-in logs in as the pole, so the broker needs the"
        f" pole's login ({device}) and SIDEWALK_EDGE_MQTT_PASSWORD its password"
    )


def _stand_in_settings(settings: Settings, device: str, buffer: Path | None) -> EdgeSettings:
    """The pole's own settings for the stand-in: the server's broker, the pole's login."""
    from sidewalk.edge.config import EdgeSettings

    mqtt: dict[str, object] = {"url": settings.mqtt.url}
    if settings.mqtt.ca_file is not None:
        mqtt["ca_file"] = settings.mqtt.ca_file
    return EdgeSettings(
        device=device,
        site=settings.site,
        state_dir=settings.data_dir / f"{device}-stand-in",
        mqtt=mqtt,
        buffer={"path": buffer or settings.data_dir / f"{device}-buffer.sqlite3"},
        camera={"source": "stand-in camera", "interval_s": 60.0},
    )


def _pole_with_camera(
    settings: Settings, story: Scenario, buffer: Path | None, speed: float | None,
    stay: float | None,
) -> None:  # fmt: skip
    """The stand-in as a whole pole: the edge ``Device`` itself, its camera the stand-in.

    It logs in as the pole does (its device id, ``SIDEWALK_EDGE_MQTT_PASSWORD``), so
    the broker's ACL treats it as that pole. The storm goes through the device's own
    buffer first, as a pole sends what it buffered while off line; then the pole
    comes on live, stamping the present: its camera draws each walk as the storm
    left it, sends a first picture, measures once commissioning has calibrated it,
    and answers the dashboard's commands. (Live readings during the storm would be
    stamped after the storm's later readings, and ingest would see its clock step
    back.)
    """
    import signal
    import threading
    import time

    from sidewalk.core.mqtt import MqttConnectRefused
    from sidewalk.core.units import MM_PER_FOOT
    from sidewalk.edge.camera.standin import StandInCamera, Walk
    from sidewalk.edge.config import EdgeSecrets
    from sidewalk.edge.device import Device
    from sidewalk.edge.simulated import ScenarioReading, SimulatedPole
    from sidewalk.scenarios import expand

    device_id = story.scenario.device
    walks = [Walk(f.id, f.length_ft * MM_PER_FOOT, f.walk_width_ft * MM_PER_FOOT)
             for f in story.frontage]  # fmt: skip
    drawn: dict[str, float] = {}  # the scripted cleared width the camera draws now
    pole = Device(
        _stand_in_settings(settings, device_id, buffer),
        frames=StandInCamera(walks, lambda fid: drawn.get(fid, 0.0)),
        secrets=EdgeSecrets.from_env(),
    )
    try:
        pole.start()
    except MqttConnectRefused as exc:
        _pole_refused(settings, device_id, exc)
    publisher = pole.publisher
    assert publisher is not None

    def script() -> Iterator[ScenarioReading]:
        for item in expand(story):
            if item.stream == "snow":  # what the camera will draw when the pole is live
                drawn[str(item.values["frontage"])] = float(item.values["cleared_width_mm"])
            yield item

    loop = threading.Thread(target=pole.run, name=f"stand-in-{device_id}", daemon=True)
    # Stopped by a service manager as by Ctrl-C: the pole ends its loop and flushes.
    signal.signal(signal.SIGTERM, lambda *_: pole.stop())
    try:
        played = SimulatedPole(publisher, script(), speed=speed).run()
        pole.camera_cycle(force_evidence=True)  # a first picture for the Poles page
        loop.start()
        console().print(
            f"buffered {len(played)} readings; the camera shows {len(walks)} frontage(s);"
            + (f" staying on for {stay:g} s" if stay is not None else " on until Ctrl-C")
        )
        end = math.inf if stay is None else time.monotonic() + stay
        while loop.is_alive() and time.monotonic() < end:
            loop.join(max(0.0, min(0.5, end - time.monotonic())))
    except KeyboardInterrupt:
        pass
    finally:
        pole.stop()
        if loop.is_alive():
            loop.join(10)
        stored = publisher.wait_stored(timeout_s=60)
        pole.close()
    console().print("all stored" if stored else "not all stored yet; they stay buffered")
