"""Each inspector's phone measured with its own lens (§ 370-5 survey photos).

The calibration is chosen by the make and model the photo's EXIF names (EXIF written
here with Pillow); an unknown phone is measured with the marker alone and says so, or
is not measured when its lens is too wide for the marker alone to hold 1/16 in.
"""

from __future__ import annotations

import io
import json
from datetime import UTC, datetime
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from sidewalk.analytics.defects import CameraCalibration, make_fiducial_marker
from sidewalk.analytics.defects.camera_inputs import DefectInputError
from sidewalk.analytics.phone_cameras import (
    MARKER_ONLY_NOTE,
    add_phone_camera,
    choose,
    model_key,
    oriented,
    read_photo_camera,
    write_calibration_target,
)
from sidewalk.analytics.survey import failure_words
from sidewalk.core.profile import Profile
from sidewalk.dashboard.routes.property import _camera_words
from sidewalk.dashboard.survey_photos import PhoneCamera, _camera_for, survey_photo
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore

from .conftest import FRONTAGES

GAP_LIMIT_MM = 31.75  # § 370-5's 1 1/4 in horizontal gap
K = [[3000.0, 0.0, 2010.0], [0.0, 3004.0, 1500.0], [0.0, 0.0, 1.0]]
DIST = [0.08, -0.2, 0.001, -0.002, 0.1]


def with_exif(
    gray: np.ndarray,
    *,
    make: str = "",
    model: str = "",
    focal_35mm: int | None = None,
    orientation: int = 1,
) -> bytes:
    exif = Image.Exif()
    if make:
        exif[0x010F] = make
    if model:
        exif[0x0110] = model
    exif[0x0112] = orientation
    if focal_35mm is not None:
        exif.get_ifd(0x8769)[0xA405] = focal_35mm
        exif.get_ifd(0x8769)[0x920A] = 5.1
    out = io.BytesIO()
    Image.fromarray(gray).save(out, "JPEG", exif=exif.tobytes(), quality=92)
    return out.getvalue()


def registry(
    tmp_path: Path, key: str = "apple-iphone-13", size: tuple[int, int] = (4032, 3024)
) -> Path:
    folder = tmp_path / "phone-cameras"
    folder.mkdir()
    doc = {"matrix": K, "distortion": DIST, "image_width": size[0], "image_height": size[1]}
    (folder / f"{key}.json").write_text(json.dumps(doc))
    return folder


def test_the_photo_names_its_phone_lens_size_and_orientation() -> None:
    jpeg = with_exif(
        np.full((48, 64), 128, np.uint8), make="Apple", model="iPhone 13", focal_35mm=26,
        orientation=6,
    )  # fmt: skip
    cam = read_photo_camera(jpeg)
    assert (cam.make, cam.model, cam.focal_35mm, cam.focal_mm) == ("Apple", "iPhone 13", 26.0, 5.1)
    assert (cam.width, cam.height, cam.orientation) == (64, 48, 6)
    assert model_key(cam.make, cam.model) == "apple-iphone-13"
    # Samsung repeats nothing, Google repeats its make in the model: one key each way.
    assert (
        model_key("Google", "Google Pixel 7") == model_key("google", "Pixel 7") == "google-pixel-7"
    )
    # No EXIF, or not a JPEG at all: nothing named, never an error.
    assert read_photo_camera(with_exif(np.zeros((8, 8), np.uint8))).named == ""
    assert read_photo_camera(b"not a photo").width is None
    # A damaged header (cut inside its EXIF) says nothing, and never raises.
    assert read_photo_camera(jpeg[:40]) == read_photo_camera(b"\xff\xd8")


@pytest.mark.parametrize("orientation", [3, 6, 8])
def test_a_sensor_calibration_turned_as_the_photo_is_turned_projects_the_same_points(
    orientation: int,
) -> None:
    """A point seen by the phone lands where the turned photo shows it, distortion and all."""
    w, h = 4032, 3024
    pts = np.array([[-0.6, -0.4, 1.0], [0.5, 0.3, 1.2], [0.1, -0.45, 0.9], [-0.3, 0.5, 1.1]])
    raw, _ = cv2.projectPoints(pts, np.zeros(3), np.zeros(3), np.array(K), np.array(DIST))
    x, y = raw.reshape(-1, 2).T
    # Where OpenCV's EXIF turn puts those pixels, and the camera turned the same way.
    turned_px, turned_pts = {
        3: (np.c_[w - 1 - x, h - 1 - y], np.c_[-pts[:, 0], -pts[:, 1], pts[:, 2]]),
        6: (np.c_[h - 1 - y, x], np.c_[-pts[:, 1], pts[:, 0], pts[:, 2]]),
        8: (np.c_[y, w - 1 - x], np.c_[pts[:, 1], -pts[:, 0], pts[:, 2]]),
    }[orientation]
    k2, d2, size = oriented(K, DIST, (w, h), orientation)
    seen, _ = cv2.projectPoints(turned_pts, np.zeros(3), np.zeros(3), np.array(k2), np.array(d2))
    assert size == ((w, h) if orientation == 3 else (h, w))
    np.testing.assert_allclose(seen.reshape(-1, 2), turned_px, atol=1e-6)


def test_a_known_phone_gets_its_own_calibration_scaled_and_turned_to_the_photo(
    tmp_path: Path,
) -> None:
    folder = registry(tmp_path)
    # Stored at half size, held upright (orientation 6): K halved, then turned.
    half = read_photo_camera(
        with_exif(np.zeros((1512, 2016), np.uint8), make="Apple", model="iPhone 13", orientation=6)
    )
    chosen = choose(half, folder, gap_limit_mm=GAP_LIMIT_MM)
    assert chosen.calibration is not None
    assert not chosen.refusal
    assert not chosen.note
    assert chosen.source == "apple-iphone-13.json"
    k2, _, _ = oriented(K, DIST, (4032, 3024), 6)
    np.testing.assert_allclose(chosen.calibration.matrix, np.array(k2) * [[0.5], [0.5], [1]])
    # A crop of another shape (16:9 from a 4:3 sensor) cannot reuse the matrix: said why.
    wide = read_photo_camera(
        with_exif(np.zeros((1134, 2016), np.uint8), make="Apple", model="iPhone 13")
    )
    refused = choose(wide, folder, gap_limit_mm=GAP_LIMIT_MM)
    assert refused.calibration is None
    assert refused.refusal.startswith("this phone's calibration was made at another picture shape")


def test_an_unknown_phone_is_measured_with_the_marker_only_when_its_lens_allows(
    tmp_path: Path,
) -> None:
    folder = registry(tmp_path)
    img = np.zeros((30, 40), np.uint8)
    main = choose(
        read_photo_camera(with_exif(img, make="Acme", model="P1", focal_35mm=26)), folder,
        gap_limit_mm=GAP_LIMIT_MM,
    )  # fmt: skip
    assert (main.calibration, main.note, main.refusal) == (None, MARKER_ONLY_NOTE, "")
    # An ultra-wide lens: the residual distortion can exceed 1/16 in at the gap limit.
    ultra = choose(
        read_photo_camera(with_exif(img, make="Acme", model="P1", focal_35mm=13)), folder,
        gap_limit_mm=GAP_LIMIT_MM,
    )  # fmt: skip
    assert ultra.note == ""
    assert ultra.refusal.startswith("Acme P1 is not calibrated and its lens")
    assert "1/16 in" in ultra.refusal
    # No focal length: the field of view is not known, so not measured.
    bare = choose(read_photo_camera(with_exif(img)), folder, gap_limit_mm=GAP_LIMIT_MM)
    assert bare.refusal.startswith("this phone is not calibrated and the photo does not say")
    # The reason reaches the inspector as written, never as a raw name.
    assert failure_words(f"not_measured: phone camera not calibrated: {bare.refusal}") == (
        bare.refusal
    )


def test_a_damaged_registry_file_is_one_line_naming_it(tmp_path: Path) -> None:
    folder = tmp_path / "phone-cameras"
    folder.mkdir()
    (folder / "acme-p1.json").write_text('{"fx": 900, "cy": 300}')
    photo = read_photo_camera(with_exif(np.zeros((8, 8), np.uint8), make="Acme", model="P1"))
    with pytest.raises(DefectInputError) as e:
        choose(photo, folder, gap_limit_mm=GAP_LIMIT_MM)
    assert str(e.value).startswith(str(folder / "acme-p1.json") + ": intrinsics without fy, cx")
    assert "\n" not in str(e.value)


def test_the_it_person_adds_a_phone_from_an_intrinsics_file_or_target_photos(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "phone-cameras"
    src = tmp_path / "camera_info.yaml"
    src.write_text(
        "image_width: 4032\nimage_height: 3024\ncamera_matrix:\n  rows: 3\n  cols: 3\n"
        f"  data: {[v for row in K for v in row]}\ndistortion_coefficients:\n  data: {DIST}\n"
    )
    added = add_phone_camera(folder, intrinsics=src, make="samsung", model="SM-G991B")
    assert added.path == folder / "samsung-sm-g991b.json"
    assert added.named == "samsung SM-G991B"
    stored = json.loads(added.path.read_text())
    assert stored["matrix"] == K
    assert stored["distortion"] == DIST
    # Added twice: refused unless replacing; no phone named: one line saying what to give.
    with pytest.raises(DefectInputError, match="already calibrated; add --replace"):
        add_phone_camera(folder, intrinsics=src, make="samsung", model="SM-G991B")
    with pytest.raises(DefectInputError, match="give --make and --model"):
        add_phone_camera(folder, intrinsics=src)
    # Photos that are not pictures: the file named.
    junk = tmp_path / "IMG_1.jpg"
    junk.write_bytes(b"\xff\xd8junk")
    with pytest.raises(DefectInputError) as e:
        add_phone_camera(folder, photos=[junk], make="Acme", model="P1")
    assert str(e.value) == f"{junk}: not a picture OpenCV can read"


def marker_photo(**exif: object) -> bytes:
    """Straight down at the walk: the 150 mm marker (180 px) and a 12 px joint across."""
    rng = np.random.default_rng(3)
    gray = cv2.GaussianBlur(
        np.clip(rng.normal(150, 18, (600, 800)), 0, 255).astype(np.uint8), (3, 3), 0
    )
    gray[40:280, 40:280] = 255
    gray[60:240, 60:240] = cv2.resize(
        make_fiducial_marker(0), (180, 180), interpolation=cv2.INTER_NEAREST
    )
    cv2.line(gray, (420, 0), (440, 600), 30, 12)
    # Ignored: a dict of mixed EXIF values cannot be typed per keyword.
    return with_exif(gray, **exif)  # type: ignore[arg-type]


def test_370_5_an_uncalibrated_phone_measured_with_the_marker_says_so_in_its_record(
    tmp_path: Path, cases: CaseStore, evidence: EvidenceStore, profile: Profile
) -> None:
    folder = registry(tmp_path)
    camera = PhoneCamera(registry=folder)
    at = datetime(2026, 12, 1, 15, tzinfo=UTC)
    unknown = evidence.put(marker_photo(make="Acme", model="P1", focal_35mm=26))
    said = survey_photo(
        unknown, frontage=FRONTAGES[0], at=at, camera=camera, cases=cases, evidence=evidence,
        profile=profile,
    )  # fmt: skip
    assert said is not None
    assert said.measured
    assert said.words.startswith("Measured: within the limit (horizontal gap 0.")
    assert said.words.endswith(f"; {MARKER_ONLY_NOTE}).")
    [record] = cases.inspections.list(frontage_id=FRONTAGES[0])
    assert record.result["survey"]["camera"] == MARKER_ONLY_NOTE
    # ... and the property page says it beside the survey.
    assert _camera_words(record.result) == f" ({MARKER_ONLY_NOTE})"
    assert _camera_words({"survey": {"camera": "calibration acme-p1.json"}}) == ""
    # The same phone's ultra-wide lens: not measured, in the inspector's words.
    wide = evidence.put(marker_photo(make="Acme", model="P1", focal_35mm=13))
    refused = survey_photo(
        wide, frontage=FRONTAGES[1], at=at, camera=camera, cases=cases, evidence=evidence,
        profile=profile,
    )  # fmt: skip
    assert refused is not None
    assert not refused.measured
    assert refused.words.startswith("Not measured: Acme P1 is not calibrated and its lens is too")


def test_a_registered_phone_is_measured_with_its_calibration_named_in_the_record(
    tmp_path: Path, profile: Profile
) -> None:
    folder = registry(tmp_path, "acme-p1", (800, 600))
    jpeg = marker_photo(make="Acme", model="P1")
    calib, note, refusal = _camera_for(jpeg, PhoneCamera(registry=folder), profile)
    assert calib is not None
    assert (note, refusal) == ("calibration acme-p1.json", "")
    np.testing.assert_allclose(calib.matrix, K)
    # The same photo from an unknown phone: the marker-only camera, said in the record.
    unknown = marker_photo(make="Acme", model="P2", focal_35mm=26)
    nominal, note, refusal = _camera_for(unknown, PhoneCamera(registry=folder), profile)
    assert nominal is not None
    assert (note, refusal) == (MARKER_ONLY_NOTE, "")
    assert nominal.matrix[0, 2] == pytest.approx(399.5)
    assert not nominal.distortion.any()
    # A damaged file: not measured, the file named for the IT person.
    (folder / "acme-p1.json").write_text("{")
    assert _camera_for(jpeg, PhoneCamera(registry=folder), profile)[2].startswith(
        "this phone's calibration file is damaged"
    )
    # One calibration for every phone (a test's known camera) overrides the registry.
    one = CameraCalibration(np.eye(3), np.zeros(5))
    assert _camera_for(jpeg, PhoneCamera(one, registry=folder), profile) == (one, "", "")


def test_the_it_person_calibrates_a_phone_from_its_target_photos_through_the_command(
    tmp_path: Path,
) -> None:
    """`sidewalk inspect phone-camera IMG…`: cv2.calibrateCamera over the printed ChArUco
    target, the phone named by the photos' EXIF; bad input is one line naming the file."""
    from typer.testing import CliRunner

    from sidewalk.analytics.defects import make_calibration_target
    from sidewalk.cli import app

    target = make_calibration_target(squares_x=7, squares_y=5, square_mm=30.0, dpi=80)
    k = np.array([[720.0, 0, 360], [0, 720.0, 240], [0, 0, 1]])
    to_print = np.diag([25.4 / 80, 25.4 / 80, 1.0])  # print pixels -> board mm
    photos = []
    for n, (rx, ry, dist) in enumerate(((0.2, -0.1, 500), (-0.3, 0.2, 550), (0.1, 0.35, 600))):
        r, _ = cv2.Rodrigues(np.array([rx, ry, 0.05]))
        h = k @ np.column_stack([r[:, 0], r[:, 1], [-105.0, -75.0, dist]]) @ to_print
        view = cv2.warpPerspective(target, h, (720, 480), borderValue=255)
        photos.append(tmp_path / f"IMG_{n}.jpg")
        photos[-1].write_bytes(with_exif(view, make="Acme", model="P1", focal_35mm=26))
    config = tmp_path / "sidewalk.toml"
    config.write_text(f'data_dir = "{tmp_path / "var"}"\n', encoding="utf-8")
    run = CliRunner().invoke(
        app, ["inspect", "phone-camera", *map(str, photos), "--config", str(config)]
    )
    saved = tmp_path / "var" / "phone-cameras" / "acme-p1.json"
    assert run.exit_code == 0, run.output
    assert run.output.startswith(f"Acme P1: calibration saved to {saved} at 720x480 px, 0.")
    stored = json.loads(saved.read_text())
    assert stored["matrix"][0][0] == pytest.approx(720.0, rel=0.03)
    assert (stored["image_width"], stored["image_height"]) == (720, 480)
    # Two photos only: one line saying what is wrong, exit 2, nothing written over.
    again = CliRunner().invoke(
        app,
        ["inspect", "phone-camera", *map(str, photos[:2]), "--replace", "--config", str(config)],
    )
    assert (again.exit_code, again.output) == (
        2,
        "photos: 2 given; need 3 or more of the target\n",
    )
    # The target to print, and a path it cannot be written to: one line naming it.
    png = tmp_path / "target.png"
    assert write_calibration_target(png, dpi=50) == pytest.approx((210.0, 150.0), abs=0.3)
    with Image.open(png) as sheet:
        assert sheet.size == (413, 295)
    with pytest.raises(DefectInputError) as e:
        write_calibration_target(tmp_path / "t.gif")
    assert str(e.value) == f"{tmp_path / 't.gif'}: cannot write the target there (give a .png path)"


def test_the_dashboard_reads_the_registry_and_says_the_old_single_file_is_not_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from sidewalk.cli.dashboard import _phone_camera

    assert _phone_camera(tmp_path).registry == tmp_path / "phone-cameras"
    assert capsys.readouterr().err == ""
    (tmp_path / "phone-camera.json").write_text('{"fx": 1}')
    camera = _phone_camera(tmp_path)
    assert camera.calibration is None  # never applied to every phone again
    assert capsys.readouterr().err == (
        f"{tmp_path / 'phone-camera.json'}: one calibration no longer serves every phone; add it"
        f" for its phone with `sidewalk inspect phone-camera --intrinsics"
        f" {tmp_path / 'phone-camera.json'} --make … --model …`\n"
    )
