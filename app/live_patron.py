"""What the floor displays show patrons besides the amounts: the link's paytables in words a
patron reads (hand names, the level each line pays from, envy pays) and the property's name
and colours. Framed for the feed of ``app.live``; nothing here is a technician's concern.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from controller.core.games import Paytable
from controller.core.reducer import LinkState
from controller.settings import Settings

__all__ = ["paytables_content", "property_content"]


def paytables_content(state: LinkState) -> tuple[dict[str, Any], ...]:
    """Every game's paytable of the link, the link's own game first (a mixed-game link has
    one per game its tables deal); each line names the level it pays from."""
    tables = tuple(state.paytable_for(game) for game in state.games)
    return _framed(tables, tuple(lv.config.name for lv in state.levels))


# Framed at every tick of every link with displays: the same paytables and level names give
# the same frame, so it is built once.
@lru_cache(maxsize=256)
def _framed(
    tables: tuple[Paytable, ...], level_names: tuple[str, ...]
) -> tuple[dict[str, Any], ...]:
    return tuple(
        {
            "game": table.game.value,
            "game_label": table.game.label,
            "lines": [
                {
                    "hand": line.hand.name,
                    "hand_label": line.hand.title,
                    "percent_bp": line.percent_bp,
                    "fixed_cents": line.fixed_cents,
                    "level": line.level_number if line.from_meter else None,
                    "level_name": _level_name(level_names, line.level_number)
                    if line.from_meter
                    else None,
                    "envy_cents": line.envy_cents,
                }
                for line in table.lines
            ],
        }
        for table in tables
    )


def _level_name(names: tuple[str, ...], number: int) -> str | None:
    return names[number - 1] if 0 < number <= len(names) else None


def property_content(settings: Settings) -> dict[str, Any]:
    """The property's name (None when not set) and the colours of its displays (#rrggbb)."""
    return {
        "name": settings.property_name,
        "colour": settings.property_colour,
        "accent": settings.property_accent,
    }
