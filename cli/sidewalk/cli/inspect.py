"""``sidewalk inspect …``: measure a frontage's sidewalk against § 370-5.

Each file becomes one stored inspection (ok, or failed with the reason); the
annotated evidence image goes to ``<data_dir>/evidence``; the repair or
full-replacement notice record is issued when due (``sidewalk notices …``
delivers it).
"""

# OpenCV and the records load when a command runs (common.py: a fast --help).
from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from sidewalk.cli.common import (
    ConfigOption,
    Village,
    command_group,
    console,
    fail,
    refusals,
    village,
)

if TYPE_CHECKING:
    from sidewalk.alerts.inspections import InspectionReport
    from sidewalk.analytics.defects import (
        CameraCalibration,
        DepthIntrinsics,
        FiducialSpec,
        LaserRig,
        LevelReference,
    )
    from sidewalk.analytics.inspect import Kind
    from sidewalk.storage.cases import CaseStore
    from sidewalk.storage.evidence import EvidenceStore

inspect_app = command_group(__doc__)

FrontageOption = Annotated[str, typer.Option("--frontage", help="frontage id the files show")]
SurveyedOption = Annotated[
    str | None, typer.Option(help="when surveyed, ISO 8601 or local time (default: now)")
]
NoNoticeOption = Annotated[
    bool, typer.Option("--no-notice", help="store the inspections only; issue no notice")
]
FirstBlockOption = Annotated[
    int, typer.Option(help="number of the first block seen, counted along the frontage")
]
StationOption = Annotated[
    list[float] | None,
    typer.Option(
        "--station",
        help="station of each file along the frontage, metres (image centre, or the photo's"
        " ground marker); once per file, in order",
    ),
]
FrontageBlocksOption = Annotated[
    int | None,
    typer.Option(help="the frontage's block count, when recorded (the 80 % rule's denominator)"),
]


@contextmanager
def _stores(place: Village) -> Iterator[tuple[CaseStore, EvidenceStore]]:
    from sidewalk.storage.evidence import EvidenceStore

    with place.cases() as cases, refusals(ValueError):
        yield cases, EvidenceStore(place.settings.data_dir / "evidence")


def _run(
    files: Sequence[Path],
    kind: Kind,
    *,
    frontage: str,
    config: Path | None,
    surveyed_at: str | None,
    first_block: int,
    no_notice: bool,
    station: list[float] | None = None,
    frontage_blocks: int | None = None,
    calibration: CameraCalibration | None = None,
    fiducial: FiducialSpec | None = None,
    intrinsics: DepthIntrinsics | None = None,
    rig: LaserRig | None = None,
    level: LevelReference | None = None,
) -> None:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from sidewalk.alerts.inspections import inspect_files

    if station and len(station) != len(files):
        fail(f"{len(station)} --station values for {len(files)} files")
    place = village(config)
    when = place.instant("--surveyed-at", surveyed_at)
    with (
        _stores(place) as (cases, evidence),
        Progress(
            TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console()
        ) as bar,
    ):
        task = bar.add_task(f"inspecting {frontage}", total=len(files))
        report = inspect_files(
            files,
            frontage=frontage,
            kind=kind,
            cases=cases,
            evidence=evidence,
            profile=place.profile,
            calibration=calibration,
            fiducial=fiducial,
            intrinsics=intrinsics,
            rig=rig,
            level=level,
            stations_mm=[m * 1000.0 for m in station] if station else None,
            frontage_blocks=frontage_blocks,
            surveyed_at=when,
            first_block=first_block,
            issue_notice=not no_notice,
            letterhead=place.letterhead(),
            progress=lambda done, _total, _name: bar.update(task, completed=done),
        )
    _print(report)


def _print(report: InspectionReport) -> None:
    from rich.table import Table

    files = Table(title=f"Files, frontage {report.frontage_id}")
    for col in ("file", "result", "evidence"):
        files.add_column(col)
    for f in report.files:
        rec = f.inspection
        files.add_row(
            Path(f.source).name,
            "ok" if f.ok else f"[red]failed: {rec.failure}[/red]",
            (rec.evidence_sha256 or "")[:12],
        )
    console().print(files)
    blocks = Table(title="Blocks (§ 370-5 (11)): measured vs limit, mm")
    for col in ("block", "rule", "measured", "limit", "verdict", "citation"):
        blocks.add_column(col)
    for f in report.files:
        for b in f.inspection.blocks:
            for c in b["checks"]:
                verdict = "[red]DEFECTIVE[/red]" if c["failed"] else "ok"
                blocks.add_row(
                    str(b["block"]),
                    str(c["rule"]),
                    f"{c['measured_mm']:.1f} ± {c['uncertainty_mm']:.1f}",
                    f"{c['limit_mm']:.2f}",
                    verdict + ("" if c["confident"] else " (within 2σ)"),
                    str(c["citation"]),
                )
    console().print(blocks)
    _print_frontage(report)
    s = report.owner_status
    console().print(
        f"owner {report.owner_id}: {s.describe()};"
        f" replace entire sidewalk: {'yes' if s.replace_entire_sidewalk else 'no'}"
    )
    if report.notice_held is not None:
        console().print(f"[yellow]notice held: {report.notice_held}[/yellow]")
    elif report.notice is None:
        console().print("no notice issued")
    else:
        console().print(f"notice {report.notice.number} ({report.notice.kind}) issued")
    if report.failures:
        raise typer.Exit(1)


def _print_frontage(report: InspectionReport) -> None:
    """The frontage's stationed joints, the spacing between them (§ 370-5 (5))
    and the walk widths measured from photos ((7))."""
    from sidewalk.analytics.defects import Rule

    if report.joint_stations_mm:
        st = ", ".join(f"{x / 1000:.2f}" for x in report.joint_stations_mm)
        console().print(f"joints at stations (m): {st}")
    if report.frontage is not None:
        for c in report.frontage.checks:
            if c.rule == Rule.WALK_WIDTH:
                verdict = "[red]TOO NARROW[/red]" if c.failed else "ok"
                console().print(
                    f"walk width {c.measured:.0f} ± {c.uncertainty:.0f} mm"
                    f" (minimum {c.limit:.0f} mm): {verdict}"
                )
                continue
            verdict = "[red]OVER LIMIT[/red]" if c.failed else "ok"
            console().print(
                f"joint spacing {c.measured / 1000:.2f} m (limit {c.limit / 1000:.2f} m): {verdict}"
            )


MarkerIdsOption = Annotated[
    str | None,
    typer.Option(
        help="several loose markers of the --marker-mm side fitted together, where one is too"
        " small in the photo: their ids, e.g. 3,7 (the first one's x edge along the walk)"
    ),
]
BoardOption = Annotated[
    str | None,
    typer.Option(
        help="a ChArUco board on the walk instead of one marker:"
        " SQUARES_XxSQUARES_Y:SQUARE_MM:MARKER_MM, e.g. 7x5:30:22"
    ),
]
MinMarkerPxOption = Annotated[
    float | None,
    typer.Option(
        help="smallest marker side in pixels at which cracks are looked for (default: the"
        " measured floor, 60 px for one marker); the straight joint is measured from 24 px"
        " to its own 2 sigma"
    ),
]


def _fiducial(  # noqa: PLR0917 - the photo options, as given
    marker_mm: float,
    marker_dictionary: str,
    marker_id: int | None,
    marker_ids: str | None,
    board: str | None,
    min_marker_px: float | None,
) -> FiducialSpec:
    """The ground marker options; DefectInputError (one line naming the option) if wrong."""
    from sidewalk.analytics.defects import FiducialSpec
    from sidewalk.analytics.defects.camera_inputs import (
        DefectInputError,
        aruco_dictionary,
        charuco_board,
    )

    ids: tuple[int, ...] = ()
    if marker_ids is not None:
        try:
            ids = tuple(int(v) for v in marker_ids.split(","))
        except ValueError:
            ids = ()
        if len(ids) < 2 or len(set(ids)) != len(ids) or min(ids) < 0:
            raise DefectInputError(
                f"--marker-ids {marker_ids!r}", "give two or more different ids, e.g. 3,7"
            )
    if marker_mm <= 0:
        raise DefectInputError(f"--marker-mm {marker_mm}", "the printed side must be over 0 mm")
    return FiducialSpec(
        side_mm=marker_mm,
        dictionary=aruco_dictionary(marker_dictionary),
        marker_id=marker_id,
        board=None if board is None else charuco_board(board),
        min_side_px=min_marker_px,
        marker_ids=ids,
    )


@inspect_app.command("photos")
def photos(  # noqa: PLR0917 (Typer maps parameters to options)
    files: Annotated[list[Path], typer.Argument(help="survey photos (JPEG/PNG)")],
    frontage: FrontageOption,
    calibration: Annotated[
        Path,
        typer.Option(
            help='camera calibration: JSON {"matrix": …, "distortion": …} or {"fx", "fy", "cx",'
            ' "cy"}, RealSense JSON, ROS camera_info YAML or OpenCV FileStorage (YAML/XML)'
        ),
    ],
    marker_mm: Annotated[float, typer.Option(help="printed side of the ground marker")] = 150.0,
    marker_dictionary: Annotated[
        str, typer.Option(help="ArUco dictionary of the marker (4X4_50, 5X5_100, 6X6_250, …)")
    ] = "4X4_50",
    marker_id: Annotated[
        int | None, typer.Option(help="the ground marker's id (default: the largest found)")
    ] = None,
    marker_ids: MarkerIdsOption = None,
    board: BoardOption = None,
    min_marker_px: MinMarkerPxOption = None,
    surveyed_at: SurveyedOption = None,
    first_block: FirstBlockOption = 0,
    station: StationOption = None,
    frontage_blocks: FrontageBlocksOption = None,
    no_notice: NoNoticeOption = False,
    config: ConfigOption = None,
) -> None:
    """Measure survey photos (crack and joint gap widths) and store the inspections.

    A photo in which no joint or crack is found, or whose marker is too small
    for the accuracy claimed, is recorded as not measured, never as a pass."""
    from sidewalk.analytics.defects.camera_inputs import DefectInputError
    from sidewalk.analytics.inspect import load_calibration

    try:
        calib = load_calibration(calibration)
        spec = _fiducial(marker_mm, marker_dictionary, marker_id, marker_ids, board, min_marker_px)
    except DefectInputError as exc:
        fail(str(exc))
    _run(
        files,
        "photo",
        frontage=frontage,
        config=config,
        surveyed_at=surveyed_at,
        first_block=first_block,
        no_notice=no_notice,
        station=station,
        frontage_blocks=frontage_blocks,
        calibration=calib,
        fiducial=spec,
    )


@inspect_app.command("depth")
def depth(  # noqa: PLR0917 (Typer maps parameters to options)
    files: Annotated[list[Path], typer.Argument(help="16-bit depth PNGs")],
    frontage: FrontageOption,
    intrinsics: Annotated[
        Path | None,
        typer.Option(
            help='intrinsics: JSON {"fx", "fy", "cx", "cy"} (flat or nested), RealSense JSON'
            " (with depth_units), ROS camera_info YAML or OpenCV FileStorage (YAML/XML)"
        ),
    ] = None,
    fx: Annotated[float | None, typer.Option(help="focal length x, pixels")] = None,
    fy: Annotated[float | None, typer.Option(help="focal length y, pixels")] = None,
    cx: Annotated[float | None, typer.Option(help="principal point x, pixels")] = None,
    cy: Annotated[float | None, typer.Option(help="principal point y, pixels")] = None,
    depth_scale: Annotated[
        float | None,
        typer.Option(help="depth units per count, in --depth-unit (e.g. 0.25 for 0.25 mm)"),
    ] = None,
    depth_unit: Annotated[str, typer.Option(help="unit of --depth-scale: mm, m, cm, um")] = "mm",
    gravity: Annotated[
        str | None, typer.Option(help="gravity (down) in the camera frame 'x,y,z', for cross-slope")
    ] = None,
    accel: Annotated[
        str | None,
        typer.Option(help="IMU accelerometer at rest 'x,y,z' in the camera frame (reads up)"),
    ] = None,
    level: Annotated[
        str | None, typer.Option(help="camera levelled: nadir (looking straight down) or horizon")
    ] = None,
    toward_curb: Annotated[
        str, typer.Option(help="image direction toward the curb: left, right, up, down, or x,y,z")
    ] = "down",
    surveyed_at: SurveyedOption = None,
    first_block: FirstBlockOption = 0,
    station: StationOption = None,
    frontage_blocks: FrontageBlocksOption = None,
    no_notice: NoNoticeOption = False,
    config: ConfigOption = None,
) -> None:
    """Measure depth maps (faults, gaps, deterioration) and store the inspections.

    A map with no joint found (the camera is centred over one) or in other
    depth units than given is recorded as not measured, never as a pass.
    Cross-slope needs --gravity, --accel or --level."""
    from sidewalk.analytics.defects import DepthIntrinsics
    from sidewalk.analytics.defects.camera_inputs import (
        DefectInputError,
        depth_scale_mm,
        level_reference,
    )
    from sidewalk.analytics.inspect import load_intrinsics

    try:
        scale = None if depth_scale is None else depth_scale_mm(depth_scale, depth_unit)
        if depth_scale is None and depth_unit != "mm":
            scale = depth_scale_mm(None, depth_unit)
        ref = level_reference(gravity=gravity, accel=accel, level=level, toward_curb=toward_curb)
        if intrinsics is not None:
            intr = load_intrinsics(intrinsics, depth_scale_mm=scale)
        elif fx is not None and fy is not None and cx is not None and cy is not None:
            intr = DepthIntrinsics(fx, fy, cx, cy, depth_scale_mm=scale or 1.0)
        else:
            fail("give --intrinsics FILE, or all of --fx --fy --cx --cy")
    except DefectInputError as exc:
        fail(str(exc))
    _run(
        files,
        "depth",
        frontage=frontage,
        config=config,
        surveyed_at=surveyed_at,
        first_block=first_block,
        no_notice=no_notice,
        station=station,
        frontage_blocks=frontage_blocks,
        intrinsics=intr,
        level=ref,
    )


@inspect_app.command("laser")
def laser(  # noqa: PLR0917 (Typer maps parameters to options)
    files: Annotated[list[Path], typer.Argument(help="laser-line frames (8-bit grey PNG)")],
    frontage: FrontageOption,
    rig: Annotated[
        Path,
        typer.Option(
            help='rig calibration JSON {"matrix", "distortion", "plane_normal",'
            ' "plane_offset_mm", "plane2_normal", "plane2_offset_mm", "up"}'
            " (the second plane for the two-stripe survey rig)"
        ),
    ],
    surveyed_at: SurveyedOption = None,
    first_block: FirstBlockOption = 0,
    station: StationOption = None,
    frontage_blocks: FrontageBlocksOption = None,
    no_notice: NoNoticeOption = False,
    config: ConfigOption = None,
) -> None:
    """Measure laser-line frames (fault, gap and edge of the joint each crosses)."""
    from sidewalk.analytics.inspect import load_laser_rig

    try:
        laser_rig = load_laser_rig(rig)
    except (OSError, ValueError, KeyError) as exc:
        fail(f"rig calibration {rig}: {exc}")
    _run(
        files,
        "laser",
        frontage=frontage,
        config=config,
        surveyed_at=surveyed_at,
        first_block=first_block,
        no_notice=no_notice,
        station=station,
        frontage_blocks=frontage_blocks,
        rig=laser_rig,
    )


@inspect_app.command("again")
def again(  # noqa: PLR0917 (Typer maps parameters to options)
    inspection: Annotated[int, typer.Argument(help="number of the not-measured inspection")],
    by: Annotated[str, typer.Option("--by", help="who asks for the new measurement")],
    file: Annotated[
        Path | None,
        typer.Option("--file", help="the survey file, if the store did not keep it"),
    ] = None,
    calibration: Annotated[
        Path | None, typer.Option(help="photo: camera calibration (as for inspect photos)")
    ] = None,
    marker_mm: Annotated[float, typer.Option(help="photo: printed side of the marker(s)")] = 150.0,
    marker_dictionary: Annotated[str, typer.Option(help="photo: ArUco dictionary")] = "4X4_50",
    marker_id: Annotated[int | None, typer.Option(help="photo: the ground marker's id")] = None,
    marker_ids: MarkerIdsOption = None,
    board: BoardOption = None,
    min_marker_px: MinMarkerPxOption = None,
    intrinsics: Annotated[
        Path | None, typer.Option(help="depth map: intrinsics file (as for inspect depth)")
    ] = None,
    depth_scale: Annotated[
        float | None, typer.Option(help="depth map: units per count, in --depth-unit")
    ] = None,
    depth_unit: Annotated[str, typer.Option(help="depth map: mm, m, cm, um")] = "mm",
    rig: Annotated[Path | None, typer.Option(help="laser frame: rig calibration JSON")] = None,
    config: ConfigOption = None,
) -> None:
    """Measure a stored "not measured" file again with new options.

    The new result is stored beside the first (which is kept as it was), with
    who asked, when and the options given. The file comes from the evidence
    store (kept when it was not measured) or --file. No notice is issued."""
    from datetime import UTC, datetime

    from sidewalk.analytics.defects.camera_inputs import DefectInputError, depth_scale_mm
    from sidewalk.analytics.inspect import load_calibration, load_intrinsics, load_laser_rig
    from sidewalk.analytics.reinspect import remeasure

    options = {
        "calibration": None if calibration is None else str(calibration),
        "marker_mm": marker_mm if calibration is not None else None,
        "marker_dictionary": marker_dictionary if calibration is not None else None,
        "marker_id": marker_id,
        "marker_ids": marker_ids,
        "board": board,
        "min_marker_px": min_marker_px,
        "intrinsics": None if intrinsics is None else str(intrinsics),
        "depth_scale": depth_scale,
        "depth_unit": depth_unit if intrinsics is not None else None,
        "rig": None if rig is None else str(rig),
    }
    try:
        calib = None if calibration is None else load_calibration(calibration)
        spec = _fiducial(marker_mm, marker_dictionary, marker_id, marker_ids, board, min_marker_px)
        scale = None if depth_scale is None else depth_scale_mm(depth_scale, depth_unit)
        intr = None if intrinsics is None else load_intrinsics(intrinsics, depth_scale_mm=scale)
    except DefectInputError as exc:
        fail(str(exc))
    try:
        laser_rig = None if rig is None else load_laser_rig(rig)
    except (OSError, ValueError, KeyError) as exc:
        fail(f"--rig {rig}: {exc}")
    try:
        raw = None if file is None else file.read_bytes()
    except OSError as exc:
        fail(f"--file {file}: {exc.strerror or exc}")
    place = village(config)
    with _stores(place) as (cases, evidence):
        out = remeasure(
            inspection, by=by, cases=cases, evidence=evidence, profile=place.profile,
            options=options, source=raw, calibration=calib, fiducial=spec, intrinsics=intr,
            rig=laser_rig, now=datetime.now(UTC),
        )  # fmt: skip
    first, new = out.first, out.again
    console().print(
        f"inspection {first.id} ({Path(first.source_name).name}, frontage {first.frontage_id}):"
        f" first {first.failure}"
    )
    if not out.ok:
        console().print(f"[red]measured again as inspection {new.id}: failed: {new.failure}[/red]")
        raise typer.Exit(1)
    console().print(f"measured again as inspection {new.id}: ok (the first is kept)")
    for b in new.blocks:
        for c in b["checks"]:
            verdict = "[red]DEFECTIVE[/red]" if c["failed"] else "ok"
            value = f"{c['measured_mm']:.1f} ± {c['uncertainty_mm']:.1f} mm"
            console().print(
                f"block {b['block']} {c['rule']}: {value} vs {c['limit_mm']:.2f} mm, {verdict}"
                + ("" if c["confident"] else " (within 2σ)")
                + f" ({c['citation']})"
            )
    console().print("no notice issued (a new survey batch issues notices)")


@inspect_app.command("demo-scene")
def demo_scene(
    out_dir: Annotated[Path, typer.Argument(help="folder to write the demo files to")],
    fault_in: Annotated[float, typer.Option(help="vertical fault at the joint, inches")] = 1.0,
    seed: Annotated[int, typer.Option(help="scene seed")] = 11,
) -> None:
    """A synthetic walk with a known fault: depth PNG, photo, two-stripe laser frame and rig."""
    from sidewalk.analytics.defects import MM_PER_INCH
    from sidewalk.analytics.inspect import write_demo_scene

    try:
        paths = write_demo_scene(out_dir, fault_mm=fault_in * MM_PER_INCH, seed=seed)
    except ModuleNotFoundError as e:
        if not (e.name or "").startswith("sidewalk.testkit"):
            raise
        # The renderer is a development tool: a server installed without it says so.
        console().print(
            "demo-scene needs the demo renderer, which comes with the development tools"
            " (install with: uv sync, or ./scripts/bootstrap); a server installed without"
            " them does not have it"
        )
        raise typer.Exit(1) from None
    for name, path in paths.items():
        console().print(f"{name}: {path}")
    console().print(
        f"try: sidewalk inspect depth {paths['depth']} --frontage ID"
        f" --intrinsics {paths['intrinsics']}"
    )


@inspect_app.command("phone-camera")
def phone_camera(  # noqa: PLR0917 (Typer maps parameters to options)
    photos: Annotated[
        list[Path] | None,
        typer.Argument(help="photos of the printed ChArUco target from the phone (3 or more)"),
    ] = None,
    intrinsics: Annotated[
        Path | None,
        typer.Option(
            help="an intrinsics file instead of photos (JSON, ROS camera_info YAML, OpenCV"
            " FileStorage, RealSense JSON), for the picture as the phone stores it"
        ),
    ] = None,
    make: Annotated[
        str | None, typer.Option(help="the phone's make (default: the photos')")
    ] = None,
    model: Annotated[
        str | None, typer.Option(help="the phone's model, as its photos name it (default: theirs)")
    ] = None,
    replace: Annotated[bool, typer.Option(help="replace this phone's calibration")] = False,
    target: Annotated[
        Path | None, typer.Option(help="write the printable ChArUco target to this PNG and stop")
    ] = None,
    config: ConfigOption = None,
) -> None:
    """Add a phone's calibration, so its round photos are measured with its own lens.

    From photos of the printed ChArUco target (--target writes it; print at 100 %), the
    phone named by their EXIF; or from an intrinsics file with --make
    and --model as the phone's photos name it."""
    from sidewalk.analytics.defects.camera_inputs import DefectInputError
    from sidewalk.analytics.phone_cameras import (
        PHONE_CAMERAS_DIR,
        add_phone_camera,
        write_calibration_target,
    )
    from sidewalk.cli.common import load_settings

    if target is not None:
        try:
            w, h = write_calibration_target(target)
        except DefectInputError as exc:
            fail(str(exc))
        console().print(
            f"{target}: print at 100 % ({w:.0f} x {h:.0f} mm), lay it flat, take 3 or more"
            " photos of it from different angles with the phone", soft_wrap=True,
        )  # fmt: skip
        return
    registry = load_settings(config).data_dir / PHONE_CAMERAS_DIR
    try:
        added = add_phone_camera(
            registry, photos=photos or None, intrinsics=intrinsics, make=make, model=model,
            replace=replace,
        )  # fmt: skip
    except DefectInputError as exc:
        fail(str(exc))
    size = f" at {added.size[0]}x{added.size[1]} px" if added.size else ""
    fit = f", {added.rms_px:.2f} px reprojection error" if added.rms_px is not None else ""
    console().print(f"{added.named}: calibration saved to {added.path}{size}{fit}", soft_wrap=True)
