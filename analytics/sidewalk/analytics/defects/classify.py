"""Measurements against the ordinance limits, and the per-owner 80 % rule."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from .limits import DefectLimits
from .results import BlockMeasurement, JointMeasurement, LaserProfile, SurfaceInspection

# A verdict is called confident when the measurement is this many standard
# uncertainties away from the limit.
CONFIDENCE_SIGMAS = 2.0


class Rule(StrEnum):
    """The measured rules of § 370-5 (limits come from ``DefectLimits``)."""

    VERTICAL_DIFFERENTIAL = "vertical_differential"  # (11)(a)
    HORIZONTAL_GAP = "horizontal_gap"  # (11)(b)
    DETERIORATION_DEPTH = "deterioration_depth"  # (11)(c)
    CROSS_SLOPE = "cross_slope"  # (6)
    JOINT_SPACING = "joint_spacing"  # (5)
    WALK_WIDTH = "walk_width"  # (7)


@dataclass(frozen=True, slots=True)
class RuleCheck:
    """One measured value against one limit (units of the rule, mm or mm/m)."""

    rule: Rule
    measured: float
    uncertainty: float
    limit: float
    failed: bool
    confident: bool


@dataclass(frozen=True, slots=True)
class BlockCondition:
    """Whether one block is defective under (11)(a)-(c), and why."""

    block: int
    defective: bool
    checks: tuple[RuleCheck, ...]


@dataclass(frozen=True, slots=True)
class OwnerReplacement:
    """The (11) 80 % rule over all of one owner's blocks.

    ``total_blocks`` counts the surveyed blocks, ``owner_blocks`` the owner's
    blocks along the frontages (the denominator; None when not known). The
    fraction is of ``owner_blocks`` when known: with part of the walk not yet
    surveyed it is a lower bound, so reaching the share still calls for
    replacement, but falling short does not clear the owner.
    """

    total_blocks: int
    defective_blocks: int
    defective_fraction: float
    replace_entire_sidewalk: bool
    owner_blocks: int | None = None
    survey_complete: bool = True

    def describe(self) -> str:
        """The count as a clerk reads it, saying what the share is of."""
        of = "?" if self.owner_blocks is None else str(self.owner_blocks)
        head = f"{self.defective_blocks} of {self.total_blocks} surveyed blocks defective"
        if self.survey_complete:
            return f"{head} ({self.defective_fraction:.0%} of {of} blocks)"
        return f"{head}; incomplete survey: {self.total_blocks} of {of} blocks"


@dataclass(frozen=True, slots=True)
class FrontageCondition:
    """Construction-standard checks along one frontage."""

    checks: tuple[RuleCheck, ...]
    compliant: bool


def _at_least(rule: Rule, value: float, unc: float, limit: float) -> RuleCheck:
    """Fails when value >= limit (the ordinance's "or more")."""
    return RuleCheck(
        rule, value, unc, limit, value >= limit, abs(value - limit) >= CONFIDENCE_SIGMAS * unc
    )


def _below(rule: Rule, value: float, unc: float, limit: float) -> RuleCheck:
    """Fails when value < limit (a minimum the walk must meet)."""
    return RuleCheck(
        rule, value, unc, limit, value < limit, abs(value - limit) >= CONFIDENCE_SIGMAS * unc
    )


def _above(rule: Rule, value: float, unc: float, limit: float) -> RuleCheck:
    """Fails when value > limit (a maximum the walk must not exceed)."""
    return RuleCheck(
        rule, value, unc, limit, value > limit, abs(value - limit) >= CONFIDENCE_SIGMAS * unc
    )


def classify_joint(joint: JointMeasurement, limits: DefectLimits) -> tuple[RuleCheck, RuleCheck]:
    """(11)(a) and (11)(b) for one joint or crack.

    The vertical check uses the largest differential along the observed joint;
    an occluded gap is an upper bound and is judged as such.
    """
    return (
        _at_least(
            Rule.VERTICAL_DIFFERENTIAL,
            joint.max_abs_vertical_differential_mm,
            joint.vertical_differential_uncertainty_mm,
            limits.vertical_differential_mm,
        ),
        _at_least(
            Rule.HORIZONTAL_GAP,
            joint.gap_width_mm,
            joint.gap_width_uncertainty_mm,
            limits.horizontal_gap_mm,
        ),
    )


def classify_laser(profile: LaserProfile, limits: DefectLimits) -> tuple[RuleCheck, RuleCheck]:
    """(11)(a) and (11)(b) for the joint one laser line crosses (the
    differential where the stripe crosses it; signed, judged by magnitude)."""
    return (
        _at_least(
            Rule.VERTICAL_DIFFERENTIAL,
            abs(profile.vertical_differential_mm),
            profile.vertical_differential_uncertainty_mm,
            limits.vertical_differential_mm,
        ),
        _at_least(
            Rule.HORIZONTAL_GAP,
            profile.gap_width_mm,
            profile.gap_width_uncertainty_mm,
            limits.horizontal_gap_mm,
        ),
    )


def classify_block(block: BlockMeasurement, limits: DefectLimits) -> RuleCheck:
    """(11)(c) for one block: its deepest deterioration. A pit cut by the edge
    of the view is a lower bound, so a pass on it is never confident."""
    check = _at_least(
        Rule.DETERIORATION_DEPTH,
        block.deterioration_depth_mm,
        block.deterioration_depth_uncertainty_mm,
        limits.deterioration_depth_mm,
    )
    if not check.failed and any(s.partial_view for s in block.spalls):
        return replace(check, confident=False)
    return check


def classify(inspection: SurfaceInspection, limits: DefectLimits) -> tuple[BlockCondition, ...]:
    """Every block of one inspection, defective or not.

    A joint at or over a limit makes both blocks beside it defective: the
    ordinance measures the differential and gap "between adjacent blocks" and
    names neither block, so each has a defective edge.
    """
    checks: dict[int, list[RuleCheck]] = {
        b.block: [classify_block(b, limits)] for b in inspection.blocks
    }
    for j in inspection.joints:
        for c in classify_joint(j, limits):
            checks.setdefault(j.block_before, []).append(c)
            checks.setdefault(j.block_after, []).append(c)
    return tuple(
        BlockCondition(b, any(c.failed for c in cs), tuple(cs)) for b, cs in sorted(checks.items())
    )


def owner_replacement_status(
    blocks: Iterable[BlockCondition | bool],
    limits: DefectLimits,
    *,
    owner_blocks: int | None = None,
) -> OwnerReplacement:
    """Apply the replacement rule to the owner's surveyed blocks.

    ``blocks`` are the surveyed blocks (``BlockCondition`` or plain booleans),
    not only the defective ones. ``owner_blocks`` is how many blocks the owner
    has along all frontages; without it ``blocks`` is taken to be every block.
    With fewer surveyed than the owner has, the survey is incomplete and the
    share is of the owner's count (unsurveyed blocks counted sound).
    """
    flags = [b.defective if isinstance(b, BlockCondition) else bool(b) for b in blocks]
    total = len(flags)
    bad = sum(flags)
    denom = total if owner_blocks is None else max(owner_blocks, total)
    frac = bad / denom if denom else 0.0
    return OwnerReplacement(
        total,
        bad,
        frac,
        denom > 0 and frac >= limits.replacement_fraction,
        denom,
        total >= denom,
    )


def joint_stations(
    stations_mm: Iterable[float], merge_within_mm: float = 150.0
) -> tuple[float, ...]:
    """Sorted joint positions along a frontage, one per joint: the same joint
    seen in two overlapping files lands within ``merge_within_mm`` of itself
    (station entry and in-image offset errors) and is averaged."""
    groups: list[list[float]] = []
    for s in sorted(stations_mm):
        if groups and s - groups[-1][-1] <= merge_within_mm:
            groups[-1].append(s)
        else:
            groups.append([s])
    return tuple(sum(g) / len(g) for g in groups)


def frontage_block_count(
    frontage_length_mm: float, joint_stations_mm: Sequence[float]
) -> int | None:
    """Blocks along a frontage from its length and the measured joint spacing
    (median of consecutive stationed joints; a missed joint doubles one
    spacing, not the median). None with fewer than two joints."""
    st = sorted(joint_stations_mm)
    gaps = sorted(b - a for a, b in itertools.pairwise(st))
    if not gaps:
        return None
    mid = len(gaps) // 2
    median = gaps[mid] if len(gaps) % 2 else (gaps[mid - 1] + gaps[mid]) / 2
    return max(1, round(frontage_length_mm / median))


def frontage_condition(
    limits: DefectLimits,
    *,
    joint_stations_mm: Sequence[float] = (),
    station_uncertainty_mm: float = 50.0,
    walk_widths_mm: Sequence[tuple[float, float]] = (),
    cross_slopes_mm_per_m: Sequence[tuple[float, float]] = (),
) -> FrontageCondition:
    """Joint spacing, walk width and cross-slope along a frontage.

    ``joint_stations_mm`` are the positions of the expansion joints along the
    frontage (from the survey's stationing, sorted or not); widths and slopes
    are (value, uncertainty) pairs from the photo and depth measurements.
    """
    checks: list[RuleCheck] = []
    st = sorted(joint_stations_mm)
    unc = station_uncertainty_mm * 2**0.5
    checks.extend(
        _above(Rule.JOINT_SPACING, b - a, unc, limits.max_joint_spacing_mm)
        for a, b in itertools.pairwise(st)
    )
    checks.extend(
        _below(Rule.WALK_WIDTH, w, u, limits.min_walk_width_mm) for w, u in walk_widths_mm
    )
    checks.extend(
        _below(Rule.CROSS_SLOPE, s, u, limits.min_cross_slope_mm_per_m)
        for s, u in cross_slopes_mm_per_m
    )
    return FrontageCondition(tuple(checks), not any(c.failed for c in checks))
