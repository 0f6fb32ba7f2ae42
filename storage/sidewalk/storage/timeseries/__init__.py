"""The SQLite time-series store: the system of record for readings.

Readings are keyed ``UNIQUE(device, seq)`` so a re-sent reading is dropped as a
duplicate. Alongside them the store keeps dead letters (messages that broke
the contract, with their reason), seq gaps (readings never received; a gap a
later re-send fills is removed, so what remains is truly missing) and per
device state (highest seq, the device's buffer floor, last status).

``stored_up_to(device)`` is the highest seq S such that every seq 1..S is
stored or known lost for good (below the device's reported buffer floor).
Ingest publishes it as the device's retained watermark. Seqs start at 1.

``write_batch`` is one transaction in WAL mode with ``synchronous=FULL``:
when it returns, the batch survives a power cut.

Seq spaces (``Reading.epoch``): a pole's seqs are unique within its epoch, a
random id its buffer creates with its seq state, so a re-imaged pole starts
again at seq 1 in a new epoch. Each ``(device, epoch)`` is a ``seq_spaces``
row whose ``base`` places it on the device's one line of stored seqs:
``readings.seq`` = ``base`` + the pole's seq (the payload keeps the pole's
own). The first space of a device has base 0 (so a pole without epochs, space
``''``, is stored as before); a new epoch of a device that has readings starts
after them and closes the previous space (its open gaps are lost: that disk is
gone). The watermark is published for the device's current space, in its own
seqs, with its epoch.

Time: with a ``TimePolicy``, a reading whose ``ts`` is implausible (ahead of its
receipt, or older than the pole's last accepted reading while its seq is
newer) is quarantined: kept byte for byte as an ``implausible_time`` dead
letter, its seq accounted for (so the watermark passes it and a re-send is a
duplicate) but not stored as a reading, and the device's ``clock_faults``
counted. A newer reading stamped far ahead of its pole's run that ends its
batch is held in its seq space's row (``BatchResult.held``) until the pole's
next reading, or the end of ``TimePolicy.max_hold_ms``, decides (``TimePolicy.hold``).

Secondary views (InfluxDB) catch up from this store, not from memory: the same
transaction appends each newly stored reading to ``export_log``, and each sink
keeps a durable cursor in ``export_cursors`` (``export_after`` /
``advance_export``). The log is pruned below the lowest cursor of the
registered sinks. With no sink registered nothing is logged (a store without
a view carries no export rows); the first sink registered is backfilled with
every reading stored so far, so a view added later starts complete.
"""

from sidewalk.storage.timeseries.records import (
    DEAD_LETTER_PREFIX,
    BatchResult,
    DeadLetter,
    DeviceState,
    ExportBatch,
    SeqGap,
    SeqSpace,
    StatusUpdate,
    TimeSeriesStore,
)
from sidewalk.storage.timeseries.store import SqliteTimeSeriesStore

__all__ = [
    "DEAD_LETTER_PREFIX",
    "BatchResult",
    "DeadLetter",
    "DeviceState",
    "ExportBatch",
    "SeqGap",
    "SeqSpace",
    "SqliteTimeSeriesStore",
    "StatusUpdate",
    "TimeSeriesStore",
]
