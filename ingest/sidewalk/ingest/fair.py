"""Each pole its share of a batch: one pole's flood does not hold the others back.

With a backlog queued, ingest commits up to ten times its batch size at once.
Taken in arrival order, 100,000 readings from one pole filled batch after
batch, and another pole's reading waited behind all of that pole's that had
arrived before it. ``fair_share`` bounds what one device takes of a batch in
which other devices' messages wait: at most ``per_device`` messages each,
every device's own messages in their order; the rest waits, first in line,
for the next batch. A batch from one device alone, or where no device is over
its share, is left as it is (a backlog's large commits keep their speed).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from sidewalk.core.mqtt import MqttMessage

V = TypeVar("V")


def device_of(msg: MqttMessage, verdict: object) -> str:
    """The device a message is from: a judged reading's, else the topic's fourth level."""
    if type(verdict) is tuple:
        return str(verdict[1])
    levels = msg[0].split("/", 4)
    return levels[3] if len(levels) > 3 else ""


def fair_share(
    msgs: Sequence[MqttMessage], verdicts: Sequence[V], per_device: int
) -> tuple[list[MqttMessage], list[V], list[MqttMessage], list[V]] | None:
    """(batch messages, their verdicts, the rest, theirs), or None to keep the batch whole.

    Arrival order is kept within each part; a device over ``per_device`` gives
    its later messages to the rest, only when another device is in the batch.
    """
    counts: dict[str, int] = {}
    for msg, verdict in zip(msgs, verdicts, strict=True):
        device = device_of(msg, verdict)
        counts[device] = counts.get(device, 0) + 1
    if len(counts) < 2 or max(counts.values()) <= per_device:
        return None
    taken: dict[str, int] = {}
    batch: list[MqttMessage] = []
    batch_v: list[V] = []
    rest: list[MqttMessage] = []
    rest_v: list[V] = []
    for msg, verdict in zip(msgs, verdicts, strict=True):
        device = device_of(msg, verdict)
        n = taken.get(device, 0)
        if n < per_device:
            taken[device] = n + 1
            batch.append(msg)
            batch_v.append(verdict)
        else:
            rest.append(msg)
            rest_v.append(verdict)
    return batch, batch_v, rest, rest_v
