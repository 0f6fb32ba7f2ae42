"""Every scripted fault with its full repetitions, and what the bare broker loses.

Faults (real Mosquitto, VictoriaMetrics, PostgreSQL; ``tests/faults/harness.py``):
Mosquitto killed with -9 and restarted mid-stream (10x), ``sidewalk ingest``
killed with -9 mid-batch (with its InfluxDB view), the time-series server down
for ten minutes of event time, PostgreSQL restarted under analytics, a pole
offline for 24 hours, analytics killed mid-storm. For each: readings the pole
buffered, how many the store lacks at the end, duplicates stored, notices
identical to an undisturbed run (where the fault touches analytics), and the
recovery time (fault over → everything buffered before it is stored).

Beside them, the broker alone (plain paho QoS 1 publisher and subscriber, no
disk buffer, no watermark) on ``deploy/mosquitto.conf``'s queueing settings:
killed with -9 under load, and a large offline persistent-session queue.

    uv run python -m bench.fault_matrix [--out docs/fault-matrix.md] [--quick]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.faults.harness import (
    BrokerLoss,
    FaultResult,
    PostgresProcess,
    VictoriaServer,
    broker_kill_under_load,
    broker_offline_queue,
    deploy_broker,
    run_analytics_fault,
    run_broker_kills,
    run_influx_outage,
    run_ingest_kills,
    run_pole_offline,
)


def fault_table(results: list[FaultResult]) -> list[str]:
    """Markdown rows of the fault matrix."""
    rows = [
        "| fault | reps | readings sent | lost | duplicates | notices identical "
        "| recovery p50 / max (s) | note |",
        "|---|---:|---:|---:|---:|---|---|---|",
    ]
    for r in results:
        rec = r.recovery_s
        recovery = f"{statistics.median(rec):.2f} / {max(rec):.2f}" if rec else "-"
        same = "-" if r.notices_identical is None else ("yes" if r.notices_identical else "NO")
        rows.append(
            f"| {r.fault} | {r.repetitions} | {r.sent} | {r.lost} | {r.duplicates} | {same} "
            f"| {recovery} | {r.note} |"
        )
    return rows


def loss_table(losses: list[BrokerLoss], system: FaultResult | None) -> list[str]:
    """Markdown rows: what the bare broker lost, beside the system's result."""
    rows = [
        "| case (deploy/mosquitto.conf queueing) | acknowledged | delivered | lost |",
        "|---|---:|---:|---:|",
    ]
    rows += [f"| bare broker: {x.case} | {x.acked} | {x.delivered} | {x.lost} |" for x in losses]
    if system is not None:
        stored = system.sent - system.lost
        rows.append(
            f"| Sidewalk Watch (pole buffer + watermark), {system.repetitions} kills "
            f"| {system.sent} | {stored} | {system.lost} |"
        )
    return rows


def timed(label: str, run: Callable[[], FaultResult]) -> FaultResult:
    """Run one fault, printing its progress."""
    print(f"… {label}", flush=True)
    started = time.monotonic()
    result = run()
    print(f"  {result.fault}: lost {result.lost}, duplicates {result.duplicates}, "
          f"{time.monotonic() - started:.0f} s", flush=True)  # fmt: skip
    return result


def main() -> None:
    """Run the matrix and print (and optionally write) the tables."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="write the tables here (markdown)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    ap.add_argument("--queue", type=int, default=100_000, help="offline-queue messages")
    args = ap.parse_args()
    reps = 2 if args.quick else None
    root = Path(tempfile.mkdtemp(prefix="sidewalk-faults-"))
    broker = deploy_broker(root / "broker")
    broker.start()
    victoria = VictoriaServer(root / "victoria")
    victoria.start()
    postgres = PostgresProcess()
    postgres.start()
    started = time.monotonic()
    results: list[FaultResult] = []
    losses: list[BrokerLoss] = []
    try:
        results.append(timed("Mosquitto kill -9", lambda: run_broker_kills(
            root / "kills", reps or 10, n=6000, rate=400.0)))  # fmt: skip
        results.append(timed("ingest kill -9", lambda: run_ingest_kills(
            root / "ingest", broker, victoria, reps or 5, n=4000)))  # fmt: skip
        results.append(timed("time-series server down", lambda: run_influx_outage(
            root / "influx", broker, victoria, reps or 3)))  # fmt: skip
        results.append(timed("PostgreSQL restart", lambda: run_analytics_fault(
            root / "pg", broker, reps or 3, postgres=postgres)))  # fmt: skip
        results.append(timed("pole offline 24 h", lambda: run_pole_offline(
            root / "pole", broker, reps or 3)))  # fmt: skip
        results.append(timed("analytics kill -9", lambda: run_analytics_fault(
            root / "analytics", broker, reps or 4)))  # fmt: skip
        print("… bare broker: kill -9 under load", flush=True)
        losses.append(broker_kill_under_load(root / "raw-kill", 60_000, 30_000))
        print("… bare broker: offline session queue", flush=True)
        losses.append(broker_offline_queue(root / "raw-queue", args.queue))
    finally:
        postgres.remove()
        victoria.stop()
        broker.stop()
        shutil.rmtree(root, ignore_errors=True)
    lines = [
        f"Fault matrix ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{time.monotonic() - started:.0f} s)",
        "",
        *fault_table(results),
        "",
        *loss_table(losses, results[0]),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text)
    bad = [r.fault for r in results if not r.ok]
    if bad:
        raise SystemExit(f"FAILED: {', '.join(bad)}")


if __name__ == "__main__":
    main()
