"""Capture: reconnect on loss (a real video file through OpenCV, and a scripted opener),
night exposure steering, and the evidence-frame policy."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from sidewalk.edge.camera.capture import (
    Capture,
    ExposureSetting,
    NightExposure,
    OpenCvCapture,
    Source,
    VideoCaptureLike,
    open_source,
    parse_source,
)
from sidewalk.edge.camera.evidence import EvidencePolicy, EvidenceSelector, encode_jpeg

Image = npt.NDArray[np.uint8]


def write_video(path: Path, frames: int) -> None:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter.fourcc(*"MJPG"), 5.0, (64, 48))
    for i in range(frames):
        writer.write(np.full((48, 64, 3), 20 * i + 10, np.uint8))
    writer.release()


def test_parse_source() -> None:
    assert parse_source("0") == 0
    assert parse_source("rtsp://cam.local/stream1") == "rtsp://cam.local/stream1"
    assert parse_source("/var/lib/sidewalk/test.mp4") == "/var/lib/sidewalk/test.mp4"


def test_file_source_end_is_a_loss_and_capture_reconnects(tmp_path: Path) -> None:
    video = tmp_path / "pole.avi"
    write_video(video, 3)
    now = [0.0]
    cap = Capture(str(video), backoff_initial_s=1.0, clock=lambda: now[0])
    first = [cap.read() for _ in range(3)]
    assert all(f is not None for f in first)
    assert cap.read() is None  # end of file: the stream is lost
    assert cap.read() is None  # still within the back-off
    now[0] = 1.5
    again = cap.read()
    assert again is not None
    assert cap.reconnects == 1
    assert abs(int(again.mean()) - 10) <= 3  # the stream restarted from its first frame
    cap.close()


class ScriptedCapture:
    """A capture that opens or not, then delivers a fixed number of frames."""

    def __init__(self, opens: bool, frames: int) -> None:
        self.opens, self.frames = opens, frames
        self.props: list[tuple[int, float]] = []

    def is_opened(self) -> bool:
        return self.opens

    def read(self) -> tuple[bool, Image | None]:
        if self.frames <= 0:
            return False, None
        self.frames -= 1
        return True, np.full((4, 4, 3), 5, np.uint8)  # a dark night frame

    def set(self, prop_id: int, value: float) -> bool:
        self.props.append((prop_id, value))
        return True

    def release(self) -> None:
        self.opens = False


def test_backoff_doubles_while_the_camera_is_down_then_resets() -> None:
    script = [ScriptedCapture(False, 0), ScriptedCapture(False, 0), ScriptedCapture(True, 2)]
    opened: list[Source] = []

    def opener(source: Source) -> VideoCaptureLike:
        opened.append(source)
        return script.pop(0)

    now = [0.0]
    cap = Capture("rtsp://cam/1", opener=opener, backoff_initial_s=1.0, clock=lambda: now[0])
    assert cap.read() is None  # first open fails; next try at t=1
    now[0] = 0.9
    assert cap.read() is None
    assert len(opened) == 1
    now[0] = 1.0
    assert cap.read() is None  # second failure; back-off doubles to 2 s -> next at t=3
    now[0] = 2.9
    assert cap.read() is None
    assert len(opened) == 2
    now[0] = 3.0
    assert cap.read() is not None
    assert cap.reconnects == 1


def test_usb_camera_at_night_switches_to_manual_exposure() -> None:
    scripted = ScriptedCapture(True, 5)
    cap = Capture(0, opener=lambda s: scripted, clock=lambda: 0.0)
    assert cap.read() is not None
    assert (cv2.CAP_PROP_AUTO_EXPOSURE, 1) in scripted.props
    assert scripted.props[-1][0] == cv2.CAP_PROP_EXPOSURE


def test_night_exposure_steers_toward_target_and_hands_back() -> None:
    night = NightExposure(night_luma=40, target_luma=110, min_exposure=50, max_exposure=5000)
    assert night.update(100.0) == ExposureSetting(automatic=True)
    manual = night.update(10.0)
    assert not manual.automatic
    longer = night.update(20.0)
    assert longer.exposure > manual.exposure
    for _ in range(30):
        night.update(250.0)  # dawn: brighter and brighter
    assert night.setting.automatic


def test_open_source_opens_a_file_with_opencv(tmp_path: Path) -> None:
    video = tmp_path / "clip.avi"
    write_video(video, 1)
    cap = open_source(str(video))
    assert isinstance(cap, OpenCvCapture)
    assert cap.is_opened()
    ok, frame = cap.read()
    assert ok
    assert frame is not None
    cap.release()


def test_evidence_on_change_only_and_heartbeat() -> None:
    selector = EvidenceSelector(EvidencePolicy(min_interval_s=60, max_interval_s=3600))
    snow = np.full((90, 160, 3), 220, np.uint8)
    assert selector.consider(snow, cover=0.9, width_mm=0.0, now_s=0)  # first frame
    assert not selector.consider(snow, 0.3, 1300.0, now_s=30)  # changed, but too soon
    assert selector.consider(snow, 0.3, 1300.0, now_s=120)  # shovelled
    assert not selector.consider(snow, 0.3, 1300.0, now_s=200)  # nothing changed
    car = snow.copy()
    car[30:70, 40:120] = 40
    assert selector.consider(car, 0.3, 1300.0, now_s=300)  # the picture changed
    brighter = np.clip(car.astype(int) + 20, 0, 255).astype(np.uint8)
    assert not selector.consider(brighter, 0.3, 1300.0, now_s=400)  # a cloud moved
    assert selector.consider(brighter, 0.3, 1300.0, now_s=300 + 3600)  # heartbeat
    jpeg = encode_jpeg(car)
    assert jpeg[:2] == b"\xff\xd8"


def test_jpeg_file_source_keeps_serving_the_file(tmp_path: Path) -> None:
    still = tmp_path / "pole.jpg"
    cv2.imwrite(str(still), np.full((48, 64, 3), 90, np.uint8))
    now = [0.0]
    cap = Capture(str(still), clock=lambda: now[0])
    frames = [cap.read() for _ in range(5)]
    assert all(f is not None and abs(int(f.mean()) - 90) <= 3 for f in frames)
    assert cap.reconnects == 0
    cv2.imwrite(str(still), np.full((48, 64, 3), 200, np.uint8))  # replaced on disk
    newest = cap.read()
    assert newest is not None
    assert abs(int(newest.mean()) - 200) <= 3
    cap.close()
