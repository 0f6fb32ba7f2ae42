"""Phone photos of a sidewalk joint with a 100 mm ArUco survey marker, from a
renderer of its own (it shares nothing with ``sidewalk.testkit.defect_scenes``).

Each photo is traced per pixel: every (supersampled) image pixel's ray is cut
with the walk plane and the walk's appearance is evaluated there: two
concrete slabs (tint, blotches, aggregate speckle, pores), the joint between
them (a dark band of known width with ragged edges, a rounded arris either
side), stains, a shadow band (a post or a pole) and a soft building shadow,
and the marker on its white sheet. The camera is a 1080p phone held 1.1-1.7 m
up, pitched 28-60 degrees down, turned and rolled at random, standing far
enough back that the marker is 35-80 px across (the photos the gauge is for).
Light is linear; blur (lens and a little motion), shot noise, gamma and JPEG
follow. The truth is exact: the joint's width and its centre line in the
marker's own frame (origin at the marker's first corner, x along its first
side, y along its last side reversed, as ArUco orders the corners).

    uv run python bench/joint_photos.py --seed 3 --out /tmp/joint3.jpg
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import cv2
import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]
F32 = NDArray[np.float32]
U8 = NDArray[np.uint8]

WIDTH, HEIGHT = 1920, 1080
MARKER_MM = 100.0
DICTIONARY = cv2.aruco.DICT_4X4_50


@dataclass(frozen=True)
class JointPhoto:
    """One rendered photo and its truth."""

    image: U8  # BGR
    matrix: F64  # camera intrinsics (no distortion)
    gap_mm: float  # the joint's true width, across it on the walk
    marker_side_px: float  # mean side of the marker in the image
    ground_to_image: F64  # walk mm (world frame) -> pixels
    marker_to_world: F64  # 3x3: marker frame mm -> world mm
    joint_point_world: F64  # a point on the joint's centre line
    joint_dir_world: F64  # unit direction of the joint
    marker_id: int
    seed: int

    def joint_in_marker_frame(self) -> tuple[F64, F64]:
        """A point on the joint's centre line and its direction, marker frame (mm)."""
        inv = np.linalg.inv(self.marker_to_world)
        p = inv @ np.array([*self.joint_point_world, 1.0])
        d = inv[:2, :2] @ self.joint_dir_world
        return p[:2] / p[2], d / np.linalg.norm(d)


class _Noise:
    """Tileable value noise at one scale, looked up by ground millimetres."""

    def __init__(
        self, rng: np.random.Generator, mm_per_cell: float, size: int = 512, blur: float = 1.5
    ):
        raw = rng.standard_normal((size, size)).astype(np.float32)
        pad = int(4 * blur) + 2
        field = np.asarray(
            cv2.GaussianBlur(np.pad(raw, pad, mode="wrap"), (0, 0), blur)[pad:-pad, pad:-pad],
            np.float32,
        )
        self.field = (field / (field.std() + 1e-9)).astype(np.float32)
        self.cell = mm_per_cell
        self.size = size

    def __call__(self, x: F32, y: F32) -> F32:
        u = np.mod(x / self.cell, self.size).astype(np.float32)
        v = np.mod(y / self.cell, self.size).astype(np.float32)
        out = cv2.remap(self.field, u, v, cv2.INTER_LINEAR, borderMode=cv2.BORDER_WRAP)
        return np.asarray(out, np.float32)


def _camera(rng: np.random.Generator, target_side_px: float) -> tuple[F64, F64, F64]:
    """Intrinsics, world-to-camera rotation and camera centre, with the marker
    (about the world origin) near the image's middle and ``target_side_px`` across."""
    hfov = math.radians(rng.uniform(62.0, 72.0))
    f = WIDTH / 2 / math.tan(hfov / 2)
    cx, cy = WIDTH / 2 + rng.uniform(-8, 8), HEIGHT / 2 + rng.uniform(-8, 8)
    k = np.array([[f, 0, cx], [0, f, cy], [0, 0, 1]])
    h = rng.uniform(1100.0, 1700.0)
    # Slant range r for the side wanted: about f * side / r, foreshortened by
    # sqrt(sin(elevation)) (one side along the view, one across it).
    r = 2.0 * h
    for _ in range(30):
        r = f * MARKER_MM / target_side_px * math.sqrt(min(1.0, h / r))
        r = max(r, 1.05 * h)
    yaw = rng.uniform(0, 2 * math.pi)
    fwd = np.array([math.sin(yaw), math.cos(yaw), 0.0])
    centre = np.array([0.0, 0.0, h]) - math.sqrt(r**2 - h**2) * fwd
    d = -centre / np.linalg.norm(centre)
    right = np.cross(d, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(d, right)
    # Aim a little off the marker so it is not always centred.
    d = (
        d
        - rng.uniform(-0.25, 0.25) * WIDTH / f * right
        - rng.uniform(-0.2, 0.2) * HEIGHT / f * down
    )
    d /= np.linalg.norm(d)
    right = np.cross(d, [0.0, 0.0, 1.0])
    right /= np.linalg.norm(right)
    down = np.cross(d, right)
    roll = math.radians(rng.uniform(-6.0, 6.0))
    c, s = math.cos(roll), math.sin(roll)
    right, down = c * right + s * down, -s * right + c * down
    rot = np.stack([right, down, d])
    return k, rot, centre


def _marker_texture(marker_id: int) -> F32:
    img = cv2.aruco.generateImageMarker(
        cv2.aruco.getPredefinedDictionary(DICTIONARY), marker_id, 600
    )
    return np.asarray(img, np.float32) / 255.0


def render(seed: int, *, supersample: int = 2, joint: bool = True) -> JointPhoto:  # noqa: PLR0915 - one scene, drawn in order
    """One photo from ``seed`` (deterministic); ``joint=False`` leaves the
    slabs unbroken (the same photo otherwise), ``supersample`` 1 is 4 times
    faster for tests."""
    rng = np.random.default_rng(7_700_000 + seed)
    side_target = float(rng.uniform(35.0, 80.0))
    k, rot, centre = _camera(rng, side_target)
    h_g2i = k @ np.column_stack([rot[:, 0], rot[:, 1], -rot @ centre])

    # The marker: first corner at m0, its image's u along world (cos, sin), v along the mirror.
    phi = rng.uniform(0, 2 * math.pi)
    u_dir = np.array([math.cos(phi), math.sin(phi)])
    v_dir = np.array([math.sin(phi), -math.cos(phi)])  # keeps the print unmirrored seen from above
    m0 = -MARKER_MM / 2 * (u_dir + v_dir) + rng.uniform(-20, 20, 2)
    m2w = np.array([[u_dir[0], v_dir[0], m0[0]], [u_dir[1], v_dir[1], m0[1]], [0, 0, 1.0]])
    marker_id = int(rng.integers(0, 50))
    tex = _marker_texture(marker_id)
    sheet = rng.uniform(15.0, 40.0)  # white paper beyond the black square, mm

    # The joint: a straight band 4-50 mm wide passing 110-450 mm from the marker.
    gap = float(rng.choice([rng.uniform(4.0, 50.0), rng.uniform(24.0, 40.0)]))
    theta = rng.uniform(0, math.pi)
    jdir = np.array([math.cos(theta), math.sin(theta)])
    jn = np.array([-jdir[1], jdir[0]])
    off = rng.uniform(110.0, 450.0) * rng.choice([-1.0, 1.0])
    jp = jn * off
    floor = rng.uniform(0.05, 0.3)  # the gap's albedo relative to the slab (dirt, shade)
    arris = rng.uniform(2.0, 8.0)  # rounded edge radius, mm
    arris_dark = rng.uniform(0.0, 0.25)
    rag = rng.uniform(0.1, 0.8)  # ragged edge amplitude, mm

    slab_albedo = rng.uniform(0.35, 0.7)
    slab_tint = rng.uniform(-0.06, 0.06, 2)
    colour = np.array([1.0, 1.0, 1.0]) + rng.uniform(-0.05, 0.05, 3)
    blotch, speck, pores, edge_a, edge_b, dirt = (
        _Noise(rng, 40.0), _Noise(rng, 1.2, blur=0.8), _Noise(rng, 0.9, blur=0.6),
        _Noise(rng, 6.0), _Noise(rng, 6.0), _Noise(rng, 2.0),
    )  # fmt: skip
    blotch_a, speck_a = rng.uniform(0.03, 0.1), rng.uniform(0.04, 0.12)

    stains = [
        (rng.uniform(-900, 900, 2), rng.uniform(15, 90), rng.uniform(0.5, 0.85))
        for _ in range(int(rng.integers(0, 5)))
    ]
    post = None
    if rng.random() < 0.5:  # a post's shadow: a soft band 60-250 mm wide
        a = rng.uniform(0, math.pi)
        post = (
            np.array([math.cos(a), math.sin(a)]),
            rng.uniform(-700, 700),
            rng.uniform(60.0, 250.0),
            rng.uniform(0.35, 0.65),
            rng.uniform(8.0, 40.0),
        )
    building = None
    if rng.random() < 0.5:  # a building's shadow edge
        a = rng.uniform(0, 2 * math.pi)
        building = (
            np.array([math.cos(a), math.sin(a)]),
            rng.uniform(-800, 800),
            rng.uniform(0.3, 0.6),
            rng.uniform(20.0, 120.0),
        )
    sun = rng.uniform(0.55, 0.95)
    grad = rng.uniform(-0.15, 0.15, 2) / 1000.0

    # The width's truth is the mean distance between the ragged edges along
    # the stretch near the marker (the raggedness is not zero-mean on one line).
    a_s = np.arange(-1000.0, 1000.0, 0.5, dtype=np.float32)[None, :]
    gap_true = gap + rag * float(
        np.mean(edge_b(a_s, np.full_like(a_s, 77.0))) - np.mean(edge_a(a_s, np.zeros_like(a_s)))
    )
    ss = supersample
    h_i2g = np.linalg.inv(h_g2i)
    out = np.zeros((HEIGHT, WIDTH, 3), np.float32)
    strip = 180
    for r0 in range(0, HEIGHT, strip):
        rows = np.arange(r0 * ss, (r0 + strip) * ss, dtype=np.float64)
        cols = np.arange(WIDTH * ss, dtype=np.float64)
        uu, vv = np.meshgrid((cols + 0.5) / ss - 0.5, (rows + 0.5) / ss - 0.5)
        den = h_i2g[2, 0] * uu + h_i2g[2, 1] * vv + h_i2g[2, 2]
        sky = den <= 1e-12
        den = np.where(sky, 1.0, den)
        x = (h_i2g[0, 0] * uu + h_i2g[0, 1] * vv + h_i2g[0, 2]) / den
        y = (h_i2g[1, 0] * uu + h_i2g[1, 1] * vv + h_i2g[1, 2]) / den
        x32, y32 = x.astype(np.float32), y.astype(np.float32)
        s_across = (x - jp[0]) * jn[0] + (y - jp[1]) * jn[1]
        s_along = ((x - jp[0]) * jdir[0] + (y - jp[1]) * jdir[1]).astype(np.float32)
        side = s_across > 0
        alb = slab_albedo * (1 + np.where(side, slab_tint[0], slab_tint[1]))
        alb = alb * (1 + blotch_a * blotch(x32, y32)) * (1 + speck_a * speck(x32, y32))
        alb = alb * np.where(pores(x32 + 500, y32) > 2.3, 0.5, 1.0)
        # The joint: ragged edges around +-gap/2; the rounded arris a little darker.
        lo = -gap / 2 + rag * edge_a(s_along, np.zeros_like(s_along))
        hi = gap / 2 + rag * edge_b(s_along, np.full_like(s_along, 77.0))
        inside = (s_across > lo) & (s_across < hi) & joint
        near = np.minimum(np.abs(s_across - lo), np.abs(s_across - hi))
        alb = np.where(
            ~inside & (near < arris) & joint, alb * (1 - arris_dark * (1 - near / arris)), alb
        )
        alb = np.where(inside, slab_albedo * floor * (1 + 0.3 * dirt(x32, y32)), alb)
        for c0, rad, a in stains:
            dd = np.hypot(x - c0[0], y - c0[1])
            alb = alb * np.where(dd < rad, a, 1.0)
        light = sun * np.clip(1 + grad[0] * x + grad[1] * y, 0.6, 1.4)
        if post is not None:
            pd, po, pw, pt, pp = post
            sd = np.abs((x * -pd[1] + y * pd[0]) - po) - pw / 2
            light = light * (pt + (1 - pt) * np.clip(0.5 + sd / pp, 0, 1))
        if building is not None:
            bd, bo, bt, bp = building
            sd = x * bd[0] + y * bd[1] - bo
            light = light * (bt + (1 - bt) * np.clip(0.5 + sd / bp, 0, 1))
        # The marker and its sheet (over everything but the light).
        rel = np.stack([x - m0[0], y - m0[1]], -1)
        mu = rel @ u_dir
        mv = rel @ v_dir
        on_sheet = (
            (mu > -sheet) & (mu < MARKER_MM + sheet) & (mv > -sheet) & (mv < MARKER_MM + sheet)
        )
        on_mark = (mu >= 0) & (mu < MARKER_MM) & (mv >= 0) & (mv < MARKER_MM)
        tu = np.clip(mu / MARKER_MM * 600, 0, 599).astype(np.float32)
        tv = np.clip(mv / MARKER_MM * 600, 0, 599).astype(np.float32)
        mark = cv2.remap(tex, tu, tv, cv2.INTER_NEAREST)
        paper = 0.85 * (1 + 0.01 * speck(x32, y32))
        alb = np.where(on_sheet, paper, alb)
        alb = np.where(on_mark, np.where(mark > 0.5, paper, 0.04), alb)
        lin = np.clip(alb * light, 0, 1)
        lin = np.where(sky, 0.9, lin)
        lin = cv2.resize(
            lin.astype(np.float32), (WIDTH, lin.shape[0] // ss), interpolation=cv2.INTER_AREA
        )
        n = min(strip, HEIGHT - r0)
        for ch in range(3):
            out[r0 : r0 + n, :, ch] = lin[:n] * colour[ch]

    # Optics and sensor: lens blur, a little motion, shot noise, gamma, JPEG.
    lin = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.5, 1.2)))
    if rng.random() < 0.4:
        length = int(rng.integers(2, 4))
        ker = np.zeros((length * 2 + 1, length * 2 + 1), np.float32)
        a = rng.uniform(0, math.pi)
        dx, dy = round(length * math.cos(a)), round(length * math.sin(a))
        cv2.line(ker, (length - dx, length - dy), (length + dx, length + dy), 1.0, 1)
        lin = cv2.filter2D(lin, -1, ker / ker.sum())
    exposure = rng.uniform(0.8, 1.1)
    lin = np.clip(lin * exposure, 0, 1)
    noise = rng.standard_normal(lin.shape).astype(np.float32)
    lin = np.clip(lin + noise * np.sqrt(lin * 0.0004 + 0.00002), 0, 1)
    enc = np.clip(255.0 * lin ** (1 / 2.2) + 0.5, 0, 255).astype(np.uint8)
    ok, jpg = cv2.imencode(".jpg", enc, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(70, 93))])
    assert ok
    image = np.asarray(cv2.imdecode(jpg, cv2.IMREAD_COLOR), np.uint8)

    corners_w = np.array(
        [m0, m0 + MARKER_MM * u_dir, m0 + MARKER_MM * (u_dir + v_dir), m0 + MARKER_MM * v_dir]
    )
    px = cv2.perspectiveTransform(corners_w.reshape(-1, 1, 2), h_g2i).reshape(-1, 2)
    side_px = float(np.linalg.norm(px - np.roll(px, -1, 0), axis=1).mean())
    return JointPhoto(
        image=image,
        matrix=k,
        gap_mm=gap_true,
        marker_side_px=side_px,
        ground_to_image=h_g2i,
        marker_to_world=m2w,
        joint_point_world=jp,
        joint_dir_world=jdir,
        marker_id=marker_id,
        seed=seed,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="/tmp/joint.jpg")
    a = ap.parse_args()
    ph = render(a.seed)
    cv2.imwrite(a.out, ph.image)
    print(f"gap {ph.gap_mm:.1f} mm, marker {ph.marker_side_px:.0f} px -> {a.out}")


if __name__ == "__main__":
    main()
