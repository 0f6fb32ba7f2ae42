"""Logging setup: text for people at a terminal, JSON lines for a log collector.

``configure_logging("json")`` makes every record one JSON object per line:
``ts`` (ISO 8601 UTC), ``level``, ``logger``, ``message``, the fields passed
with ``extra=`` (``device``, ``seq``, ``frontage``, ``reason`` …) and, for
``log.exception``, ``exc``. Values of fields whose name says they are a
secret (password, token, secret, authorization, cookie) are replaced by
``"[redacted]"`` in both formats' structured fields, so a careless
``extra={"token": …}`` never reaches the log.
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any, Final, Literal, TextIO

LogFormat = Literal["text", "json"]

REDACTED: Final = "[redacted]"
_SECRET_PARTS: Final = ("password", "passwd", "token", "secret", "authorization", "cookie")
# Attributes every LogRecord has: anything else on a record came from ``extra=``.
_STANDARD: Final = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {
    "message",
    "asctime",
    "taskName",
}


def is_secret_field(name: str) -> bool:
    """True for field names that carry credentials (matched case-insensitively)."""
    lowered = name.lower()
    return any(part in lowered for part in _SECRET_PARTS)


def extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    """The ``extra=`` fields of a record, secrets redacted."""
    return {
        key: REDACTED if is_secret_field(key) else value
        for key, value in record.__dict__.items()
        if key not in _STANDARD and not key.startswith("_")
    }


class JsonFormatter(logging.Formatter):
    """One JSON object per record, on one line."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        # Structured fields never overwrite the four above.
        for key, value in extra_fields(record).items():
            entry.setdefault(key, value)
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack"] = self.formatStack(record.stack_info)
        # default=str: a datetime or Path in extra= must not lose the whole line.
        return json.dumps(entry, ensure_ascii=False, default=str)


class TextFormatter(logging.Formatter):
    """``LEVEL logger: message key=value …`` for a terminal."""

    def __init__(self) -> None:
        super().__init__("%(levelname)s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = extra_fields(record)
        if not fields:
            return line
        head, sep, tail = line.partition("\n")  # keep a traceback below the fields
        pairs = " ".join(f"{k}={v}" for k, v in fields.items())
        return f"{head} {pairs}{sep}{tail}"


class _CurrentStderr(logging.Handler):
    """Writes to whatever ``sys.stderr`` is at the time of the record.

    A handler holding the ``sys.stderr`` of the moment it was made writes into
    a closed file once that stream is swapped (a test runner's capture, a
    daemon redirecting its output).
    """

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:
            self.handleError(record)


def configure_logging(
    fmt: LogFormat = "text", level: int | str = logging.INFO, stream: TextIO | None = None
) -> logging.Handler:
    """Replace the root logger's handlers with one writing ``fmt`` to ``stream`` (stderr)."""
    handler: logging.Handler = (
        logging.StreamHandler(stream) if stream is not None else _CurrentStderr()
    )
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(level)
    # Alembic 1.16 logs each of its plugins at INFO whenever a service opens the case
    # database: seven lines in every start's journal that say nothing. Its
    # migration lines ("Running upgrade …") stay.
    logging.getLogger("alembic.runtime.plugins").setLevel(logging.WARNING)
    # fontTools logs each table it prunes while fpdf2 subsets a letter's font.
    logging.getLogger("fontTools").setLevel(logging.WARNING)
    return handler
