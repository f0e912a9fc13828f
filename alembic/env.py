"""Alembic environment: async engines, batch mode on SQLite.

``controller.storage.database.upgrade`` hands in an open connection (so migrations run inside
the caller's event loop); the ``alembic`` command line builds its own async engine.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from sqlalchemy.engine import Connection

from alembic import context
from controller.settings import get_settings
from controller.storage.database import make_engine
from controller.storage.models import Base

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logger", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def do_run_migrations(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


async def run_async_migrations() -> None:
    engine = make_engine(config.get_main_option("sqlalchemy.url") or get_settings().database_url)
    async with engine.connect() as connection:
        await connection.run_sync(do_run_migrations)
        await connection.commit()
    await engine.dispose()


connection = config.attributes.get("connection")
if context.is_offline_mode():
    raise SystemExit("offline migrations are not supported: the guards are dialect-specific")
elif connection is not None:
    do_run_migrations(connection)
else:
    asyncio.run(run_async_migrations())
