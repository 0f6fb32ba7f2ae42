"""The only file I/O of the package: reading photos, depth PNGs and
CrackForest masks, and batch wrappers that turn a bad file into a record."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import cv2
import numpy as np
from numpy.typing import NDArray

from .depth import DepthIntrinsics, LevelReference, measure_depth_map
from .errors import InputProblem, MeasurementError
from .fiducial import CameraCalibration, FiducialSpec
from .photo import measure_photo
from .results import PhotoInspection, SurfaceInspection

Source = str | Path | bytes
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class ImageFailure:
    """One image of a batch that could not be measured, and why."""

    source: str
    problem: InputProblem
    detail: str


# Bigger than any survey camera's frame; a header claiming more is refused
# before the decoder allocates for it (a 30000 x 30000 PNG is 2.7 GB of BGR).
MAX_PIXELS = 100_000_000
# Smaller than this is no survey image; the measurements assume some pixels to fit.
MIN_SIDE_PX = 8
_JPEG_SOF = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _raw(source: Source) -> tuple[bytes, str]:
    if isinstance(source, bytes):
        raw, name = source, "<bytes>"
    else:
        try:
            raw, name = Path(source).read_bytes(), str(source)
        except OSError as e:
            raise MeasurementError(InputProblem.UNREADABLE, f"{source}: {e.strerror or e}") from e
        except ValueError as e:  # a path with a NUL byte in it
            raise MeasurementError(InputProblem.UNREADABLE, f"{source!r}: {e}") from e
    if not raw:
        raise MeasurementError(InputProblem.UNREADABLE, f"{name}: empty file")
    return raw, name


def declared_size(raw: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG or JPEG header without decoding, or None."""
    if raw[:8] == b"\x89PNG\r\n\x1a\n" and raw[12:16] == b"IHDR" and len(raw) >= 24:
        return int.from_bytes(raw[16:20], "big"), int.from_bytes(raw[20:24], "big")
    if raw[:2] != b"\xff\xd8":
        return None
    i = 2
    while i + 4 <= len(raw):
        if raw[i] != 0xFF:
            return None
        marker = raw[i + 1]
        if marker == 0xFF:  # fill byte
            i += 1
            continue
        if marker == 0x01 or 0xD0 <= marker <= 0xD8:  # no length field
            i += 2
            continue
        if marker in _JPEG_SOF and i + 9 <= len(raw):
            height = int.from_bytes(raw[i + 5 : i + 7], "big")
            width = int.from_bytes(raw[i + 7 : i + 9], "big")
            return width, height
        if marker == 0xDA:  # start of scan: no frame header before it
            return None
        i += 2 + int.from_bytes(raw[i + 2 : i + 4], "big")
    return None


def _decode(raw: bytes, name: str, flags: int) -> NDArray[Any]:
    size = declared_size(raw)
    if size is not None and size[0] * size[1] > MAX_PIXELS:
        raise MeasurementError(
            InputProblem.TOO_LARGE,
            f"{name}: header says {size[0]} x {size[1]} pixels; at most {MAX_PIXELS} are read",
        )
    try:
        img = cv2.imdecode(np.frombuffer(raw, np.uint8), flags)
    except cv2.error as e:
        # OpenCV raises (rather than returning None) for some corrupt streams.
        msg = str(e).strip().splitlines()[-1][:200] if str(e).strip() else "decoder error"
        raise MeasurementError(InputProblem.UNREADABLE, f"{name}: {msg}") from e
    if img is None or img.size == 0:
        raise MeasurementError(InputProblem.UNREADABLE, f"{name}: not a decodable image")
    return np.asarray(img)


def _check_side(img: NDArray[Any], name: str) -> None:
    h, w = img.shape[:2]
    if min(h, w) < MIN_SIDE_PX:
        raise MeasurementError(
            InputProblem.TOO_SMALL, f"{name}: {w} x {h} pixels; need at least {MIN_SIDE_PX} a side"
        )


def read_image(source: Source) -> NDArray[np.uint8]:
    """An 8-bit BGR image from a path or encoded bytes."""
    raw, name = _raw(source)
    # IMREAD_COLOR turns gray, alpha and 16-bit images into 8-bit BGR.
    img = _decode(raw, name, cv2.IMREAD_COLOR)
    _check_side(img, name)
    out = np.asarray(img, np.uint8)
    return out


def read_depth_png(source: Source) -> NDArray[np.uint16]:
    """A 16-bit single-channel depth PNG (millimetres, 0 = no data)."""
    raw, name = _raw(source)
    img = _decode(raw, name, cv2.IMREAD_UNCHANGED)
    if img.dtype != np.uint16 or img.ndim != 2:
        channels = 1 if img.ndim == 2 else img.shape[2]
        raise MeasurementError(
            InputProblem.WRONG_FORMAT,
            f"{name}: need 16-bit single-channel, got {img.dtype} with {channels} channel(s)",
        )
    _check_side(img, name)
    out = np.asarray(img, np.uint16)
    return out


def read_crackforest_mask(path: str | Path) -> NDArray[np.uint8]:
    """CrackForest ``groundTruth/NNN.mat`` as a 0/1 crack mask (label 2 = crack)."""
    # Deferred: scipy.io loads slowly and only the CrackForest benchmark data needs it.
    from scipy.io import loadmat

    seg = loadmat(str(path))["groundTruth"][0, 0]["Segmentation"]
    out: NDArray[np.uint8] = (np.asarray(seg) == 2).astype(np.uint8)
    return out


def _batch(sources: Iterable[Source], one: Callable[[Source], T]) -> list[T | ImageFailure]:
    out: list[T | ImageFailure] = []
    for src in sources:
        name = "<bytes>" if isinstance(src, bytes) else str(src)
        try:
            out.append(one(src))
        except MeasurementError as e:
            out.append(ImageFailure(name, e.problem, e.detail))
        except (ArithmeticError, ValueError, IndexError, cv2.error, np.linalg.LinAlgError) as e:
            # A measurement bug on one odd image must not lose the rest of the batch.
            detail = f"{type(e).__name__}: {str(e)[:200]}"
            out.append(ImageFailure(name, InputProblem.MEASUREMENT_FAILED, detail))
    return out


def inspect_photos(
    sources: Iterable[Source],
    calibration: CameraCalibration,
    fiducial: FiducialSpec | None = None,
) -> list[PhotoInspection | ImageFailure]:
    """Measure each photo; a bad one becomes an ``ImageFailure`` and the batch goes on."""
    return _batch(sources, lambda s: measure_photo(read_image(s), calibration, fiducial))


def inspect_depth_maps(
    sources: Iterable[Source],
    intrinsics: DepthIntrinsics,
    level: LevelReference | None = None,
) -> list[SurfaceInspection | ImageFailure]:
    """Measure each depth PNG; a bad one becomes an ``ImageFailure``."""
    return _batch(sources, lambda s: measure_depth_map(read_depth_png(s), intrinsics, level=level))
