"""Classification against limits, the 80 % rule and frontage checks."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sidewalk.analytics.defects import (
    BlockMeasurement,
    DefectLimits,
    EdgeType,
    JointMeasurement,
    Rule,
    SurfaceInspection,
    classify,
    frontage_block_count,
    frontage_condition,
    joint_stations,
    owner_replacement_status,
)


def _joint(diff: float, gap: float, before: int = 0, after: int = 1) -> JointMeasurement:
    return JointMeasurement(
        block_before=before,
        block_after=after,
        vertical_differential_mm=diff,
        vertical_differential_uncertainty_mm=0.2,
        max_abs_vertical_differential_mm=abs(diff),
        gap_width_mm=gap,
        gap_width_uncertainty_mm=0.3,
        edge_type=EdgeType.TOOLED_JOINT,
        straightness_rms_mm=0.2,
        observed_length_mm=800.0,
        center_mm=(0.0, 0.0, 1000.0),
    )


def _block(i: int, depth: float = 0.0) -> BlockMeasurement:
    return BlockMeasurement(i, depth, 0.3, 0.0, 1.0, None, None, (), (0.0, 0.0, 1000.0))


def test_clyman_values_are_the_ordinance_in_mm(clyman: DefectLimits) -> None:
    assert clyman.vertical_differential_mm == pytest.approx(19.05)
    assert clyman.horizontal_gap_mm == pytest.approx(31.75)
    assert clyman.deterioration_depth_mm == pytest.approx(12.7)
    assert clyman.min_cross_slope_mm_per_m == pytest.approx(20.833, abs=1e-3)
    assert clyman.max_joint_spacing_mm == pytest.approx(15240.0)


def test_limit_itself_is_defective_and_just_under_is_not(clyman: DefectLimits) -> None:
    at = SurfaceInspection((_joint(-19.05, 5.0),), (_block(0), _block(1)), 1.0)
    under = SurfaceInspection((_joint(19.0, 31.7),), (_block(0), _block(1)), 1.0)
    assert all(b.defective for b in classify(at, clyman))
    assert not any(b.defective for b in classify(under, clyman))


def test_joint_defect_marks_both_adjacent_blocks_only(clyman: DefectLimits) -> None:
    insp = SurfaceInspection(
        (_joint(2.0, 40.0, 0, 1), _joint(1.0, 3.0, 1, 2)), (_block(0), _block(1), _block(2)), 1.0
    )
    flags = {b.block: b.defective for b in classify(insp, clyman)}
    assert flags == {0: True, 1: True, 2: False}
    failed = [c.rule for b in classify(insp, clyman) for c in b.checks if c.failed]
    assert Rule.HORIZONTAL_GAP in failed
    assert Rule.VERTICAL_DIFFERENTIAL not in failed


def test_deterioration_depth(clyman: DefectLimits) -> None:
    insp = SurfaceInspection((), (_block(0, 12.7), _block(1, 12.6)), 1.0)
    assert [b.defective for b in classify(insp, clyman)] == [True, False]


def test_other_limits_change_the_verdicts(clyman: DefectLimits) -> None:
    """Nothing is hard-coded: a stricter profile flags what Clyman's does not."""
    insp = SurfaceInspection((_joint(10.0, 20.0),), (_block(0, 8.0), _block(1)), 1.0)
    assert not any(b.defective for b in classify(insp, clyman))
    strict = replace(clyman, vertical_differential_mm=9.5)
    assert all(b.defective for b in classify(insp, strict))
    lax_gap = replace(clyman, horizontal_gap_mm=15.0)
    assert all(b.defective for b in classify(insp, lax_gap))
    shallow = replace(clyman, deterioration_depth_mm=6.0)
    assert classify(insp, shallow)[0].defective


def test_confidence_reflects_uncertainty(clyman: DefectLimits) -> None:
    close = classify(SurfaceInspection((_joint(19.2, 1.0),), (), 1.0), clyman)[0]
    far = classify(SurfaceInspection((_joint(25.0, 1.0),), (), 1.0), clyman)[0]
    vd = next(c for c in close.checks if c.rule is Rule.VERTICAL_DIFFERENTIAL)
    vf = next(c for c in far.checks if c.rule is Rule.VERTICAL_DIFFERENTIAL)
    assert vd.failed
    assert not vd.confident
    assert vf.failed
    assert vf.confident


@pytest.mark.parametrize(
    ("bad", "total", "replace_all"),
    [(8, 10, True), (7, 10, False), (4, 5, True), (0, 3, False), (0, 0, False)],
)
def test_owner_replacement_rule(
    clyman: DefectLimits, bad: int, total: int, replace_all: bool
) -> None:
    flags = [True] * bad + [False] * (total - bad)
    status = owner_replacement_status(flags, clyman)
    assert status.replace_entire_sidewalk is replace_all
    assert status.defective_blocks == bad
    assert status.total_blocks == total


def test_owner_rule_follows_the_profile_fraction(clyman: DefectLimits) -> None:
    flags = [True] * 6 + [False] * 4
    assert not owner_replacement_status(flags, clyman).replace_entire_sidewalk
    assert owner_replacement_status(
        flags, replace(clyman, replacement_fraction=0.6)
    ).replace_entire_sidewalk


@pytest.mark.parametrize(
    ("counts", "replace_all", "complete"),
    [
        ((4, 4, 20), False, False),  # every surveyed block bad, but 4 of 20 surveyed
        ((16, 17, 20), True, False),  # 16 of 20 bad whatever the other 3 are
        ((15, 17, 20), False, False),  # 15/20 < 80 %: not yet, and the rest unknown
        ((8, 10, 10), True, True),
        ((8, 10, 8), True, True),  # more surveyed than recorded: surveyed count wins
    ],
)
def test_owner_rule_counts_the_owners_blocks(
    clyman: DefectLimits, counts: tuple[int, int, int], replace_all: bool, complete: bool
) -> None:
    bad, surveyed, owner = counts
    flags = [True] * bad + [False] * (surveyed - bad)
    status = owner_replacement_status(flags, clyman, owner_blocks=owner)
    assert status.replace_entire_sidewalk is replace_all
    assert status.survey_complete is complete
    assert status.owner_blocks == max(owner, surveyed)
    assert status.defective_fraction == pytest.approx(bad / max(owner, surveyed))
    text = status.describe()
    if complete:
        assert "incomplete" not in text
    else:
        assert f"incomplete survey: {surveyed} of {owner} blocks" in text


def test_joint_stations_merge_one_joint_seen_twice() -> None:
    # Two overlapping files see the joint at 1500 mm within 40 mm of each other.
    st = joint_stations([3020.0, 1480.0, 1520.0, 4600.0])
    assert st == pytest.approx((1500.0, 3020.0, 4600.0))
    assert joint_stations([]) == ()


def test_block_count_from_frontage_length_and_joint_spacing() -> None:
    # 66 ft frontage, joints every 1.5 m with one joint missed: the median spacing stands.
    st = [0.0, 1500.0, 3000.0, 6000.0, 7500.0, 9000.0]
    assert frontage_block_count(20116.8, st) == 13
    assert frontage_block_count(20116.8, [0.0, 2000.0]) == 10
    assert frontage_block_count(20116.8, [5.0]) is None


def test_frontage_checks(clyman: DefectLimits) -> None:
    ok = frontage_condition(
        clyman,
        joint_stations_mm=[0.0, 15000.0, 30000.0],
        walk_widths_mm=[(1230.0, 5.0)],
        cross_slopes_mm_per_m=[(25.0, 2.0)],
    )
    assert ok.compliant
    bad = frontage_condition(
        clyman,
        joint_stations_mm=[0.0, 16000.0],
        walk_widths_mm=[(1200.0, 5.0)],
        cross_slopes_mm_per_m=[(15.0, 2.0)],
    )
    assert not bad.compliant
    assert {c.rule for c in bad.checks if c.failed} == {
        Rule.JOINT_SPACING,
        Rule.WALK_WIDTH,
        Rule.CROSS_SLOPE,
    }


def test_limits_reject_nonsense() -> None:
    with pytest.raises(ValueError, match="replacement_fraction"):
        DefectLimits(19.05, 31.75, 12.7, 1.5, 20.8, 15240.0, 1219.2)
    with pytest.raises(ValueError, match="vertical_differential_mm"):
        DefectLimits(0.0, 31.75, 12.7, 0.8, 20.8, 15240.0, 1219.2)
