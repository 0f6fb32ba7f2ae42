"""Alembic environment for the case records.

Run programmatically by ``CaseStore.create_schema()``, which hands over an
open connection in ``config.attributes["connection"]``; from the command line
(``uv run alembic upgrade head`` with the repository's alembic.ini) the URL
comes from ``SIDEWALK_DATABASE_URL``.
"""

from __future__ import annotations

import os
from logging.config import fileConfig
from typing import Any

from alembic import context
from sqlalchemy import Connection, create_engine, pool

from sidewalk.storage.models import Base

config = context.config
target_metadata = Base.metadata

if config.config_file_name is not None:
    fileConfig(config.config_file_name, disable_existing_loggers=False)


def _include_object(
    obj: Any, name: str | None, type_: str, reflected: bool, compare_to: Any
) -> bool:
    # APScheduler's job store lives in the same database; its table is not ours.
    return not (type_ == "table" and reflected and compare_to is None)


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("SIDEWALK_DATABASE_URL")
    if not url:
        raise RuntimeError("set SIDEWALK_DATABASE_URL (e.g. sqlite:///var/sidewalk/cases.db)")
    from sidewalk.storage.cases import normalize_url

    return normalize_url(url)


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        include_object=_include_object,
        compare_type=True,
        # SQLite cannot ALTER most things; batch mode rebuilds the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Emit SQL for a DBA (``alembic upgrade head --sql``)."""
    context.configure(
        url=_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = create_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as conn:
        _run(conn)


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
