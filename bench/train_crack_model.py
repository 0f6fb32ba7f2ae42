"""Train the learned crack detector on the CrackForest tuning half and write
``analytics/sidewalk/analytics/defects/crack_model.npz``.

    .venv/bin/python bench/train_crack_model.py [--out PATH] [--seed 0]

Tuning half: list positions 0, 2, ... of the sorted masks (images 001, 003,
..., 079). The other 40 images are never read here.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import cv2
import numpy as np
from numpy.typing import NDArray

from sidewalk.analytics.defects.crack_model import MODEL_PATH, CrackModel, train_crack_model
from sidewalk.analytics.defects.io import read_crackforest_mask, read_image

CFD = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "cracks" / "crackforest"


def crackforest(half: str) -> tuple[list[str], list[NDArray[np.uint8]], list[NDArray[np.uint8]]]:
    """Names, grey images and masks of one half: "tuning" or "held-out"."""
    mats = sorted((CFD / "groundTruth").glob("*.mat"))
    mats = mats[0::2] if half == "tuning" else mats[1::2]
    names, grays, masks = [], [], []
    for mat in mats:
        bgr = read_image(CFD / "image" / f"{mat.stem}.jpg")
        names.append(mat.stem)
        grays.append(np.asarray(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), np.uint8))
        masks.append(read_crackforest_mask(mat))
    return names, grays, masks


def train(seed: int = 0) -> CrackModel:
    _, grays, masks = crackforest("tuning")
    return train_crack_model(grays, masks, seed=seed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=MODEL_PATH)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    if not CFD.is_dir():
        print(f"CrackForest not found at {CFD}")
        return 1
    t = time.perf_counter()
    model = train(args.seed)
    model.save(args.out)
    print(
        f"trained on 40 tuning images in {time.perf_counter() - t:.0f} s; post-processing: grow >"
        f" {model.low}, seed > {model.high}, components >= {model.min_component_px} px,"
        f" elongation >= {model.min_elongation}; written to {args.out}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
