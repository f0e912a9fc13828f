"""How a link's state is written into its rows and read back: the text columns' JSON forms
(last win, armed change, hit claims, levels, other games' paytables) and the fields of a link
row and a table counter row."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from controller.core.games import Game, Paytable, make_paytable
from controller.core.hands import HandCategory
from controller.core.ledger import canonical_details
from controller.core.reducer import (
    ArmedChange,
    HitClaim,
    LastWin,
    LinkState,
    TableConfig,
    TableState,
)
from controller.core.reducer.levels import LevelState, classic_levels, levels_from_dicts
from controller.rules.pools import fixed_pay_only


def to_json(value: Any) -> str:
    return canonical_details(value)


def claims_json(claims: Iterable[HitClaim]) -> str:
    return to_json([c.to_dict() for c in claims])


# A table's counter row is written at every poll, and its claims seldom change: their text is
# kept for the claims it was made of (a claim's text follows from its fields alone).
@lru_cache(maxsize=4096)
def _claim_text(claim: HitClaim) -> str:
    return to_json(claim.to_dict())


@lru_cache(maxsize=1024)
def _claims_text(claims: tuple[HitClaim, ...]) -> str:
    return claims_json(claims)


def claims_of(text: str) -> tuple[HitClaim, ...]:
    return tuple(HitClaim.from_dict(d) for d in json.loads(text))


def claim_of(text: str | None) -> HitClaim | None:
    return None if text is None else HitClaim.from_dict(json.loads(text))


def last_win_json(win: LastWin | None) -> str | None:
    if win is None:
        return None
    d: dict[str, Any] = {
        "won_cents": win.won_cents,
        "table_id": win.table_id,
        "seats": list(win.seats),
        "hand": win.hand.name,
        "at_us": win.at_us,
    }
    if win.level is not None:  # a win without one reads as every win stored before levels
        d["level"] = win.level
    return to_json(d)


def last_win_of(text: str | None) -> LastWin | None:
    if text is None:
        return None
    d = json.loads(text)
    return LastWin(
        won_cents=d["won_cents"],
        table_id=d["table_id"],
        seats=tuple(d["seats"]),
        hand=HandCategory[d["hand"]],
        at_us=d["at_us"],
        level=d.get("level"),
    )


def armed_json(change: ArmedChange | None, game: Game | None = None) -> str | None:
    """The armed change's JSON; a paytable of another game than the link's ``game`` (a
    mixed-game link) says its game, which the lines alone do not."""
    if change is None:
        return None
    d = change.to_dict()
    if change.paytable is not None and game is not None and change.paytable.game is not game:
        d["paytable_game"] = str(change.paytable.game)
    return to_json(d)


def armed_of(text: str | None, game: Game) -> ArmedChange | None:
    if text is None:
        return None
    d = json.loads(text)
    lines = d.get("paytable")
    levels = d.get("levels")
    return ArmedChange(
        submission_id=d["submission_id"],
        effective_at_us=d["effective_at_us"],
        rate_bp=d.get("rate_bp"),
        reset_cents=d.get("reset_cents"),
        paytable=(
            None if lines is None else make_paytable(Game(d.get("paytable_game", game)), lines)
        ),
        levels=None if levels is None else levels_from_dicts(levels),
    )


def default_levels(
    game: Game, *, rate_bp: int, reset_cents: int, meter_units: int
) -> tuple[LevelState, ...]:
    """The levels a link row without any stands for: none for a game that pays only fixed
    amounts (68 IAC 10-7-5(e): a Let It Ride link from before levels), else the one level
    of a classic link, mirrored from its rate, reset amount and meter."""
    if fixed_pay_only(game):
        return ()
    return classic_levels(rate_bp=rate_bp, reset_cents=reset_cents, meter_units=meter_units)


def has_own_levels(state: LinkState) -> bool:
    """Do the link's levels say more than its other fields (``default_levels``)? Only then
    are they in its seal, so every seal made before levels still verifies."""
    return state.levels != default_levels(
        state.game,
        rate_bp=state.rate_bp,
        reset_cents=state.reset_cents,
        meter_units=state.meter_units,
    )


def levels_json(state: LinkState) -> str | None:
    """``links.levels``: NULL for a classic link (its one level mirrored from the row), ``[]``
    for a fixed-pay link, else every level with its meters, wins and mystery draws."""
    if not state.levels:
        return "[]"
    classic = classic_levels(
        rate_bp=state.rate_bp, reset_cents=state.reset_cents, meter_units=state.meter_units
    )
    if state.levels == classic:
        return None
    return to_json([lv.to_dict() for lv in state.levels])


def levels_of(
    text: str | None, game: Game, *, rate_bp: int, reset_cents: int, meter_units: int
) -> tuple[LevelState, ...]:
    if text is None:
        return default_levels(
            game, rate_bp=rate_bp, reset_cents=reset_cents, meter_units=meter_units
        )
    return tuple(LevelState.from_dict(d) for d in json.loads(text))


def paytables_json(paytables: Mapping[Game, Paytable]) -> str | None:
    """``links.paytables``: a mixed-game link's other games' lines; NULL for one game."""
    if not paytables:
        return None
    return to_json({str(g): pt.to_dicts() for g, pt in sorted(paytables.items())})


def paytables_of(text: str | None) -> dict[Game, Paytable]:
    if text is None:
        return {}
    return {Game(g): make_paytable(Game(g), lines) for g, lines in json.loads(text).items()}


def config_dict(c: TableConfig) -> dict[str, Any]:
    return {
        "denomination_cents": c.denomination_cents,
        "seats": c.seats,
        "max_credits_per_seat_round": c.max_credits_per_seat_round,
        "min_round_us": c.min_round_us,
    }


def link_fields(state: LinkState) -> dict[str, Any]:
    """The link row's fields that change as the link plays (the head is added by the caller)."""
    return {
        "meter_units": state.meter_units,
        "rate_bp": state.rate_bp,
        "reset_cents": state.reset_cents,
        "jackpot_won_since_rate_set": state.jackpot_won_since_rate_set,
        "last_win": last_win_json(state.last_win),
        "armed_change": armed_json(state.armed, state.game),
        "levels": levels_json(state),
        "paytables": paytables_json(state.paytables),
    }


def counter_fields(ts: TableState) -> dict[str, Any]:
    """A table's counter row as written (its seal is added by the caller)."""
    return {
        "table_id": ts.config.table_id,
        "poll_seq": ts.poll_seq,
        "credits": ts.credits,
        "rounds": ts.rounds,
        "at_us": ts.at_us,
        "last_hit_seq": ts.last_hit_seq,
        "last_hit_round": ts.last_hit_round,
        "last_hit_claim": None if ts.last_hit_claim is None else _claim_text(ts.last_hit_claim),
        "last_hit_gone": ts.last_hit_gone,
        "hit_epoch": ts.hit_epoch,
        "open_claims": _claims_text(tuple(ts.open_claims)) if ts.open_claims else "[]",
        "hit_pending": ts.hit_pending,
        "online": ts.online,
        "out_of_play": ts.out_of_play,
    }


def cards_text(cards: Iterable[int] | None) -> str | None:
    return None if cards is None else ",".join(str(c) for c in cards)


def cards_of(text: str) -> tuple[int, ...] | None:
    """``cards_text`` read back; None when the text holds no cards."""
    return tuple(int(c) for c in text.split(",")) if text else None
