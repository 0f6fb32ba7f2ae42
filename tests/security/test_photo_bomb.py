"""A photo whose header declares more pixels than a phone camera takes is refused undecoded."""

from __future__ import annotations

import cv2
import numpy as np

from tests.dashboard.test_rounds import FRONTAGE, Round, village

__all__ = ["village"]


def bomb(width: int, height: int) -> bytes:
    """A small JPEG whose frame header claims ``width`` x ``height``."""
    ok, jpeg = cv2.imencode(".jpg", np.zeros((64, 64), np.uint8))
    assert ok
    raw = bytearray(jpeg.tobytes())
    sof = raw.index(b"\xff\xc0")
    raw[sof + 5 : sof + 9] = height.to_bytes(2, "big") + width.to_bytes(2, "big")
    return bytes(raw)


def test_a_20000_px_square_photo_is_refused_before_decoding(village: Round) -> None:
    response = village.inspector.post(
        f"/api/rounds/{FRONTAGE}/photos", content=bomb(20000, 20000),
        headers={"Content-Type": "image/jpeg"},
    )  # fmt: skip
    assert response.status_code == 413, response.text
    assert "20000 x 20000 pixels" in response.json()["detail"]
    over = village.inspector.post(
        f"/api/rounds/{FRONTAGE}/photos", content=b"\xff\xd8\xff" + b"0" * (21 * 1024 * 1024),
        headers={"Content-Type": "image/jpeg"},
    )  # fmt: skip
    assert over.status_code == 413
    assert "over 20 MB" in over.json()["detail"]
