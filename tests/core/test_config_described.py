"""Every configuration field says what it is for, in words the village's IT person reads.

``Settings`` and each of its sections, and the secrets read from the environment:
a field without a ``description`` fails here, naming the field.
"""

from __future__ import annotations

from typing import get_args

from pydantic import BaseModel

from sidewalk.core.config import Secrets, Settings


def _undescribed(model: type[BaseModel], prefix: str, seen: set[type[BaseModel]]) -> list[str]:
    missing: list[str] = []
    for name, info in model.model_fields.items():
        if not (info.description or "").strip():
            missing.append(prefix + name)
        for kind in (info.annotation, *get_args(info.annotation)):
            if isinstance(kind, type) and issubclass(kind, BaseModel) and kind not in seen:
                seen.add(kind)
                missing += _undescribed(kind, f"{prefix}{name}.", seen)
    return missing


def test_every_config_field_has_a_description() -> None:
    seen: set[type[BaseModel]] = set()
    assert _undescribed(Settings, "", seen) == []
    assert _undescribed(Secrets, "secrets: ", seen) == []
    # The walk reached the sections (village is optional: ``VillageConfig | None``).
    assert {kind.__name__ for kind in seen} >= {"MqttConfig", "VillageConfig", "DeliveryConfig"}


def test_sections_keep_their_defaults() -> None:
    settings = Settings()
    assert settings.mqtt.client_id == "sidewalk-ingest"
    assert settings.village is None
    assert Secrets().mqtt_password is None
