"""Retention: what the time-series store and the evidence store keep, and for how long.

``prune(...)`` applies a ``RetentionPolicy`` once; ``Pruner`` runs it on a
timer (``sidewalk ingest`` starts one). What goes:

* readings whose event time ``ts`` is older than ``readings_days``;
* dead letters received more than ``dead_letters_days`` ago;
* evidence images a device sent more than ``evidence_days`` ago, **unless a
  notice cites them**: a notice names its frames in ``detail["photos"]``
  (``sha256``), and an image cited by a notice issued within
  ``records_retention_days`` (the Village's records-retention period) is kept,
  whatever its age;
* images no ``FrameRef`` names, ``unreferenced_grace_s`` after they arrived:
  the frame contract sends the JPEG on ``…/jpeg`` just before the ``frame``
  message citing its sha256, so an image still without one after the grace
  was never evidence. It becomes an ``unreferenced_frame`` dead letter (its
  first bytes, length and sha256) and its file is deleted.

Only images ingest indexed (``EvidenceStore.admit``) are pruned. When the case
records cannot be read, no evidence is deleted that run (what is cited is
unknown); readings and dead letters are still pruned.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from sidewalk.storage.evidence import EvidenceEntry, EvidenceStore
from sidewalk.storage.timeseries import DEAD_LETTER_PREFIX, DeadLetter, SqliteTimeSeriesStore

log = logging.getLogger(__name__)

DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class RetentionPolicy:
    """How long each kind of data is kept (None: forever)."""

    readings_days: float | None = 730
    dead_letters_days: float | None = 90
    evidence_days: float | None = 90
    # The Village's records-retention period for evidence a notice cites.
    records_retention_days: float = 7 * 365
    unreferenced_grace_s: float = 3600


@dataclass(slots=True)
class PruneReport:
    """What one prune removed."""

    readings: int = 0
    dead_letters: int = 0
    evidence: int = 0
    evidence_bytes: int = 0
    unreferenced: int = 0
    kept_cited: int = 0
    skipped_evidence: str | None = None
    deleted: list[str] = field(default_factory=list)


# sha256s cited by notices issued since the given time (``cases.notices.cited_evidence``).
CitedEvidence = Callable[[datetime], set[str]]


def prune(
    store: SqliteTimeSeriesStore,
    evidence: EvidenceStore | None,
    policy: RetentionPolicy,
    *,
    cited: CitedEvidence | None,
    now_ms: int | None = None,
) -> PruneReport:
    """Apply ``policy`` once; see the module's docstring."""
    now_ms = time.time_ns() // 1_000_000 if now_ms is None else now_ms
    report = PruneReport()

    def cutoff(days: float | None) -> int | None:
        return None if days is None else now_ms - int(days * DAY_MS)

    counts = store.prune(
        readings_before_ms=cutoff(policy.readings_days),
        dead_letters_before_ms=cutoff(policy.dead_letters_days),
    )
    report.readings, report.dead_letters = counts["readings"], counts["dead_letters"]
    if evidence is None:
        return report
    if cited is None:
        report.skipped_evidence = "no case records: what notices cite is unknown"
        return report
    now = datetime.fromtimestamp(now_ms / 1000, tz=UTC)
    try:
        keep = cited(now - timedelta(days=policy.records_retention_days))
    except Exception as exc:
        report.skipped_evidence = f"case records unreadable: {type(exc).__name__}: {exc}"
        log.warning("retention: evidence not pruned this time (%s)", report.skipped_evidence)
        return report
    old = cutoff(policy.evidence_days)
    grace_ms = int(policy.unreferenced_grace_s * 1000)
    found: list[str] = []
    for entry in evidence.entries():
        if entry.sha256 in keep:
            if old is not None and entry.received_at_ms < old:
                report.kept_cited += 1
            continue
        if not entry.referenced and entry.received_at_ms < now_ms - grace_ms:
            # The FrameRef may be stored without the index knowing (a crash
            # between the two, another worker): the readings are the truth.
            if store.frame_referenced(
                entry.device, entry.sha256, since_ms=entry.received_at_ms - DAY_MS
            ):
                found.append(entry.sha256)  # referenced after all: kept, marked below
                continue
            _dead_letter_unreferenced(store, evidence, entry, now_ms)
            evidence.delete(entry.sha256)
            report.unreferenced += 1
            report.evidence_bytes += entry.bytes
            report.deleted.append(entry.sha256)
            continue
        if old is not None and entry.received_at_ms < old:
            evidence.delete(entry.sha256)
            report.evidence += 1
            report.evidence_bytes += entry.bytes
            report.deleted.append(entry.sha256)
    evidence.mark_referenced(found)
    if report.readings or report.dead_letters or report.deleted:
        log.info(
            "retention: pruned %d readings, %d dead letters, %d images (%d unreferenced, %d bytes);"
            " kept %d cited images past their age",
            report.readings, report.dead_letters, report.evidence + report.unreferenced,
            report.unreferenced, report.evidence_bytes, report.kept_cited,
        )  # fmt: skip
    return report


def _dead_letter_unreferenced(
    store: SqliteTimeSeriesStore,
    evidence: EvidenceStore,
    entry: EvidenceEntry,
    now_ms: int,
) -> None:
    sha256, device, size = entry.sha256, entry.device, entry.bytes
    try:
        head = evidence.prefix(sha256, DEAD_LETTER_PREFIX)
    except FileNotFoundError:
        head = b""
    letter = DeadLetter(
        now_ms,
        f"evidence/{sha256}",
        device,
        head,
        "unreferenced_frame",
        f"no frame message named this {size}-byte image within the grace period; deleted",
        payload_len=size,
        payload_sha256=sha256,
    )
    store.write_batch([], dead_letters=[letter], received_at_ms=now_ms)


class Pruner:
    """Runs ``prune`` every ``interval_s`` on a daemon thread until ``stop()``."""

    def __init__(
        self,
        store: SqliteTimeSeriesStore,
        evidence: EvidenceStore | None,
        policy: RetentionPolicy,
        *,
        cited: CitedEvidence | None,
        interval_s: float = 3600.0,
    ) -> None:
        self.store, self.evidence, self.policy = store, evidence, policy
        self.cited = cited
        self.interval_s = interval_s
        self.last: PruneReport | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def run_once(self) -> PruneReport:
        self.last = prune(self.store, self.evidence, self.policy, cited=self.cited)
        return self.last

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="retention-prune", daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while True:
            try:
                self.run_once()
            except Exception as exc:
                # One line: a full disk or a locked database is retried next time.
                log.warning("retention prune failed: %s: %s", type(exc).__name__, exc)
            if self._stop.wait(self.interval_s):
                return

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
