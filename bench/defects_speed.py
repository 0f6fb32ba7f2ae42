"""Speed of sidewalk defect measurement on one core.

    uv run python bench/defects_speed.py [--repeats 15]

A 1920 x 1080 survey photo (rendered once) is measured with
cv2.setNumThreads(1); each stage's median time is printed beside a floor
measured in the same run on the same image: a bare cv2.GaussianBlur + Canny.
A photo taken along the walk (both edges in view, so the walk-width stage
runs to the end), depth-map (1280 x 720) and laser-line (1280 x 720)
measurement are timed too.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable

import cv2
import numpy as np

from sidewalk.analytics.defects import (
    CameraCalibration,
    DepthIntrinsics,
    FiducialSpec,
    LaserRig,
    measure_depth_map,
    measure_laser_profile,
    measure_photo,
)
from sidewalk.testkit.defect_scenes import (
    SidewalkScene,
    depth_survey_camera,
    laser_pair_survey_rig,
    laser_survey_rig,
    place_marker,
    random_scene,
    render_depth,
    render_laser,
    render_photo,
    survey_photo_camera,
    walk_width_photo_camera,
)


def time_ms(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``fn`` in milliseconds, after one warm-up call."""
    fn()
    out = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return statistics.median(out)


def width_photo_ms(
    scene: SidewalkScene, rng: np.random.Generator, repeats: int
) -> tuple[float, float]:
    """measure_photo on a photo along the walk, and its walk-width stage (ms)."""
    wcam = walk_width_photo_camera(scene, rng)
    wphoto = render_photo(scene, wcam, place_marker(scene, wcam, rng, along=(0.0, 0.3)), rng)
    wcal = CameraCalibration(wcam.matrix, wcam.distortion)
    w_runs: list[float] = []

    def width_run() -> object:
        insp = measure_photo(wphoto, wcal, FiducialSpec())
        st = dict(insp.stage_seconds)
        w_runs.append(st["walk_width"] - st["widths"])
        return insp

    total = time_ms(width_run, repeats)
    return total, statistics.median(w_runs) * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    cv2.setNumThreads(1)
    rng = np.random.default_rng(4)
    scene = random_scene(rng)
    cam = survey_photo_camera(scene, rng, 0)
    marker = place_marker(scene, cam, rng)
    photo = render_photo(scene, cam, marker, rng)
    calib = CameraCalibration(cam.matrix, cam.distortion)
    gray = cv2.cvtColor(photo, cv2.COLOR_BGR2GRAY)

    def floor() -> object:
        return cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 1.2), 50, 150)

    stage_runs: list[tuple[tuple[str, float], ...]] = []

    def photo_run() -> object:
        insp = measure_photo(photo, calib, FiducialSpec())
        stage_runs.append(insp.stage_seconds)
        return insp

    total = time_ms(photo_run, args.repeats)
    ref = time_ms(floor, args.repeats)
    print(f"{platform.processor() or platform.machine()}, cv2 {cv2.__version__}, 1 thread")
    print("| stage (1920x1080 photo) | median ms |")
    print("|---|---|")
    prev = 0.0
    names = [n for n, _ in stage_runs[0]]
    for i, name in enumerate(names):
        cum = statistics.median(r[i][1] for r in stage_runs) * 1000
        print(f"| {name} | {cum - prev:.1f} |")
        prev = cum
    print(f"| **total measure_photo** | **{total:.1f}** (target <= 100) |")
    print(f"| reference: GaussianBlur 5x5 + Canny, same image | {ref:.1f} |")

    dcam = depth_survey_camera(scene, rng, 0)
    depth = render_depth(scene, dcam, rng)
    k = dcam.matrix
    intr = DepthIntrinsics(k[0, 0], k[1, 1], k[0, 2], k[1, 2])
    d_ms = time_ms(lambda: measure_depth_map(depth, intr), max(3, args.repeats // 3))
    lcam, n, off = laser_survey_rig(scene, rng, 0)
    limg = render_laser(scene, lcam, n, off, rng)
    rig = LaserRig(CameraCalibration(lcam.matrix, lcam.distortion), n, off)
    l_ms = time_ms(lambda: measure_laser_profile(limg, rig), args.repeats)
    # The documented survey rig: two stripes (docs/defects.md, hardware/laser-rig.md).
    pcam, (sheet, second) = laser_pair_survey_rig(scene, rng, 0)
    pimg = render_laser(scene, pcam, sheet[0], sheet[1], rng, more_sheets=(second,))
    up = pcam.rotation @ np.array([0.0, 0.0, 1.0])
    prig = LaserRig(CameraCalibration(pcam.matrix, pcam.distortion), sheet[0], sheet[1], up, second)
    l2_ms = time_ms(lambda: measure_laser_profile(pimg, prig), args.repeats)
    w_total, w_stage = width_photo_ms(scene, rng, args.repeats)
    print(f"| measure_photo, photo along the walk (both edges: width) | {w_total:.1f} |")
    print(f"| of which walk_width | {w_stage:.1f} |")
    print(f"| measure_depth_map, 1280x720 depth | {d_ms:.1f} |")
    print(f"| measure_laser_profile, two stripes (survey rig), 1280x720 | {l2_ms:.1f} |")
    print(f"| measure_laser_profile, one stripe (degraded mode), 1280x720 | {l_ms:.1f} |")


if __name__ == "__main__":
    main()
