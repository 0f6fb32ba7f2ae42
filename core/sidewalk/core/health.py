"""Liveness and readiness checks: each is a name and a function saying what is wrong.

A check returns ``None`` when fine and a short reason otherwise; a check that
raises is failing with the exception as its reason. The report is the JSON
the ``/healthz`` and ``/readyz`` endpoints send (200 when every check passes,
503 otherwise). No check reports owner data: only component states.

Standard library only: the pole, ingest, analytics and the dashboard all use
these, so they sit in core (``docs/observability.md``).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

Check = Callable[[], str | None]


@dataclass(frozen=True, slots=True)
class Report:
    """The outcome of a set of checks."""

    ok: bool
    failures: dict[str, str]
    passed: tuple[str, ...]

    @property
    def status_code(self) -> int:
        return 200 if self.ok else 503

    def body(self) -> dict[str, Any]:
        """What the endpoint sends: every check by name, "ok" or its reason."""
        checks: dict[str, str] = {name: "ok" for name in self.passed}
        checks.update(self.failures)
        return {"status": "ok" if self.ok else "unavailable", "checks": checks}


def run_checks(checks: Mapping[str, Check]) -> Report:
    """Run every check (none stops the others) and collect the failures."""
    failures: dict[str, str] = {}
    passed: list[str] = []
    for name, check in checks.items():
        try:
            reason = check()
        except Exception as exc:  # a broken probe is a failing probe, not a 500
            reason = f"{type(exc).__name__}: {exc}"
        if reason is None:
            passed.append(name)
        else:
            failures[name] = reason
    return Report(not failures, failures, tuple(passed))


def threads_alive(names: Iterable[str]) -> Check:
    """Liveness: every named thread is running (threads are found by name)."""
    wanted = tuple(names)

    def check() -> str | None:
        alive = {t.name for t in threading.enumerate() if t.is_alive()}
        missing = [name for name in wanted if name not in alive]
        return f"thread(s) not running: {', '.join(missing)}" if missing else None

    return check


def flag(predicate: Callable[[], bool], reason: str) -> Check:
    """A check from a boolean: ``reason`` when ``predicate()`` is false."""
    return lambda: None if predicate() else reason


def sqlite_writable(path: Path, timeout_s: float = 1.0) -> Check:
    """Readiness: a write transaction on the SQLite file can begin (then is rolled back)."""

    def check() -> str | None:
        if not path.exists():
            return f"{path.name} does not exist"
        try:
            db = sqlite3.connect(path, timeout=timeout_s, isolation_level=None)
            try:
                db.execute("BEGIN IMMEDIATE")
                db.execute("ROLLBACK")
            finally:
                db.close()
        except sqlite3.Error as exc:
            return f"{path.name} not writable: {exc}"
        return None

    return check


class Pingable(Protocol):
    """A database handle that can make a round trip (the case store's ``ping``)."""

    def ping(self) -> None: ...


def database_reachable(database: Pingable) -> Check:
    """Readiness: the database answers a round trip (``ping`` raises when it does not)."""

    def check() -> str | None:
        database.ping()
        return None

    return check
