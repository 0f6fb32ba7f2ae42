"""A pole in its own process, for the ``kill -9`` test.

Usage: ``python -m tests.mqtt.pole_process HOST PORT SITE DEVICE BUFFER COUNT``.
Prints ``buffered <seq>`` after each reading's ``append`` has returned (so it
is on disk), then keeps running until killed.
"""

from __future__ import annotations

import sys
import threading
from pathlib import Path

from sidewalk.edge.buffer import ReadingBuffer
from sidewalk.edge.publisher import Publisher
from tests.ingest.pipeline import settings, storm


def main(argv: list[str]) -> None:
    """Buffer and publish COUNT readings, reporting each, then wait to be killed."""
    host, port, site, device, path, count = argv
    buffer = ReadingBuffer(Path(path), device)
    publisher = Publisher(buffer, settings(host, int(port), f"pole-{device}"), site=site)
    publisher.start()
    for item in storm(int(count)):
        reading = publisher.record(item.stream, item.ts_ms, item.values)
        print(f"buffered {reading.seq}", flush=True)
    threading.Event().wait()


if __name__ == "__main__":
    main(sys.argv[1:])
