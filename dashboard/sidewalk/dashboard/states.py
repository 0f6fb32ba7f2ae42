"""How a clock's state shows on the dashboard: a category with a colour and a word.

Only presentation: the states themselves belong to the clock engine.
"""

from __future__ import annotations

from typing import Final

# category -> (label, colour); colours pass WCAG AA against white text or are
# paired with a dark outline, and every category is also written out in words.
CATEGORIES: Final[dict[str, tuple[str, str]]] = {
    "clear": ("Clear / complied", "#1b7f3b"),
    "snowing": ("Snowing", "#3b6fb6"),
    "clearing": ("Clearing period running", "#8a6d00"),
    "unverified": ("Deadline passed, not measured", "#6b4fa1"),
    "violation": ("Violation / notice", "#c0392b"),
    "hazard": ("Hazard notice", "#7f1010"),
    "abatement": ("Village abatement / billing", "#4a4a4a"),
    "none": ("No clock yet", "#5f6b76"),
}

_BY_STATE: Final[dict[str, str]] = {
    "idle": "clear",
    "complied": "clear",
    "cured": "clear",
    "paid": "clear",
    "snowing": "snowing",
    "clearing_period": "clearing",
    "unverified": "unverified",
    "violation": "violation",
    "notice_issued": "violation",
    "notice_period": "violation",
    "hazard_notice_issued": "hazard",
    "hazard_period": "hazard",
    "abatement_ordered": "abatement",
    "abated": "abatement",
    "billed": "abatement",
    "tax_roll": "abatement",
}


def category(state: str) -> str:
    """The map category of a clock in ``state`` (state names are unique across kinds)."""
    return _BY_STATE.get(state, "none")


# Audit actions that deserve a place among the overview's "new alerts".
ALERT_ACTIONS: Final = frozenset(
    {
        "violation.recorded",
        "notice.issued",
        "hazard.candidate",
        "clearing.unverified",
        "abatement.ordered",
        "tax_roll.certified",
        "tax_roll.due_without_unpaid_bill",
    }
)
