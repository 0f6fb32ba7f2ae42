"""The live runner's scheduler outlives a deadline job another scheduler removed first.

Real APScheduler, no sockets. The case database's job store is shared by an
analytics process and the one replacing it during a restart; a ``next-due``
date job both ran is removed twice, and APScheduler's own loop raised on the
second removal, ending its thread: no tick or deadline until a restart.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from typing import Any

import pytest
from apscheduler.jobstores.base import JobLookupError
from apscheduler.jobstores.memory import MemoryJobStore
from apscheduler.schedulers.background import BackgroundScheduler

from sidewalk.analytics.runner import deadline_scheduler


class RacedStore(MemoryJobStore):  # type: ignore[misc]  # untyped library
    """A job store where another scheduler removes the due ``next-due`` date job as this
    one takes it (the interval tick is only ever updated, never removed, by either)."""

    def get_due_jobs(self, now: datetime) -> list[Any]:
        jobs: list[Any] = super().get_due_jobs(now)
        for job in jobs:
            if job.id == "next-due":
                super().remove_job(job.id)  # the other process ran it and removed it
        return jobs


def _ticks_after_a_raced_deadline(scheduler_class: Any) -> int:
    """Ticks counted within 1.5 s after a date job the other scheduler removed."""
    ticked = threading.Semaphore(0)
    fired = threading.Event()
    scheduler = scheduler_class(jobstores={"default": RacedStore()}, timezone="UTC")
    scheduler.add_job(fired.set, "date", run_date=datetime.now(UTC), id="next-due")
    scheduler.add_job(ticked.release, "interval", seconds=0.2, id="tick")
    scheduler.start()
    try:
        fired.wait(2)
        count = 0
        while ticked.acquire(timeout=1.5):
            count += 1
            if count == 3:
                break
        return count
    finally:
        scheduler.shutdown(wait=False)


def test_a_deadline_job_removed_by_the_other_scheduler_leaves_ticks_and_deadlines_running() -> None:
    assert _ticks_after_a_raced_deadline(deadline_scheduler()) == 3


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_the_race_is_real_apscheduler_alone_stops_ticking() -> None:
    # The store above does what the restart overlap does: the plain scheduler dies on it.
    assert _ticks_after_a_raced_deadline(BackgroundScheduler) == 0
    with pytest.raises(JobLookupError):
        BackgroundScheduler().remove_job("next-due")
