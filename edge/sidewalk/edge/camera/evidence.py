"""When to send an evidence frame: on a change that matters, never more often than needed.

A notice must show what the camera saw, so a JPEG goes out whenever the
measurement moves (someone shovelled, more snow fell) or the picture itself
changes (a parked car now blocks the view), at most once per ``min_interval_s``,
and at least once per ``max_interval_s`` as a heartbeat.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]

THUMB_SIZE = (64, 36)  # width, height: enough to see a car, too small to see noise


def thumbnail(frame: Image) -> npt.NDArray[np.float32]:
    """Small grey version of ``frame`` for cheap change comparison."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    small = cv2.resize(gray, THUMB_SIZE, interpolation=cv2.INTER_AREA)
    return np.asarray(small, dtype=np.float32)


def image_change(a: npt.NDArray[np.float32], b: npt.NDArray[np.float32]) -> float:
    """Mean absolute grey-level difference of two thumbnails, with the overall brightness
    difference removed so that a passing cloud does not count as a change."""
    diff = (a - a.mean()) - (b - b.mean())
    return float(np.abs(diff).mean())


def encode_jpeg(frame: Image, quality: int = 85) -> bytes:
    """JPEG bytes of ``frame`` for the evidence stream."""
    ok, buf = cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise ValueError("JPEG encoding failed")
    return bytes(buf)


@dataclass(frozen=True, slots=True)
class EvidencePolicy:
    """Thresholds for a change worth a frame."""

    min_interval_s: float = 60.0
    max_interval_s: float = 3600.0
    cover_change: float = 0.05  # snow-cover fraction, absolute
    width_change_mm: float = 150.0
    image_change: float = 12.0  # grey levels, see image_change()


class EvidenceSelector:
    """Decides, frame by frame, whether this frame is the next evidence frame."""

    def __init__(self, policy: EvidencePolicy | None = None) -> None:
        self.policy = policy or EvidencePolicy()
        self._last_t: float | None = None
        self._last_thumb: npt.NDArray[np.float32] | None = None
        self._last_cover = 0.0
        self._last_width = 0.0

    def consider(self, frame: Image, cover: float, width_mm: float, now_s: float) -> bool:
        """True if ``frame`` should be sent; it then becomes the reference for the next."""
        p = self.policy
        thumb = thumbnail(frame)
        if self._last_t is None or self._last_thumb is None:
            send = True
        else:
            elapsed = now_s - self._last_t
            changed = (
                abs(cover - self._last_cover) >= p.cover_change
                or abs(width_mm - self._last_width) >= p.width_change_mm
                or image_change(thumb, self._last_thumb) >= p.image_change
            )
            send = elapsed >= p.max_interval_s or (changed and elapsed >= p.min_interval_s)
        if send:
            self._last_t, self._last_thumb = now_s, thumb
            self._last_cover, self._last_width = cover, width_mm
        return send
