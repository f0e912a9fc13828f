"""Password hashes (argon2, off the event loop) and the digests of display tokens.

Hashing runs in a worker thread so a login never stalls the polling loop.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any, TypeVar

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

T = TypeVar("T")

# RFC 9106's second recommended option: argon2id, 3 passes over 64 MiB (in KiB), 4 lanes.
PASSES, MEMORY_KIB, LANES = 3, 64 * 1024, 4
_hasher = PasswordHasher(time_cost=PASSES, memory_cost=MEMORY_KIB, parallelism=LANES)
# Each argon2 hash takes 64 MiB: a burst of sign-ins must not take the machine's memory.
_hashing = threading.BoundedSemaphore(4)


def _bounded(fn: Callable[..., T], *args: Any) -> T:
    with _hashing:
        return fn(*args)


async def _off_loop(fn: Callable[..., T], *args: Any) -> T:
    """Run ``fn`` in a thread of its own that ends with it: a slow hash never stalls polling,
    and no idle worker threads outlive the call."""
    loop = asyncio.get_running_loop()
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="argon2")
    try:
        return await loop.run_in_executor(pool, _bounded, fn, *args)
    finally:
        pool.shutdown(wait=False)


async def hash_password(password: str) -> str:
    return await _off_loop(_hasher.hash, password)


def _verify(hashed: str, password: str) -> bool:
    try:
        return _hasher.verify(hashed, password)
    except (VerificationError, InvalidHashError):
        return False


@lru_cache(maxsize=1)
def _dummy_hash() -> str:
    return _hasher.hash(secrets.token_urlsafe(16))


def _verify_unknown(password: str) -> bool:
    _verify(_dummy_hash(), password)
    return False


async def verify_password(hashed: str | None, password: str) -> bool:
    """Argon2 verification; an unknown user costs the same time as a wrong password."""
    if hashed is None:
        return await _off_loop(_verify_unknown, password)
    return await _off_loop(_verify, hashed, password)


def token_digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()
