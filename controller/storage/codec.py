"""How a link's state is written into its rows and read back: the text columns' JSON forms
(last win, armed change, hit claims) and the fields of a link row and a table counter row."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from controller.core.games import Game, make_paytable
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


def to_json(value: Any) -> str:
    return canonical_details(value)


def claims_json(claims: Iterable[HitClaim]) -> str:
    return to_json([c.to_dict() for c in claims])


def claims_of(text: str) -> tuple[HitClaim, ...]:
    return tuple(HitClaim.from_dict(d) for d in json.loads(text))


def claim_of(text: str | None) -> HitClaim | None:
    return None if text is None else HitClaim.from_dict(json.loads(text))


def last_win_json(win: LastWin | None) -> str | None:
    if win is None:
        return None
    return to_json(
        {
            "won_cents": win.won_cents,
            "table_id": win.table_id,
            "seats": list(win.seats),
            "hand": win.hand.name,
            "at_us": win.at_us,
        }
    )


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
    )


def armed_json(change: ArmedChange | None) -> str | None:
    return None if change is None else to_json(change.to_dict())


def armed_of(text: str | None, game: Game) -> ArmedChange | None:
    if text is None:
        return None
    d = json.loads(text)
    lines = d.get("paytable")
    return ArmedChange(
        submission_id=d["submission_id"],
        effective_at_us=d["effective_at_us"],
        rate_bp=d.get("rate_bp"),
        reset_cents=d.get("reset_cents"),
        paytable=None if lines is None else make_paytable(game, lines),
    )


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
        "armed_change": armed_json(state.armed),
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
        "last_hit_claim": None
        if ts.last_hit_claim is None
        else to_json(ts.last_hit_claim.to_dict()),
        "last_hit_gone": ts.last_hit_gone,
        "hit_epoch": ts.hit_epoch,
        "open_claims": claims_json(ts.open_claims),
        "hit_pending": ts.hit_pending,
        "online": ts.online,
        "out_of_play": ts.out_of_play,
    }


def cards_text(cards: Iterable[int] | None) -> str | None:
    return None if cards is None else ",".join(str(c) for c in cards)
