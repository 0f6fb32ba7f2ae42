"""Hostile photo uploads to the inspector's round: what is not a whole phone photo is
refused with a 4xx in words, and nothing of it is kept in the evidence store."""

from __future__ import annotations

import cv2
import numpy as np

from tests.dashboard.test_rounds import FRONTAGE, Round, village
from tests.security.test_photo_bomb import peak_growth_mb

__all__ = ["village"]

MB = 1024 * 1024


def stored(village: Round) -> int:
    return sum(1 for _ in village.app.state.dashboard.evidence.root.rglob("*.jpg"))


def test_what_is_not_a_whole_phone_photo_is_refused_and_nothing_is_kept(village: Round) -> None:
    frame = np.random.default_rng(7).integers(0, 255, (480, 640, 3), np.uint8)
    ok, encoded = cv2.imencode(".jpg", frame)
    assert ok
    photo = bytes(encoded.tobytes())
    ok, png = cv2.imencode(".png", np.zeros((64, 64, 3), np.uint8))
    assert ok
    refused = {
        "a text file sent as a JPEG": (b"holiday.jpg: this is not a picture\n", 422),
        "a PNG where a JPEG is expected": (png.tobytes(), 422),
        "a truncated JPEG": (photo[: len(photo) // 2], 422),
        "a JPEG cut off before its image data": (photo[:600], 422),
        "only the JPEG start marker": (b"\xff\xd8\xff", 422),
        "an empty body": (b"", 422),
        "a JPEG start, then a web page": (b"\xff\xd8\xff<html><script>x()</script>", 422),
        "21 MB": (photo + b"\0" * (21 * MB), 413),
    }
    before = stored(village)
    for why, (body, status) in refused.items():
        with peak_growth_mb() as grown:
            response = village.inspector.post(
                f"/api/rounds/{FRONTAGE}/photos", content=body,
                headers={"Content-Type": "image/jpeg"},
            )  # fmt: skip
        assert response.status_code == status, (why, response.text[:200])
        detail = response.json()["detail"]
        assert isinstance(detail, str), (why, detail)
        assert detail.startswith("Photo: "), (why, detail)
        assert stored(village) == before, why
        # Never decoded, never held more than once: the 21 MB body is read in chunks and
        # refused at 20 MB (the test client holds its own copy outside this figure).
        assert grown() < 50, (why, grown())
    # A whole photo is kept: the refusals were for what was sent.
    kept = village.inspector.post(
        f"/api/rounds/{FRONTAGE}/photos", content=photo, headers={"Content-Type": "image/jpeg"}
    )
    assert kept.status_code == 200, kept.text
    assert stored(village) == before + 1
