"""One reading stamped a day ahead among 458 good at a batch boundary of ingest's store.

A day's buffer delivered late (received 12 h after its last reading), one
reading per 3 minutes, seq 60 stamped a day ahead. The store is given the
readings in batches split several ways, the skewed one last of a batch among
them, and a next batch after the last one to end any hold. Printed per split:
the good readings quarantined, whether the skewed one was stored, and how far
the latest event time stored for the pole lies beyond its real latest reading
(what a replay of the stored readings advances the clocks to: a deadline up to
that much earlier decided on readings that never were).

    .venv/bin/python bench/time_sanity_hold.py

To measure another tree's store (the code before a change), put its packages
first: ``PYTHONPATH=/tmp/before/core:/tmp/before/storage``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from sidewalk.core.contract import TimePolicy, WeatherReading
from sidewalk.storage.timeseries import SqliteTimeSeriesStore

T0 = 1_764_460_800_000  # 2025-11-30T00:00:00Z
MIN = 60_000
DAY = 86_400_000
N, BAD = 458, 60


def _hm(ms: int) -> str:
    """Hours and minutes (the bench runs on older trees too, before ``span_words``)."""
    hours, minutes = divmod(round(ms / MIN), 60)
    return f"{hours} h {minutes:02d} min"


def readings() -> list[WeatherReading]:
    out = [WeatherReading(device="pole-1", seq=s, ts=T0 + s * 3 * MIN, air_temp_c=-2.0)
           for s in range(1, N + 1)]  # fmt: skip
    out[BAD - 1] = WeatherReading(device="pole-1", seq=BAD, ts=T0 + BAD * 3 * MIN + DAY,
                                  air_temp_c=-2.0)  # fmt: skip
    return out


SPLITS: dict[str, list[int]] = {
    "one batch": [N],
    "skewed one last of a batch (60 | 398)": [BAD, N - BAD],
    "batches of 20 (skewed one last of the 3rd)": [20] * 23,
    "batches of 50 (skewed one inside the 2nd)": [50] * 10,
    "one reading a batch": [1] * N,
}


def measure(name: str, sizes: list[int], workdir: Path) -> str:
    store = SqliteTimeSeriesStore(workdir / f"{abs(hash(name))}.db")
    rs = readings()
    received = rs[-1].ts + DAY // 2
    policy = TimePolicy()
    start = 0
    for size in sizes:
        store.write_batch(rs[start : start + size], received_at_ms=received, time_policy=policy)
        start += size
    # The pole's next delivery (a reading in line), which ends any hold.
    store.write_batch(
        [WeatherReading(device="pole-1", seq=N + 1, ts=rs[-1].ts + 3 * MIN, air_temp_c=-2.0)],
        received_at_ms=received, time_policy=policy,
    )  # fmt: skip
    seqs = set(store.seqs("pole-1"))
    good_lost = sum(1 for s in range(1, N + 2) if s != BAD and s not in seqs)
    latest = max(r.ts for r in store.readings(device="pole-1"))
    ahead = latest - (rs[-1].ts + 3 * MIN)
    store.close()
    return (
        f"{name:45} good quarantined {good_lost:3} of {N}"
        f" | skewed one {'STORED' if BAD in seqs else 'quarantined'}"
        f" | latest stored time ahead of the real one: {_hm(ahead) if ahead else 'none'}"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name, sizes in SPLITS.items():
            print(measure(name, sizes, Path(tmp)))


if __name__ == "__main__":
    main()
