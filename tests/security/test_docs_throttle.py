"""The login throttle as the docs describe it is the one the dashboard runs.

docs/dashboard.md once described a rule the code no longer had ("5 failures per user
name (20 per client address) in 5 minutes"). Its throttle
paragraph and docs/security.md's table are read here against the ``LoginThrottle``
the dashboard builds (``create_app``'s own default for the free failures, the
class's for the rest), so a change to either side without the other fails.
"""

from __future__ import annotations

import inspect
import re
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

from sidewalk.dashboard.app import create_app
from sidewalk.dashboard.auth import LoginThrottle

DOCS = Path(__file__).resolve().parents[2] / "docs"


def _throttle() -> LoginThrottle:
    free = inspect.signature(create_app).parameters["login_max_failures"].default
    return LoginThrottle(cast(Any, SimpleNamespace(dashboard=None)), max_failures=free)


def _said(delay: timedelta) -> str:
    seconds = int(delay.total_seconds())
    if seconds % 3600 == 0:
        return f"{seconds // 3600} hours"
    if seconds % 60 == 0:
        return f"{seconds // 60} minutes"
    return f"{seconds} s"


def _paragraph(text: str, start: str) -> str:
    """The bullet of ``text`` beginning with ``start``, its lines joined."""
    found = re.search(rf"^- {re.escape(start)}.*?(?=^- |^#|\Z)", text, re.M | re.S)
    assert found, f"no bullet starting {start!r}"
    return " ".join(found.group(0).split())


def test_docs_dashboard_describes_the_throttle_the_dashboard_runs() -> None:
    throttle = _throttle()
    said = _paragraph((DOCS / "dashboard.md").read_text(), "Login throttling")
    assert f"failures within {_said(throttle.window)}" in said, said
    assert f"per account-and-address ({throttle.free['pair']} free)" in said, said
    assert f"per address ({throttle.free['ip']} free)" in said, said
    assert f"have failed before ({throttle.free['user']} free)" in said, said
    assert f"doubles the wait from {_said(throttle.base)}" in said, said
    assert f"capped at {_said(throttle.caps['pair'])}" in said, said
    assert throttle.caps["ip"] == throttle.caps["pair"], "the docs say one cap for both"
    assert f"({_said(throttle.caps['user'])} for the per-account count)" in said, said
    # The old rule's words are gone.
    for old in ("in 5 minutes", "failures per user name", "blocked"):
        assert old not in said, old


def test_docs_security_tables_the_throttle_the_dashboard_runs() -> None:
    throttle = _throttle()
    text = (DOCS / "security.md").read_text()
    rows = {
        "this account from this client address": ("pair", "15 minutes"),
        "this client address, any account": ("ip", "15 minutes"),
        "this account, any address (only for addresses that have failed before)": (
            "user",
            "30 seconds",
        ),
    }
    for key, (kind, cap) in rows.items():
        row = re.search(rf"^\s*\| {re.escape(key)} \| (\d+) \| ([^|]+) \|$", text, re.M)
        assert row, f"no throttle row for {key!r}"
        assert int(row.group(1)) == throttle.free[kind], (key, row.group(1))
        assert row.group(2).strip() == cap, (key, row.group(2))
        number, unit = cap.split()
        assert throttle.caps[kind] == timedelta(**{unit: int(number)}), (key, cap)
