"""Evidence images on disk, content-addressed: the file's name is its sha256.

A notice cites a frame by the hash in its ``FrameRef``; the same bytes always
land in the same file, so a re-sent frame is harmless and a stored frame is
never overwritten. Files go to ``<root>/<first two hex digits>/<sha256>.jpg``
(fewer entries per directory) through a temporary file, fsync and an atomic
link, so a crash leaves either the whole image or nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
from pathlib import Path

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class EvidenceStore:
    """Content-addressed JPEG files under one directory."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, sha256: str) -> Path:
        """Where the image with this hash lives (whether or not it is there)."""
        if not _SHA256.match(sha256):
            raise ValueError(f"{sha256!r} is not a lowercase sha256 hex digest")
        return self.root / sha256[:2] / f"{sha256}.jpg"

    def put(self, body: bytes) -> str:
        """Store ``body`` durably under its sha256 (once) and return the hash."""
        sha = hashlib.sha256(body).hexdigest()
        target = self.path(sha)
        if target.exists():
            return sha
        target.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            # link, not rename: it fails instead of replacing an existing file,
            # which another writer of the same bytes may have made first.
            with contextlib.suppress(FileExistsError):
                os.link(tmp, target)
        finally:
            os.unlink(tmp)
        dir_fd = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
        return sha

    def get(self, sha256: str) -> bytes:
        """The image's bytes; ``FileNotFoundError`` if it never arrived."""
        return self.path(sha256).read_bytes()

    def __contains__(self, sha256: object) -> bool:
        return (
            isinstance(sha256, str) and bool(_SHA256.match(sha256)) and self.path(sha256).exists()
        )
