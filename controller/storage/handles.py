"""The handles storage gives the floors above it: the database (a pool of connections) and
one connection, in its transaction or not. Code outside storage names these, never the
driver's types, and opens them only through ``controller.storage.unit_of_work``."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

__all__ = ["Connection", "Database"]

Database = AsyncEngine
Connection = AsyncConnection
