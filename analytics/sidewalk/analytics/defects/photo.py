"""Survey-photo measurement: image checks, ground scale from the fiducial,
cracks and open joints with their gap width in millimetres."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace

import cv2
import numpy as np
from numpy.typing import NDArray

from .cracks import CrackParams, segment_cracks
from .errors import InputProblem, MeasurementError
from .fiducial import (
    CameraCalibration,
    FiducialLimits,
    FiducialSpec,
    GroundFrame,
    _single_frame,
    edge_profiles,
    find_ground_frame,
    locate_marker,
)
from .joint_gauge import NO_JOINT, JointGauge, JointGaugeParams, measure_joint, pose_frame
from .results import CrackTrace, EdgeType, PhotoInspection
from .width import WalkWidthParams, measure_walk_width

U8 = NDArray[np.uint8]
F64 = NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class PhotoParams:
    """Image-quality gates and detector settings for survey photos."""

    max_clipped_fraction: float = 0.25  # pixels at 255
    min_mean_level: float = 35.0
    max_dark_fraction: float = 0.6  # pixels under 10
    min_sharpness: float = 0.12  # crisp ~0.2; a 9 px motion smear ~0.11
    analysis_scale: float = 0.5  # segmentation runs at this fraction of full size
    crack: CrackParams = field(
        # The CrackForest growing threshold (1.25) and elongation (10) split
        # traces on the synthetic photos; the earlier 1.75 and 12 keep them.
        # The 8 px scale (at half size) finds open joints 30-80 mm wide.
        default_factory=lambda: CrackParams(
            scales_px=(1.0, 2.0, 4.0, 8.0),
            min_component_px=150,
            low_sigmas=1.75,
            min_elongation=12.0,
        )
    )
    fiducial_limits: FiducialLimits = field(default_factory=FiducialLimits)
    samples_per_crack: int = 24
    # Coarsest ground sample across a gap (mm per pixel) measured with several
    # markers: one pixel at most 1/16 in, the tolerance itself (set from the
    # requirement, not fitted). Set 510000 of the several-marker bench: errors of 1.4-2.0
    # mm came only from gaps at 2.0-3.4 mm per pixel. None: no gate.
    max_gap_mm_per_pixel: float | None = 25.4 / 16
    # Largest 2 sigma a measured (resolved) gap may state with several
    # markers: the tolerance itself, 1/16 in (from the requirement, not
    # fitted). Wider, the width cannot be told from the limit within the
    # tolerance: not measured (take the photo closer), never a number. Set
    # 540000: a 73 mm crack read +1.80 mm with sigma 1.21 (small markers'
    # frame). None: no gate.
    max_gap_two_sigma_mm: float | None = 25.4 / 16
    # A gap is resolved when its dip reaches 95 % of its floor through the
    # photo's blur: a box w wide under a Gaussian blur of sigma s does when
    # w >= 2 x 1.96 s (physics, not fitted). Narrower, the half-way crossings
    # are the blur's, not the gap's edges: the width is then an upper bound.
    resolved_blur_sigmas: float = 3.92
    # The blur's sigma (px) is measured on the markers' edges; this is used
    # where there are none to measure (a ChArUco board, a fixed camera's
    # stored frame). An assumption, not fitted: above the 0.9-1.0 px the
    # bench's markers measure, so a doubtful gap is a bound, not a number.
    default_blur_sigma_px: float = 1.2
    crack_straightness_mm: float = 1.5
    max_walk_saturation: int = 30  # of 255: concrete is grey, turf and leaves are not
    # None: skip the walk-width stage (about 30 ms).
    walk_width: WalkWidthParams | None = field(default_factory=WalkWidthParams)
    # The straight-joint gauge for photos with one marker (None: the crack
    # traces alone, as for a board, several markers or a fixed camera).
    joint: JointGaugeParams | None = field(default_factory=JointGaugeParams)
    # Smallest marker side (px) the joint gauge works from: below it the
    # marker's cells are not read reliably. Whether the width holds to the
    # tolerance is then the gauge's own 2 sigma, not the marker's size.
    min_joint_marker_px: float = 24.0
    # The joint gauge's tilt limit (the crack traces keep the fiducial's): a
    # phone photo of a joint 2-3 m off is 55-70 degrees oblique.
    max_joint_tilt_deg: float = 78.0
    # A crack trace wandering further (rms about its line, mm) is texture and
    # shadows joined up (the tuning photos: 386 mm over 3 m); real cracks
    # meander by centimetres.
    max_crack_wander_mm: float = 100.0
    # A crack trace's ground length over its width, at least: the cracks of
    # the synthetic survey photos are 24-74; stains and shade seen obliquely
    # on the independent photos 2-7 (both read as confident wide "cracks").
    min_crack_elongation: float = 10.0


def check_exposure(gray: U8, params: PhotoParams) -> None:
    """Raise for an over- or under-exposed photo."""
    clipped = float(np.mean(gray >= 250))
    if clipped > params.max_clipped_fraction:
        raise MeasurementError(InputProblem.OVEREXPOSED, f"{clipped:.0%} of pixels clipped white")
    if (
        float(gray.mean()) < params.min_mean_level
        or float(np.mean(gray < 10)) > params.max_dark_fraction
    ):
        raise MeasurementError(
            InputProblem.UNDEREXPOSED, f"mean level {gray.mean():.0f} of 255 is too dark"
        )


def marker_sharpness(gray: U8, corners: F64) -> float:
    """Edge sharpness inside the marker in its bluriest direction: the mean of
    the strongest directional gradients over the marker's contrast. Motion
    smears edges across the motion only, so each direction is scored apart."""
    x0, y0 = np.floor(corners.min(0)).astype(int)
    x1, y1 = np.ceil(corners.max(0)).astype(int)
    roi = gray[max(y0, 0) : y1, max(x0, 0) : x1].astype(np.float32)
    if roi.size < 100:
        return 0.0
    gx = cv2.Sobel(roi, cv2.CV_32F, 1, 0, ksize=3) / 8
    gy = cv2.Sobel(roi, cv2.CV_32F, 0, 1, ksize=3) / 8
    contrast = float(np.percentile(roi, 95) - np.percentile(roi, 5)) + 1e-6
    scores = []
    for g in (gx, gy, (gx + gy) / np.sqrt(2), (gx - gy) / np.sqrt(2)):
        a = np.abs(g).ravel()
        scores.append(float(np.mean(np.sort(a)[-max(1, a.size // 20) :])))
    return min(scores) / contrast


def measure_photo(
    image: U8,
    calibration: CameraCalibration,
    fiducial: FiducialSpec | None = None,
    *,
    ground: GroundFrame | None = None,
    params: PhotoParams | None = None,
) -> PhotoInspection:
    """Measure cracks and open joints in one survey photo, in millimetres on
    the ground plane of the fiducial (or of a fixed camera's stored ``ground``
    frame). Raises ``MeasurementError`` with the reason for a bad photo."""
    p = params or PhotoParams()
    t0 = time.perf_counter()
    stages: list[tuple[str, float]] = []
    if image.ndim not in (2, 3) or image.dtype != np.uint8:
        raise MeasurementError(InputProblem.WRONG_FORMAT, "need an 8-bit grey or BGR image")
    gray = np.asarray(
        image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), np.uint8
    )
    check_exposure(gray, p)
    stages.append(("exposure", time.perf_counter() - t0))
    spec = fiducial or FiducialSpec()
    if ground is None and spec.board is None and len(spec.marker_ids) < 2 and p.joint is not None:
        return _measure_with_joint(image, gray, calibration, spec, p, t0, stages)
    if ground is None:
        try:
            ground = find_ground_frame(
                gray, calibration, fiducial or FiducialSpec(), p.fiducial_limits
            )
        except MeasurementError as e:
            if e.problem is InputProblem.NO_FIDUCIAL and _globally_blurred(gray):
                raise MeasurementError(
                    InputProblem.MOTION_BLUR, "image too blurred to find the marker"
                ) from e
            raise
        sharp = marker_sharpness(gray, ground.marker_corners_px)
        if sharp < p.min_sharpness:
            raise MeasurementError(
                InputProblem.MOTION_BLUR, f"marker edge sharpness {sharp:.2f} < {p.min_sharpness}"
            )
    stages.append(("fiducial", time.perf_counter() - t0))
    s = p.analysis_scale
    small = np.asarray(cv2.resize(gray, None, fx=s, fy=s, interpolation=cv2.INTER_AREA), np.uint8)
    mask = segment_cracks(small, p.crack)
    if image.ndim == 3:
        mask &= _walk_surface(
            np.asarray(cv2.resize(image, (small.shape[1], small.shape[0])), np.uint8), p
        )
    for corners in ground.markers_px or (ground.marker_corners_px,):
        mask = _drop_marker(mask, corners * s if corners.size else None)
    stages.append(("segmentation", time.perf_counter() - t0))
    lin = _LINEAR[gray]
    is_board = fiducial is not None and fiducial.board is not None
    edges = () if is_board else ground.markers_px or (ground.marker_corners_px,)
    blur = edge_blur_sigma_px(lin, edges)
    traces = _traces(
        lin, mask, s, calibration, ground=ground, p=p,
        blur_px=p.default_blur_sigma_px if blur is None else blur,
    )  # fmt: skip
    if ground.markers_px:
        # Several small markers: their frame holds where a gap 2-3 times as
        # far is seen too coarse. One marker keeps its 60 px floor instead.
        _check_ground_sample(traces, p)
        _check_gap_uncertainty(traces, p)
    stages.append(("widths", time.perf_counter() - t0))
    # Both edges of the walk against turf, when the photo shows them (colour
    # only; its uncertainty is worked out for one marker's frame).
    board = (fiducial is not None and fiducial.board is not None) or bool(ground.markers_px)
    walk = (
        measure_walk_width(image, calibration, ground, p.walk_width)
        if image.ndim == 3 and p.walk_width is not None and not board
        else None
    )
    stages.append(("walk_width", time.perf_counter() - t0))
    if not traces:
        # A survey photo is taken of a joint or crack: none found is absence
        # of evidence, not a gap under the limit (as the command line records it).
        raise MeasurementError(InputProblem.NOT_MEASURED, NO_JOINT_OR_CRACK)
    return PhotoInspection(
        mm_per_pixel=ground.mm_per_pixel,
        scale_uncertainty_fraction=ground.scale_uncertainty_fraction,
        fiducial_tilt_deg=ground.tilt_deg,
        cracks=tuple(tr for tr, _ in traces),
        crack_mask=mask,
        walk_width_mm=None if walk is None else walk.width_mm,
        walk_width_uncertainty_mm=None if walk is None else walk.width_uncertainty_mm,
        stage_seconds=tuple((n, round(v, 4)) for n, v in stages),
    )


NO_JOINT_OR_CRACK = "no joint or crack found where one is expected"


def _measure_with_joint(  # noqa: PLR0917, PLR0915 - the photo and its stages so far
    image: U8,
    gray: U8,
    calib: CameraCalibration,
    spec: FiducialSpec,
    p: PhotoParams,
    t0: float,
    stages: list[tuple[str, float]],
) -> PhotoInspection:
    """One marker: the straight joint measured between its edge lines in the
    marker's frame (``joint_gauge``), and where the marker is large enough for
    them (``FiducialLimits.min_side_px``) the crack traces beside it."""
    jp = p.joint
    assert jp is not None
    corners = locate_marker(gray, spec)
    side = float(np.linalg.norm(corners - np.roll(corners, -1, 0), axis=1).min())
    if side < p.min_joint_marker_px:
        raise MeasurementError(
            InputProblem.FIDUCIAL_TOO_SMALL,
            f"the marker is {side:.0f} px across, too small to measure from"
            f" (at least {p.min_joint_marker_px:.0f} px: take the photo closer)",
        )
    sharp = marker_sharpness(gray, corners)
    if sharp < p.min_sharpness:
        raise MeasurementError(
            InputProblem.MOTION_BLUR, f"marker edge sharpness {sharp:.2f} < {p.min_sharpness}"
        )
    floor = p.fiducial_limits.min_side_px if spec.min_side_px is None else spec.min_side_px
    cracks_too = side >= floor
    try:
        ground = _single_frame(corners, calib, spec, p.fiducial_limits)
    except MeasurementError as e:
        if e.problem not in {InputProblem.FIDUCIAL_TOO_SMALL, InputProblem.FIDUCIAL_TOO_OBLIQUE}:
            raise
        # The pose alone, to the gauge's own tilt limit: the joint's 2 sigma
        # (the ground pixel across it, the frame at it) says whether it holds.
        cracks_too = False
        limits = replace(p.fiducial_limits, max_tilt_deg=p.max_joint_tilt_deg)
        ground = _single_frame(corners, calib, replace(spec, min_side_px=0.0), limits)
    stages.append(("fiducial", time.perf_counter() - t0))
    lin = _LINEAR[gray]
    blur = edge_blur_sigma_px(lin, (corners,))
    blur_px = p.default_blur_sigma_px if blur is None else blur
    joint: JointGauge | None = None
    refusal: MeasurementError | None = None
    try:
        joint = measure_joint(
            lin, calib, corners, lambda c: pose_frame(c, calib, spec.side_mm), blur_px, jp
        )
    except MeasurementError as e:
        refusal = e
    stages.append(("joint", time.perf_counter() - t0))
    if refusal is not None and not refusal.detail.startswith(NO_JOINT):
        # A joint is there but its width cannot be told: never passed on the rest.
        raise refusal
    traces: list[CrackTrace] = []
    mask = np.zeros(gray.shape, np.uint8)
    if cracks_too:
        s = p.analysis_scale
        small = np.asarray(
            cv2.resize(gray, None, fx=s, fy=s, interpolation=cv2.INTER_AREA), np.uint8
        )
        mask = segment_cracks(small, p.crack)
        if image.ndim == 3:
            mask &= _walk_surface(
                np.asarray(cv2.resize(image, (small.shape[1], small.shape[0])), np.uint8), p
            )
        mask = _drop_marker(mask, corners * s)
        found = _traces(lin, mask, s, calib, ground=ground, p=p, blur_px=blur_px)
        # The joint's own trace from the mask is the joint measured again, worse.
        # Cracks beside the joint keep their own uncertainty (a wide one makes
        # their verdict "within 2 sigma", never a confident one). With the
        # gauge on, a straight band is its business (a post's shadow 90 mm
        # wide read as a confident "joint" on the tuning photos), a trace
        # wandering more than a crack can is texture joined up, and one not
        # elongated on the ground is a stain or a patch of shade seen
        # obliquely (the image's elongation is the perspective's).
        traces = [
            tr
            for tr, _ in found
            if (joint is None or not _on_joint(tr, joint))
            and (joint is None or tr.edge_type is EdgeType.CRACK)
            and tr.straightness_rms_mm <= p.max_crack_wander_mm
            and tr.length_mm >= p.min_crack_elongation * tr.gap_width_mm
        ]
    stages.append(("cracks", time.perf_counter() - t0))
    if joint is not None:
        traces.insert(0, _joint_trace(joint))
    walk = (
        measure_walk_width(image, calib, ground, p.walk_width)
        if image.ndim == 3 and p.walk_width is not None and cracks_too
        else None
    )
    if not traces:
        why = refusal.detail if refusal is not None else NO_JOINT
        extra = (
            ""
            if cracks_too
            else f"; cracks are looked for with the marker {floor:.0f} px across or more"
            f" (it is {side:.0f} px)"
        )
        raise MeasurementError(InputProblem.NOT_MEASURED, f"{NO_JOINT_OR_CRACK} ({why}{extra})")
    return PhotoInspection(
        mm_per_pixel=ground.mm_per_pixel,
        scale_uncertainty_fraction=ground.scale_uncertainty_fraction,
        fiducial_tilt_deg=ground.tilt_deg,
        cracks=tuple(traces),
        crack_mask=mask,
        walk_width_mm=None if walk is None else walk.width_mm,
        walk_width_uncertainty_mm=None if walk is None else walk.width_uncertainty_mm,
        stage_seconds=tuple((n, round(v, 4)) for n, v in stages),
    )


def _on_joint(tr: CrackTrace, joint: JointGauge) -> bool:
    """A trace lying along the measured joint: its centre within the band and
    60 mm of it (a trace's width is read on the darkest band within 50 mm of
    it, so a shading line beside the joint reads the joint again)."""
    c = np.array(tr.center_mm[:2]) - np.array(joint.centre_mm)
    t = np.array(joint.direction)
    return abs(float(c[0] * t[1] - c[1] * t[0])) <= joint.gap_width_mm / 2 + 60.0


def _joint_trace(j: JointGauge) -> CrackTrace:
    left, right = j.edges_px
    return CrackTrace(
        gap_width_mm=j.gap_width_mm,
        gap_width_uncertainty_mm=j.gap_width_uncertainty_mm,
        length_mm=j.length_mm,
        edge_type=EdgeType.TOOLED_JOINT,
        straightness_rms_mm=j.straightness_rms_mm,
        center_mm=(j.centre_mm[0], j.centre_mm[1], 0.0),
        image_path_px=left + tuple(reversed(right)),
        gap_resolved=j.resolved,
    )


def _walk_surface(bgr: U8, p: PhotoParams) -> U8:
    """Grey concrete (and the dark joints inside it), not turf or leaves: the
    walk's edge against turf is a strong dark line that is not a crack."""
    sat = cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)[..., 1]
    grey = (sat < p.max_walk_saturation).astype(np.uint8)
    closed = cv2.morphologyEx(grey, cv2.MORPH_CLOSE, np.ones((15, 15), np.uint8))
    out = np.asarray(cv2.erode(closed, np.ones((9, 9), np.uint8)), np.uint8)
    return out


# Photos are gamma-encoded (about 2.2, as the fiducial stage assumes): the
# half-way crossing of an edge is unbiased on linear intensity only. On the
# encoded image it sits on the dark side, and a gap read about half a pixel
# narrow whatever its width.
_LINEAR = ((np.arange(256) / 255.0) ** 2.2 * 255.0).astype(np.float32)


def _encoded(v: float) -> float:
    return float(255.0 * (max(v, 0.0) / 255.0) ** (1 / 2.2))


def edge_blur_sigma_px(lin: NDArray[np.float32], markers: tuple[F64, ...]) -> float | None:
    """The photo's blur (Gaussian sigma, px) across the markers' outer edges:
    the 10-90 % rise of each side's median edge profile on linear intensity
    over 2.563 (a Gaussian edge's), the worse of the two directions (motion
    blurs one). None when no marker edge is usable."""
    along = np.linspace(0.2, 0.8, 15)
    per_dir: list[list[float]] = [[], []]
    for c in markers:
        side = (
            float(np.linalg.norm(c - np.roll(c, -1, 0), axis=1).min()) if c.shape == (4, 2) else 0
        )
        if side < 18.0:
            continue
        # Inside: the black border (a sixth of the side for 4x4 markers, an
        # eighth for 6x6); outside: the walk.
        inner = min(side / 9, 6.0)
        offs = np.arange(-inner, 6.0 + 1e-9, 0.1)
        ctr = c.mean(0)
        for k in range(4):
            _, _, prof = edge_profiles(lin, c[k], c[(k + 1) % 4], ctr, along=along, offs=offs)
            esf = np.median(prof, 0)
            lo = float(esf[offs <= -inner + 1.0].mean())
            hi = float(esf[offs >= 5.0].mean())
            if hi - lo < 10.0:
                continue
            r = (esf - lo) / (hi - lo)
            i10 = int(np.argmax(r >= 0.1))
            i90 = int(np.argmax(r >= 0.9))
            if i90 <= i10 or i10 == 0:
                continue
            per_dir[k % 2].append(float(offs[i90] - offs[i10]) / 2.563)
    worst = [float(np.median(v)) for v in per_dir if v]
    return max(worst) if worst else None


def _globally_blurred(gray: U8) -> bool:
    lap = cv2.Laplacian(cv2.resize(gray, None, fx=0.5, fy=0.5), cv2.CV_32F)
    return float(lap.var()) < 4.0


def _drop_marker(mask: U8, corners: F64 | None) -> U8:
    if corners is None:
        return mask
    poly = np.zeros_like(mask)
    c = corners.mean(0)
    grown = (corners - c) * 1.3 + c  # the marker's own edges are not cracks
    cv2.fillConvexPoly(poly, np.round(grown).astype(np.int32), 1)
    out: U8 = mask & (1 - poly)
    return out


def _check_ground_sample(traces: list[tuple[CrackTrace, float]], p: PhotoParams) -> None:
    """Not measured where any gap found is seen coarser than the gate: a
    coarse gap left out could be the one over the limit, so the photo is never
    passed on the fine ones alone."""
    if p.max_gap_mm_per_pixel is None or not traces:
        return
    worst = max(g for _, g in traces)
    if worst > p.max_gap_mm_per_pixel:
        raise MeasurementError(
            InputProblem.NOT_MEASURED,
            f"{GROUND_SAMPLE_TOO_COARSE}: {worst:.1f} mm per pixel at the gap"
            f" > {p.max_gap_mm_per_pixel:.2f} (1/16 in)",
        )


def _check_gap_uncertainty(traces: list[tuple[CrackTrace, float]], p: PhotoParams) -> None:
    """Not measured where a resolved gap's 2 sigma exceeds the gate: its
    width cannot be told from the limit within the tolerance, and leaving it
    out could pass the photo on the others. Unresolved gaps are upper bounds
    and are judged as such."""
    if p.max_gap_two_sigma_mm is None:
        return
    two_sigma = [2 * tr.gap_width_uncertainty_mm for tr, _ in traces if tr.gap_resolved]
    if two_sigma and max(two_sigma) > p.max_gap_two_sigma_mm:
        raise MeasurementError(
            InputProblem.NOT_MEASURED,
            f"{GAP_TOO_UNCERTAIN}: a gap reads +/- {max(two_sigma):.1f} mm (2 sigma)"
            f" > {p.max_gap_two_sigma_mm:.2f} mm (1/16 in); take the photo closer",
        )


GROUND_SAMPLE_TOO_COARSE = "ground sample too coarse"
GAP_TOO_UNCERTAIN = "gap width too uncertain"


def _gap_ground_sample(ground: GroundFrame, c: F64, t: F64, calib: CameraCalibration) -> float:
    """Millimetres on the ground per image pixel across the gap at ``c``
    (the marker's own scale can be finer than the gap's, farther off)."""
    nrm = np.array([-t[1], t[0]])
    g = np.array([c - 5.0 * nrm, c + 5.0 * nrm]).reshape(-1, 1, 2)
    und = np.asarray(
        cv2.perspectiveTransform(g, np.linalg.inv(ground.image_to_ground)), np.float64
    ).reshape(-1, 2)
    px = _distort(und, calib)
    return 10.0 / max(float(np.linalg.norm(px[1] - px[0])), 1e-9)


def _frame_sigma(ground: GroundFrame, c: F64, t: F64, width: float) -> float:
    """Sigma (mm) of a ``width`` across the gap at ``c`` from the several
    markers' plane fit, at the gap rather than at the markers: the same image
    span read through the frames one sigma either way (0 without them)."""
    if not ground.sigma_frames:
        return 0.0
    nrm = np.array([-t[1], t[0]])
    g = np.array([c - width / 2 * nrm, c + width / 2 * nrm]).reshape(-1, 1, 2)
    und = cv2.perspectiveTransform(g, np.linalg.inv(ground.image_to_ground))
    d = [
        float(np.linalg.norm(np.diff(cv2.perspectiveTransform(und, h).reshape(2, 2), axis=0)))
        for h in ground.sigma_frames
    ]
    return math.sqrt(sum(((a - b) / 2) ** 2 for a, b in zip(d[::2], d[1::2], strict=True)))


def _traces(
    lin: NDArray[np.float32],
    mask: U8,
    s: float,
    calib: CameraCalibration,
    *,
    ground: GroundFrame,
    p: PhotoParams,
    blur_px: float,
) -> list[tuple[CrackTrace, float]]:
    """Each trace with the ground sample (mm per pixel) across it, measured
    on the linear-intensity image ``lin`` blurred by ``blur_px`` (sigma)."""
    n, lab, _, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    comps = []
    for i in range(1, n):
        ys, xs = np.nonzero(lab == i)
        if len(xs) < 3:  # a speck left where the marker was cut out
            continue
        pts = np.stack([xs, ys], 1).astype(np.float64) / s
        g = ground.to_ground(pts, calib)
        c = g.mean(0)
        _, vecs = np.linalg.eigh(np.cov((g - c).T))
        t = vecs[:, 1]
        along = (g - c) @ t
        across = (g - c) @ np.array([-t[1], t[0]])
        if float(along.max() - along.min()) < 100.0:
            continue
        order = np.argsort(along)
        picks = order[np.linspace(0, len(order) - 1, p.samples_per_crack + 2).astype(int)[1:-1]]
        comps.append((pts, g, c, t, along, across, order, picks))
    if not comps:
        return []
    # Every profile of every trace is sampled in one remap call.
    all_g = np.concatenate([cp[1][cp[7]] for cp in comps])
    all_t = np.concatenate([np.repeat(cp[3][None, :], len(cp[7]), 0) for cp in comps])
    widths, offsets = _widths(lin, all_g, all_t, calib, ground)
    out: list[tuple[CrackTrace, float]] = []
    k0 = 0
    for pts, _g, c, t, along, across, order, picks in comps:
        w_all = widths[k0 : k0 + len(picks)]
        o_all = offsets[k0 : k0 + len(picks)]
        k0 += len(picks)
        ok = np.isfinite(w_all)
        if ok.sum() < 3:
            continue
        w = w_all[ok]
        med = float(np.median(w))
        if med <= 0:
            continue
        mad = float(1.4826 * np.median(np.abs(w - med)))
        cs_a = along[picks][ok]
        cs_c = across[picks][ok] + o_all[ok]
        fit = np.polyfit(cs_a, cs_c, 1)
        straight = float(np.sqrt(np.mean((cs_c - np.polyval(fit, cs_a)) ** 2)))
        edge = EdgeType.CRACK if straight > p.crack_straightness_mm else EdgeType.TOOLED_JOINT
        gsd = _gap_ground_sample(ground, c, t, calib)
        # The edge-location term grows with the pixel at the gap, not at the marker.
        unc = math.hypot(
            1.2533 * mad / math.sqrt(len(w)),
            max(med * ground.scale_uncertainty_fraction, _frame_sigma(ground, c, t, med)),
            0.3 * gsd,
        )
        # Unresolved: the truth is anywhere from 0 to the width read.
        resolved = med / gsd >= p.resolved_blur_sigmas * blur_px
        if not resolved:
            unc = math.hypot(unc, med / 2)
        path_idx = order[:: max(1, len(order) // 20)]
        out.append(
            (
                CrackTrace(
                    gap_width_mm=med,
                    gap_width_uncertainty_mm=unc,
                    length_mm=float(along.max() - along.min()),
                    edge_type=edge,
                    straightness_rms_mm=straight,
                    center_mm=(float(c[0]), float(c[1]), 0.0),
                    image_path_px=tuple((float(a), float(b)) for a, b in pts[path_idx]),
                    gap_resolved=resolved,
                ),
                gsd,
            )
        )
    return out


def _widths(
    img: NDArray[np.float32],
    g: F64,
    t: F64,
    calib: CameraCalibration,
    ground: GroundFrame,
) -> tuple[F64, F64]:
    """Width (mm) of the dark band through each ground point, along the
    ground normal of its crack, and the band centre's offset from the point;
    NaN where no band is found. The band edges are where the profile crosses
    half-way between the band's floor and the surface beside it, on linear
    intensity (symmetric blur moves both edges outward and inward alike, so
    the width of a resolved gap survives it)."""
    step = 0.25
    offs = np.arange(-110.0, 110.0 + step / 2, step)  # mm on the ground: gaps to 3 in and more
    nrm = np.stack([-t[:, 1], t[:, 0]], 1)
    gp = g[:, None, :] + offs[None, :, None] * nrm[:, None, :]
    g2i = np.linalg.inv(ground.image_to_ground)
    und = np.asarray(cv2.perspectiveTransform(gp.reshape(-1, 1, 2), g2i), np.float64).reshape(-1, 2)
    dist = _distort(und, calib).reshape(len(g), len(offs), 2).astype(np.float32)
    prof = cv2.remap(
        img, dist[..., 0], dist[..., 1], cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
    ).astype(np.float64)
    widths = np.full(len(g), np.nan)
    centres = np.full(len(g), np.nan)
    win = np.abs(offs) <= 50.0
    for i, pr in enumerate(prof):
        k = int(np.argmin(np.where(win, pr, np.inf)))
        lo = float(pr[k])
        hi = float(np.median(np.concatenate([pr[:40], pr[-40:]])))
        # Contrast gates on the encoded levels (as the photo was judged before).
        elo, ehi = _encoded(lo), _encoded(hi)
        if ehi - elo < 8.0 or elo > 0.8 * ehi:
            continue
        half = (hi + lo) / 2
        a = k
        while a > 0 and pr[a] < half:
            a -= 1
        b = k
        while b < len(pr) - 1 and pr[b] < half:
            b += 1
        if a == 0 or b == len(pr) - 1:
            continue
        oa = offs[a] + (half - pr[a]) / (pr[a + 1] - pr[a]) * step
        ob = offs[b - 1] + (half - pr[b - 1]) / (pr[b] - pr[b - 1]) * step
        widths[i] = ob - oa
        centres[i] = (oa + ob) / 2
    return widths, centres


def _distort(und_px: F64, calib: CameraCalibration) -> F64:
    """Undistorted pixel coordinates back to distorted ones."""
    k = calib.matrix
    xn = (und_px[:, 0] - k[0, 2]) / k[0, 0]
    yn = (und_px[:, 1] - k[1, 2]) / k[1, 1]
    pts = np.stack([xn, yn, np.ones_like(xn)], 1).reshape(-1, 1, 3)
    img, _ = cv2.projectPoints(pts, np.zeros(3), np.zeros(3), k, calib.distortion)
    out = np.asarray(img, np.float64).reshape(-1, 2)
    return out
