"""Every pole setting says what it is for, in words the person installing the pole reads.

``EdgeSettings`` and every table it holds (the MQTT section, the buffer, each sensor
kind, a ground probe, the camera and its frontages) and the secrets read from the
environment: a field without a ``description`` fails here, naming the field. A
configuration error names the field, the table it is in, and what the field is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, get_args

import pytest
from pydantic import BaseModel

from sidewalk.edge.config import EdgeConfigError, EdgeSecrets, EdgeSettings, load_edge_settings

EXAMPLE = Path(__file__).resolve().parents[2] / "deploy" / "pole.example.toml"


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    """Models inside a type, through ``list[...]``, unions, ``| None`` and ``Annotated``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in get_args(annotation) for m in _models_in(arg)]


def _undescribed(model: type[BaseModel], prefix: str, seen: set[type[BaseModel]]) -> list[str]:
    missing: list[str] = []
    for name, info in model.model_fields.items():
        if not (info.description or "").strip():
            missing.append(prefix + name)
        for kind in _models_in(info.annotation):
            if kind not in seen:
                seen.add(kind)
                missing += _undescribed(kind, f"{prefix}{name}.{kind.__name__}.", seen)
    return missing


def test_every_pole_setting_has_a_description() -> None:
    seen: set[type[BaseModel]] = set()
    assert _undescribed(EdgeSettings, "", seen) == []
    assert _undescribed(EdgeSecrets, "secrets: ", seen) == []
    # The walk reached every table, through the sensors' union and the nested lists.
    assert {kind.__name__ for kind in seen} >= {
        "EdgeMqttConfig",
        "BufferConfig",
        "Sht31Sensor",
        "Bme280Sensor",
        "Mlx90614Sensor",
        "Ds18b20Sensor",
        "GroundProbeConfig",
        "UltrasonicSensor",
        "LaserSensor",
        "TippingBucketSensor",
        "SimulatedSensor",
        "CameraConfig",
        "FrontageConfig",
    }


def test_an_undescribed_field_is_found() -> None:
    class Probe(BaseModel):
        depth_mm: int = 0

    class Sensor(BaseModel):
        probes: list[Probe | None] = []

    assert _undescribed(Sensor, "", set()) == ["probes", "probes.Probe.depth_mm"]


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (
            "emissivity = 0.96",
            "emissivity = 3",
            [
                "sensors.1.mlx90614.emissivity",
                '2nd [[sensors]] table, id "surface"',
                "Emissivity of the surface",
            ],
        ),
        (
            "max_rows = 1000000",
            "max_rows = 10",
            ["buffer.max_rows", "The most readings the buffer holds"],
        ),
        (
            "walk_width_mm = 1524",
            'walk_width_mm = "wide"',
            [
                "camera.frontages.0.walk_width_mm",
                '1st [[camera.frontages]] table, id "main-st-101"',
                "The walk's width in millimetres",
            ],
        ),
        ("keepalive_s = 30", "keepalive = 30", ["mqtt.keepalive", "check the spelling"]),
    ],
)
def test_an_error_names_the_field_its_table_and_what_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, says: list[str]
) -> None:
    for name in ("SIDEWALK_EDGE_DEVICE", "SIDEWALK_EDGE_MQTT__URL"):
        monkeypatch.delenv(name, raising=False)
    text = EXAMPLE.read_text(encoding="utf-8")
    assert old in text
    path = tmp_path / "pole.toml"
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    with pytest.raises(EdgeConfigError) as caught:
        load_edge_settings(path)
    message = str(caught.value)
    for words in says:
        assert words in message, message
