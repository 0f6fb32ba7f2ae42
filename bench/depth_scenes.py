"""Depth maps of one sidewalk joint from a ray caster of its own (it shares
nothing with ``sidewalk.testkit.defect_scenes``).

Two slabs (each its own gently sloped plane, one faulted up or down against
the other) meet at a straight joint of known width: two vertical walls and a
floor 20-60 mm under the lower top. Every pixel's footprint is cut by
``SUB`` x ``SUB`` rays; each ray is intersected exactly with the slab tops,
the walls and the floor, and the pixel reports the *nearest* of its rays'
returns (a pixel straddling an edge sees the nearer surface, as a time-of-
flight or structured-light camera does), along the optical axis, with noise
growing with the square of range, in whole millimetres. The camera is 0.9-1.3
m up, pitched 0-25 degrees from straight down, turned at random about the
vertical (so the joint runs at any angle across the image), one of two
sensors (1280 x 720 at f 900 px, or 848 x 480 at f 430-600 px: about 1-2.5
mm a pixel on the walk). The truth is exact: the joint's width across it,
and its step.

    uv run python bench/depth_scenes.py --seed 3
"""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

F64 = NDArray[np.float64]

SUB = 4  # rays per pixel side


@dataclass(frozen=True)
class DepthScene:
    """One rendered depth map and its truth (world: z up, mm)."""

    depth: NDArray[np.uint16]
    fx: float
    fy: float
    cx: float
    cy: float
    gap_mm: float  # wall to wall, horizontal, across the joint
    step_mm: float  # top of slab B minus top of slab A at the joint
    joint_point: F64  # world point on the joint's centre line (z = 0)
    joint_normal: F64  # horizontal unit normal, from slab A toward slab B
    camera_center: F64
    rotation: F64  # rows: camera x, y, z axes in world coordinates
    footprint_mm: float  # ground length of one pixel across the joint at its middle
    seed: int
    top_a: tuple[float, float, float] = (0.0, 0.0, 0.0)  # z = c0 + cx x + cy y, slab A
    top_b: tuple[float, float, float] = (0.0, 0.0, 0.0)  # slab B

    def step_at(self, p: F64) -> float:
        """Slab B's top minus slab A's at the walk point ``p`` (x, y)."""
        a, b = self.top_a, self.top_b
        return float((b[0] - a[0]) + (b[1] - a[1]) * p[0] + (b[2] - a[2]) * p[1])

    def world_to_camera(self, p: F64) -> F64:
        out: F64 = (np.asarray(p, float) - self.camera_center) @ self.rotation.T
        return out


def render(  # noqa: PLR0915 - one scene, camera and sensor, in order
    seed: int,
    gap_range_mm: tuple[float, float] = (3.0, 60.0),
    *,
    sub: int = SUB,
    noise: float = 1.0,
) -> DepthScene:
    """The depth scene of ``seed`` (``sub`` rays a pixel side, noise scaled by ``noise``)."""
    rng = np.random.default_rng(seed)
    if rng.uniform() < 0.5:
        w, h, fx = 1280, 720, 900.0
    else:
        w, h, fx = 848, 480, float(rng.uniform(430.0, 600.0))
    fy = fx * float(rng.uniform(0.998, 1.002))
    cx = w / 2 + float(rng.uniform(-8, 8))
    cy = h / 2 + float(rng.uniform(-6, 6))
    height = float(rng.uniform(900.0, 1300.0))
    pitch = math.radians(float(rng.uniform(0.0, 25.0)))
    yaw = float(rng.uniform(0.0, 2 * math.pi))
    roll = math.radians(float(rng.uniform(-3.0, 3.0)))
    # Camera axes (x right, y down, z forward) in the world, straight down first.
    x0 = np.array([1.0, 0.0, 0.0])
    y0 = np.array([0.0, -1.0, 0.0])
    z0 = np.array([0.0, 0.0, -1.0])

    def rot(axis: F64, ang: float, v: F64) -> F64:
        axis = axis / np.linalg.norm(axis)
        return (
            v * math.cos(ang)
            + np.cross(axis, v) * math.sin(ang)
            + axis * (axis @ v) * (1 - math.cos(ang))
        )

    axes = [rot(z0, roll, a) for a in (x0, y0, z0)]
    axes = [rot(axes[0], pitch, a) for a in axes]
    up = np.array([0.0, 0.0, 1.0])
    axes = [rot(up, yaw, a) for a in axes]
    r = np.stack(axes)  # rows: camera axes in world
    # The optical axis meets the walk within 150 mm of the joint's centre line.
    theta = float(rng.uniform(0.0, math.pi))
    normal = np.array([math.cos(theta), math.sin(theta), 0.0])
    joint_pt = np.zeros(3)
    target = joint_pt + normal * float(rng.uniform(-150, 150))
    target += np.array([-normal[1], normal[0], 0.0]) * float(rng.uniform(-150, 150))
    zc = r[2]
    center = target - zc * (height / -zc[2])
    gap = float(rng.uniform(*gap_range_mm))
    step = float(rng.choice([0.0, 1.0])) * float(rng.uniform(-25.0, 25.0))
    floor_depth = float(rng.uniform(20.0, 60.0))
    # Slab tops: z = c0 + cx * x + cy * y (slopes to 2 %).
    sa = rng.uniform(-0.02, 0.02, 2)
    sb = sa + rng.uniform(-0.004, 0.004, 2)
    ca = 0.0
    # B's top at the joint point's foot is ``step`` above A's.
    cb = step
    floor_z = min(ca, cb) - floor_depth
    noise0 = float(rng.uniform(0.3, 1.0))
    noise2 = float(rng.uniform(0.5, 1.5))

    # Sub-ray directions (camera frame, z = 1) for the whole frame, by rows.
    depth = np.zeros((h, w), np.float64)
    offs = (np.arange(sub) + 0.5) / sub - 0.5
    us = np.arange(w)[None, :, None, None] + offs[None, None, None, :]
    for r0 in range(0, h, 60):
        rows = np.arange(r0, min(h, r0 + 60))
        vs = rows[:, None, None, None] + offs[None, None, :, None]
        dx = np.broadcast_to((us - cx) / fx, (len(rows), w, sub, sub))
        dy = np.broadcast_to((vs - cy) / fy, (len(rows), w, sub, sub))
        d = dx[..., None] * r[0] + dy[..., None] * r[1] + r[2]  # world, camera z = 1
        t = _cast(center, d, normal, gap=gap, top_a=(ca, *sa), top_b=(cb, *sb), floor_z=floor_z)
        depth[rows] = t.reshape(len(rows), w, sub * sub).min(axis=2)
    valid = np.isfinite(depth) & (depth > 0)
    z = np.where(valid, depth, 0.0)
    sigma = noise * (noise0 + noise2 * (z / 1000.0) ** 2)
    z = z + rng.normal(0.0, 1.0, z.shape) * sigma
    out = np.where(valid, np.clip(np.rint(z), 1, 65535), 0).astype(np.uint16)
    # One pixel's ground length across the joint at the point under the joint's middle.
    foot = _footprint(center, r, fx=fx, fy=fy, p=joint_pt, n=normal)
    return DepthScene(
        out,
        fx,
        fy,
        cx,
        cy,
        gap,
        step,
        joint_pt,
        normal,
        center,
        r,
        foot,
        seed,
        (ca, float(sa[0]), float(sa[1])),
        (cb, float(sb[0]), float(sb[1])),
    )


def _cast(
    c: F64,
    d: F64,
    n: F64,
    *,
    gap: float,
    top_a: tuple[float, float, float],
    top_b: tuple[float, float, float],
    floor_z: float,
) -> F64:
    """Distance along each ray (in units of its camera-z, i.e. depth) to the
    nearest surface: slab A (u < -gap/2), slab B (u > gap/2), their walls and
    the floor between (u the signed distance across the joint)."""
    dx, dy, dz = d[..., 0], d[..., 1], d[..., 2]
    uc = c[0] * n[0] + c[1] * n[1]
    du = dx * n[0] + dy * n[1]
    best = np.full(dx.shape, np.inf)

    def take(t: F64, ok: NDArray[np.bool_]) -> None:
        np.minimum(best, np.where(ok & (t > 0), t, np.inf), out=best)

    with np.errstate(divide="ignore", invalid="ignore"):
        for (k0, kx, ky), side in ((top_a, -1.0), (top_b, 1.0)):
            den = dz - kx * dx - ky * dy
            t = (k0 + kx * c[0] + ky * c[1] - c[2]) / den
            u = uc + t * du
            take(t, side * u > gap / 2)
            # The slab's wall at u = side * gap / 2, from the floor to its top.
            tw = (side * gap / 2 - uc) / du
            px, py, pz = c[0] + tw * dx, c[1] + tw * dy, c[2] + tw * dz
            take(tw, (pz >= floor_z) & (pz <= k0 + kx * px + ky * py))
        t = (floor_z - c[2]) / dz
        u = uc + t * du
        take(t, np.abs(u) <= gap / 2)
    return best


def _footprint(c: F64, r: F64, *, fx: float, fy: float, p: F64, n: F64) -> float:
    """Ground mm per pixel along ``n`` at the walk point ``p``."""

    def px(q: F64) -> F64:
        v = r @ (q - c)
        return np.array([fx * v[0] / v[2], fy * v[1] / v[2]])

    return 1.0 / float(np.linalg.norm(px(p + n * 0.5) - px(p - n * 0.5)))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    s = render(args.seed)
    print(
        f"seed {s.seed}: {s.depth.shape[1]} x {s.depth.shape[0]}, gap {s.gap_mm:.2f} mm,"
        f" step {s.step_mm:.2f} mm, footprint {s.footprint_mm:.2f} mm/px,"
        f" valid {np.mean(s.depth > 0):.0%}"
    )


if __name__ == "__main__":
    main()
