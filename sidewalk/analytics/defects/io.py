"""The only file I/O of the package: reading photos, depth PNGs and
CrackForest masks, and batch wrappers that turn a bad file into a record."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

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


def _raw(source: Source) -> tuple[bytes, str]:
    if isinstance(source, bytes):
        return source, "<bytes>"
    try:
        return Path(source).read_bytes(), str(source)
    except OSError as e:
        raise MeasurementError(InputProblem.UNREADABLE, f"{source}: {e.strerror}") from e


def read_image(source: Source) -> NDArray[np.uint8]:
    """An 8-bit BGR image from a path or encoded bytes."""
    raw, name = _raw(source)
    img = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_COLOR)
    if img is None:
        raise MeasurementError(InputProblem.UNREADABLE, f"{name}: not a decodable image")
    out = np.asarray(img, np.uint8)
    return out


def read_depth_png(source: Source) -> NDArray[np.uint16]:
    """A 16-bit single-channel depth PNG (millimetres, 0 = no data)."""
    raw, name = _raw(source)
    img = cv2.imdecode(np.frombuffer(raw, np.uint8), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise MeasurementError(InputProblem.UNREADABLE, f"{name}: not a decodable image")
    if img.dtype != np.uint16 or img.ndim != 2:
        raise MeasurementError(
            InputProblem.WRONG_FORMAT, f"{name}: need 16-bit single-channel, got {img.dtype}"
        )
    out = np.asarray(img, np.uint16)
    return out


def read_crackforest_mask(path: str | Path) -> NDArray[np.uint8]:
    """CrackForest ``groundTruth/NNN.mat`` as a 0/1 crack mask (label 2 = crack)."""
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
