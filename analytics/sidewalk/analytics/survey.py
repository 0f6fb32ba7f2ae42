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
