"""Mystery triggers drawn from a cryptographic source and kept ready on each mystery level.

The reducer never draws (it is pure): before a link's step is computed the runtime tops up
each mystery level's queue to ``READY`` draws, each a trigger uniform over the level's floor
to ceiling in whole cents (both included) with a 32-byte secret salt. A draw is committed to
in the history only when the level is armed with it; until then it lives only in the link's
row (sealed with it), never shown.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence

from controller.core.reducer import LinkState
from controller.core.reducer.levels import LevelConfig, MysteryDraw
from controller.core.reducer.pool import draws_wanted, with_draws

__all__ = ["READY", "draw", "first_draws", "topped_up"]

# Draws kept ready per mystery level: the one to arm at the next reset and one more, so two
# resets in one step both arm at once.
READY = 2


def draw(config: LevelConfig) -> MysteryDraw:
    """A trigger uniform over the level's floor to ceiling (cents, both included)."""
    m = config.mystery
    if m is None:
        raise ValueError(f"level {config.name} is not a mystery level")
    trigger = m.floor_cents + secrets.randbelow(m.ceiling_cents - m.floor_cents + 1)
    return MysteryDraw(trigger, secrets.token_hex(32))


def first_draws(levels: Sequence[LevelConfig]) -> dict[int, list[MysteryDraw]]:
    """The draws a new link opens with: ``READY`` for each mystery level, by index."""
    return {
        i: [draw(cfg) for _ in range(READY)]
        for i, cfg in enumerate(levels)
        if cfg.mystery is not None
    }


def topped_up(state: LinkState) -> LinkState:
    """The state with every mystery level's draws made ready up to ``READY`` (the same state
    when none lacks any)."""
    wanted = draws_wanted(state, READY)
    if not wanted:
        return state
    configs = state.level_configs
    return with_draws(state, {i: [draw(configs[i]) for _ in range(n)] for i, n in wanted.items()})
