"""Mystery triggers drawn from the operating system's cryptographic source.

The reducer is pure: it arms the triggers it is handed (``MysteryDraw``) and seals only their
commitment into the history until the level hits. The draw itself is made here, uniformly
over every whole cent from the level's floor to its ceiling (both included), with a fresh
secret salt, so nobody (the operator included) can predict or steer a trigger.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from controller.core.reducer.levels import LevelConfig, Mystery, MysteryDraw

__all__ = ["draw", "draws_for"]


def draw(m: Mystery) -> MysteryDraw:
    """A trigger uniform on ``floor_cents``..``ceiling_cents`` and a 256-bit salt (hex)."""
    span = m.ceiling_cents - m.floor_cents + 1
    if span <= 0:
        raise ValueError("a mystery level's ceiling is at or above its floor")
    return MysteryDraw(m.floor_cents + secrets.randbelow(span), secrets.token_hex(32))


def draws_for(levels: Sequence[LevelConfig], *, each: int = 1) -> dict[int, list[MysteryDraw]]:
    """``each`` draws for every mystery level of ``levels``, by level index (``open_link``'s
    ``draws``)."""
    return {
        i: [draw(cfg.mystery) for _ in range(each)]
        for i, cfg in enumerate(levels)
        if cfg.mystery is not None
    }
