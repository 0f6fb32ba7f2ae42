"""Retention: old readings, dead letters and evidence go; evidence a notice cites stays
for the records-retention period; an image no FrameRef names goes after the grace.

The case records are real (SQLite and PostgreSQL through ``case_store``): the
prune asks them which photos notices cite (``detail["photos"][i]["sha256"]``).
"""

from __future__ import annotations

import hashlib
import time
from datetime import timedelta
from pathlib import Path

from sidewalk.core.contract import FrameRef, WeatherReading
from sidewalk.storage.cases import CaseStore
from sidewalk.storage.evidence import EvidenceStore
from sidewalk.storage.retention import DAY_MS, Pruner, RetentionPolicy, prune
from sidewalk.storage.timeseries import DeadLetter, SqliteTimeSeriesStore
from tests.storage.conftest import T0

NOW = int(T0.timestamp() * 1000)


def jpeg(tag: str) -> bytes:
    return b"\xff\xd8\xff" + tag.encode() * 100 + b"\xff\xd9"


def sha(body: bytes) -> str:
    return hashlib.sha256(body).hexdigest()


def test_prune_keeps_cited_evidence_for_the_records_period(
    case_store: CaseStore, tmp_path: Path
) -> None:
    ts = SqliteTimeSeriesStore(tmp_path / "ts.db")
    evidence = EvidenceStore(tmp_path / "evidence")
    try:
        old, recent = NOW - 200 * DAY_MS, NOW - DAY_MS
        # Readings and dead letters, old and recent.
        ts.write_batch(
            [
                WeatherReading(device="pole-1", seq=1, ts=old, air_temp_c=-1.0),
                WeatherReading(device="pole-1", seq=2, ts=recent, air_temp_c=-2.0),
            ],
            dead_letters=[
                DeadLetter(old, "sidewalk/v1/clyman/pole-1/weather", "pole-1", b"{", "x", "x"),
                DeadLetter(recent, "sidewalk/v1/clyman/pole-1/weather", "pole-1", b"[", "x", "x"),
            ],
            received_at_ms=recent,
        )
        # Four images: cited and old, uncited and old, recent, and a stray (no FrameRef).
        cited, stale, fresh, stray = jpeg("cited"), jpeg("stale"), jpeg("fresh"), jpeg("stray")
        for body, at in ((cited, old), (stale, old), (fresh, recent), (stray, NOW - 7200_000)):
            evidence.admit(body, "pole-1", now_ms=at)
        # FrameRefs name three of them (the index learns one of them only from the readings).
        refs = [
            FrameRef(device="pole-1", seq=10 + i, ts=at, sha256=sha(body), bytes_len=len(body))
            for i, (body, at) in enumerate(((cited, old), (stale, old), (fresh, recent)))
        ]
        ts.write_batch(refs, received_at_ms=recent)
        evidence.mark_referenced([sha(cited), sha(stale)])
        # A notice issued 100 days ago cites the old image.
        case_store.notices.create(
            "retention/1", "clearing_violation", "main-101", T0 - timedelta(days=100),
            detail={"photos": [{"sha256": sha(cited), "taken_at": "2026-09-01T00:00:00"}]},
        )  # fmt: skip
        policy = RetentionPolicy(
            readings_days=90, dead_letters_days=30, evidence_days=90,
            records_retention_days=7 * 365, unreferenced_grace_s=3600,
        )  # fmt: skip
        report = prune(ts, evidence, policy, cited=case_store.notices.cited_evidence, now_ms=NOW)

        # The old weather reading and the two old FrameRefs; the notice keeps its own record.
        assert (report.readings, report.dead_letters) == (3, 1)
        assert [r.seq for r in ts.readings(device="pole-1", stream="weather")] == [2]
        assert [d.reason for d in ts.dead_letters()] == ["x", "unreferenced_frame"]
        assert sha(cited) in evidence  # cited by a notice: kept past evidence_days
        assert sha(stale) not in evidence  # old, cited by nothing
        assert sha(fresh) in evidence
        assert sha(stray) not in evidence  # no FrameRef after the grace
        assert (report.evidence, report.unreferenced, report.kept_cited) == (1, 1, 1)
        [letter] = ts.dead_letters(reason="unreferenced_frame")
        assert letter.payload_sha256 == sha(stray)
        assert letter.payload_len == len(stray)
        assert letter.payload == stray  # under 4 KiB: whole
        entry = evidence.entry(sha(fresh))
        assert entry is not None
        assert entry.referenced  # learnt from the readings, not deleted

        # Past the records-retention period the notice no longer protects it.
        later = NOW + 8 * 365 * DAY_MS
        again = prune(ts, evidence, policy, cited=case_store.notices.cited_evidence, now_ms=later)
        assert sha(cited) not in evidence
        assert again.evidence == 2  # the cited one and the once-fresh one
    finally:
        ts.close()
        evidence.close()


def test_no_evidence_is_pruned_when_the_case_records_cannot_say_what_is_cited(
    tmp_path: Path,
) -> None:
    ts = SqliteTimeSeriesStore(tmp_path / "ts.db")
    evidence = EvidenceStore(tmp_path / "evidence")
    try:
        body = jpeg("old")
        evidence.admit(body, "pole-1", now_ms=NOW - 400 * DAY_MS)

        def unreachable(_since: object) -> set[str]:
            raise ConnectionError("case database down")

        report = prune(ts, evidence, RetentionPolicy(), cited=unreachable, now_ms=NOW)
        assert report.skipped_evidence is not None
        assert "case database down" in report.skipped_evidence
        assert sha(body) in evidence
        assert prune(ts, evidence, RetentionPolicy(), cited=None, now_ms=NOW).skipped_evidence
        assert sha(body) in evidence
    finally:
        ts.close()
        evidence.close()


def test_the_pruner_runs_on_its_thread_and_stops(tmp_path: Path) -> None:
    ts = SqliteTimeSeriesStore(tmp_path / "ts.db")
    try:
        ts.write_batch([WeatherReading(device="pole-1", seq=1, ts=NOW - 1000 * DAY_MS,
                                       air_temp_c=1.0)])  # fmt: skip
        pruner = Pruner(ts, None, RetentionPolicy(), cited=None, interval_s=3600)
        pruner.start()
        deadline = time.monotonic() + 10
        while pruner.last is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        pruner.stop()  # returns at once: the wait is an Event
        assert pruner.last.readings == 1
        assert ts.count("pole-1") == 0
    finally:
        ts.close()
