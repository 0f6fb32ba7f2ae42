"""Live updates: new clock transitions and audit rows, pushed to browsers over SSE.

The analytics runner is another process (often another machine), so the
dashboard does not hear its events directly. It polls the case records for
rows newer than the last it saw (two indexed ``MAX(id)`` reads every
``poll_s``, 200 ms by default; when they moved, one joined read of the new
transitions with their clocks and one of the new audit rows, however many:
a storm's first snow moves every frontage's clock at once; then the running clocks
they name, for their rows in the Overview's clock table (one read of the running
clocks), and the confirmations when one used a value marked unconfirmed) and fans what it
finds out to every open ``/api/events`` stream. The case records are the one source of truth, so
nothing a browser sees can differ from what a page reload shows, and the
same works with SQLite or PostgreSQL and any number of dashboard processes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from sidewalk.dashboard.clock_rows import clock_row
from sidewalk.dashboard.states import ALERT_ACTIONS, category
from sidewalk.storage.cases import CaseStore, ClockRecord

log = logging.getLogger(__name__)


# An idle stream asks again this often whether its session still holds.
SESSION_RECHECK_S = 2.0
ENDED = 'event: ended\ndata: {"reason": "session ended"}\n\n'


def _ms() -> int:
    return time.time_ns() // 1_000_000


class LiveFeed:
    """One poller per app; each SSE client gets its own bounded queue."""

    def __init__(self, cases: CaseStore, *, poll_s: float = 0.2) -> None:
        self.cases = cases
        self.records = cases.dashboard
        self.poll_s = poll_s
        self._subscribers: set[asyncio.Queue[dict[str, Any]]] = set()
        self._task: asyncio.Task[None] | None = None
        self._marks = (0, 0)
        self.stopping = asyncio.Event()

    async def start(self) -> None:
        self._marks = await asyncio.to_thread(self.records.marks)
        self._task = asyncio.create_task(self._run(), name="dashboard-live-feed")

    async def stop(self) -> None:
        self.stopping.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def _run(self) -> None:
        while True:
            try:
                events = await asyncio.to_thread(self._poll)
            except Exception:
                # A locked or restarting database must not end live updates for good.
                log.exception("live feed poll failed; trying again")
                events = []
            for event in events:
                self._publish(event)
            await asyncio.sleep(self.poll_s)

    def _poll(self) -> list[dict[str, Any]]:
        marks = self.records.marks()
        if marks == self._marks:
            return []
        seen_transition, seen_audit = self._marks
        events: list[dict[str, Any]] = []
        transitions, audit = self.cases.pages.live_after(seen_transition, seen_audit)
        clocks = self._running({t.clock_id for t in transitions if t.active})
        waiting = any(c.unconfirmed for c in clocks.values())
        in_force = self.cases.confirmations.in_force() if waiting else {}
        for t in transitions:
            events.append(
                {
                    "type": "transition",
                    "id": t.id,
                    "clock_id": t.clock_id,
                    "clock_kind": t.clock_kind,
                    "frontage": t.frontage_id,
                    "from": t.from_state,
                    "to": t.to_state,
                    "category": category(t.clock_state),
                    "at": t.at.isoformat(),
                    "deadline": t.deadline.isoformat() if t.deadline else None,
                    "active": t.active,
                    # The clock's row as the Overview's first read draws it (its address
                    # from the page's own frontages); None once the clock has closed.
                    "clock": (
                        clock_row(clocks[t.clock_id], None, in_force)
                        if t.clock_id in clocks
                        else None
                    ),
                    "cause": t.cause_kind,
                    "detected_ms": _ms(),
                }
            )
            seen_transition = t.id
        for a in audit:
            events.append(
                {
                    "type": "audit",
                    "id": a.id,
                    "action": a.action,
                    "subject": a.subject,
                    "actor": a.actor,
                    "alert": a.action in ALERT_ACTIONS,
                    "at": a.recorded_at.isoformat(),
                    "detected_ms": _ms(),
                }
            )
            seen_audit = a.id
        self._marks = (seen_transition, seen_audit)
        return events

    def _running(self, ids: set[int]) -> dict[int, ClockRecord]:
        """The running clocks among ``ids``, in one read of the running clocks (however
        many the batch names: a storm's first snow moves every clock at once)."""
        if not ids:
            return {}
        return {c.id: c for c in self.cases.clocks.list(active_only=True) if c.id in ids}

    def _publish(self, event: dict[str, Any]) -> None:
        for queue in list(self._subscribers):
            if queue.full():
                # A stalled browser loses its backlog, never blocks the others; it reloads.
                while not queue.empty():
                    queue.get_nowait()
                queue.put_nowait({"type": "resync"})
            queue.put_nowait(event)

    async def stream(
        self,
        heartbeat_s: float = 15.0,
        *,
        session_live: Callable[[], bool] = lambda: True,
        recheck_s: float = SESSION_RECHECK_S,
    ) -> AsyncIterator[str]:
        """Server-sent events for one client until it leaves, the app stops, or its
        session ends (logout, the account disabled, its password or role changed):
        ``session_live`` (a database read, run off the loop) is asked every
        ``recheck_s``, and again before an event found after the last answer (once
        per poll's batch); then ``ended`` is sent and the stream closes, so a session
        is sent nothing found after it ended."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=1000)
        self._subscribers.add(queue)
        checked_ms = _ms()

        async def still_live(older_than_ms: int) -> bool:
            """Whether the session holds, asked again when the last answer predates
            ``older_than_ms``: a session ended in the same commit as an audit row is
            seen ended by a check made after that row was found."""
            nonlocal checked_ms
            if checked_ms > older_than_ms:
                return True
            checked_ms = _ms()
            return await asyncio.to_thread(session_live)

        try:
            yield "retry: 1000\nevent: hello\ndata: {}\n\n"
            waited = 0.0
            while not self.stopping.is_set():
                if not await still_live(_ms() - int(recheck_s * 1000)):
                    yield ENDED
                    return
                try:
                    event = await asyncio.wait_for(queue.get(), timeout=0.5)
                except TimeoutError:
                    waited += 0.5
                    if waited >= heartbeat_s:
                        waited = 0.0
                        yield ": keep-alive\n\n"
                    continue
                if not await still_live(event.get("detected_ms", 0)):
                    yield ENDED
                    return
                waited = 0.0
                name = event["type"]
                ident = f"id: {name[0]}{event['id']}\n" if "id" in event else ""
                yield f"{ident}event: {name}\ndata: {json.dumps(event)}\n\n"
        finally:
            self._subscribers.discard(queue)
