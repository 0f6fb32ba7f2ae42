"""What a depth-camera or photo user has, parsed into the measurement's inputs.

Intrinsics come in the formats the cameras and tools write:

* RealSense JSON: ``{"fx", "fy", "ppx", "ppy", "width", "height", "model",
  "coeffs"}`` (``rs2_intrinsics`` as the SDK and its tools print it),
  alone or nested (``{"depth": {"intrinsics": {...}}}``), optionally with
  ``depth_units`` (metres per unit) or ``depth_scale``;
* ROS ``sensor_msgs/CameraInfo`` YAML: ``camera_matrix: {rows, cols, data}``
  (camera_calibration_parsers), or the message's ``K``/``k`` (9 numbers) and
  ``D``/``d``;
* OpenCV FileStorage (YAML with ``%YAML:1.0`` or XML): a ``camera_matrix``
  (or ``cameraMatrix``, ``K``, ``intrinsics``) 3x3 matrix node and
  ``distortion_coefficients`` (or ``dist_coeffs``, ``D``);
* plain JSON: flat ``{"fx", "fy", "cx", "cy"}`` or nested anywhere under
  one key, or ``{"matrix": 3x3, "distortion": [...]}``.

Every wrong input raises ``DefectInputError``: one line naming the file (or
option) and what is wrong with it, never a traceback.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from .depth import DepthIntrinsics, LevelReference
from .fiducial import CameraCalibration, CharucoBoardSpec

# Millimetres per unit of the depth units a user may name.
DEPTH_UNITS_MM = {"mm": 1.0, "m": 1000.0, "cm": 10.0, "um": 0.001, "0.1mm": 0.1}
# Marker dictionaries by the names OpenCV gives them (DICT_4X4_50, ...).
ARUCO_DICTIONARIES = {
    name.removeprefix("DICT_"): int(getattr(cv2.aruco, name))
    for name in dir(cv2.aruco)
    if name.startswith("DICT_") and isinstance(getattr(cv2.aruco, name), int)
}


class DefectInputError(ValueError):
    """A wrong input file or option: ``str(e)`` is one line naming it."""

    def __init__(self, source: str, detail: str) -> None:
        super().__init__(f"{source}: {detail}")
        self.source = source
        self.detail = detail


def _walk(node: Any) -> Iterator[Mapping[str, Any]]:
    """Every mapping in a parsed document, outermost first."""
    if isinstance(node, Mapping):
        yield node
        for v in node.values():
            yield from _walk(v)
    elif isinstance(node, list):
        for v in node:
            yield from _walk(v)


def _number(source: str, key: str, value: Any) -> float:
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise DefectInputError(source, f"{key} is not a number ({value!r})") from None
    if not math.isfinite(out):
        raise DefectInputError(source, f"{key} is not finite ({value!r})")
    return out


def _matrix_from(source: str, key: str, value: Any) -> np.ndarray | None:
    """A 3x3 matrix from a nested list, 9 numbers, or ``{rows, cols, data}``."""
    if isinstance(value, Mapping) and "data" in value:
        value = value["data"]
    try:
        arr = np.asarray(value, np.float64)
    except (TypeError, ValueError):
        raise DefectInputError(source, f"{key} is not a matrix of numbers") from None
    if arr.size != 9:
        raise DefectInputError(source, f"{key} has {arr.size} numbers, need 9 (3x3)")
    return arr.reshape(3, 3)


_MATRIX_KEYS = ("camera_matrix", "cameraMatrix", "matrix", "K", "k", "intrinsic_matrix")
_DIST_KEYS = (
    "distortion_coefficients",
    "dist_coeffs",
    "distCoeffs",
    "distortion",
    "coeffs",
    "D",
    "d",
)


def _read_document(path: Path) -> tuple[Any, str]:
    """Parse JSON, YAML or OpenCV FileStorage into plain Python values."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise DefectInputError(source, f"cannot read ({e.strerror or e})") from None
    if not text.strip():
        raise DefectInputError(source, "empty file")
    head = text.lstrip()[:64]
    if head.startswith(("%YAML:1.", "<?xml", "<opencv_storage")) or "!!opencv-matrix" in text:
        return _read_filestorage(path), "OpenCV FileStorage"
    if head.startswith(("{", "[")):
        try:
            return json.loads(text), "JSON"
        except json.JSONDecodeError as e:
            raise DefectInputError(source, f"not valid JSON ({e.msg}, line {e.lineno})") from None
    try:
        # Ignored: PyYAML's stubs (types-PyYAML) may not be installed.
        import yaml  # type: ignore[import-untyped,unused-ignore]
    except ImportError:  # pragma: no cover - PyYAML ships with the toolchain
        return _read_filestorage(path), "OpenCV FileStorage"
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        first = str(e).splitlines()[0] if str(e) else "parse error"
        raise DefectInputError(source, f"not valid JSON or YAML ({first})") from None
    if not isinstance(data, Mapping):
        raise DefectInputError(source, "not a JSON/YAML mapping of calibration values")
    return data, "YAML"


def _read_filestorage(path: Path) -> dict[str, Any]:
    source = str(path)
    try:
        fs = cv2.FileStorage(str(path), cv2.FILE_STORAGE_READ)
    except cv2.error as e:
        msg = str(e).strip().splitlines()[-1][:160] if str(e).strip() else "parse error"
        raise DefectInputError(source, f"not a readable OpenCV FileStorage file ({msg})") from None
    if not fs.isOpened():
        raise DefectInputError(source, "not a readable OpenCV FileStorage file")
    out: dict[str, Any] = {}
    root = fs.root()
    for key in root.keys():  # noqa: SIM118 - a FileNode, not a dict
        node = root.getNode(key)
        if node.isMap() and node.mat() is not None:
            out[key] = np.asarray(node.mat()).tolist()
        elif node.isReal() or node.isInt():
            out[key] = node.real()
        elif node.isString():
            out[key] = node.string()
        elif node.isSeq():
            out[key] = [node.at(i).real() for i in range(node.size())]
        else:
            mat = node.mat()
            if mat is not None:
                out[key] = np.asarray(mat).tolist()
    fs.release()
    return out


def _find_intrinsics(  # noqa: PLR0912 - one pass over the formats' spellings
    source: str, data: Any
) -> tuple[np.ndarray, np.ndarray, float | None]:
    """(3x3 matrix, distortion, depth mm per unit or None) from any of the formats."""
    scale: float | None = None
    for m in _walk(data):
        if "depth_units" in m:
            scale = _number(source, "depth_units", m["depth_units"]) * 1000.0
        elif "depth_scale" in m:
            scale = _number(source, "depth_scale", m["depth_scale"]) * 1000.0
        if scale is not None:
            break
    for m in _walk(data):
        dist = np.zeros(5)
        for key in _DIST_KEYS:
            if key in m and m[key] is not None:
                v = m[key]["data"] if isinstance(m[key], Mapping) and "data" in m[key] else m[key]
                try:
                    dist = np.asarray(v, np.float64).ravel()
                except (TypeError, ValueError):
                    raise DefectInputError(source, f"{key} is not a list of numbers") from None
                break
        if "fx" in m or "ppx" in m:
            missing = [k for k in ("fx", "fy") if k not in m] + [
                k for k, alt in (("cx", "ppx"), ("cy", "ppy")) if k not in m and alt not in m
            ]
            if missing:
                raise DefectInputError(
                    source, f"intrinsics without {', '.join(missing)} (have {', '.join(m)})"
                )
            fx = _number(source, "fx", m["fx"])
            fy = _number(source, "fy", m["fy"])
            cx = _number(source, "cx", m["cx"] if "cx" in m else m["ppx"])
            cy = _number(source, "cy", m["cy"] if "cy" in m else m["ppy"])
            k = np.array([[fx, 0, cx], [0, fy, cy], [0, 0, 1]], np.float64)
            return k, dist, scale
        for key in _MATRIX_KEYS:
            if key in m and isinstance(m[key], Mapping | list):
                km = _matrix_from(source, key, m[key])
                if km is not None:
                    return km, dist, scale
    raise DefectInputError(
        source,
        "no intrinsics found: need fx/fy/cx/cy (or ppx/ppy), a camera_matrix, or K",
    )


def _check_matrix(source: str, k: np.ndarray) -> None:
    fx, fy, cx, cy = k[0, 0], k[1, 1], k[0, 2], k[1, 2]
    if not (fx > 0 and fy > 0):
        raise DefectInputError(source, f"focal lengths must be positive (fx {fx:g}, fy {fy:g})")
    if not (np.isfinite(k).all() and cx >= 0 and cy >= 0):
        raise DefectInputError(source, f"principal point ({cx:g}, {cy:g}) is not in the image")
    if abs(k[2, 2] - 1.0) > 1e-6 or abs(k[2, 0]) > 1e-9 or abs(k[2, 1]) > 1e-9:
        raise DefectInputError(source, "camera matrix's last row must be 0 0 1")


def load_depth_intrinsics(
    path: str | Path, *, depth_scale_mm: float | None = None
) -> DepthIntrinsics:
    """Depth intrinsics from any supported file. The depth unit is
    ``depth_scale_mm`` when given, else the file's (RealSense
    ``depth_units``), else millimetres."""
    p = Path(path)
    data, _ = _read_document(p)
    k, _, scale = _find_intrinsics(str(p), data)
    _check_matrix(str(p), k)
    if scale is not None and not scale > 0:
        raise DefectInputError(str(p), f"depth units {scale / 1000:g} m must be positive")
    unit = depth_scale_mm if depth_scale_mm is not None else (scale or 1.0)
    return DepthIntrinsics(
        float(k[0, 0]), float(k[1, 1]), float(k[0, 2]), float(k[1, 2]), depth_scale_mm=unit
    )


def load_camera_calibration(path: str | Path) -> CameraCalibration:
    """A photo camera's matrix and distortion from any supported file."""
    p = Path(path)
    data, _ = _read_document(p)
    k, dist, _ = _find_intrinsics(str(p), data)
    _check_matrix(str(p), k)
    if dist.size not in (0, 4, 5, 8, 12, 14):
        raise DefectInputError(str(p), f"{dist.size} distortion coefficients (need 4, 5, 8...)")
    return CameraCalibration(k, dist if dist.size else np.zeros(5))


def depth_scale_mm(scale: float | None = None, unit: str = "mm") -> float:
    """Millimetres per depth unit from a scale and its unit: ``--depth-scale
    0.25 --depth-unit mm`` (RealSense D4xx high accuracy), ``--depth-scale
    0.001 --depth-unit m``; without a scale, one ``unit``."""
    key = unit.strip().lower().replace("µ", "u")
    if key not in DEPTH_UNITS_MM:
        raise DefectInputError(
            "--depth-unit", f"unknown unit {unit!r} (one of {', '.join(DEPTH_UNITS_MM)})"
        )
    s = 1.0 if scale is None else scale
    if not (math.isfinite(s) and s > 0):
        raise DefectInputError("--depth-scale", f"{scale!r} must be a positive number")
    return s * DEPTH_UNITS_MM[key]


def _vector(source: str, text: str | Sequence[float]) -> np.ndarray:
    parts: list[str | float] = (
        [t for t in text.replace(",", " ").split() if t] if isinstance(text, str) else list(text)
    )
    if len(parts) != 3:
        raise DefectInputError(source, f"need 3 numbers x,y,z, got {len(parts)}")
    v = np.array([_number(source, "component", t) for t in parts], np.float64)
    if not np.linalg.norm(v) > 1e-9:
        raise DefectInputError(source, "vector is zero")
    return v


# Image directions in the camera frame (x right, y down, z forward).
_IMAGE_DIRECTIONS = {
    "right": (1.0, 0.0, 0.0),
    "left": (-1.0, 0.0, 0.0),
    "down": (0.0, 1.0, 0.0),
    "up": (0.0, -1.0, 0.0),
}


def image_direction(source: str, text: str) -> tuple[float, float, float]:
    """``right``/``left``/``up``/``down`` in the image, or a camera-frame vector."""
    key = text.strip().lower()
    if key in _IMAGE_DIRECTIONS:
        return _IMAGE_DIRECTIONS[key]
    v = _vector(source, text)
    return (float(v[0]), float(v[1]), float(v[2]))


def level_reference(
    *,
    gravity: str | Sequence[float] | None = None,
    accel: str | Sequence[float] | None = None,
    level: str | None = None,
    toward_curb: str = "down",
    uncertainty_deg: float | None = None,
) -> LevelReference | None:
    """Where down is, for cross-slope, from one of:

    * ``gravity``: the gravity direction in the camera frame (down);
    * ``accel``: an accelerometer reading at rest in the camera frame (the
      IMU's specific force points up: gravity is its opposite); a RealSense
      D435i/D455 reports it in the depth camera's frame;
    * ``level``: ``"nadir"``, the camera levelled looking straight down
      (gravity along the optical axis), or ``"horizon"``, levelled with the
      optical axis horizontal and image down toward the ground.

    ``toward_curb`` is the image direction (or camera-frame vector) toward
    the curb. None when nothing is given (no cross-slope is measured).
    """
    given = [n for n, v in (("--gravity", gravity), ("--accel", accel), ("--level", level)) if v]
    if not given:
        return None
    if len(given) > 1:
        raise DefectInputError(" and ".join(given), "give one of them, not several")
    if gravity is not None:
        g = _vector("--gravity", gravity)
        default_unc = 0.1
    elif accel is not None:
        g = -_vector("--accel", accel)
        mag = float(np.linalg.norm(g))
        if not 7.0 <= mag <= 12.5 and not 0.7 <= mag <= 1.3:
            raise DefectInputError(
                "--accel", f"reading of {mag:.2f} is neither about 9.81 m/s^2 nor 1 g: not at rest"
            )
        default_unc = 0.5  # consumer IMUs, uncalibrated
    else:
        key = (level or "").strip().lower()
        if key == "nadir":
            g = np.array([0.0, 0.0, 1.0])
        elif key == "horizon":
            g = np.array([0.0, 1.0, 0.0])
        else:
            raise DefectInputError("--level", f"{level!r}: one of nadir, horizon")
        default_unc = 1.0  # a bubble level on the rig
    g = g / np.linalg.norm(g)
    curb = np.asarray(image_direction("--toward-curb", toward_curb), float)
    if abs(float(curb @ g)) > 0.95 * float(np.linalg.norm(curb)):
        raise DefectInputError(
            "--toward-curb", "is along gravity; give a direction across the walk"
        )
    unc = default_unc if uncertainty_deg is None else uncertainty_deg
    return LevelReference(
        (float(g[0]), float(g[1]), float(g[2])),
        (float(curb[0]), float(curb[1]), float(curb[2])),
        unc,
    )


def aruco_dictionary(name: str | int) -> int:
    """A cv2.aruco dictionary from its name (``4X4_50``, ``DICT_6X6_250``,
    ``ARUCO_ORIGINAL``) or number."""
    if isinstance(name, int):
        return name
    key = name.strip().upper().removeprefix("DICT_")
    if key.isdigit():
        return int(key)
    if key not in ARUCO_DICTIONARIES:
        known = ", ".join(sorted(k for k in ARUCO_DICTIONARIES if k[0].isdigit())[:8])
        raise DefectInputError("--marker-dictionary", f"unknown dictionary {name!r} (e.g. {known})")
    return ARUCO_DICTIONARIES[key]


def charuco_board(text: str) -> CharucoBoardSpec:
    """A ChArUco board from ``SQUARES_XxSQUARES_Y:SQUARE_MM:MARKER_MM`` (``7x5:30:22``)."""
    try:
        squares, square, marker = text.lower().split(":")
        sx, sy = (int(v) for v in squares.split("x"))
        sq, mk = float(square), float(marker)
    except ValueError:
        raise DefectInputError(
            "--board", f"{text!r}: need SQUARES_XxSQUARES_Y:SQUARE_MM:MARKER_MM, e.g. 7x5:30:22"
        ) from None
    if sx < 2 or sy < 2 or not 0 < mk < sq:
        raise DefectInputError("--board", f"{text!r}: at least 2x2 squares, marker inside square")
    return CharucoBoardSpec(sx, sy, sq, mk)
