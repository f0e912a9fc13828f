"""A throwaway PostgreSQL schema for one benchmark run."""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg

PG_DSN = os.environ.get("PROGRESSIVE_TEST_PG", "postgresql://postgres@127.0.0.1:5432/test")


@asynccontextmanager
async def scratch_schema() -> AsyncIterator[tuple[str, str]]:
    """Yields (sqlalchemy_url, schema); the schema is dropped afterwards."""
    schema = f"bench_{uuid.uuid4().hex[:10]}"
    admin = await asyncpg.connect(PG_DSN)
    await admin.execute(f'CREATE SCHEMA "{schema}"')
    try:
        url = PG_DSN.replace("postgresql://", "postgresql+asyncpg://", 1) + f"?search_path={schema}"
        yield url, schema
    finally:
        await admin.execute(f'DROP SCHEMA "{schema}" CASCADE')
        await admin.close()
