"""Known devices only: ingest stores readings from the poles the registry knows.

A made-up device id must not become a row, a retained watermark and a set of
metric series (50,000 of them made `/metrics` 9 MB). Readings, frames and
status messages from a device the registry does not hold are dead letters
with the reason ``unknown_device``: kept (bounded, like every dead letter),
visible and counted, never stored as readings.

The registry is read every ``refresh_s``, and again (at most every
``miss_refresh_s``) when an unknown id arrives, so a pole registered a moment
ago is accepted at once. If the registry cannot be read, the last set read
stays in force; before the first read nothing is known and nothing is
accepted, so a reading is never stored for a pole nobody registered.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

log = logging.getLogger(__name__)

# Sites counted separately in the unknown-device counter; past this, "other"
# (the site is in the topic, which an unauthenticated pole could vary).
MAX_COUNTED_SITES = 64


class KnownDevices:
    """The set of registered device ids, refreshed from ``load`` (see module doc)."""

    def __init__(
        self,
        load: Callable[[], Iterable[str]],
        *,
        refresh_s: float = 30.0,
        miss_refresh_s: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._load = load
        self._refresh_s = refresh_s
        self._miss_refresh_s = miss_refresh_s
        self._clock = clock
        self._lock = threading.Lock()
        self._ids: frozenset[str] = frozenset()
        self._loaded_at: float | None = None
        self._tried_at: float | None = None
        self.unknown_by_site: dict[str, int] = {}

    def refresh(self) -> bool:
        """Read the registry now; False (and the old set kept) if it cannot be read."""
        with self._lock:
            self._tried_at = self._clock()
            try:
                ids = frozenset(self._load())
            except Exception as exc:
                log.warning("could not read the registry's poles (%s); keeping the last list", exc)
                return False
            self._ids, self._loaded_at = ids, self._tried_at
            return True

    def __contains__(self, device: object) -> bool:
        now = self._clock()
        if self._loaded_at is None or now - self._loaded_at >= self._refresh_s:
            self.refresh()
        if device in self._ids:
            return True
        if self._tried_at is None or now - self._tried_at >= self._miss_refresh_s:
            self.refresh()
        return device in self._ids

    def __len__(self) -> int:
        return len(self._ids)

    def count_unknown(self, site: str) -> None:
        """One more message from an unknown device, by the site in its topic."""
        counted = site in self.unknown_by_site or len(self.unknown_by_site) < MAX_COUNTED_SITES
        key = site if counted else "other"
        self.unknown_by_site[key] = self.unknown_by_site.get(key, 0) + 1


def unknown_device_detail(device: str) -> str:
    """The dead letter's reason in the IT person's words, with the fix."""
    return (
        f"pole {device!r} is not in the registry; if it is one of the Village's poles,"
        f" register it (the pole's own log says the same): on the dashboard's Poles page, or"
        f" `sidewalk registry pole add {device} --by NAME --watches ADDRESS`"
    )
