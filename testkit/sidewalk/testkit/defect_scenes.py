"""Synthetic sidewalk scenes with exact known geometry (the ground truth).

World frame, millimetres: x runs along the walk in survey direction, y across
it (y = 0 is the curb-side edge, y = walk width the property side), z is up
(against gravity). Blocks are planes separated by joints: straight tooled
joints with rounded edges, or meandering sharp-edged cracks. Each joint has a
gap (perpendicular opening between the two vertical faces), a fault (height of
the block after minus the block before, at the joint's mid-point) and a floor.
Spalls are elliptical bowls inside blocks. Outside the walk is rough turf.

Renderers for a depth camera, a survey photo and a laser-line image of the
same scene live here too, so tests and benchmarks share one truth.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from sidewalk.analytics.defects.results import EdgeType
from sidewalk.analytics.defects.surface import SurfaceParams

F64 = NDArray[np.float64]

# Label values of the surface map besides block indices.
GAP = -1
TURF = -2


@dataclass(frozen=True, slots=True)
class JointTruth:
    """A joint between block ``index`` and block ``index + 1``."""

    index: int
    station_mm: float  # x of the joint centre line at mid-walk
    skew_rad: float
    kind: EdgeType
    gap_mm: float
    fault_mm: float  # at mid-walk: block after minus block before
    edge_radius_mm: float  # tooled rounding; 0 for cracks
    meander_amplitude_mm: float
    meander_wavelength_mm: float
    meander_phase_rad: float
    floor_depth_mm: float  # gap floor below the lower block


@dataclass(frozen=True, slots=True)
class SpallTruth:
    """An elliptical bowl: drop = depth * (1 - r^2) ** exponent for r <= 1."""

    block: int
    center_x_mm: float
    center_y_mm: float
    semi_a_mm: float
    semi_b_mm: float
    angle_rad: float
    depth_mm: float
    exponent: float

    def area_deeper_than(self, threshold_mm: float) -> float:
        """Plan area (mm^2) where the bowl is at least ``threshold_mm`` deep."""
        if threshold_mm >= self.depth_mm:
            return 0.0
        frac = 1.0 - (threshold_mm / self.depth_mm) ** (1.0 / self.exponent)
        return float(math.pi * self.semi_a_mm * self.semi_b_mm * frac)


@dataclass(frozen=True, slots=True)
class BlockTruth:
    """Block ``index``: z = z0 + slope_x * (x - center_x) + cross_slope * (y - w/2)."""

    index: int
    z0_mm: float
    center_x_mm: float
    slope_x: float


@dataclass(frozen=True, slots=True)
class SidewalkScene:
    """A walk of several blocks with exactly known geometry."""

    walk_width_mm: float
    cross_slope: float  # mm per mm, positive = falls toward the curb (y = 0)
    blocks: tuple[BlockTruth, ...]
    joints: tuple[JointTruth, ...]
    spalls: tuple[SpallTruth, ...]
    turf_drop_mm: float
    seed: int

    def block_height(self, block: int, x: F64, y: F64) -> F64:
        """Height of block ``block``'s top plane at (x, y)."""
        b = self.blocks[block]
        out: F64 = (
            b.z0_mm
            + b.slope_x * (x - b.center_x_mm)
            + self.cross_slope * (y - self.walk_width_mm / 2)
        )
        return out

    def joint_center_x(self, joint: JointTruth, y: F64) -> F64:
        """x of the joint's centre line at each y."""
        yc = y - self.walk_width_mm / 2
        out: F64 = (
            joint.station_mm
            + math.tan(joint.skew_rad) * yc
            + joint.meander_amplitude_mm
            * np.sin(2 * math.pi * yc / joint.meander_wavelength_mm + joint.meander_phase_rad)
        )
        return out

    def fault_at(self, joint: JointTruth, y: float) -> float:
        """True signed vertical differential at the joint, at across-walk position y."""
        ya = np.array([y])
        x = self.joint_center_x(joint, ya)
        return float(
            (self.block_height(joint.index + 1, x, ya) - self.block_height(joint.index, x, ya))[0]
        )

    def max_abs_fault(self, joint: JointTruth, y_lo: float, y_hi: float) -> float:
        """Largest true |differential| along the joint between y_lo and y_hi."""
        ys = np.linspace(y_lo, y_hi, 200)
        return max(abs(self.fault_at(joint, float(v))) for v in ys)

    def surface(self, x: F64, y: F64) -> tuple[F64, NDArray[np.int32]]:
        """Height (mm) and label (block index, GAP or TURF) at each (x, y).

        ``x`` and ``y`` may be any shapes that broadcast (a grid's row of x and
        column of y): what depends on y alone is then computed once per row,
        with the same values as on the full grid.
        """
        w = self.walk_width_mm
        shape = np.broadcast_shapes(x.shape, y.shape)
        label = np.zeros(shape, np.int32)
        dxs = []
        for j in self.joints:
            dx = x - self.joint_center_x(j, y)
            dxs.append(dx)
            label += (dx > 0).astype(np.int32)
        gx, gy = x, y  # as given: the spalls' and the turf's arithmetic broadcasts
        x, y = np.broadcast_to(x, shape), np.broadcast_to(y, shape)
        h = np.zeros(shape, np.float64)
        for b in self.blocks:
            sel = label == b.index
            h[sel] = self.block_height(b.index, x[sel], y[sel])
        for j, dx in zip(self.joints, dxs, strict=True):
            cos = math.cos(j.skew_rad)
            # Perpendicular distance from the nearer face; the faces are offset
            # along x by half the gap over cos(skew) so the opening is gap_mm.
            e = np.abs(dx) * cos - j.gap_mm / 2
            if j.edge_radius_mm > 0:
                r = j.edge_radius_mm
                near = (e >= 0) & (e < r)
                h[near] -= r - np.sqrt(np.maximum(r * r - (r - e[near]) ** 2, 0.0))
            gap = e < 0
            if gap.any():
                lo = np.minimum(
                    self.block_height(j.index, x[gap], y[gap]),
                    self.block_height(j.index + 1, x[gap], y[gap]),
                )
                h[gap] = lo - j.floor_depth_mm
                label[gap] = GAP
        for s in self.spalls:
            ca, sa = math.cos(s.angle_rad), math.sin(s.angle_rad)
            u = ((gx - s.center_x_mm) * ca + (gy - s.center_y_mm) * sa) / s.semi_a_mm
            v = (-(gx - s.center_x_mm) * sa + (gy - s.center_y_mm) * ca) / s.semi_b_mm
            r2 = u * u + v * v
            inside = (r2 < 1) & (label == s.block)
            h[inside] -= s.depth_mm * (1 - r2[inside]) ** s.exponent
        turf = np.broadcast_to((gy < 0) | (gy > w), shape)
        if turf.any():
            yy = np.clip(y[turf], 0, w)
            base = self.cross_slope * (yy - w / 2) + float(np.mean([b.z0_mm for b in self.blocks]))
            h[turf] = base - self.turf_drop_mm + _roughness(x[turf], y[turf], self.seed, 6.0)
            label[turf] = TURF
        return h, label


def _roughness(x: F64, y: F64, seed: int, amplitude_mm: float) -> F64:
    """Deterministic band-limited roughness (sum of random plane waves)."""
    rng = np.random.default_rng(seed + 7919)
    out = np.zeros(x.shape)
    for _ in range(8):
        wl = rng.uniform(8.0, 60.0)
        th = rng.uniform(0, math.pi)
        ph = rng.uniform(0, 2 * math.pi)
        out += np.sin(2 * math.pi * (x * math.cos(th) + y * math.sin(th)) / wl + ph)
    result: F64 = out * (amplitude_mm / math.sqrt(8))
    return result


def random_scene(
    rng: np.random.Generator,
    *,
    n_blocks: int = 4,
    fault_range_mm: tuple[float, float] = (-35.0, 35.0),
    gap_range_mm: tuple[float, float] = (1.0, 45.0),
    crack_fraction: float = 0.4,
    spalls_per_block: tuple[int, int] = (0, 2),
    spall_depth_range_mm: tuple[float, float] = (2.0, 25.0),
    sawn_fraction: float = 0.0,
) -> SidewalkScene:
    """Draw a scene with wide parameter ranges (not tuned to any algorithm).

    ``sawn_fraction`` of the straight joints are sawn: straight like a tooled
    joint but with sharp (unrounded) edges. The default draws none, so
    scenes of earlier seeds are unchanged."""
    width = rng.uniform(1000.0, 2000.0)
    lengths = rng.uniform(900.0, 1800.0, n_blocks)
    edges = np.concatenate([[0.0], np.cumsum(lengths)])
    joints: list[JointTruth] = []
    for i in range(n_blocks - 1):
        crack = rng.uniform() < crack_fraction
        sawn = not crack and sawn_fraction > 0 and rng.uniform() < sawn_fraction
        joints.append(
            JointTruth(
                index=i,
                station_mm=float(edges[i + 1]),
                skew_rad=math.radians(rng.uniform(-6.0, 6.0)),
                kind=EdgeType.CRACK if crack else EdgeType.TOOLED_JOINT,
                gap_mm=float(rng.uniform(*gap_range_mm)),
                fault_mm=float(rng.uniform(*fault_range_mm)),
                edge_radius_mm=0.0 if crack or sawn else float(rng.uniform(3.0, 12.7)),
                meander_amplitude_mm=float(rng.uniform(3.0, 12.0)) if crack else 0.0,
                meander_wavelength_mm=float(rng.uniform(250.0, 700.0)),
                meander_phase_rad=float(rng.uniform(0, 2 * math.pi)),
                floor_depth_mm=float(rng.uniform(30.0, 100.0)),
            )
        )
    cross = float(rng.uniform(0.0, 0.04))
    slopes = rng.uniform(-0.01, 0.01, n_blocks)
    centers = (edges[:-1] + edges[1:]) / 2
    z0 = [0.0]
    for i, j in enumerate(joints):
        # Block i+1's z0 is chosen so the fault at mid-walk is exactly j.fault_mm.
        xj = j.station_mm
        zi = z0[i] + slopes[i] * (xj - centers[i])
        z0.append(zi + j.fault_mm - slopes[i + 1] * (xj - centers[i + 1]))
    blocks = tuple(
        BlockTruth(i, float(z0[i]), float(centers[i]), float(slopes[i])) for i in range(n_blocks)
    )
    spalls: list[SpallTruth] = []
    for b in range(n_blocks):
        for _ in range(int(rng.integers(spalls_per_block[0], spalls_per_block[1] + 1))):
            a = float(rng.uniform(40.0, 150.0))
            bb = float(rng.uniform(40.0, a))
            margin = a + 80.0
            lo, hi = edges[b] + margin, edges[b + 1] - margin
            if hi <= lo or width - 2 * margin <= 0:
                continue
            cand = SpallTruth(
                block=b,
                center_x_mm=float(rng.uniform(lo, hi)),
                center_y_mm=float(rng.uniform(margin, width - margin)),
                semi_a_mm=a,
                semi_b_mm=bb,
                angle_rad=float(rng.uniform(0, math.pi)),
                depth_mm=float(rng.uniform(*spall_depth_range_mm)),
                exponent=float(rng.uniform(0.3, 1.0)),
            )
            if all(
                math.hypot(cand.center_x_mm - o.center_x_mm, cand.center_y_mm - o.center_y_mm)
                > cand.semi_a_mm + o.semi_a_mm + 60
                for o in spalls
            ):
                spalls.append(cand)
    return SidewalkScene(
        walk_width_mm=float(width),
        cross_slope=cross,
        blocks=blocks,
        joints=tuple(joints),
        spalls=tuple(spalls),
        turf_drop_mm=float(rng.uniform(20.0, 60.0)),
        seed=int(rng.integers(0, 2**31 - 1)),
    )


@dataclass(frozen=True, slots=True, eq=False)
class Camera:
    """Pinhole camera with OpenCV distortion, placed in the world.

    ``rotation`` maps world to camera coordinates (x right, y down, z forward);
    ``center_mm`` is the projection centre in the world.
    """

    width: int
    height: int
    matrix: F64  # 3x3 intrinsics
    distortion: F64  # k1, k2, p1, p2, k3
    rotation: F64
    center_mm: F64

    def world_to_camera(self, p: F64) -> F64:
        """N x 3 world points to camera coordinates."""
        # Column-wise products: an (N, 3) @ (3, 3) matmul is far slower in numpy.
        d = [p[:, i] - self.center_mm[i] for i in range(3)]
        r = self.rotation
        out: F64 = np.stack([r[k, 0] * d[0] + r[k, 1] * d[1] + r[k, 2] * d[2] for k in range(3)], 1)
        return out

    def camera_to_world(self, p: F64) -> F64:
        """N x 3 camera points to world coordinates."""
        out: F64 = p @ self.rotation + self.center_mm
        return out


def look_down_camera(
    *,
    width: int,
    height: int,
    focal_px: float,
    center_mm: tuple[float, float, float],
    tilt_deg: float = 0.0,
    yaw_deg: float = 0.0,
    roll_deg: float = 0.0,
    distortion: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, 0.0, 0.0),
    pan_deg: float = 0.0,
) -> Camera:
    """A camera looking straight down, then tilted about its x axis (a positive
    tilt looks toward world -y, the curb), panned about its y axis (with no
    yaw a positive pan looks toward world +x, along the walk), turned (yaw)
    and rolled."""
    # Looking down: camera x = world +x, camera y = world -y, camera z = world -z.
    base = np.array([[1.0, 0, 0], [0, -1.0, 0], [0, 0, -1.0]])
    t, yw, rl = (math.radians(v) for v in (tilt_deg, yaw_deg, roll_deg))
    rx = np.array([[1, 0, 0], [0, math.cos(t), -math.sin(t)], [0, math.sin(t), math.cos(t)]])
    rz = np.array([[math.cos(yw), -math.sin(yw), 0], [math.sin(yw), math.cos(yw), 0], [0, 0, 1]])
    rr = np.array([[math.cos(rl), -math.sin(rl), 0], [math.sin(rl), math.cos(rl), 0], [0, 0, 1]])
    pn = math.radians(pan_deg)
    ry = np.array([[math.cos(pn), 0, -math.sin(pn)], [0, 1, 0], [math.sin(pn), 0, math.cos(pn)]])
    rot = rr @ ry @ rx @ base @ rz
    k = np.array([[focal_px, 0, width / 2 - 0.5], [0, focal_px, height / 2 - 0.5], [0, 0, 1]])
    return Camera(width, height, k, np.array(distortion, float), rot, np.array(center_mm, float))


def ground_footprint(camera: Camera, z_mm: float = 0.0) -> tuple[float, float, float, float]:
    """World x/y bounding box of what the camera sees on the plane z = z_mm."""
    u = np.array([0, camera.width, 0, camera.width], float)
    v = np.array([0, 0, camera.height, camera.height], float)
    rays = _pixel_rays(camera, u, v)
    t = (z_mm - camera.center_mm[2]) / rays[:, 2]
    pts = camera.center_mm + rays * t[:, None]
    return (
        float(pts[:, 0].min()),
        float(pts[:, 0].max()),
        float(pts[:, 1].min()),
        float(pts[:, 1].max()),
    )


def _pixel_rays(camera: Camera, u: F64, v: F64) -> F64:
    """World-frame ray directions (unnormalised) through distorted pixels."""
    pts = np.stack([u, v], -1).reshape(-1, 1, 2).astype(np.float64)
    und = cv2.undistortPoints(pts, camera.matrix, camera.distortion).reshape(-1, 2)
    d_cam = np.concatenate([und, np.ones((len(und), 1))], 1)
    out: F64 = d_cam @ camera.rotation
    return out


# render_depth splats the height field two samples a pixel and sees no
# vertical wall, so a gap there narrows by less than at a camera returning
# the nearest of its pixel's surfaces (the SurfaceParams default): measure
# its maps with this (0.39 footprint as chosen on its tuning seeds 1000-1039,
# about 0.3 pixel extent).
RENDER_DEPTH_PARAMS = SurfaceParams(
    gap_fattening_mm=0.0,
    gap_fattening_px=0.3,
    gap_sigma_cells=0.1,
    gap_sigma_px=0.82,
    gap_sigma_mm=0.0,
)


def render_depth(
    scene: SidewalkScene,
    camera: Camera,
    rng: np.random.Generator,
    *,
    noise_mm: float = 1.0,
    noise_per_m2_mm: float = 1.0,
    oversample: float = 2.0,
) -> NDArray[np.uint16]:
    """Depth map (uint16 millimetres along the optical axis, 0 = no return).

    The height field is sampled finer than a pixel and z-buffered, so occlusion
    at faulted joints and gaps is right; noise grows with the square of range
    as it does for stereo and structured-light cameras.
    """
    x0, x1, y0, y1 = ground_footprint(camera, -150.0)
    xa, xb, ya, yb = ground_footprint(camera, 100.0)
    x0, x1, y0, y1 = min(x0, xa), max(x1, xb), min(y0, ya), max(y1, yb)
    gsd = float(np.linalg.norm(camera.center_mm[2])) / camera.matrix[0, 0]
    step = gsd / oversample
    xs = np.arange(x0, x1, step)
    ys = np.arange(y0, y1, step)
    depth = np.full(camera.height * camera.width, np.inf)
    # Rows in chunks keep memory bounded on big footprints. The grid's x is one
    # row and its y one column: the arithmetic on either alone is done once
    # (the same values, element by element, as world_to_camera on the full grid).
    gx, d0 = xs[None, :], xs[None, :] - camera.center_mm[0]
    r = camera.rotation
    for r0 in range(0, len(ys), 256):
        gy = ys[r0 : r0 + 256, None]
        h, _ = scene.surface(gx, gy)
        d1, d2 = gy - camera.center_mm[1], h - camera.center_mm[2]
        pc = np.stack([(r[k, 0] * d0 + r[k, 1] * d1 + r[k, 2] * d2).ravel() for k in range(3)], 1)
        z = pc[:, 2]
        ok = z > 1
        uv = _project(camera, pc[ok])
        ui = np.floor(uv[:, 0] + 0.5).astype(np.int64)  # pixel centres are integers
        vi = np.floor(uv[:, 1] + 0.5).astype(np.int64)
        inb = (ui >= 0) & (ui < camera.width) & (vi >= 0) & (vi < camera.height)
        np.minimum.at(depth, vi[inb] * camera.width + ui[inb], z[ok][inb])
    depth2 = depth.reshape(camera.height, camera.width)
    valid = np.isfinite(depth2)
    z = np.where(valid, depth2, 0.0)
    sigma = noise_mm + noise_per_m2_mm * (z / 1000.0) ** 2
    z = z + rng.normal(0, 1, z.shape) * sigma
    out = np.where(valid, np.clip(np.rint(z), 1, 65535), 0).astype(np.uint16)
    return out


def _project(camera: Camera, pc: F64) -> F64:
    """Camera-frame points to distorted pixel coordinates."""
    if not np.any(camera.distortion):
        k = camera.matrix
        out: F64 = np.stack(
            [k[0, 0] * pc[:, 0] / pc[:, 2] + k[0, 2], k[1, 1] * pc[:, 1] / pc[:, 2] + k[1, 2]], 1
        )
        return out
    img, _ = cv2.projectPoints(
        pc.reshape(-1, 1, 3), np.zeros(3), np.zeros(3), camera.matrix, camera.distortion
    )
    res: F64 = np.asarray(img, np.float64).reshape(-1, 2)
    return res


def depth_survey_camera(scene: SidewalkScene, rng: np.random.Generator, joint: int = 0) -> Camera:
    """A depth camera at the documented survey geometry, centred on a joint.

    0.9 to 1.3 m above the walk, tilted up to 20 degrees, turned up to 10
    degrees, 1280 x 720 with a 900 px focal length (about 71 degrees across).
    """
    j = scene.joints[joint]
    return look_down_camera(
        width=1280,
        height=720,
        focal_px=900.0,
        center_mm=(
            j.station_mm + float(rng.uniform(-250, 250)),
            scene.walk_width_mm / 2 + float(rng.uniform(-150, 150)),
            float(rng.uniform(900.0, 1300.0)),
        ),
        tilt_deg=float(rng.uniform(-20, 20)),
        yaw_deg=float(rng.uniform(-10, 10)),
        roll_deg=float(rng.uniform(-5, 5)),
    )


def optical_axis_ground_point(camera: Camera, z_mm: float = 0.0) -> tuple[float, float]:
    """World (x, y) where the optical axis meets the plane z = z_mm."""
    axis = camera.rotation.T @ np.array([0.0, 0.0, 1.0])
    t = (z_mm - camera.center_mm[2]) / axis[2]
    p = camera.center_mm + t * axis
    return float(p[0]), float(p[1])


def depth_camera_beyond(
    scene: SidewalkScene,
    rng: np.random.Generator,
    joint: int = 0,
    *,
    max_pitch_deg: float = 30.0,
    joint_along_image_x: bool | None = None,
) -> tuple[Camera, bool]:
    """A depth camera beyond the documented survey geometry, aimed at a joint.

    1280 x 720, 900 px focal length, 0.9 to 1.3 m above the walk; pitched
    along the walk up to ``max_pitch_deg`` (either way), tilted across it up
    to 20 degrees, rolled up to 5. With ``joint_along_image_x`` (drawn with
    even odds when None) the camera is turned 90 degrees (+-10) so the walk
    runs up the image and the joint along the image's x axis (the survey
    direction, world +x, is then image up); otherwise it is turned up to
    10 degrees (the walk along image x). The optical axis meets the walk
    within 200 mm of the joint. Returns the camera and whether the joint
    runs along image x.
    """
    along_x = bool(rng.uniform() < 0.5) if joint_along_image_x is None else joint_along_image_x
    j = scene.joints[joint]
    yaw = (90.0 if along_x else 0.0) + float(rng.uniform(-10, 10))
    pitch = float(rng.uniform(-max_pitch_deg, max_pitch_deg))
    across = float(rng.uniform(-20, 20))
    # With the camera turned, its x axis is across the walk: pitch (along the
    # walk) is then a tilt about it, and the tilt across a pan.
    tilt, pan = (pitch, across) if along_x else (across, pitch)
    hgt = float(rng.uniform(900.0, 1300.0))
    y_aim = scene.walk_width_mm / 2 + float(rng.uniform(-150, 150))
    x_aim = float(scene.joint_center_x(j, np.array([y_aim]))[0]) + float(rng.uniform(-200, 200))
    cam = look_down_camera(
        width=1280,
        height=720,
        focal_px=900.0,
        center_mm=(x_aim, y_aim, hgt),
        tilt_deg=tilt,
        pan_deg=pan,
        yaw_deg=yaw,
        roll_deg=float(rng.uniform(-5, 5)),
    )
    z0 = float(np.mean([b.z0_mm for b in scene.blocks]))
    gx, gy = optical_axis_ground_point(cam, z0)
    moved = np.array([x_aim - (gx - x_aim), y_aim - (gy - y_aim), hgt])
    cam = Camera(cam.width, cam.height, cam.matrix, cam.distortion, cam.rotation, moved)
    return cam, along_x


@dataclass(frozen=True, slots=True)
class MarkerPlacement:
    """An ArUco marker lying on the walk. Marker frame (x right, y down in the
    marker image) maps to the world as origin + x * (cos a, sin a) + y * (sin a, -cos a)."""

    origin_x_mm: float
    origin_y_mm: float
    angle_rad: float
    side_mm: float
    marker_id: int = 0
    dictionary: int = 0  # cv2.aruco.DICT_4X4_50
    # Not lying flat: turned about its own x axis through its centre (its
    # far edge up) and raised by ``lift_mm`` (on a lump of snow, a stone).
    tilt_deg: float = 0.0
    lift_mm: float = 0.0

    def marker_to_world(self, pts: F64) -> F64:
        """N x 2 marker-frame millimetres to world x, y."""
        ca, sa = math.cos(self.angle_rad), math.sin(self.angle_rad)
        x = self.origin_x_mm + pts[:, 0] * ca + pts[:, 1] * sa
        y = self.origin_y_mm + pts[:, 0] * sa - pts[:, 1] * ca
        out: F64 = np.stack([x, y], 1)
        return out

    def world_to_marker(self, pts: F64) -> F64:
        """N x 2 world x, y to marker-frame millimetres."""
        ca, sa = math.cos(self.angle_rad), math.sin(self.angle_rad)
        dx = pts[:, 0] - self.origin_x_mm
        dy = pts[:, 1] - self.origin_y_mm
        out: F64 = np.stack([dx * ca + dy * sa, dx * sa - dy * ca], 1)
        return out


@dataclass(frozen=True, slots=True)
class PhotoConditions:
    """Nuisances of a survey photo; defaults are a fair day."""

    exposure: float = 1.0
    blur_px: float = 0.8
    motion_px: float = 0.0
    noise: float = 0.01
    leaves: int = 6
    snow_patches: int = 1
    shadow: bool = True


def survey_photo_camera(
    scene: SidewalkScene,
    rng: np.random.Generator,
    joint: int = 0,
    *,
    focal_px: float | None = None,
) -> Camera:
    """A hand-held survey photo at the documented geometry: 1920 x 1080,
    1.4-1.7 m above the walk, 20-40 degrees from straight down, with lens
    distortion, looking at ``joint``. ``focal_px`` replaces the 1500-1800 px
    draw (a wider lens: smaller markers in pixels)."""
    j = scene.joints[joint]
    tilt = float(rng.uniform(20, 40))
    hgt = float(rng.uniform(1400, 1700))
    back = hgt * math.tan(math.radians(tilt))
    f_draw = float(rng.uniform(1500, 1800))
    return look_down_camera(
        width=1920,
        height=1080,
        focal_px=f_draw if focal_px is None else focal_px,
        center_mm=(
            j.station_mm + float(rng.uniform(-150, 150)),
            scene.walk_width_mm / 2 + back + float(rng.uniform(-100, 100)),
            hgt,
        ),
        tilt_deg=tilt,
        yaw_deg=float(rng.uniform(-8, 8)),
        roll_deg=float(rng.uniform(-3, 3)),
        distortion=(
            float(rng.uniform(-0.12, 0.02)),
            float(rng.uniform(-0.02, 0.05)),
            0.0,
            0.0,
            0.0,
        ),
    )


def walk_width_photo_camera(scene: SidewalkScene, rng: np.random.Generator) -> Camera:
    """A photo for the walk's width: standing on the walk (its middle within
    150 mm), 1.4-1.7 m up, looking along it 30-45 degrees from straight down,
    turned up to 8 degrees and rolled up to 3, the survey lens. Both edges
    and the turf beyond them are in the far part of the view."""
    return look_down_camera(
        width=1920,
        height=1080,
        focal_px=float(rng.uniform(1500, 1800)),
        center_mm=(
            float(np.mean([b.center_x_mm for b in scene.blocks])) + float(rng.uniform(-300, 300)),
            scene.walk_width_mm / 2 + float(rng.uniform(-150, 150)),
            float(rng.uniform(1400, 1700)),
        ),
        # yaw -90: image x across the walk (+y), the view along +x.
        tilt_deg=float(rng.uniform(30, 45)),
        yaw_deg=-90.0 + float(rng.uniform(-8, 8)),
        roll_deg=float(rng.uniform(-3, 3)),
        distortion=(
            float(rng.uniform(-0.12, 0.02)),
            float(rng.uniform(-0.02, 0.05)),
            0.0,
            0.0,
            0.0,
        ),
    )


def place_marker(
    scene: SidewalkScene,
    camera: Camera,
    rng: np.random.Generator,
    side_mm: float = 150.0,
    *,
    along: tuple[float, float] = (0.3, 0.7),
) -> MarkerPlacement:
    """A marker on a block clear of every joint, within the ``along`` share
    of the view's x extent (the middle by default)."""
    x0, x1, y0, y1 = ground_footprint(camera, 0.0)
    for _ in range(200):
        ang = float(rng.uniform(-0.3, 0.3))
        m = MarkerPlacement(
            float(rng.uniform(x0 + along[0] * (x1 - x0), x0 + along[1] * (x1 - x0))),
            float(rng.uniform(max(y0, 50.0) + side_mm, min(y1, scene.walk_width_mm - 50.0))),
            ang,
            side_mm,
        )
        c = m.marker_to_world(
            np.array([[0, 0], [side_mm, 0], [side_mm, side_mm], [0, side_mm]], float)
        )
        clear = all(
            np.all(np.abs(c[:, 0] - scene.joint_center_x(j, c[:, 1])) > 80) for j in scene.joints
        ) and np.all((c[:, 1] > 30) & (c[:, 1] < scene.walk_width_mm - 30))
        z = float(np.mean([b.z0_mm for b in scene.blocks]))
        uv = _project(camera, camera.world_to_camera(np.column_stack([c, np.full(4, z)])))
        seen = np.all((uv > 60) & (uv < np.array([camera.width - 60, camera.height - 60])))
        if clear and seen:
            return m
    raise ValueError("no room for the marker in this view")


def place_markers(
    scene: SidewalkScene,
    camera: Camera,
    rng: np.random.Generator,
    count: int,
    side_mm: float,
    *,
    ids: Sequence[int] | None = None,
) -> list[MarkerPlacement]:
    """``count`` loose markers (ids ``ids``, default 0, 1, ...) on blocks clear
    of every joint, anywhere across the view, at least 1.6 sides apart."""
    out: list[MarkerPlacement] = []
    for _ in range(60):
        if len(out) == count:
            break
        m = place_marker(scene, camera, rng, side_mm, along=(0.05, 0.95))
        c = m.marker_to_world(np.array([[side_mm / 2, side_mm / 2]]))[0]
        if all(
            np.hypot(*(c - o.marker_to_world(np.array([[side_mm / 2, side_mm / 2]]))[0]))
            > 1.6 * side_mm
            for o in out
        ):
            out.append(replace(m, marker_id=len(out) if ids is None else int(ids[len(out)])))
    if len(out) < count:
        raise ValueError("no room for the markers in this view")
    return out


def _paint_marker(
    col: F64, camera: Camera, rays: F64, xyz: tuple[F64, F64, float], marker: MarkerPlacement
) -> None:
    """Paint one marker: flat markers on the mean walk plane, a tilted or
    raised one on its own plane (it hides the walk behind it)."""
    mk = make_marker_image(marker.marker_id, dictionary=marker.dictionary)
    s = marker.side_mm
    x, y, z_ref = xyz
    if marker.tilt_deg == 0.0 and marker.lift_mm == 0.0:
        mp = marker.world_to_marker(np.stack([x, y], 1))
    else:
        a, t = marker.angle_rad, math.radians(marker.tilt_deg)
        ex = np.array([math.cos(a), math.sin(a), 0.0])
        ey = np.array([math.sin(a), -math.cos(a), 0.0]) * math.cos(t) + np.array(
            [0.0, 0.0, math.sin(t)]
        )
        c2 = marker.marker_to_world(np.array([[s / 2, s / 2]]))[0]
        c = np.array([c2[0], c2[1], z_ref + marker.lift_mm])
        n = np.cross(ex, ey)
        d = (c - camera.center_mm) @ n / (rays @ n)
        rel = camera.center_mm + rays * d[:, None] - c
        mp = np.stack([rel @ ex + s / 2, rel @ ey + s / 2], 1)
    inside = (mp[:, 0] >= 0) & (mp[:, 0] < s) & (mp[:, 1] >= 0) & (mp[:, 1] < s)
    ix = (mp[inside] / s * mk.shape[0]).astype(int).clip(0, mk.shape[0] - 1)
    val = np.where(mk[ix[:, 1], ix[:, 0]] > 127, 0.85, 0.06)
    col[inside] = val[:, None]


def render_photo(
    scene: SidewalkScene,
    camera: Camera,
    marker: MarkerPlacement | Sequence[MarkerPlacement] | None,
    rng: np.random.Generator,
    conditions: PhotoConditions | None = None,
) -> NDArray[np.uint8]:
    """A BGR survey photo of the scene (positions on the mean walk plane;
    relief appears as shading: gaps dark with depth, spalls darker), with
    one ground marker or several."""
    cond = conditions or PhotoConditions()
    hh, ww = camera.height, camera.width
    vv, uu = np.mgrid[0:hh, 0:ww]
    rays = _pixel_rays(camera, uu.ravel().astype(float), vv.ravel().astype(float))
    z_ref = float(np.mean([b.z0_mm for b in scene.blocks]))
    t = (z_ref - camera.center_mm[2]) / rays[:, 2]
    x = camera.center_mm[0] + rays[:, 0] * t
    y = camera.center_mm[1] + rays[:, 1] * t
    h, label = scene.surface(x, y)
    tex = 0.5 * _roughness(x, y, scene.seed + 1, 0.05) + 0.5 * _roughness(
        x * 6, y * 6, scene.seed + 2, 0.05
    )
    alb = 0.55 + tex
    col = np.stack([alb * 0.98, alb, alb * 1.02], 1)
    top = label >= 0
    blk_h = np.zeros_like(h)
    for b in scene.blocks:
        sel = label == b.index
        blk_h[sel] = scene.block_height(b.index, x[sel], y[sel])
    drop = np.where(top, blk_h - h, 0.0)
    col[top] *= np.clip(1.0 - 0.02 * drop[top], 0.4, 1.0)[:, None]
    gap = label == GAP
    col[gap] = (0.10 + 0.02 * rng.uniform(size=(int(gap.sum()), 1))) * np.array([1.0, 1.0, 1.0])
    turf = label == TURF
    col[turf] = np.array([0.18, 0.32, 0.22]) * (1 + 2 * tex[turf])[:, None]
    avoid: list[tuple[float, float, float]] = []
    markers = [] if marker is None else [marker] if isinstance(marker, MarkerPlacement) else marker
    for mkr in markers:
        _paint_marker(col, camera, rays, (x, y, z_ref), mkr)
        s = mkr.side_mm
        c = mkr.marker_to_world(np.array([[s / 2, s / 2]]))[0]
        avoid.append((float(c[0]), float(c[1]), s))
    x0, x1, y0, y1 = float(x.min()), float(x.max()), float(y.min()), float(y.max())
    _blobs(
        col,
        x,
        y,
        rng,
        count=cond.leaves,
        size_mm=(15, 40),
        colour=np.array([0.08, 0.25, 0.55]),
        avoid=avoid,
        scene=scene,
        joint_clearance_mm=0,
    )
    _blobs(
        col,
        x,
        y,
        rng,
        count=cond.snow_patches,
        size_mm=(60, 200),
        colour=np.array([0.93, 0.95, 0.95]),
        avoid=avoid,
        scene=scene,
        joint_clearance_mm=80,
    )
    # Light: a gradient across the view and a soft shadow of something nearby.
    light = 0.8 + 0.4 * (x - x0) / max(x1 - x0, 1.0)
    if cond.shadow:
        th = rng.uniform(0, math.pi)
        d = (
            (x - (x0 + x1) / 2) * math.cos(th)
            + (y - (y0 + y1) / 2) * math.sin(th)
            - rng.uniform(-300, 300)
        )
        light = light * (1 - 0.45 / (1 + np.exp(-d / 40.0)))
    img = col * (light * cond.exposure)[:, None]
    img = img.reshape(hh, ww, 3).astype(np.float32)
    if cond.blur_px > 0:
        img = cv2.GaussianBlur(img, (0, 0), cond.blur_px)
    if cond.motion_px > 0:
        n = max(3, int(cond.motion_px) | 1)
        k = np.zeros((n, n), np.float32)
        k[n // 2, :] = 1.0 / n
        img = cv2.filter2D(img, -1, k)
    img = img + rng.normal(0, cond.noise, img.shape).astype(np.float32)
    out: NDArray[np.uint8] = (np.clip(img, 0, 1) ** (1 / 2.2) * 255).astype(np.uint8)
    return out


def make_marker_image(
    marker_id: int, side_px: int = 240, *, dictionary: int = 0
) -> NDArray[np.uint8]:
    """The ArUco marker image the renderer paints on the ground (``dictionary``
    a cv2.aruco predefined dictionary; 0 is DICT_4X4_50)."""
    d = cv2.aruco.getPredefinedDictionary(dictionary)
    out = np.asarray(cv2.aruco.generateImageMarker(d, marker_id, side_px), np.uint8)
    return out


def _blobs(
    col: F64,
    x: F64,
    y: F64,
    rng: np.random.Generator,
    *,
    count: int,
    size_mm: tuple[float, float],
    colour: F64,
    avoid: list[tuple[float, float, float]],
    scene: SidewalkScene,
    joint_clearance_mm: float,
) -> None:
    """Paint ``count`` elliptical blobs (leaves, snow) that miss the marker
    and stay ``joint_clearance_mm`` clear of joints."""
    x0, x1, y0, y1 = float(x.min()), float(x.max()), float(y.min()), float(y.max())
    placed = 0
    for _ in range(count * 20):
        if placed >= count:
            break
        cx, cy = rng.uniform(x0, x1), rng.uniform(y0, y1)
        a = rng.uniform(*size_mm)
        b = a * rng.uniform(0.4, 1.0)
        if any(math.hypot(cx - ax, cy - ay) < a + s for ax, ay, s in avoid):
            continue
        if joint_clearance_mm > 0 and any(
            abs(cx - float(scene.joint_center_x(j, np.array([cy]))[0])) < a + joint_clearance_mm
            for j in scene.joints
        ):
            continue
        th = rng.uniform(0, math.pi)
        u = ((x - cx) * math.cos(th) + (y - cy) * math.sin(th)) / a
        v = (-(x - cx) * math.sin(th) + (y - cy) * math.cos(th)) / b
        sel = u * u + v * v < 1
        col[sel] = colour
        placed += 1


def _laser_camera(
    scene: SidewalkScene, rng: np.random.Generator, joint: int
) -> tuple[Camera, float, float, float, float]:
    """The laser survey camera over ``joint``; also its (x, y), the top of the
    block before the joint under it, and its height."""
    j = scene.joints[joint]
    y_mid = scene.walk_width_mm / 2 + float(rng.uniform(-200, 200))
    x_mid = float(scene.joint_center_x(j, np.array([y_mid]))[0]) + float(rng.uniform(-40, 40))
    z_top = float(scene.block_height(j.index, np.array([x_mid]), np.array([y_mid]))[0])
    hgt = z_top + float(rng.uniform(350, 450))
    cam = look_down_camera(
        width=1280,
        height=720,
        focal_px=1400.0,
        center_mm=(x_mid, y_mid, hgt),
        tilt_deg=float(rng.uniform(-3, 3)),
        yaw_deg=float(rng.uniform(-3, 3)),
        distortion=(float(rng.uniform(-0.08, 0.0)), 0.0, 0.0, 0.0, 0.0),
    )
    return cam, x_mid, y_mid, z_top, hgt


def _sheet(cam: Camera, laser: F64, target: F64) -> tuple[F64, float]:
    """The sheet from ``laser`` through ``target`` containing the walk
    direction, as (normal, offset) in the camera frame."""
    n_w = np.cross(np.array([1.0, 0.0, 0.0]), target - laser)
    n_w /= np.linalg.norm(n_w)
    n_c = cam.rotation @ n_w
    return n_c, float(n_c @ cam.world_to_camera(laser[None, :])[0])


def laser_survey_rig(
    scene: SidewalkScene, rng: np.random.Generator, joint: int = 0
) -> tuple[Camera, F64, float]:
    """Camera and one laser sheet (the single-stripe, degraded mode), over ``joint``.

    Camera 350-450 mm above the walk looking down, 1280 x 720, 1400 px focal
    length (about 0.3 mm per pixel); the line laser sits 120-180 mm to the
    side and its sheet, containing the walk direction, meets the ground under
    the camera. Returns the camera and the sheet (normal, offset) in the camera frame.
    """
    cam, x_mid, y_mid, z_top, hgt = _laser_camera(scene, rng, joint)
    laser = np.array([x_mid, y_mid + float(rng.uniform(120, 180)), hgt])
    n_c, d_c = _sheet(cam, laser, np.array([x_mid, y_mid, z_top]))
    return cam, n_c, d_c


def laser_pair_survey_rig(
    scene: SidewalkScene, rng: np.random.Generator, joint: int = 0
) -> tuple[Camera, tuple[tuple[F64, float], tuple[F64, float]]]:
    """Camera and two laser sheets at the documented (two-stripe) survey geometry.

    The camera as in ``laser_survey_rig``; two line lasers side by side on
    one arm 80-120 mm to the side of it, at its height, their sheets
    containing the walk direction and leaning the same way (parallel within a
    degree of mounting tolerance). The stripes meet the walk 60-75 mm apart
    across it, either side of the camera's nadir, so each crosses the joint
    and, for surfaces from 135 mm below to 40 mm above the walk, the two
    stay apart in the image (that needs a spacing of 156 x the lean).
    Returns the camera and the two sheets (normal, offset) in the camera frame.
    """
    cam, x_mid, y_mid, z_top, hgt = _laser_camera(scene, rng, joint)
    half = float(rng.uniform(60, 75)) / 2
    out = float(rng.uniform(80, 120))
    sheets = []
    for side in (+1.0, -1.0):
        aim = y_mid + side * half
        laser = np.array([x_mid, aim + out + float(rng.uniform(-4, 4)), hgt])
        sheets.append(_sheet(cam, laser, np.array([x_mid, aim, z_top])))
    return cam, (sheets[0], sheets[1])


def render_laser(
    scene: SidewalkScene,
    camera: Camera,
    plane_normal: F64,
    plane_offset_mm: float,
    rng: np.random.Generator,
    *,
    noise: float = 3.0,
    stripe_sigma_px: float = 1.3,
    more_sheets: tuple[tuple[F64, float], ...] = (),
) -> NDArray[np.uint8]:
    """Grey image of the laser stripe(s) on the scene, with occlusion of each
    stripe by block edges (seen from the camera) and of its laser itself."""
    vv, uu = np.mgrid[0 : camera.height, 0 : camera.width]
    img = (30.0 + _roughness(uu * 0.3, vv * 0.3, scene.seed, 6.0)).astype(np.float32)
    for nrm, off in ((plane_normal, plane_offset_mm), *more_sheets):
        _draw_stripe(img, scene, camera, nrm, off, stripe_sigma_px=stripe_sigma_px)
    img += rng.normal(0, noise, img.shape).astype(np.float32)
    out: NDArray[np.uint8] = np.clip(img, 0, 255).astype(np.uint8)
    return out


def _draw_stripe(
    img: NDArray[np.float32],
    scene: SidewalkScene,
    camera: Camera,
    plane_normal: F64,
    plane_offset_mm: float,
    *,
    stripe_sigma_px: float,
) -> None:
    """Add one sheet's stripe to ``img``."""
    n_w = camera.rotation.T @ plane_normal
    p0 = camera.camera_to_world((plane_normal * plane_offset_mm)[None, :])[0]
    # The sheet in the world: points p with n_w . (p - p0) = 0.
    x0, x1, _, _ = ground_footprint(camera, float(np.mean([b.z0_mm for b in scene.blocks])))
    xs = np.arange(x0 - 20, x1 + 20, 0.05)

    # In the sheet, y depends on z: n_y (y - p0y) + n_z (z - p0z) + n_x (x - p0x) = 0.
    def y_of(x: F64, z: F64) -> F64:
        out: F64 = p0[1] - (n_w[0] * (x - p0[0]) + n_w[2] * (z - p0[2])) / n_w[1]
        return out

    # Each laser ray runs from the fan's apex through the sheet; it stops at
    # the first surface it meets (a block top, a joint wall or the gap floor).
    z_ref = float(np.mean([b.z0_mm for b in scene.blocks]))
    targets = np.stack([xs, y_of(xs, np.full_like(xs, z_ref)), np.full_like(xs, z_ref)], 1)
    apex = _laser_origin(camera, plane_normal, targets)
    z_hi = max(b.z0_mm for b in scene.blocks) + 60.0
    z_lo = min(b.z0_mm for b in scene.blocks) - 200.0
    dz = targets[0, 2] - apex[2]
    t = np.linspace((z_hi - apex[2]) / dz, (z_lo - apex[2]) / dz, 160)
    hit_k = np.full(len(xs), -1)
    for k, tk in enumerate(t):
        q = apex + (targets - apex) * tk
        h, _ = scene.surface(q[:, 0], q[:, 1])
        new = (hit_k < 0) & (q[:, 2] <= h)
        hit_k[new] = k
    ok = hit_k > 0
    lo = t[np.maximum(hit_k - 1, 0)][ok]
    hi = t[np.maximum(hit_k, 0)][ok]
    tg = targets[ok]
    for _ in range(14):  # bisection to 1/16000 of a step
        mid = (lo + hi) / 2
        q = apex + (tg - apex) * mid[:, None]
        h, _ = scene.surface(q[:, 0], q[:, 1])
        below = q[:, 2] <= h
        hi = np.where(below, mid, hi)
        lo = np.where(below, lo, mid)
    pts = apex + (tg - apex) * hi[:, None]
    visible = _unoccluded(scene, pts, camera.center_mm)
    pc = camera.world_to_camera(pts[visible])
    uv = _project(camera, pc)
    ui = np.round(uv[:, 0]).astype(int)
    inb = (ui >= 0) & (ui < camera.width)
    counts = np.bincount(ui[inb], minlength=camera.width).astype(np.float32)
    for dv in range(-5, 6):
        vi = np.floor(uv[inb, 1]).astype(int) + dv
        w = np.exp(-((vi - uv[inb, 1]) ** 2) / (2 * stripe_sigma_px**2)).astype(np.float32)
        ok = (vi >= 0) & (vi < camera.height)
        np.add.at(
            img, (vi[ok], ui[inb][ok]), 200.0 * w[ok] / np.maximum(counts[ui[inb][ok]], 1) * 3.0
        )


def _laser_origin(camera: Camera, n_c: F64, pts: F64) -> F64:
    """The fan's apex: 400 mm up the sheet above the stripe's middle."""
    n_w = camera.rotation.T @ n_c
    up = np.array([0.0, 0.0, 1.0])
    inplane = up - (up @ n_w) * n_w
    inplane /= np.linalg.norm(inplane)
    out: F64 = pts.mean(0) + inplane * 400.0
    return out


def _unoccluded(scene: SidewalkScene, pts: F64, eye: F64) -> NDArray[np.bool_]:
    """True where the straight line from ``eye`` to each point stays above the surface."""
    ok = np.ones(len(pts), bool)
    for f in np.linspace(0.9, 0.9995, 40):
        q = eye + (pts - eye) * f
        h, _ = scene.surface(q[:, 0], q[:, 1])
        ok &= q[:, 2] >= h - 1e-6
    return ok
