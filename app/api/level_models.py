"""What the floor's JSON API says of a link's pool: each level's meters (NY 5320.8: current,
overflow, hits, wins, base, limit, the last 25 hits), a mystery level's ceiling, and a
fixed-pay link's pays.

Shown to everyone who may read current amounts: a level's meter as displayed, its overflow,
its reset amount and limit, a mystery level's ceiling ("must hit by"). Shown to signed-in
staff only (``app.security.STAFF_VIEWERS``): the hidden (reserve) meter and its share. Shown
to nobody: a mystery level's trigger and the draws made ready for it (committed in the
history, revealed there when the level hits).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from controller.core.money import displayed_cents, format_bp
from controller.core.reducer import LinkState
from controller.core.reducer.levels import has_overflow_meter, level_key
from controller.paperwork.meter_lines import RECENT_HITS, AwardSeen, LevelHits


class LevelHitRead(BaseModel):
    hit_id: str | None
    table_id: str | None
    seat: int | None
    hand: str | None = Field(examples=["ROYAL_FLUSH"], description="MYSTERY for a mystery hit")
    kind: Literal["hand", "mystery"]
    award_cents: int
    at_us: int

    @classmethod
    def of(cls, a: AwardSeen) -> LevelHitRead:
        kind: Literal["hand", "mystery"] = "mystery" if a.kind == "mystery" else "hand"
        return cls(
            hit_id=a.hit_id,
            table_id=a.table_id,
            seat=a.seat,
            hand=a.hand,
            kind=kind,
            award_cents=a.award_cents,
            at_us=a.at_us,
        )


class LevelRead(BaseModel):
    """One level of a link's pool, with the meters NY 5320.8 lists."""

    key: str = Field(examples=["L1"], description="the level's meter key (L1 is level 1)")
    name: str = Field(examples=["Grand"])
    current_cents: int = Field(description="the level's meter as shown on the floor")
    overflow_cents: int | None = Field(
        description="what went past the level's limit, moved in at its next reset; null: "
        "the level has no overflow meter"
    )
    hits: int = Field(description="how many hits the level's meter paid, per its history")
    wins_cents: int = Field(description="the total the level's meter paid, per its history")
    base_cents: int = Field(description="the reset amount")
    limit_cents: int | None = Field(description="the most the meter shows; null: no limit")
    above_limit: Literal["overflow", "next_level"] | None = Field(
        description="where the level's share goes at its limit"
    )
    rate_bp: int = Field(description="the level's shown share of every wager")
    rate: str = Field(examples=["40%"])
    must_hit_by_cents: int | None = Field(
        description="a mystery level's ceiling: it hits at or before this amount (the "
        "trigger itself is never shown)"
    )
    reserve_cents: int | None = Field(
        default=None,
        description="the hidden meter that funds the next reset; signed-in staff only "
        "(null otherwise, and for a level without one)",
    )
    reserve_bp: int | None = Field(
        default=None, description="the hidden share; signed-in staff only"
    )
    recent_hits: list[LevelHitRead] = Field(
        description=f"the level's last {RECENT_HITS} hits, newest first"
    )


class FixedPayRead(BaseModel):
    hand: str = Field(examples=["ROYAL_FLUSH"])
    hand_label: str = Field(examples=["royal flush"])
    fixed_cents: int


def levels_of(state: LinkState, hits: dict[str, LevelHits], *, staff: bool) -> list[LevelRead]:
    """The link's levels as ``LevelRead``; the hidden meters only for ``staff``."""
    configs = state.level_configs
    out: list[LevelRead] = []
    for i, lv in enumerate(state.levels):
        cfg = lv.config
        key = level_key(i)
        seen = hits.get(key, LevelHits())
        hidden = staff and (cfg.reserve_bp > 0 or lv.reserve_units > 0)
        out.append(
            LevelRead(
                key=key,
                name=cfg.name,
                current_cents=displayed_cents(lv.meter_units),
                overflow_cents=displayed_cents(lv.overflow_units)
                if has_overflow_meter(configs, i) or lv.overflow_units
                else None,
                hits=seen.hits,
                wins_cents=seen.won_cents,
                base_cents=cfg.reset_cents,
                limit_cents=cfg.limit_cents,
                above_limit=None if cfg.limit_cents is None else cfg.above_limit.value,
                rate_bp=cfg.rate_bp,
                rate=format_bp(cfg.rate_bp),
                must_hit_by_cents=None if cfg.mystery is None else cfg.mystery.ceiling_cents,
                reserve_cents=displayed_cents(lv.reserve_units) if hidden else None,
                reserve_bp=cfg.reserve_bp if hidden else None,
                recent_hits=[LevelHitRead.of(a) for a in seen.recent],
            )
        )
    return out


def fixed_pays_of(state: LinkState) -> list[FixedPayRead]:
    """A fixed-pay link's pays, the hand and the fixed amount, highest first."""
    lines = [line for line in state.paytable.lines if line.fixed_cents is not None]
    return [
        FixedPayRead(hand=line.hand.name, hand_label=line.hand.label, fixed_cents=line.fixed_cents)
        for line in sorted(lines, key=lambda line: -(line.fixed_cents or 0))
        if line.fixed_cents is not None
    ]
