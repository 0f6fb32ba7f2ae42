"""Snapshots written before the § 370-10 A clock moved to ``clearing.py`` still load.

``data/pre_refactor_snapshots.json`` was made by the engine as it was before the
move (``snapshot_scene``, run on that commit in a worktree). Each stored snapshot
is restored into today's engine and the rest of the scene played: the same events
in the same order, and the same final snapshot byte for byte. The snapshot is
JSON of the clocks' fields (no class paths), so the move must keep every field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, get_args

import pytest

from sidewalk.analytics.clocks.actions import ACTION_TYPES, AnyAction
from sidewalk.analytics.clocks.engine import HANDLERS
from tests.clocks.snapshot_scene import checkpoints, engine, play, steps

STORED = Path(__file__).parent / "data" / "pre_refactor_snapshots.json"
# A deliberate change to what the clocks decide moves this scene's events: then
# regenerate the file on the commit before the change (snapshot_scene's docstring).
MOVED = "the scene's events moved: a deliberate behaviour change regenerates the file"


def contained(old: Any, new: Any) -> bool:
    """Every field of ``old`` is in ``new`` with the same value (fields added since: fine)."""
    if isinstance(old, dict) and isinstance(new, dict):
        return all(k in new and contained(v, new[k]) for k, v in old.items())
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(map(contained, old, new))
    return bool(old == new)


def stored() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(STORED.read_text(encoding="utf-8"))
    return data


@pytest.mark.parametrize("index", range(4))
def test_a_snapshot_from_before_the_move_resumes_to_the_same_events(index: int) -> None:
    data = stored()
    all_steps = steps()
    assert data["steps"] == len(all_steps)  # the scene is the one the file was made from
    kept = data["checkpoints"][index]
    assert kept["after_step"] == checkpoints(all_steps)[index]
    resumed = engine()
    resumed.restore(kept["snapshot"].encode())
    # Restored as it was written: nothing lost or renamed on the way in.
    assert contained(json.loads(kept["snapshot"]), json.loads(resumed.snapshot()))
    assert play(resumed, all_steps[kept["after_step"] :]) == kept["events"], MOVED
    assert resumed.snapshot().decode() == kept["final"], MOVED


def test_the_scene_from_the_start_makes_the_stored_snapshots() -> None:
    """Today's engine writes, at each checkpoint, what the engine before the move wrote."""
    data = stored()
    all_steps = steps()
    for kept in data["checkpoints"]:
        fresh = engine()
        play(fresh, all_steps[: kept["after_step"]])
        assert fresh.snapshot().decode() == kept["snapshot"], MOVED


def test_the_stored_scene_reaches_every_outcome_of_the_clearing_clock() -> None:
    """The file is worth comparing against: decisions of each kind and a case."""
    events = "\n".join(stored()["checkpoints"][0]["events"])
    for kind in ("ClearingViolation(", "ClearingUnverified(", "ClearingNeedsReview(",
                 "OffenseCounted(", "'complied'"):  # fmt: skip
        assert kind in events


def test_every_kind_of_action_has_exactly_one_handler() -> None:
    assert set(HANDLERS) == set(get_args(AnyAction)) == set(ACTION_TYPES.values())
