"""A photo whose header declares more pixels than a phone camera takes is refused undecoded.

The dashboard here is in the test's own process; its peak resident memory (``VmHWM``)
is reset (``/proc/self/clear_refs``) before the upload, so the figure is the upload's.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import cv2
import numpy as np

from tests.dashboard.test_rounds import FRONTAGE, Round, village

__all__ = ["village"]


def bomb(width: int, height: int) -> bytes:
    """A small JPEG whose frame header claims ``width`` x ``height``."""
    ok, jpeg = cv2.imencode(".jpg", np.zeros((64, 64), np.uint8))
    assert ok
    raw = bytearray(jpeg.tobytes())
    sof = raw.index(b"\xff\xc0")
    raw[sof + 5 : sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(raw)


def _status_kb(field: str) -> int:
    status = Path("/proc/self/status").read_text(encoding="ascii")
    return int(next(x for x in status.splitlines() if x.startswith(field)).split()[1])


@contextmanager
def peak_growth_mb() -> Iterator[Callable[[], float]]:
    """How far this process's peak resident memory rose above its resident memory at
    the start of the block (MB), read after it."""
    Path("/proc/self/clear_refs").write_text("5", encoding="ascii")  # peak := now
    start = _status_kb("VmRSS:")
    peak: list[int] = []
    yield lambda: (peak[0] - start) / 1024
    peak.append(_status_kb("VmHWM:"))


def test_a_20000_px_square_photo_is_refused_before_decoding(village: Round) -> None:
    body = bomb(20000, 20000)
    with peak_growth_mb() as grown:
        response = village.inspector.post(
            f"/api/rounds/{FRONTAGE}/photos", content=body, headers={"Content-Type": "image/jpeg"}
        )
    print(f"20000 x 20000 header: {response.status_code}, peak memory +{grown():.1f} MB")
    assert response.status_code == 413, response.text
    assert "20000 x 20000 pixels" in response.json()["detail"]
    assert grown() < 20  # decoded, it would be 1.2 GB (20000 x 20000 x 3 bytes)
    over = village.inspector.post(
        f"/api/rounds/{FRONTAGE}/photos", content=b"\xff\xd8\xff" + b"0" * (21 * 1024 * 1024),
        headers={"Content-Type": "image/jpeg"},
    )  # fmt: skip
    assert over.status_code == 413
    assert "over 20 MB" in over.json()["detail"]
