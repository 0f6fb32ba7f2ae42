"""The free-space floor: below it, ingest stops taking messages before the disk is full.

``FreeSpaceFloor(paths, min_free_bytes, min_free_percent)`` watches the file
systems holding the stores (the time-series file's directory, the evidence
directory). The floor of each is the larger of ``min_free_bytes`` and
``min_free_percent`` of its size; ``problem()`` is None above it and a one-line
reason below it. Ingest checks it before each commit and, below it, neither
writes nor acknowledges: the messages stay queued at the broker and in the
poles' buffers until space is freed (retention prune, an operator). The same
object feeds ``/readyz``, the metrics and the dashboard's overview.

``os.statvfs`` costs microseconds; results are still cached for
``cache_s`` so a busy writer does not ask the kernel for every batch.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

GIB = 1024**3
DEFAULT_MIN_FREE_BYTES = GIB
DEFAULT_MIN_FREE_PERCENT = 5.0


@dataclass(frozen=True, slots=True)
class SpaceReport:
    """Free space of the fullest watched file system, and its floor."""

    path: Path
    free_bytes: int
    total_bytes: int
    floor_bytes: int

    @property
    def ok(self) -> bool:
        return self.free_bytes >= self.floor_bytes

    @property
    def reason(self) -> str | None:
        """None when above the floor; else one line for logs, ``/readyz`` and the dashboard."""
        if self.ok:
            return None
        return (
            f"disk space low: {_size(self.free_bytes)} free on {self.path}, below the floor of"
            f" {_size(self.floor_bytes)}; not accepting messages (they wait at the broker)"
        )


def _size(n: int) -> str:
    for unit, scale in (("GiB", GIB), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _existing(path: Path) -> Path:
    """The path, or its nearest existing parent (a store not yet created)."""
    path = path.absolute()
    while not path.exists() and path.parent != path:
        path = path.parent
    return path


class FreeSpaceFloor:
    """Free space against a floor, on every file system that holds a store."""

    def __init__(
        self,
        paths: Iterable[str | Path],
        *,
        min_free_bytes: int = DEFAULT_MIN_FREE_BYTES,
        min_free_percent: float = DEFAULT_MIN_FREE_PERCENT,
        cache_s: float = 1.0,
    ) -> None:
        if min_free_bytes < 0 or not 0 <= min_free_percent < 100:
            raise ValueError("min_free_bytes >= 0 and 0 <= min_free_percent < 100")
        self.paths = [Path(p) for p in paths]
        if not self.paths:
            raise ValueError("give at least one path to watch")
        self.min_free_bytes = min_free_bytes
        self.min_free_percent = min_free_percent
        self.cache_s = cache_s
        self._lock = threading.Lock()
        self._cached: tuple[float, SpaceReport] | None = None

    def _measure(self) -> SpaceReport:
        worst: SpaceReport | None = None
        for path in self.paths:
            where = _existing(path)
            st = os.statvfs(where)
            total = st.f_blocks * st.f_frsize
            # f_bavail: what an unprivileged process may still use.
            free = st.f_bavail * st.f_frsize
            floor = max(self.min_free_bytes, int(total * self.min_free_percent / 100))
            report = SpaceReport(where, free, total, floor)
            if worst is None or (report.free_bytes - report.floor_bytes) < (
                worst.free_bytes - worst.floor_bytes
            ):
                worst = report
        assert worst is not None
        return worst

    def report(self) -> SpaceReport:
        """The watched file system with the least room above its floor."""
        now = time.monotonic()
        with self._lock:
            if self._cached is not None and now - self._cached[0] < self.cache_s:
                return self._cached[1]
        report = self._measure()
        with self._lock:
            self._cached = (now, report)
        return report

    def problem(self) -> str | None:
        """None above the floor; else why ingest refuses (a readiness check)."""
        return self.report().reason
