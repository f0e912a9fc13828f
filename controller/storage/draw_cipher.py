"""A mystery level's armed trigger and queued draws, kept in the link row under encryption.

Whoever knows a mystery level's armed trigger knows the amount at which it will hit, and so
when to bet; whoever knows its queued draws knows the next ones. The history holds only a
commitment to each trigger (``levels.mystery_commitment``), revealed when it is used; the link
row must hold the triggers themselves, since a controller resumes from it. So the row holds
them encrypted, with a key kept outside the database: a database reader (a DBA, a backup, a
replica, a reporting user) sees meters and wins, never a trigger.

The key is derived from the ledger key (HKDF-SHA256, its own label), which lives in a file or
the environment, never in the database. Each level's secret part (``armed`` and ``draws``) is
sealed with AES-256-GCM under a fresh nonce, bound to its link and level position as
associated data, so a ciphertext moved to another level or link fails to open. The link's
state seal is computed over the triggers themselves, not over this text, so a swapped or
replayed ciphertext that did open would still fail the seal.

A row written before this (triggers in plain text) is read as it is and written encrypted
by the store at its next start (``LedgerStore.check_key``) or the link's next commit.
"""

from __future__ import annotations

import base64
import functools
import json
import os
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from controller.core.ledger import canonical_details

__all__ = ["HIDDEN", "DrawsUnreadable", "has_plain_draws", "hide_draws", "open_draws"]

# The key in a stored level that holds its sealed secret part.
HIDDEN = "hidden"
# What of a level is secret (``LevelState.to_dict``'s names).
_SECRET = ("armed", "draws")
_LABEL = b"progressive/mystery-draws/v1"
_NONCE = 12


class DrawsUnreadable(ValueError):
    """A level's sealed draws do not open with this key (another key, or changed text)."""


@functools.lru_cache(maxsize=8)
def _aead(key: bytes) -> AESGCM:
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=_LABEL).derive(key)
    return AESGCM(derived)


def _json(levels: list[dict[str, Any]]) -> str:
    return json.dumps(levels, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _bound_to(link_id: str, index: int) -> bytes:
    return f"{link_id}\x1f{index}".encode()


def hide_draws(key: bytes, link_id: str, levels_text: str | None) -> str | None:
    """``links.levels`` as stored: every level's armed trigger and queued draws sealed."""
    if levels_text is None:
        return None
    levels: list[dict[str, Any]] = json.loads(levels_text)
    for index, level in enumerate(levels):
        secret = {name: level.pop(name) for name in _SECRET if name in level}
        if not secret:
            continue
        nonce = os.urandom(_NONCE)
        sealed = _aead(key).encrypt(
            nonce, canonical_details(secret).encode(), _bound_to(link_id, index)
        )
        level[HIDDEN] = base64.b64encode(nonce + sealed).decode("ascii")
    return _json(levels)


def open_draws(key: bytes, link_id: str, stored: str | None) -> str | None:
    """``links.levels`` as the codec reads it: every sealed level opened (plain text, from
    a row written before sealing, passes as it is)."""
    if stored is None:
        return None
    levels: list[dict[str, Any]] = json.loads(stored)
    for index, level in enumerate(levels):
        hidden = level.pop(HIDDEN, None)
        if hidden is None:
            continue
        raw = base64.b64decode(str(hidden), validate=True)
        try:
            plain = _aead(key).decrypt(raw[:_NONCE], raw[_NONCE:], _bound_to(link_id, index))
        except InvalidTag:
            raise DrawsUnreadable(
                f"level {index + 1}'s mystery draws do not open with this ledger key "
                "(another key, or the stored text was changed)"
            ) from None
        level.update(json.loads(plain))
    return _json(levels)


def has_plain_draws(stored: str | None) -> bool:
    """Does a stored ``links.levels`` hold a trigger in plain text (a row from before)?"""
    if stored is None:
        return False
    levels = json.loads(stored)
    return any(name in level for level in levels for name in _SECRET)
