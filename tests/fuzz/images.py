"""Hypothesis strategies for bad image inputs: random bytes, cut and corrupted
encodings, lying headers, tiny images, odd depths and channel counts.

Shared by the property tests and ``bench/fuzz.py``.
"""

from __future__ import annotations

import struct
import zlib

import cv2
import numpy as np
from hypothesis import strategies as st

# What each encoder takes: (extension, dtypes, channel counts).
_FORMATS = {
    ".png": ("uint8", "uint16"),
    ".jpg": ("uint8",),
    ".bmp": ("uint8",),
    ".tiff": ("uint8", "uint16", "float32"),
    ".webp": ("uint8",),
}


def png_header(width: int, height: int, depth: int = 8, colour: int = 2) -> bytes:
    """A PNG signature and IHDR (valid CRC) claiming ``width`` x ``height``, and no data."""
    ihdr = b"IHDR" + struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    chunk = struct.pack(">I", 13) + ihdr + struct.pack(">I", zlib.crc32(ihdr))
    end = struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND"))
    return b"\x89PNG\r\n\x1a\n" + chunk + end


def jpeg_header(width: int, height: int) -> bytes:
    """A JPEG start and baseline frame header (SOF0) claiming ``width`` x ``height``."""
    sof = struct.pack(">BBHBHHB", 0xFF, 0xC0, 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + sof + b"\xff\xd9"


@st.composite
def arrays(draw: st.DrawFn, max_side: int = 48) -> np.ndarray:
    """A small image of any dtype the encoders take, 1 to 4 channels."""
    h, w = draw(st.integers(1, max_side)), draw(st.integers(1, max_side))
    dtype = draw(st.sampled_from(["uint8", "uint16", "float32"]))
    channels = draw(st.sampled_from([None, 3, 4]))
    shape = (h, w) if channels is None else (h, w, channels)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    pattern = draw(st.sampled_from(["noise", "flat", "zeros", "max"]))
    top = {"uint8": 255, "uint16": 65535, "float32": 1.0}[dtype]
    if pattern == "noise":
        data = rng.uniform(0, top, shape)
    elif pattern == "flat":
        data = np.full(shape, rng.uniform(0, top))
    else:
        data = np.full(shape, 0 if pattern == "zeros" else top)
    return data.astype(dtype)


@st.composite
def encoded(draw: st.DrawFn, max_side: int = 48) -> bytes:
    """A small image encoded by OpenCV in a format that takes its dtype."""
    img = draw(arrays(max_side))
    exts = [e for e, dtypes in _FORMATS.items() if str(img.dtype) in dtypes]
    ext = draw(st.sampled_from(exts))
    if ext == ".jpg" and img.ndim == 3 and img.shape[2] == 4:
        img = img[:, :, :3]  # JPEG has no alpha
    ok, buf = cv2.imencode(ext, img)
    assert ok, (ext, img.dtype, img.shape)
    return bytes(buf)


@st.composite
def damaged(draw: st.DrawFn) -> bytes:
    """An encoded image cut short, with bytes flipped, or with garbage in front."""
    body = draw(encoded())
    kind = draw(st.sampled_from(["truncate", "flip", "prefix"]))
    if kind == "truncate":
        return body[: draw(st.integers(0, max(0, len(body) - 1)))]
    if kind == "flip":
        out = bytearray(body)
        for _ in range(draw(st.integers(1, 8))):
            i = draw(st.integers(0, len(out) - 1))
            out[i] ^= draw(st.integers(1, 255))
        return bytes(out)
    return draw(st.binary(min_size=1, max_size=16)) + body


lying_headers = st.one_of(
    st.builds(png_header, st.integers(1, 2**31 - 1), st.integers(1, 2**31 - 1)),
    st.builds(jpeg_header, st.integers(1, 65535), st.integers(1, 65535)),
)

image_inputs = st.one_of(
    st.binary(max_size=256),
    encoded(),
    damaged(),
    lying_headers,
)
