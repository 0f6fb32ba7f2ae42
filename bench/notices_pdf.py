"""1,000 notices rendered to PDF: seconds and peak memory, beside references in the same run.

A village's worst morning: ``--notices`` notices (clearing violations with their
evidence, obstruction notices with a photo reference and readings, and repair
notices with a defect table, round-robin) issued into SQLite case records and
rendered from their templates. Then each notice to its own PDF, and all of them
to one print-batch PDF. References: the text templates alone (what rendering
costs without PDF), and writing a pre-rendered PDF's bytes to disk as many
times (the floor for producing that many files). Time is wall time without
tracing; peak memory is ``tracemalloc``'s peak for Python allocations in a
second, traced pass of each step.

    uv run python -m bench.notices_pdf [--notices 1000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sidewalk.alerts.issue import NoticeIssuer
from sidewalk.alerts.notices import BlockDefect, Evidence, Photo, Reading
from sidewalk.alerts.pdf import batch_pdf, notice_pdf
from sidewalk.core.profile import load_profile
from sidewalk.storage.cases import CaseStore, NoticeRecord

T0 = datetime(2026, 12, 11, 23, 0, tzinfo=UTC)


def issue(issuer: NoticeIssuer, count: int) -> list[NoticeRecord]:
    cases = issuer.cases
    out = []
    for i in range(count):
        frontage = f"main-{i:04d}"
        cases.registry.upsert_owner(
            f"o-{i}", f"Owner {i}", [f"{100 + i} Main St", "Clyman, WI 53016"]
        )
        cases.registry.upsert_frontage(
            frontage, site="clyman", parcel_number=f"026-0915-{i:04d}",
            street_address=f"{100 + i} Main St", length_ft=66.0, zone="residential",
            owner_id=f"o-{i}",
        )  # fmt: skip
        at = T0 + timedelta(minutes=i)
        if i % 3 == 0:
            evidence = {
                "cessation_at": (at - timedelta(hours=24)).isoformat(),
                "deadline": at.isoformat(), "required_width_mm": 1219.2,
                "measured_width_mm": 600.0 + i % 400, "measured_at": at.isoformat(),
                "measured_by": "pole-main-01", "measured_seq": 1000 + i, "snow_depth_peak_mm": 150,
            }  # fmt: skip
            v = cases.clocks.record_violation(f"v{i}", frontage, "clearing", at, evidence=evidence)
            notice = cases.notices.create(
                f"notice/v{i}", "clearing_violation", frontage, at, violation_id=v.id,
                deadline=at, detail=evidence,
            )  # fmt: skip
            out.append(issuer.render(notice))
        elif i % 3 == 1:
            ev = Evidence(
                photos=(Photo(f"{i:064x}", at, "pole-main-01", "bench on the walk"),),
                readings=(Reading(at, "pole-main-01", 2000 + i, "cleared_width_mm", "640"),),
            )
            out.append(
                issuer.obstruction_notice(
                    f"o{i}",
                    frontage,
                    at,
                    area="sidewalk",
                    observed_at=at,
                    description="a bench",
                    clear_width_mm=640.0,
                    evidence=ev,
                )
            )
        else:
            defects = [BlockDefect(b, "vertical_differential", 22.0, 1.0, "joint") for b in (2, 5)]
            out.append(
                issuer.repair_notice(
                    f"s{i}", frontage, at, surveyed_at=at, total_blocks=12, defects=defects
                )
            )
    return out


def measure(step: Callable[[], object]) -> tuple[float, float]:
    """(seconds untraced, peak MiB traced) for one step."""
    started = time.perf_counter()
    step()
    seconds = time.perf_counter() - started
    tracemalloc.start()
    step()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return seconds, peak / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notices", type=int, default=1000)
    args = parser.parse_args()
    profile = load_profile()
    with tempfile.TemporaryDirectory(prefix="bench-notices-") as tmp:
        root = Path(tmp)
        cases = CaseStore(f"sqlite:///{root / 'cases.sqlite3'}")
        cases.create_schema()
        issuer = NoticeIssuer(cases, profile)
        started = time.perf_counter()
        notices = issue(issuer, args.notices)
        issue_s = time.perf_counter() - started
        assert all(n.status == "rendered" for n in notices)
        one = notice_pdf(notices[0], profile)
        out = root / "pdf"
        out.mkdir()

        def each_pdf() -> None:
            for n in notices:
                (out / f"{n.number}.pdf").write_bytes(notice_pdf(n, profile))

        def batch() -> None:
            (root / "batch.pdf").write_bytes(batch_pdf(notices, profile, T0))

        def text_only() -> None:
            for n in notices:
                issuer.rendered(n)

        def copy_bytes() -> None:
            for n in notices:
                (out / f"{n.number}.copy.pdf").write_bytes(one)

        rows = [
            ("templates → text + HTML (reference)", *measure(text_only)),
            ("write a pre-rendered PDF's bytes (reference)", *measure(copy_bytes)),
            ("each notice → its own PDF file", *measure(each_pdf)),
            ("all notices → one print-batch PDF", *measure(batch)),
        ]
        batch_size = (root / "batch.pdf").stat().st_size
        files = sorted(out.glob("CLY-*[0-9].pdf"))
        per_file = sum(f.stat().st_size for f in files) / len(files)
        cases.close()
    n = args.notices
    print(f"{n} notices (1/3 clearing violation, 1/3 obstruction, 1/3 repair); "
          f"issued and rendered into SQLite in {issue_s:.2f} s")  # fmt: skip
    print("| step | seconds | notices/s | peak Python MiB |\n|---|---:|---:|---:|")
    for name, seconds, peak in rows:
        print(f"| {name} | {seconds:.2f} | {n / seconds:,.0f} | {peak:.1f} |")
    print(f"PDF size: {per_file / 1024:.1f} KiB per notice; batch {batch_size / 2**20:.2f} MiB")


if __name__ == "__main__":
    main()
