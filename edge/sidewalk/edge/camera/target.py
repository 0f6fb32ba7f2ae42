"""Printable ArUco calibration sheets (US Letter, one marker each).

Each sheet carries its marker (DICT_4X4_50), its id and size, an arrow that
must point along the frontage (+x) when laid down, and a 100 mm bar to check
that the printer did not scale the page. Generate with::

    uv run python -m sidewalk.edge.camera.target hardware/targets --ids 0 1 2 3
"""

from __future__ import annotations

import argparse
from pathlib import Path

import cv2
import numpy as np
import numpy.typing as npt

from sidewalk.edge.camera.geometry import ARUCO_DICTIONARY

LETTER_IN = (8.5, 11.0)
MM_PER_IN = 25.4
Image = npt.NDArray[np.uint8]


def marker_sheet(marker_id: int, marker_mm: float = 180.0, dpi: int = 300) -> Image:
    """A white Letter page at ``dpi`` with the marker centred and its labels."""
    px_per_mm = dpi / MM_PER_IN
    width, height = round(LETTER_IN[0] * dpi), round(LETTER_IN[1] * dpi)
    page = np.full((height, width), 255, np.uint8)
    side = round(marker_mm * px_per_mm)
    if side > width - 2 * round(10 * px_per_mm):
        raise ValueError(f"a {marker_mm} mm marker does not fit a Letter page with margins")
    dictionary = cv2.aruco.getPredefinedDictionary(ARUCO_DICTIONARY)
    marker = cv2.aruco.generateImageMarker(dictionary, marker_id, side)
    top, left = (height - side) // 2, (width - side) // 2
    page[top : top + side, left : left + side] = marker

    font, scale, thick = cv2.FONT_HERSHEY_SIMPLEX, dpi / 150, max(1, dpi // 100)
    label = f"Sidewalk Watch marker ID {marker_id}  4x4_50  {marker_mm:g} mm"
    cv2.putText(page, label, (left, top - round(12 * px_per_mm)), font, scale, 0, thick)
    # The arrow shows the sheet's +x; lay it pointing along the frontage.
    y_arrow = top + side + round(20 * px_per_mm)
    cv2.arrowedLine(
        page, (left, y_arrow), (left + side // 2, y_arrow), 0, thick * 2, tipLength=0.15
    )
    cv2.putText(
        page,
        "+x along frontage",
        (left + side // 2 + round(5 * px_per_mm), y_arrow + 10),
        font,
        scale,
        0,
        thick,
    )
    y_bar = y_arrow + round(20 * px_per_mm)
    bar = round(100 * px_per_mm)
    cv2.rectangle(page, (left, y_bar), (left + bar, y_bar + round(3 * px_per_mm)), 0, -1)
    cv2.putText(
        page,
        "100 mm: measure after printing",
        (left + bar + round(5 * px_per_mm), y_bar + round(3 * px_per_mm)),
        font,
        scale,
        0,
        thick,
    )
    return page


def write_sheets(out_dir: Path, ids: list[int], marker_mm: float, dpi: int) -> list[Path]:
    """Write one PNG per marker id (with its dpi recorded) and return their paths."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for marker_id in ids:
        path = out_dir / f"aruco_4x4_50_id{marker_id}_{marker_mm:g}mm_letter.png"
        if not cv2.imwrite(str(path), marker_sheet(marker_id, marker_mm, dpi)):
            raise OSError(f"could not write {path}")
        paths.append(path)
    return paths


def main(argv: list[str] | None = None) -> None:
    """Command line: write the calibration sheets."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--ids", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--marker-mm", type=float, default=180.0)
    parser.add_argument("--dpi", type=int, default=300)
    args = parser.parse_args(argv)
    for path in write_sheets(args.out_dir, args.ids, args.marker_mm, args.dpi):
        print(path)


if __name__ == "__main__":
    main()
