"""The 80 % rule's count for one owner (§ 370-5): blocks surveyed, defective, and the whole.

Plain data, decided by the survey aggregation (``sidewalk.analytics.inspect.owner_survey``)
and quoted by the repair notice (``sidewalk.alerts.issue``); light to import, so the
notices need none of the measurement's OpenCV.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from decimal import Decimal
from typing import Any, Literal


@dataclass(frozen=True)
class FrontageCount:
    """One frontage's share of the owner's block total, and how it was known."""

    frontage: str
    blocks: int | None  # None: not known
    basis: Literal["recorded", "length_spacing", "unknown"]
    length_ft: float | None = None  # with "length_spacing": the frontage length ...
    spacing_ft: float | None = None  # ... and the median measured joint spacing
    joints: int = 0  # stationed joints the spacing comes from


@dataclass(frozen=True)
class BlockSurvey:
    """The 80 % rule's count for one owner, as the survey aggregation decided it.

    ``owner_blocks`` is None when any frontage's count is unknown; then the
    survey is incomplete and the full replacement is never proposed.
    """

    surveyed_blocks: int
    defective_blocks: int
    owner_blocks: int | None
    survey_complete: bool
    replace_entire_sidewalk: bool
    frontages: tuple[FrontageCount, ...] = ()

    def __post_init__(self) -> None:
        if self.replace_entire_sidewalk and self.owner_blocks is None:
            raise ValueError("full replacement needs the owner's block total")
        if self.survey_complete and self.owner_blocks is None:
            raise ValueError("a survey without the owner's block total is not complete")

    @classmethod
    def recorded(
        cls, frontage: str, total_blocks: int, defective_blocks: int, share: float
    ) -> BlockSurvey:
        """Every block of a single-frontage owner surveyed, the count on record."""
        return cls(
            total_blocks,
            defective_blocks,
            total_blocks,
            True,
            total_blocks > 0
            and Decimal(defective_blocks) / Decimal(total_blocks) >= Decimal(str(share)),
            (FrontageCount(frontage, total_blocks, "recorded"),),
        )

    def describe(self) -> str:
        """The status as the dashboard shows it: N of M blocks defective (survey
        complete | incomplete: K of M surveyed); M is "?" while not known."""
        of = "?" if self.owner_blocks is None else str(self.owner_blocks)
        head = f"{self.defective_blocks} of {of} blocks defective"
        if self.survey_complete:
            return f"{head} (survey complete)"
        return f"{head} (incomplete: {self.surveyed_blocks} of {of} surveyed)"

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "frontages": [asdict(f) for f in self.frontages]}


# Why an image was not measured (``InputProblem`` values, the first part of a stored
# inspection's ``failure``), in the words the inspector and clerk read.
FAILURE_WORDS: dict[str, str] = {
    "unreadable": "the picture could not be read",
    "wrong_format": "the file is not a picture that can be measured",
    "too_small": "the picture is too small to measure",
    "too_large": "the picture is too large to measure",
    "no_fiducial": "the survey marker is not in the photo",
    "fiducial_too_small": "the survey marker is too small in the photo; take it closer",
    "fiducial_too_oblique": "the photo is at too steep an angle; hold the phone over the marker",
    "overexposed": "the photo is too bright",
    "underexposed": "the photo is too dark",
    "motion_blur": "the photo is blurred; hold the phone still",
    "no_ground_plane": "the walk's surface could not be found in the picture",
    "no_laser_line": "the laser line is not in the picture",
    "not_measured": "what the check needs was not seen (no joint or crack where one should be)",
    "measurement_failed": "the measurement failed; the village IT person has the details",
}
# ``not_measured`` details with their own words (others get the default above).
PHONE_NOT_CALIBRATED = "phone camera not calibrated"
_NOT_MEASURED_WORDS: dict[str, str] = {
    PHONE_NOT_CALIBRATED: "the phone's camera has no calibration on file"
    " (the village IT person adds one)",
    "no joint or crack found": "no joint or crack was found in the photo; take it over one",
    "no joint found": "no joint was found in the depth picture",
    "ground sample too coarse": "the photo is too far from the walk to measure the gap"
    " to 1/16 in; take it closer",
    "gap width too uncertain": "the gap cannot be measured to 1/16 in from this photo;"
    " take it closer, with the markers larger in the picture",
}


def failure_words(failure: str) -> str:
    """A stored inspection failure (``"problem: detail"``) as the inspector says it.

    Never the raw problem name; an unknown problem reads as a failed measurement."""
    problem, _, detail = failure.partition(":")
    problem, detail = problem.strip(), detail.strip()
    if problem == "not_measured":
        # A phone the marker alone cannot measure: the reason was written in the
        # inspector's words (``analytics.phone_cameras.choose``).
        head, _, said = detail.partition(":")
        if head.strip() == PHONE_NOT_CALIBRATED and said.strip():
            return said.strip()
        for start, words in _NOT_MEASURED_WORDS.items():
            if detail.startswith(start):
                return words
    return FAILURE_WORDS.get(problem, FAILURE_WORDS["measurement_failed"])
