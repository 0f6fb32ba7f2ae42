"""Frames from a USB camera, an RTSP stream, a video or an image file; reconnection, night
exposure.

A pole camera loses its stream (PoE blips, camera reboots, Wi-Fi bridges); the
capture never gives up: after a failed read it releases the device and retries
with a doubling back-off, one attempt per ``read()`` call so the caller's loop
keeps running. Exposure is steered only for USB (V4L2) cameras; an RTSP camera
runs its own day/night mode, configured in the camera (hardware/enclosure.md).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[np.uint8]
Source = int | str

# V4L2 through OpenCV: 1 = manual exposure, 3 = automatic (aperture priority).
V4L2_MANUAL_EXPOSURE = 1
V4L2_AUTO_EXPOSURE = 3


class VideoCaptureLike(Protocol):
    """The part of ``cv2.VideoCapture`` the capture uses."""

    def is_opened(self) -> bool:
        """Whether the device opened."""
        ...

    def read(self) -> tuple[bool, Image | None]:
        """Grab and decode the next frame."""
        ...

    def set(self, prop_id: int, value: float) -> bool:
        """Set a capture property."""
        ...

    def release(self) -> None:
        """Close the device."""
        ...


class OpenCvCapture:
    """``VideoCaptureLike`` over ``cv2.VideoCapture``."""

    def __init__(self, cap: cv2.VideoCapture) -> None:
        self.cap = cap

    def is_opened(self) -> bool:
        """Whether the device opened."""
        return bool(self.cap.isOpened())

    def read(self) -> tuple[bool, Image | None]:
        """Grab and decode the next frame."""
        ok, frame = self.cap.read()
        return (True, np.asarray(frame, dtype=np.uint8)) if ok else (False, None)

    def set(self, prop_id: int, value: float) -> bool:
        """Set a capture property."""
        return bool(self.cap.set(prop_id, value))

    def release(self) -> None:
        """Close the device."""
        self.cap.release()


def parse_source(source: str) -> Source:
    """A bare number is a USB camera index; anything else is an RTSP URL or a file path."""
    return int(source) if source.isdigit() else source


IMAGE_SUFFIXES = frozenset({".jpg", ".jpeg", ".png", ".bmp", ".webp"})


class StillImage:
    """``VideoCaptureLike`` over one image file: every read decodes the file again.

    OpenCV reads a still image as a one-frame video and then reports the end
    of the stream, so the pole said "source down" after its first frame. Read
    afresh each time, the file keeps serving, and a file another program
    replaces (a bench camera's snapshot) shows its newest picture.
    """

    def __init__(self, path: str) -> None:
        self.path = path

    def is_opened(self) -> bool:
        """Whether the file is there and decodes."""
        return self.read()[0]

    def read(self) -> tuple[bool, Image | None]:
        """Decode the file now (None while it is missing or half written)."""
        frame = cv2.imread(self.path, cv2.IMREAD_COLOR)
        return (True, np.asarray(frame, dtype=np.uint8)) if frame is not None else (False, None)

    def set(self, prop_id: int, value: float) -> bool:
        """A file has no exposure to set."""
        return False

    def release(self) -> None:
        """Nothing to close."""


def open_source(source: Source) -> VideoCaptureLike:
    """Open ``source`` with OpenCV; network streams get open/read timeouts so a dead camera
    cannot hang the loop; an image file is read again for every frame."""
    if isinstance(source, str) and source.startswith(("rtsp://", "rtsps://", "http")):
        params = [cv2.CAP_PROP_OPEN_TIMEOUT_MSEC, 5000, cv2.CAP_PROP_READ_TIMEOUT_MSEC, 5000]
        return OpenCvCapture(cv2.VideoCapture(source, cv2.CAP_FFMPEG, params))
    if isinstance(source, int):
        return OpenCvCapture(cv2.VideoCapture(source, cv2.CAP_V4L2))
    if Path(source).suffix.lower() in IMAGE_SUFFIXES:
        return StillImage(source)
    return OpenCvCapture(cv2.VideoCapture(source))


@dataclass(frozen=True, slots=True)
class ExposureSetting:
    """Either the camera's automatic exposure, or a manual value in V4L2 units (100 µs)."""

    automatic: bool
    exposure: float = 0.0


@dataclass(slots=True)
class NightExposure:
    """Keeps a USB camera's night frames usable: manual long exposure when auto gives up.

    Automatic exposure on small UVC cameras caps its exposure time and leaves a
    snowy street at night nearly black; below ``night_luma`` we take over and
    steer the mean brightness toward ``target_luma`` in multiplicative steps,
    and hand back to automatic once even the shortest manual exposure is bright.
    """

    night_luma: float = 40.0
    target_luma: float = 110.0
    min_exposure: float = 50.0
    max_exposure: float = 5000.0
    setting: ExposureSetting = field(default_factory=lambda: ExposureSetting(automatic=True))

    def update(self, mean_luma: float) -> ExposureSetting:
        """The exposure to use after a frame of ``mean_luma`` (0..255)."""
        if self.setting.automatic:
            if mean_luma < self.night_luma:
                self.setting = ExposureSetting(False, self.max_exposure / 4)
            return self.setting
        current = self.setting.exposure
        if mean_luma > self.target_luma * 1.5 and current <= self.min_exposure:
            self.setting = ExposureSetting(automatic=True)
            return self.setting
        # Move half-way in log space toward the target; luma is roughly linear in exposure.
        ratio = math.sqrt(self.target_luma / max(mean_luma, 1.0))
        new = min(self.max_exposure, max(self.min_exposure, current * ratio))
        self.setting = ExposureSetting(False, new)
        return self.setting


class Capture:
    """Reads frames, reconnecting on loss with back-off; ``read()`` returns None while down."""

    def __init__(
        self,
        source: Source,
        *,
        opener: Callable[[Source], VideoCaptureLike] = open_source,
        backoff_initial_s: float = 1.0,
        backoff_max_s: float = 60.0,
        night: NightExposure | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.source = source
        self.opener = opener
        self.backoff_initial_s = backoff_initial_s
        self.backoff_max_s = backoff_max_s
        self.night = (
            night if night is not None else (NightExposure() if isinstance(source, int) else None)
        )
        self.clock = clock
        self.reconnects = 0
        self._cap: VideoCaptureLike | None = None
        self._backoff_s = backoff_initial_s
        self._next_attempt = 0.0
        self._applied: ExposureSetting | None = None

    def _drop(self) -> None:
        if self._cap is not None:
            self._cap.release()
        self._cap = None
        self._applied = None
        self._next_attempt = self.clock() + self._backoff_s
        self._backoff_s = min(self._backoff_s * 2, self.backoff_max_s)

    def _apply_exposure(self, cap: VideoCaptureLike, frame: Image) -> None:
        if self.night is None:
            return
        luma = float(cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).mean())
        setting = self.night.update(luma)
        if setting == self._applied:
            return
        if setting.automatic:
            cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_AUTO_EXPOSURE)
        else:
            cap.set(cv2.CAP_PROP_AUTO_EXPOSURE, V4L2_MANUAL_EXPOSURE)
            cap.set(cv2.CAP_PROP_EXPOSURE, setting.exposure)
        self._applied = setting

    def read(self) -> Image | None:
        """The next frame, or None if the source is down (a retry is scheduled)."""
        if self._cap is None:
            if self.clock() < self._next_attempt:
                return None
            cap = self.opener(self.source)
            if not cap.is_opened():
                cap.release()
                self._drop()
                return None
            if self._next_attempt > 0.0:
                self.reconnects += 1
            self._cap = cap
        ok, frame = self._cap.read()
        if not ok or frame is None:
            self._drop()
            return None
        self._backoff_s = self.backoff_initial_s
        self._apply_exposure(self._cap, frame)
        return frame

    def close(self) -> None:
        """Release the device."""
        if self._cap is not None:
            self._cap.release()
            self._cap = None
