"""What the ``sidewalk`` commands share: options, settings and profile, the case
records, instants, the consoles, and how a failure is reported.

A command that cannot run as asked (bad input, a service it cannot reach, a
database it cannot open) prints one line on stderr naming the option or the
setting and what to do, and exits with status 2; no traceback. A step the
records refuse (no such notice, a bill already paid) exits 1 the same way.

This module and every module defining commands import only typer, pathlib and
typing at import time: ``sidewalk --help`` must not wait for SQLAlchemy,
Alembic, fpdf2 or OpenCV. Each function imports what it uses when it runs.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

if TYPE_CHECKING:
    import logging.handlers
    from datetime import date, datetime
    from zoneinfo import ZoneInfo

    from rich.console import Console
    from typer.core import TyperGroup

    from sidewalk.alerts.letterhead import Letterhead
    from sidewalk.core.config import Settings
    from sidewalk.core.profile import Profile
    from sidewalk.storage.cases import CaseStore, ClockRecord

ConfigOption = Annotated[
    Path | None,
    typer.Option(
        "--config", "-c", help="TOML configuration file (secrets come from the environment)"
    ),
]
WhoOption = Annotated[str, typer.Option(help="the person recording it (goes in the audit log)")]
LogFormatOption = Annotated[
    str | None,
    typer.Option("--log-format", help="text | json (default: observability.log_format)"),
]
MetricsPortOption = Annotated[
    int | None,
    typer.Option(
        "--metrics-port",
        help="serve /metrics, /healthz, /readyz on this port (default: observability.*_port; off)",
    ),
]
INSTANT_FORMS = (
    "ISO 8601 with a UTC offset (2026-12-11T09:30-06:00) or local time in the village's zone"
    " (2026-12-11T09:30)"
)
DATABASE_SETTING = "cases.database_url (SIDEWALK_CASES__DATABASE_URL)"
BROKER_SETTING = "mqtt.url (SIDEWALK_MQTT__URL)"


def command_group(
    help: str | None, *, no_args_is_help: bool = True, cls: type[TyperGroup] | None = None
) -> typer.Typer:
    """A group of commands. Help is Click's plain text: Typer's Rich help would load
    rich.markdown and Pygments on every --help, most of a second."""
    return typer.Typer(
        cls=cls,
        add_completion=False,
        no_args_is_help=no_args_is_help,
        rich_markup_mode=None,
        help=help,
    )


# -- consoles and failures ---------------------------------------------------------


@functools.cache
def console() -> Console:
    """Standard output: tables, notices, what was recorded."""
    from rich.console import Console

    return Console()


@functools.cache
def _errors() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=True)


def fail(message: str, status: int = 2) -> NoReturn:
    """One line on stderr and exit: 2 the command cannot run as asked, 1 the records refused.

    A service failing while it starts says this line first: the start-up's routine log
    lines held so far are dropped, its warnings follow (``configure_logging``)."""
    _errors().print(message, style="red", markup=False)
    release_logs(keep_below=logging.WARNING)
    raise typer.Exit(status)


@contextmanager
def refusals(*kinds: type[Exception]) -> Iterator[None]:
    """Turn what the records refuse (``CaseStoreError`` and ``kinds``) into ``fail(…, 1)``."""
    from sidewalk.storage.cases import CaseStoreError

    refused: tuple[type[Exception], ...] = (CaseStoreError, *kinds)
    try:
        yield
    except refused as exc:
        fail(str(exc), 1)


def no_nul(**typed: object) -> None:
    """Refuse a NUL character in typed text, as the dashboard does (PostgreSQL's text
    cannot hold one, SQLite's would cut it short)."""
    for name, value in typed.items():
        if "\x00" in str(value):
            fail(f"{name}: NUL characters are not accepted")


# -- settings, profile, case records -----------------------------------------------


def load_settings(config: Path | None) -> Settings:
    """The configuration (file, then ``SIDEWALK_…`` environment); an error exits 2."""
    from sidewalk.core.config import ConfigError
    from sidewalk.core.config import load_settings as load

    try:
        return load(config)
    except ConfigError as exc:
        fail(f"configuration error: {exc}")


def load_profile(path: Path | None) -> Profile:
    """An ordinance profile (None: the bundled Clyman profile); an error exits 2."""
    from sidewalk.core.profile import ProfileError
    from sidewalk.core.profile import load_profile as load

    try:
        return load(path)
    except ProfileError as exc:
        fail(f"ordinance profile: {exc}")


# A service's start-up log lines (migrations, the scheduler) are held this long, or
# until ``release_logs``: a start-up failure's one line comes first, not after them.
STARTUP_HOLD_SECONDS = 15.0
_held: list[logging.handlers.MemoryHandler] = []


def configure_logging(settings: Settings, log_format: str | None) -> None:
    """Log lines as text or JSON (``--log-format`` over ``observability.log_format``).

    The records of the first seconds are held (with their own times) and written
    once start-up is past (``release_logs``, or ``STARTUP_HOLD_SECONDS``); a failure
    in between is one line (``fail``) followed only by the warnings held."""
    import logging.handlers
    import threading

    from sidewalk.core.logs import configure_logging as configure

    fmt = log_format or settings.observability.log_format
    if fmt not in {"text", "json"}:
        fail("--log-format is text or json")
    handler = configure("json" if fmt == "json" else "text", settings.observability.log_level)
    root = logging.getLogger()
    held = logging.handlers.MemoryHandler(
        10_000, flushLevel=logging.CRITICAL + 1, target=handler, flushOnClose=True
    )
    root.removeHandler(handler)
    root.addHandler(held)
    _held.append(held)
    timer = threading.Timer(STARTUP_HOLD_SECONDS, release_logs)
    timer.daemon = True
    timer.start()


def release_logs(keep_below: int = logging.NOTSET) -> None:
    """Write the start-up's held log records and log straight on from now; those
    below ``keep_below`` are dropped (a failed start-up keeps its warnings)."""
    root = logging.getLogger()
    while _held:
        held = _held.pop()
        with held.lock:  # type: ignore[union-attr]  # Handler.lock is set by createLock
            held.buffer = [r for r in held.buffer if r.levelno >= keep_below]
        held.flush()
        if held in root.handlers and held.target is not None:
            root.removeHandler(held)
            root.addHandler(held.target)
        held.close()


def metrics_port_free(settings: Settings, option: int | None, setting: str) -> None:
    """Exit 2 in one line when the service's ``/metrics`` port (``--metrics-port``, else
    ``observability.<setting>``) is taken, before anything has started."""
    from sidewalk.core.observability import port_problem

    port = option or getattr(settings.observability, setting)
    if not port:
        return
    host = settings.observability.host
    why = port_problem(host, port)
    if why is not None:
        env = f"SIDEWALK_OBSERVABILITY__{setting.upper()}"
        fail(
            f"port {port} on {host} is in use by another program ({why}): stop it, or set"
            f" observability.{setting} ({env}) or --metrics-port to a free port"
        )


@dataclass(frozen=True)
class Village:
    """The configured village: its settings and its ordinance profile."""

    settings: Settings
    profile: Profile

    def instant(self, option: str, text: str | None) -> datetime:
        """``--at`` and its kin, read in the village's zone (None: now)."""
        return instant(option, text, self.profile.zone)

    def letterhead(self) -> Letterhead | None:
        """The settings' ``[village]`` letterhead, stored with every notice issued here
        (None: not set, and ``sidewalk check`` says so)."""
        from sidewalk.alerts.letterhead import Letterhead

        if self.settings.village is None:
            return None
        return Letterhead.from_settings(self.settings.village, self.profile)

    @contextmanager
    def cases(self) -> Iterator[CaseStore]:
        """The case records, migrated, closed afterwards."""
        cases = open_case_records(self.settings.cases.database_url, self.profile)
        try:
            yield cases
        finally:
            cases.close()


def village(config: Path | None) -> Village:
    """Settings and profile from ``--config``; a configuration error exits 2."""
    settings = load_settings(config)
    return Village(settings, load_profile(settings.profile))


def open_case_records(database_url: str, profile: Profile) -> CaseStore:
    """The case records, migrated; a database that cannot be opened exits 2 saying why."""
    from sqlalchemy.exc import ArgumentError, SQLAlchemyError

    from sidewalk.storage.connect import PasswordNotApplicable, open_cases

    try:
        return open_cases(database_url, profile)
    except PasswordNotApplicable as exc:
        fail(str(exc))
    except ArgumentError:  # also an unknown dialect (NoSuchModuleError)
        fail(
            f"{DATABASE_SETTING} = {database_url!r} is not a database URL: write"
            " sqlite:///path/to/cases.sqlite3 or postgresql+psycopg://user@host/database"
        )
    except ImportError as exc:  # a dialect whose driver is not installed
        fail(
            f"{DATABASE_SETTING}: no driver for {database_url.split(':', 1)[0]!r} ({exc.name});"
            " use sqlite:///… or postgresql+psycopg://…"
        )
    except SQLAlchemyError as exc:
        fail(_database_problem(database_url, exc))


def _database_problem(database_url: str, exc: Exception) -> str:
    from sqlalchemy.engine import make_url

    url = make_url(database_url)
    reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0]
    if url.get_backend_name() == "sqlite":
        return (
            f"cannot open the SQLite case database {url.database!r} ({reason}): make its folder"
            f" exist and writable, or point {DATABASE_SETTING} elsewhere"
        )
    where = f"{url.host or 'localhost'}:{url.port or 5432}"
    return (
        f"cannot open the case database at {where} ({reason}): start the database server, or"
        f" fix {DATABASE_SETTING} and SIDEWALK_DB_PASSWORD"
    )


def require_broker(settings: Settings) -> None:
    """Exit 2 when no broker is configured (only ``sidewalk demo`` has an embedded one)."""
    if settings.mqtt.url is None:
        fail(f"{BROKER_SETTING} is not set: point it at the MQTT broker, e.g. mqtt://host:1883")


def unreachable_broker(settings: Settings, exc: Exception) -> NoReturn:
    """An MQTT connection failure, as one line naming the setting."""
    from sidewalk.core.mqtt import MqttConnectRefused

    where = f"{settings.mqtt.host}:{settings.mqtt.port}"
    if isinstance(exc, MqttConnectRefused):
        fail(
            f"the MQTT broker at {where} refused the connection ({exc.reason}): check"
            " mqtt.username and SIDEWALK_MQTT_PASSWORD, and the broker's ACL"
        )
    fail(f"cannot reach the MQTT broker at {where} ({exc}): start it, or fix {BROKER_SETTING}")


# -- instants and dates ------------------------------------------------------------


def instant(option: str, text: str | None, zone: ZoneInfo) -> datetime:
    """An instant typed on the command line; None is now.

    ISO 8601 with a UTC offset, or a local time in ``zone`` (the village's);
    a local time that the zone skips or repeats (a DST change) needs the offset.
    """
    from datetime import UTC, datetime

    if text is None:
        return datetime.now(UTC)
    try:
        at = datetime.fromisoformat(text)
    except ValueError:
        fail(f"{option} {text!r}: write {INSTANT_FORMS}")
    if at.tzinfo is not None:
        return at
    earlier, later = at.replace(tzinfo=zone), at.replace(tzinfo=zone, fold=1)
    skipped = earlier.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != at
    if skipped or earlier.utcoffset() != later.utcoffset():
        fail(f"{option} {text!r} is not one instant in {zone.key} (a DST change): add the offset")
    return earlier


def day(option: str, text: str) -> date:
    """An ISO 8601 date (YYYY-MM-DD); anything else exits 2 naming the option."""
    from datetime import date

    try:
        return date.fromisoformat(text)
    except ValueError:
        fail(f"{option} {text!r}: write an ISO 8601 date, e.g. 2026-11-30")


# -- staff entries (sidewalk cold, sidewalk street) --------------------------------


def record(  # noqa: PLR0917 (an action is these six things)
    place: Village, kind: str, target: str, at: datetime, who: str, detail: dict[str, Any]
) -> None:
    """Record one person's action for the analytics runner to apply on its next tick.

    The action is checked with the clocks' own models first: a bad entry is refused
    now (exit 2), not later by the runner.
    """
    from sidewalk.analytics.clocks.actions import ActionError, parse_action

    no_nul(id=target, who=who, detail=detail)
    try:
        parse_action(kind, target, detail, at=at, who=who)
    except ActionError as exc:
        fail(f"refused: {exc}")
    with place.cases() as cases, refusals():
        cases.actions.record(kind, target, at, who, detail)
    console().print(f"recorded {kind.replace('_', ' ')} {target} by {who}; the runner applies it")


def print_clocks(kind: str, clocks: Sequence[ClockRecord], profile: Profile) -> None:
    """One line per clock, so it reads (and greps) the same at any terminal width; the
    sections cited as every document cites them (``alerts.letterhead.cited``)."""
    from sidewalk.alerts.letterhead import cited
    from sidewalk.core.clock import format_local

    console().print(f"[bold]{kind}[/bold]: {len(clocks) or 'none'}")
    for clock in clocks:
        until = (
            "" if clock.deadline is None else f" until {format_local(clock.deadline, profile.zone)}"
        )
        # The key is <frontage>/<clock>/<id>[/<record>]: show the id (and record).
        name = clock.key.split("/", 2)[-1]
        console().print(
            f"  {name} ({clock.frontage_id}): {clock.state}{until}"
            f" — {cited(clock.citation) or 'no citation'}",
            soft_wrap=True,
        )


def print_actions(cases: CaseStore, kinds: Collection[str]) -> None:
    """Entries of these kinds the runner has not applied yet, or refused (with the reason)."""
    for action in cases.actions.list():
        if action.kind not in kinds:
            continue
        if action.applied_at is None:
            console().print(f"pending: {action.kind} {action.target} by {action.who}")
        elif action.error is not None:
            console().print(f"[red]refused:[/red] {action.kind} {action.target}: {action.error}")
