"""A stand-in for a table controller: real shuffles, real hands of every game (the five-card
games, Super Sevens blackjack, Pai Gow Poker), the reference register map (v1, or v2 for a
table whose ``SimTableConfig.register_map`` is 2; Super Sevens and Pai Gow Poker speak v2).

Dependency rule (shared/DESIGN.md): this package may import the pure core ``controller.core.hands``
and ``controller.core.games``, and nothing else of ``controller``.
"""

from link_adapters.simulator.cards import build_hand, draw_keep
from link_adapters.simulator.registers import (
    PROFILE_ID,
    PROFILE_VERSION,
    PROFILE_VERSION_V2,
    READ_COUNT,
    READ_COUNT_V2,
    READ_START,
    apply_write,
    encode_block,
    from_pair,
    read_count,
    u32_pair,
)
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import (
    RoundRecord,
    SeatHand,
    SimHit,
    SimTableConfig,
    all_hits,
    split_credits,
    total_credits,
)

__all__ = [
    "PROFILE_ID",
    "PROFILE_VERSION",
    "PROFILE_VERSION_V2",
    "READ_COUNT",
    "READ_COUNT_V2",
    "READ_START",
    "RoundRecord",
    "SeatHand",
    "SimHit",
    "SimTable",
    "SimTableConfig",
    "all_hits",
    "apply_write",
    "build_hand",
    "draw_keep",
    "encode_block",
    "from_pair",
    "read_count",
    "split_credits",
    "total_credits",
    "u32_pair",
]
