"""Dead letters in the log without a flood: the first of each reason whole, the rest counted.

A line per dead letter let 50,000 made-up device ids write 21.6 MB of log.
Every dead letter is still kept (bounded) in the store and counted in the
metrics; the log says the first of each reason in full, then, once per
``window_s``, how many more came, from how many devices, with a few of them:
"12,345 messages from 50,000 unknown devices in the last 60 s, e.g. …".
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from sidewalk.storage.timeseries import DeadLetter

# Devices told apart per window; past this the count says "at least".
MAX_DEVICES_COUNTED = 100_000
EXAMPLES = 3


@dataclass(slots=True)
class _Window:
    started: float
    more: int = 0
    devices: set[str] = field(default_factory=set)
    examples: list[str] = field(default_factory=list)


def _summary(reason: str, w: _Window, seconds: float) -> str:
    n = len(w.devices)
    many = "at least " if n >= MAX_DEVICES_COUNTED else ""
    who = f"{many}{n:,} {'unknown ' * (reason == 'unknown_device')}device{'s' * (n != 1)}"
    what = "messages" if reason == "unknown_device" else f"more {reason} dead letters"
    seen = f", e.g. {', '.join(w.examples)}" if w.examples else ""
    tail = (
        "; each is kept in dead letters (a pole of the Village's: register it)"
        if reason == "unknown_device"
        else "; each is kept in dead letters with its reason"
    )
    return f"{w.more:,} {what} from {who} in the last {seconds:.0f} s{seen}{tail}"


class DeadLetterLog:
    """Logs dead letters: per reason the first of each window whole, then a count."""

    def __init__(
        self,
        log: logging.Logger,
        *,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._log = log
        self._window_s = window_s
        self._clock = clock
        self._windows: dict[str, _Window] = {}

    def note(self, letter: DeadLetter, topic: str) -> None:
        """One dead letter: logged whole if it is its reason's first in the window."""
        now = self._clock()
        w = self._windows.get(letter.reason)
        if w is not None and now - w.started < self._window_s:
            w.more += 1
            device = letter.device or "(no device)"
            if len(w.devices) < MAX_DEVICES_COUNTED:
                w.devices.add(device)
            if len(w.examples) < EXAMPLES and device not in w.examples:
                w.examples.append(device)
            return
        if w is not None:
            self._flush(letter.reason, w, now)
        self._windows[letter.reason] = _Window(now)
        self._log.warning(
            "dead letter %s on %s: %s",
            letter.reason,
            topic,
            letter.detail,
            # Separate fields in JSON logs, for a log search by reason or device.
            extra={"reason": letter.reason, "topic": topic, "device": letter.device},
        )

    def tick(self) -> None:
        """Summarise every window that has ended (called after each commit)."""
        now = self._clock()
        for reason, w in list(self._windows.items()):
            if now - w.started >= self._window_s:
                self._flush(reason, w, now)
                del self._windows[reason]

    def _flush(self, reason: str, w: _Window, now: float) -> None:
        if w.more:
            self._log.warning(
                "%s",
                _summary(reason, w, now - w.started),
                extra={"reason": reason, "count": w.more, "devices": len(w.devices)},
            )
