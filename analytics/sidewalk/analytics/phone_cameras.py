"""Each inspector's phone measured with its own lens: calibrations chosen by the photo's EXIF.

The Village keeps one calibration per phone camera model in ``<data_dir>/phone-cameras/``
(``apple-iphone-13.json``: the file name is the EXIF Make and Model, see ``model_key``),
in any format ``defects.camera_inputs`` reads; ``sidewalk inspect phone-camera`` writes
them from ChArUco photos or an intrinsics file. A calibration is kept in the sensor's own
frame (pixels as stored, EXIF orientation not applied): a photo held upright is measured
after OpenCV turned it, so the matrix is turned the same way (``oriented``).

A phone with no calibration is measured with the marker alone: the homography from the
marker's corners, no lens model, which is exact at the marker and off by the lens's
uncorrected distortion elsewhere. Such a measurement says so in its record, and a photo
whose field of view lets that distortion exceed 1/16 in at the gap limit is not measured.

Light to import (no OpenCV; Pillow only when a photo is read): the dashboard reads EXIF and
chooses here on every photo.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sidewalk.analytics.defects import CameraCalibration

PHONE_CAMERAS_DIR = "phone-cameras"
CALIBRATION_SUFFIXES = (".json", ".yaml", ".yml", ".xml")

# The stated accuracy of a survey-photo gap (docs/defects.md): 1/16 in.
TOLERANCE_MM = 25.4 / 16
# Radial distortion left in a phone's JPEG after the camera's own lens correction,
# as k1 on normalised coordinates. Unconfirmed: not measured on the Village's phones;
# a calibration (``sidewalk inspect phone-camera``) replaces it with the lens's own.
PHONE_RESIDUAL_K1 = 0.02
# The 35 mm film diagonal: an equivalent focal length is given against it.
FILM_DIAGONAL_MM = math.hypot(36.0, 24.0)

MARKER_ONLY_NOTE = "measured with the marker only; this phone's lens is not calibrated"


@dataclass(frozen=True)
class PhotoCamera:
    """What a photo's EXIF says about the camera that took it."""

    make: str = ""
    model: str = ""
    focal_mm: float | None = None
    focal_35mm: float | None = None
    width: int | None = None  # pixels as stored (before orientation)
    height: int | None = None
    orientation: int = 1  # EXIF: 1 upright, 3 turned 180, 6 turn clockwise, 8 anticlockwise

    @property
    def named(self) -> str:
        """The phone as a person names it ("Apple iPhone 13"), or "" when the photo says not."""
        if self.model.lower().startswith(self.make.lower()):
            return self.model.strip()
        return f"{self.make} {self.model}".strip()


def model_key(make: str, model: str) -> str:
    """The registry's file stem for a camera model: lower case, words joined by '-'."""
    named = PhotoCamera(make, model).named
    return re.sub(r"[^a-z0-9]+", "-", named.lower()).strip("-")


# -- EXIF, read with Pillow (the header only: nothing is decoded) ---------------------------

_MAKE, _MODEL, _ORIENTATION, _EXIF_IFD = 0x010F, 0x0110, 0x0112, 0x8769
_FOCAL, _FOCAL_35 = 0x920A, 0xA405


def _number(value: Any) -> float | None:
    """A positive EXIF number (Pillow gives rationals as ``IFDRational``), else None."""
    try:
        number = float(value)
    except (TypeError, ValueError, ZeroDivisionError):
        return None
    return number if math.isfinite(number) and number > 0 else None


def read_photo_camera(jpeg: bytes) -> PhotoCamera:
    """Make, model, focal lengths, stored size and orientation from a JPEG's EXIF and
    frame header; empty fields where the photo does not say (never raises)."""
    import io
    import warnings

    from PIL import Image

    if jpeg[:2] != b"\xff\xd8":
        return PhotoCamera()
    try:
        with warnings.catch_warnings():
            # Only the header is read; the decoder's size guard belongs to the upload.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(jpeg), formats=["JPEG"]) as image:
                width, height = image.size
                exif = image.getexif()
                tags: dict[int, Any] = dict(exif)
                tags.update(exif.get_ifd(_EXIF_IFD))
    except Exception:  # a damaged or hostile header is a photo that says nothing
        return PhotoCamera()
    focal, f35 = _number(tags.get(_FOCAL)), _number(tags.get(_FOCAL_35))
    orient = tags.get(_ORIENTATION)

    def text(tag: int) -> str:
        value = tags.get(tag)
        if isinstance(value, bytes):
            value = value.decode("ascii", "replace")
        return str(value or "").split("\0", 1)[0].strip()

    return PhotoCamera(
        make=text(_MAKE),
        model=text(_MODEL),
        focal_mm=focal,
        focal_35mm=f35,
        width=width,
        height=height,
        orientation=orient if orient in (1, 3, 6, 8) else 1,
    )


# -- the registry --------------------------------------------------------------------------


@dataclass(frozen=True)
class Choice:
    """The calibration chosen for one photo: ``calibration`` None measures with the marker
    only (``note`` says so); ``refusal`` set: not measured, in the inspector's words."""

    calibration: CameraCalibration | None
    note: str = ""
    refusal: str = ""
    source: str = ""  # the registry file used


def registry_files(directory: Path) -> dict[str, Path]:
    """The registry's calibrations by model key (file stem)."""
    if not directory.is_dir():
        return {}
    return {
        p.stem.lower(): p
        for p in sorted(directory.iterdir())
        if p.suffix.lower() in CALIBRATION_SUFFIXES and p.is_file()
    }


def _stored_size(path: Path) -> tuple[int, int] | None:
    """The sensor-frame image size a JSON calibration names, if any."""
    if path.suffix.lower() != ".json":
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, Mapping):
        return None
    w = data.get("image_width", data.get("width"))
    h = data.get("image_height", data.get("height"))
    if isinstance(w, int) and isinstance(h, int) and w > 0 and h > 0:
        return (w, h)
    return None


def oriented(
    matrix: list[list[float]], distortion: list[float], size: tuple[int, int], orientation: int
) -> tuple[list[list[float]], list[float], tuple[int, int]]:
    """A sensor-frame calibration turned as the photo's EXIF orientation turns its pixels
    (3: 180 degrees, 6: clockwise, 8: anticlockwise), with the tangential terms turned too."""
    (fx, _, cx), (_, fy, cy), _ = matrix
    w, h = size
    d = list(distortion) + [0.0] * max(0, 5 - len(distortion))
    p1, p2 = d[2], d[3]
    if orientation == 3:
        cx, cy, p1, p2 = w - 1 - cx, h - 1 - cy, -p1, -p2
    elif orientation == 6:  # (x, y) -> (h-1-y, x)
        fx, fy, cx, cy, p1, p2, w, h = fy, fx, h - 1 - cy, cx, p2, -p1, h, w
    elif orientation == 8:  # (x, y) -> (y, w-1-x)
        fx, fy, cx, cy, p1, p2, w, h = fy, fx, cy, w - 1 - cx, -p2, p1, h, w
    d[2], d[3] = p1, p2
    return [[fx, 0.0, cx], [0.0, fy, cy], [0.0, 0.0, 1.0]], d, (w, h)


def _fit(
    calib: CameraCalibration, stored: tuple[int, int] | None, photo: PhotoCamera, source: str
) -> Choice:
    """The registry's calibration for this photo's size and orientation, or a refusal."""
    from sidewalk.analytics.defects import CameraCalibration

    if stored is None or photo.width is None or photo.height is None:
        return Choice(calib, source=source)  # no size to check: used as written
    k, d, (w, h) = oriented(
        calib.matrix.tolist(), calib.distortion.ravel().tolist(), stored, photo.orientation
    )
    pw, ph = (
        (photo.height, photo.width) if photo.orientation in (6, 8) else (photo.width, photo.height)
    )
    scale = pw / w
    if abs(ph / h - scale) > 0.002 * scale:  # another crop: the matrix does not carry over
        return Choice(
            None,
            refusal=f"this phone's calibration was made at another picture shape ({w}x{h},"
            f" the photo is {pw}x{ph}); set the camera back or calibrate it again",
            source=source,
        )
    import numpy as np

    km = np.array(k, np.float64)
    km[:2] *= scale
    return Choice(CameraCalibration(km, np.array(d, np.float64)), source=source)


def marker_only_error_mm(photo: PhotoCamera, limit_mm: float) -> float | None:
    """The largest error a marker-only measurement can make on a gap at ``limit_mm``: the
    residual distortion's scale change between the marker and a corner of the frame
    (radial scale 1 + 3 k1 r^2 on normalised radius r). None when the photo does not say
    its lens's focal length (35 mm equivalent), so its field of view is not known."""
    if photo.focal_35mm is None:
        return None
    # r at a corner: half the diagonal over the focal length, in 35 mm film terms.
    r = (FILM_DIAGONAL_MM / 2) / photo.focal_35mm
    return limit_mm * 3 * PHONE_RESIDUAL_K1 * r * r


def choose(photo: PhotoCamera, directory: Path, *, gap_limit_mm: float) -> Choice:
    """The calibration for a photo's phone, the marker alone, or not measured (with why).

    Raises ``DefectInputError`` (one line naming the file) when the phone's registry file
    is not a calibration: the IT person fixes it rather than photos passing unmeasured."""
    files = registry_files(directory)
    key = model_key(photo.make, photo.model)
    path = files.get(key) if key else None
    if path is not None:
        from sidewalk.analytics.defects.camera_inputs import load_camera_calibration

        return _fit(load_camera_calibration(path), _stored_size(path), photo, path.name)
    error = marker_only_error_mm(photo, gap_limit_mm)
    phone = photo.named or "this phone"
    if error is None:
        return Choice(
            None,
            refusal=f"{phone} is not calibrated and the photo does not say its lens's focal"
            " length, so the marker alone cannot be trusted to 1/16 in",
        )
    if error > TOLERANCE_MM:
        return Choice(
            None,
            refusal=f"{phone} is not calibrated and its lens is too wide for the marker alone"
            f" ({error:.1f} mm possible error, 1/16 in needed); ask for the phone's calibration"
            " or use a calibrated phone",
        )
    return Choice(None, note=MARKER_ONLY_NOTE)


def nominal_calibration(photo: PhotoCamera, size: tuple[int, int]) -> CameraCalibration:
    """The marker-only camera: the EXIF focal length, centred, no distortion. The ground
    homography comes from the marker's corners; this matrix only sets the tilt check."""
    import numpy as np

    from sidewalk.analytics.defects import CameraCalibration

    w, h = size
    f35 = photo.focal_35mm or 26.0
    f = f35 * math.hypot(w, h) / FILM_DIAGONAL_MM
    k = np.array([[f, 0, (w - 1) / 2], [0, f, (h - 1) / 2], [0, 0, 1]], np.float64)
    return CameraCalibration(k, np.zeros(5))


# -- adding a phone (the IT person's command) -----------------------------------------------


@dataclass(frozen=True)
class AddedPhone:
    """A calibration written to the registry."""

    path: Path
    named: str
    size: tuple[int, int] | None
    rms_px: float | None  # reprojection error of a calibration from photos
    views: int  # photos of the target used (0: from an intrinsics file)


def _named(
    make: str | None, model: str | None, photos: list[Path]
) -> tuple[str, str, PhotoCamera | None]:
    """Make and model as given, else from the first photo's EXIF that names them."""
    from sidewalk.analytics.defects.camera_inputs import DefectInputError

    found = None
    for p in photos:
        try:
            found = read_photo_camera(p.read_bytes())
        except OSError as e:
            raise DefectInputError(str(p), f"cannot read ({e.strerror or e})") from None
        if found.make or found.model:
            break
    mk = make if make is not None else (found.make if found else "")
    md = model if model is not None else (found.model if found else "")
    if not model_key(mk, md):
        where = str(photos[0]) if photos else "--model"
        raise DefectInputError(
            where, "does not name the phone's make and model; give --make and --model"
        )
    return mk, md, found


def add_phone_camera(
    directory: Path,
    *,
    photos: list[Path] | None = None,
    intrinsics: Path | None = None,
    make: str | None = None,
    model: str | None = None,
    size: tuple[int, int] | None = None,
    replace: bool = False,
) -> AddedPhone:
    """Write a phone's calibration to the registry, from photos of the printed ChArUco
    target (``make_calibration_target``'s board, cv2.calibrateCamera) or an intrinsics
    file; the phone named by ``make``/``model`` or the photos' EXIF. ``size`` is the
    sensor-frame picture size an intrinsics file is for. Raises ``DefectInputError``
    (one line naming the file or option) on bad input."""
    from sidewalk.analytics.defects.camera_inputs import DefectInputError

    if (photos is None) == (intrinsics is None):
        raise DefectInputError("phone-camera", "give the target photos or --intrinsics FILE, one")
    mk, md, exif = _named(make, model, list(photos or []))
    key = model_key(mk, md)
    out = directory / f"{key}.json"
    if out.exists() and not replace:
        raise DefectInputError(str(out), "this phone is already calibrated; add --replace")
    rms: float | None = None
    views = 0
    if intrinsics is not None:
        from sidewalk.analytics.defects.camera_inputs import load_camera_calibration

        calib = load_camera_calibration(intrinsics)
        size = size or _stored_size(intrinsics)
    else:
        calib, size, views = _calibrate(list(photos or []))
        rms = calib.rms_px
    document: dict[str, Any] = {
        "make": mk,
        "model": md,
        "matrix": calib.matrix.tolist(),
        "distortion": calib.distortion.ravel().tolist(),
        "frame": "sensor (EXIF orientation not applied)",
        "source": str(intrinsics) if intrinsics else f"{views} ChArUco target photos",
    }
    if size is not None:
        document |= {"image_width": size[0], "image_height": size[1]}
    if rms is not None:
        document["rms_px"] = round(rms, 3)
    if exif is not None and exif.focal_mm:
        document["focal_mm"] = exif.focal_mm
    directory.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return AddedPhone(out, PhotoCamera(mk, md).named, size, rms, views)


def _calibrate(photos: list[Path]) -> tuple[CameraCalibration, tuple[int, int], int]:
    """cv2.calibrateCamera over the ChArUco target's photos, read as stored (sensor frame)."""
    import cv2
    import numpy as np

    from sidewalk.analytics.defects import MeasurementError, calibrate_intrinsics
    from sidewalk.analytics.defects.camera_inputs import DefectInputError

    grays: list[np.ndarray[Any, np.dtype[np.uint8]]] = []
    for p in photos:
        img = cv2.imread(str(p), cv2.IMREAD_GRAYSCALE | cv2.IMREAD_IGNORE_ORIENTATION)
        if img is None:
            raise DefectInputError(str(p), "not a picture OpenCV can read")
        if grays and img.shape != grays[0].shape:
            raise DefectInputError(
                str(p),
                f"is {img.shape[1]}x{img.shape[0]}, the others {grays[0].shape[1]}x"
                f"{grays[0].shape[0]}: take every photo at the same picture size",
            )
        grays.append(np.asarray(img, np.uint8))
    if len(grays) < 3:
        raise DefectInputError("photos", f"{len(grays)} given; need 3 or more of the target")
    try:
        calib = calibrate_intrinsics(grays)
    except MeasurementError:
        raise DefectInputError(
            "photos", "fewer than 3 show the printed target clearly; take more"
        ) from None
    return calib, (grays[0].shape[1], grays[0].shape[0]), len(grays)


def write_calibration_target(path: Path, *, dpi: int = 300) -> tuple[float, float]:
    """The printable ChArUco target ``add_phone_camera`` reads, as a PNG at ``dpi``;
    returns its printed size in mm (print at 100 %, no scaling)."""
    import cv2

    from sidewalk.analytics.defects import make_calibration_target
    from sidewalk.analytics.defects.camera_inputs import DefectInputError

    if path.suffix.lower() != ".png":
        raise DefectInputError(str(path), "cannot write the target there (give a .png path)")
    image = make_calibration_target(dpi=dpi)
    if not cv2.imwrite(str(path), image):
        raise DefectInputError(str(path), "cannot write the target there (give a .png path)")
    return (image.shape[1] * 25.4 / dpi, image.shape[0] * 25.4 / dpi)
