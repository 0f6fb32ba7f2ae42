"""Bench of the on-device camera measurement: speed on one core and accuracy.

    uv run python bench/camera_snow.py [--scenes 100]

Speed: ms per frame for the frontage measurement and for snow-cover fraction,
each beside a reference measured in the same run on the same frame (a bare
cv2.cvtColor + cv2.threshold), with cv2.setNumThreads(1).
Accuracy: snow-cover fraction against the NEON human masks (mean absolute
error, and a leave-one-out check of the fitted constants), and cleared width
against synthetic scenes with known paths (error percentiles; ±2 in target).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from sidewalk.edge.camera.geometry import FrontageGeometry, homography_from_points
from sidewalk.edge.camera.snow import DEFAULT_PARAMS, snow_cover_fraction
from sidewalk.edge.camera.synthetic import make_scene
from sidewalk.edge.camera.width import measure_frontage

NEON = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "snow" / "neon"
FOUR_FEET_MM = 1219.2
TOLERANCE_MM = 50.8
Image = npt.NDArray[np.uint8]


def time_ms(fn: Callable[[], object], repeats: int) -> float:
    """Median wall time of ``fn`` in milliseconds, after one warm-up call."""
    fn()
    samples = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000.0)
    return statistics.median(samples)


def reference(frame: Image) -> None:
    """The floor: grey conversion and one fixed threshold over the same frame."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    cv2.threshold(gray, 128, 255, cv2.THRESH_BINARY)


def neon_set() -> list[tuple[str, Image, npt.NDArray[np.bool_], float]]:
    """(name, image, ground region, true snow share) for each NEON image."""
    out = []
    for image_path in sorted((NEON / "images").glob("*.jpg")):
        label = cv2.imread(str(NEON / "labels" / f"{image_path.stem}.png"), cv2.IMREAD_UNCHANGED)
        image = cv2.imread(str(image_path))
        assert label is not None
        assert image is not None
        b, g, r, a = (label[..., i].astype(int) for i in range(4))
        snow = (a > 127) & (r > 200) & (g < 60) & (b > 200)
        ground = ~((a > 127) & ~snow)
        out.append(
            (image_path.stem[-17:], np.asarray(image, np.uint8), ground, float(snow[ground].mean()))
        )
    return out


def neon_accuracy(data: list[tuple[str, Image, npt.NDArray[np.bool_], float]]) -> None:
    """Per-image table, MAE, and a leave-one-out MAE over a small grid of the constants."""
    print("\n## Snow-cover fraction vs NEON human masks (15 images, 1296x960)\n")
    print("| image | true | measured | error |\n|---|---:|---:|---:|")
    errors = []
    for name, image, ground, true in data:
        measured = snow_cover_fraction(image, ground)
        errors.append(measured - true)
        print(f"| {name} | {true:.3f} | {measured:.3f} | {measured - true:+.3f} |")
    mae = float(np.mean(np.abs(errors)))
    print(f"\nMean absolute error: **{mae:.3f}** (max {np.max(np.abs(errors)):.3f})")

    grid = [
        replace(DEFAULT_PARAMS, blueness_weight=w, fixed_threshold=t)
        for w in (1.0, 1.5, 2.0)
        for t in (100.0, 115.0, 130.0, 145.0)
    ]
    table = np.array(
        [[snow_cover_fraction(im, gr, p) - tr for _, im, gr, tr in data] for p in grid]
    )
    held_out = []
    for i in range(len(data)):
        train = [j for j in range(len(data)) if j != i]
        best = int(np.argmin(np.abs(table[:, train]).mean(axis=1)))
        held_out.append(abs(table[best, i]))
    print(
        f"Leave-one-out MAE (constants refitted on 14 images over a {len(grid)}-point grid, "
        f"scored on the 15th): **{np.mean(held_out):.3f}**"
    )


def width_accuracy(scenes: int, seed: int) -> list[Image]:
    """Error percentiles of cleared width on synthetic scenes; returns a few frames for timing."""
    rng = np.random.default_rng(seed)
    rows = []
    frames: list[Image] = []
    for i in range(scenes):
        width = float(rng.uniform(0.0, 1700.0))
        scene = make_scene(seed + i, width)
        exact = measure_frontage(scene.frame, scene.geometry)
        clicked = scene.walk_corners_px + rng.uniform(-1.5, 1.5, (4, 2))
        ground = np.array([[0, 0], [15240, 0], [15240, 1524], [0, 1524]], np.float64)
        geo = FrontageGeometry(homography_from_points(clicked, ground), 15240.0, 1524.0)
        calibrated = measure_frontage(scene.frame, geo)
        truth = scene.true_cleared_width_mm
        rows.append(
            (
                truth,
                exact.cleared_width_mm,
                calibrated.cleared_width_mm,
                scene.true_snow_cover_fraction,
                exact.snow_cover_fraction,
            )
        )
        if len(frames) < 3:
            frames.append(scene.frame)
    arr = np.array(rows)
    print(
        f"\n## Cleared width vs synthetic scenes ({scenes} scenes, 50 ft x 5 ft walk, "
        "camera 6 m up, 12 m back, 1920x1080, 60° HFOV)\n"
    )
    print(
        "| homography | p50 abs err mm | p90 | p95 | p99 | max | within ±50.8 mm | "
        "4-ft verdict wrong |\n|---|---:|---:|---:|---:|---:|---:|---:|"
    )
    for label, col in (("exact", 1), ("4 clicked points, ±1.5 px", 2)):
        err = np.abs(arr[:, col] - arr[:, 0])
        p50, p90, p95, p99 = np.percentile(err, [50, 90, 95, 99])
        within = float((err <= TOLERANCE_MM).mean())
        wrong = int(((arr[:, col] >= FOUR_FEET_MM) != (arr[:, 0] >= FOUR_FEET_MM)).sum())
        print(
            f"| {label} | {p50:.0f} | {p90:.0f} | {p95:.0f} | {p99:.0f} | {err.max():.0f} "
            f"| {within:.1%} | {wrong} of {scenes} |"
        )
    cover_err = np.abs(arr[:, 4] - arr[:, 3])
    print(
        f"\nSnow-cover fraction of the walk on the same scenes: MAE {cover_err.mean():.3f}, "
        f"max {cover_err.max():.3f}"
    )
    return frames


def speed(frames: list[Image], neon_image: Image | None) -> None:
    """ms per frame on one core, each beside its reference on the same frame."""
    cv2.setNumThreads(1)
    cpu = platform.processor() or platform.machine()
    print(f"\n## Speed, one core (cv2.setNumThreads(1)), {cpu}, OpenCV {cv2.__version__}\n")
    print(
        "| operation | frame | ms per frame (median) | reference cvtColor+threshold ms | ratio |"
        "\n|---|---|---:|---:|---:|"
    )
    scene = make_scene(7, 1000.0)
    frame = frames[0] if frames else scene.frame
    geometry = scene.geometry
    ref = time_ms(lambda: reference(frame), 50)
    meas = time_ms(lambda: measure_frontage(frame, geometry), 20)
    print(
        f"| measure_frontage (rectify 10 mm grid, segment, width) | 1920x1080 | {meas:.1f} "
        f"| {ref:.2f} | {meas / ref:.0f}x |"
    )
    cover = time_ms(lambda: snow_cover_fraction(frame), 20)
    print(
        f"| snow_cover_fraction, whole frame | 1920x1080 | {cover:.1f} | {ref:.2f} "
        f"| {cover / ref:.0f}x |"
    )
    if neon_image is not None:
        nref = time_ms(lambda: reference(neon_image), 50)
        ncover = time_ms(lambda: snow_cover_fraction(neon_image), 20)
        print(
            f"| snow_cover_fraction, NEON image | 1296x960 | {ncover:.1f} | {nref:.2f} "
            f"| {ncover / nref:.0f}x |"
        )


def main() -> None:
    """Run the bench and print Markdown tables."""
    parser = argparse.ArgumentParser(description="camera measurement bench")
    parser.add_argument("--scenes", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args()
    data = neon_set() if (NEON / "images").is_dir() else []
    if data:
        neon_accuracy(data)
    else:
        print(f"NEON data not found at {NEON}: snow-cover accuracy skipped")
    frames = width_accuracy(args.scenes, args.seed)
    speed(frames, data[0][1] if data else None)


if __name__ == "__main__":
    main()
