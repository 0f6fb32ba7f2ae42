"""The calibration hash: what a pole reports it runs and what the registry expects.

One camera view of one frontage is its walk region (image pixels) and its
image-to-ground homography (millimetres in the frontage frame). The pole
computes the same digest over what it runs as the server computes over what
the registry holds, so both live here, where the pole (which may import only
core) and storage can reach them. Values are rounded before hashing so that
floats that went through JSON, PostgreSQL and back still agree.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence


def calibration_hash(
    region: Sequence[Sequence[float]], homography: Sequence[Sequence[float]]
) -> str:
    """The hash of one camera view (rounded so floats agree)."""
    body = json.dumps(
        {
            "region": [[round(float(v), 3) for v in p] for p in region],
            "homography": [[round(float(v), 9) for v in r] for r in homography],
        },
        separators=(",", ":"),
        sort_keys=True,
    )
    return hashlib.sha256(body.encode()).hexdigest()


def pole_calibration_hash(views: Mapping[str, str]) -> str | None:
    """The hash over a pole's views, ``{frontage id: calibration_hash}``; None for none.

    Sorted by frontage id here (not by the database's collation, which may
    ignore hyphens), so the pole and every backend agree on the order.
    """
    if not views:
        return None
    body = ",".join(f"{fid}:{views[fid]}" for fid in sorted(views))
    return hashlib.sha256(body.encode()).hexdigest()
