"""Settings, loaded once from the environment (prefix ``PROGRESSIVE_``) and overridable in tests."""

from __future__ import annotations

import os
import secrets
from functools import lru_cache
from pathlib import Path

from pydantic import SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PROGRESSIVE_", extra="ignore")

    database_url: str = "sqlite+aiosqlite:///progressive.db"
    # The key that seals the meter history. Kept outside the database on purpose: whoever can
    # write to the database but lacks the key cannot rewrite history undetected.
    ledger_key: SecretStr | None = None
    ledger_key_file: Path = Path("progressive-ledger.key")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()


class LedgerKeyError(RuntimeError):
    pass


def load_ledger_key(settings: Settings, *, create: bool = False) -> bytes:
    """The ledger key from ``PROGRESSIVE_LEDGER_KEY`` (hex) or the key file.

    With ``create`` (first migration of a new installation) a missing key file is made with a
    fresh random key, readable by its owner only.
    """
    if settings.ledger_key is not None:
        try:
            key = bytes.fromhex(settings.ledger_key.get_secret_value())
        except ValueError as exc:
            raise LedgerKeyError("PROGRESSIVE_LEDGER_KEY must be hexadecimal") from exc
        if len(key) < 16:
            raise LedgerKeyError("PROGRESSIVE_LEDGER_KEY must be at least 16 bytes (32 hex digits)")
        return key
    path = settings.ledger_key_file
    if path.exists():
        key = bytes.fromhex(path.read_text().strip())
        if len(key) < 16:
            raise LedgerKeyError(f"{path} holds a key shorter than 16 bytes")
        return key
    if not create:
        raise LedgerKeyError(
            f"no ledger key: set PROGRESSIVE_LEDGER_KEY or provide {path} "
            "(it is created by the first `progressive db upgrade`)"
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32) + "\n")
    return bytes.fromhex(path.read_text().strip())
