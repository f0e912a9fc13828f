"""A fresh schema of the test database for a run started outside pytest, dropped afterwards."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator

import asyncpg

from controller.storage.database import make_engine, upgrade
from tests.conftest import PG_DSN


@contextlib.asynccontextmanager
async def fresh_schema(prefix: str) -> AsyncIterator[str]:
    """A migrated, empty schema of database ``test``, as a SQLAlchemy URL."""
    schema = f"{prefix}_{uuid.uuid4().hex[:12]}"
    admin = await asyncpg.connect(PG_DSN)
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    url = PG_DSN.replace("postgresql://", "postgresql+asyncpg://", 1) + f"?search_path={schema}"
    try:
        engine = make_engine(url)
        await upgrade(engine)
        await engine.dispose()
        yield url
    finally:
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()
