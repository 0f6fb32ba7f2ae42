"""The unit of work every repository shares: one engine, its sessions, its transactions.

Each repository method runs in one transaction taken here (``write()`` or
``read()``); a write that touches several concerns (a notice and its audit
row, a payment and its bill's status) does so inside that one transaction,
so it stays atomic whichever repositories' tables it spans. Several repository
calls that must stand or fall together (a round's finding and its repeat key)
run inside ``transaction()``: each call joins it (a write as a savepoint, so
one that fails and is handled, a lost ``create_once`` race, undoes only
itself) and everything commits at its end, or nothing does. Schema
migrations, the dialect, the APScheduler job store and the ping live here too.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any, Final, TypeVar

from alembic import command
from alembic.config import Config
from sqlalchemy import URL, Engine, create_engine, event, make_url, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, sessionmaker

from sidewalk.storage import models as m
from sidewalk.storage.cases.errors import CaseStoreError, NotFoundError

MIGRATIONS_DIR: Final = Path(__file__).parent.parent / "migrations"


def _not_alembic_preamble(record: logging.LogRecord) -> bool:
    # Alembic says "Context impl SQLiteImpl." and "Will assume non-transactional
    # DDL." every time any command opens the case database, even with nothing to
    # migrate: two lines before every answer a clerk asks for. "Running upgrade"
    # lines, which say something, pass.
    message = str(record.msg)
    return not message.startswith(("Context impl", "Will assume"))


logging.getLogger("alembic.runtime.migration").addFilter(_not_alembic_preamble)

T = TypeVar("T")


def normalize_url(url: str) -> str:
    """``postgresql://`` means psycopg 3 here (psycopg2 is not installed)."""
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return url


def _json_default(value: object) -> object:
    if isinstance(value, datetime):
        return value.astimezone(UTC).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return str(value)
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def canonical_json(value: object) -> str:
    """The exact text the audit log hashes: sorted keys, no spaces, UTF-8."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_json_default
    )


def jsonable(value: Mapping[str, Any] | None) -> dict[str, Any]:
    """Decimals and datetimes made JSON-safe before a JSON column sees them."""
    loaded: dict[str, Any] = json.loads(canonical_json(dict(value or {})))
    return loaded


def aware(name: str, value: datetime) -> datetime:
    """``value`` in UTC; a naive time is refused."""
    if value.tzinfo is None or value.utcoffset() is None:
        raise ValueError(f"{name} must be timezone-aware, got {value!r}")
    return value.astimezone(UTC)


def now() -> datetime:
    return datetime.now(UTC)


class UnitOfWork:
    """One database: the engine, a write and a read sessionmaker, and the transactions.

    ``url``: ``sqlite:///path/to/cases.db`` or ``postgresql+psycopg://user@host/db``;
    ``password`` is kept out of the URL (``self.url`` is safe to log).
    """

    def __init__(self, url: str, *, password: str | None = None) -> None:
        full = make_url(normalize_url(url))
        if password is not None:
            # The password comes from the environment (SIDEWALK_DB_PASSWORD), never the URL.
            full = full.set(password=password)
        self.url = full.render_as_string(hide_password=True)
        self.engine = self._make_engine(full)
        # Reads skip SQLite's write lock; writes take it at BEGIN (see _make_engine).
        self._read_engine = self.engine.execution_options(sidewalk_read_only=True)
        self._writes = sessionmaker(self.engine, expire_on_commit=False)
        self._reads = sessionmaker(self._read_engine, expire_on_commit=False)
        # The session of the ``transaction()`` open in this thread or task, if any.
        self._joined: ContextVar[Session | None] = ContextVar(f"uow-{id(self)}", default=None)

    @staticmethod
    def _make_engine(url: URL) -> Engine:
        if url.get_backend_name() != "sqlite":
            return create_engine(url, pool_pre_ping=True)
        engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

        @event.listens_for(engine, "connect")
        def _sqlite_connect(dbapi_connection: Any, _record: Any) -> None:
            # Take BEGIN out of pysqlite's hands so we can say BEGIN IMMEDIATE.
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine, "begin")
        def _sqlite_begin(conn: Any) -> None:
            # A deferred transaction that reads, then writes, fails with SQLITE_BUSY
            # when another writer committed in between; IMMEDIATE waits instead.
            if conn.get_execution_options().get("sidewalk_read_only"):
                conn.exec_driver_sql("BEGIN")
            else:
                conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine

    @property
    def dialect(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return self.engine.dialect.name

    def create_schema(self) -> None:
        """Bring the database to the newest migration (``alembic upgrade head``)."""
        config = Config()
        config.set_main_option("script_location", str(MIGRATIONS_DIR))
        with self.engine.begin() as connection:
            config.attributes["connection"] = connection
            command.upgrade(config, "head")

    def close(self) -> None:
        """Release every pooled connection."""
        self.engine.dispose()

    def job_store(self, tablename: str = "apscheduler_jobs") -> Any:
        """An APScheduler ``SQLAlchemyJobStore`` in this database, on this engine.

        Shares the pool and the password; its table is APScheduler's own and
        the migrations leave it alone.
        """
        from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore

        return SQLAlchemyJobStore(engine=self.engine, tablename=tablename)

    def ping(self) -> None:
        """One round trip to the database; raises what the connection raises."""
        with self.read() as session:
            session.execute(select(1))

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction for every ``write()`` and ``read()`` made inside it (in
        this thread or task): committed on leaving, rolled back on an exception.

        SQLite takes its write lock at the first statement; PostgreSQL serialises
        writers where they take the audit chain's lock (held to commit). Nested, the
        inner one joins the outer.
        """
        if self._joined.get() is not None:
            yield
            return
        with self._writes() as session, session.begin():
            token = self._joined.set(session)
            try:
                yield
            finally:
                self._joined.reset(token)

    @contextmanager
    def write(self) -> Iterator[Session]:
        """A write transaction (SQLite: ``BEGIN IMMEDIATE``), committed on leaving; inside
        ``transaction()``, a savepoint in it."""
        joined = self._joined.get()
        if joined is not None:
            with joined.begin_nested():
                yield joined
            return
        with self._writes() as session, session.begin():
            yield session

    @contextmanager
    def read(self) -> Iterator[Session]:
        """A read transaction that never takes SQLite's write lock; inside
        ``transaction()``, a read in it (it sees what was written before it)."""
        joined = self._joined.get()
        if joined is not None:
            yield joined
            return
        with self._reads() as session, session.begin():
            yield session

    def create_once(
        self,
        model: type[m.Clock | m.Violation | m.Notice | m.Abatement | m.Bill | m.Payment],
        key: str,
        build: Callable[[Session], Any],
        convert: Callable[[Session, Any], T],
    ) -> T:
        """Create through ``build`` unless ``key`` exists; a lost race returns the winner."""
        lookup = select(model).where(model.idempotency_key == key)
        try:
            with self.write() as session:
                existing = session.scalar(lookup)
                if existing is not None:
                    return convert(session, existing)
                row = build(session)
                session.flush()
                return convert(session, row)
        except IntegrityError as exc:
            with self.read() as session:
                existing = session.scalar(lookup)
                if existing is None:
                    raise CaseStoreError(f"refused by the database: {exc.orig}") from exc
                return convert(session, existing)

    @staticmethod
    def get(session: Session, model: type[T], key: object) -> T:
        """The row of ``model`` with primary key ``key``, or ``NotFoundError``."""
        row = session.get(model, key)
        if row is None:
            raise NotFoundError(f"no {model.__name__.lower()} {key!r}")
        return row
