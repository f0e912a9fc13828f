"""A table row's seal is the keyed BLAKE2b of one canonical JSON text: rows sealed before stay
sealed, whatever shortcuts make that text."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.ledger import canonical_details
from controller.core.reducer import HitClaim, TableConfig, TableState
from controller.core.state_seal import PERSON, link_seal, table_seal
from controller.storage.codec import claims_json, counter_fields

KEY = b"state seal form key, 32 bytes!!!"


def _by_the_form(payload: Any) -> str:
    h = hashlib.blake2b(key=KEY, digest_size=32, person=PERSON)
    h.update(json.dumps(payload, sort_keys=True, separators=(",", ":")).encode())
    return h.hexdigest()


COUNTERS: list[dict[str, Any]] = [
    {},
    {"poll_seq": 7, "credits": 1234, "rounds": None, "online": True, "out_of_play": False},
    {"open_claims": '[{"seat":1}]', "last_hit_claim": 'x"\\é', "seal": "left out"},
]


@pytest.mark.parametrize("game", [None, Game.CARIBBEAN_DRAW])
@pytest.mark.parametrize("counters", COUNTERS)
@pytest.mark.parametrize("link_id", ["stud", 'l"ink é'])
def test_a_table_seal_is_the_keyed_hash_of_its_canonical_list(
    game: Game | None, counters: dict[str, Any], link_id: str
) -> None:
    config = TableConfig(
        table_id="t-1 é", denomination_cents=25, seats=6, max_credits_per_seat_round=2, game=game
    )
    fields = {k: v for k, v in counters.items() if k != "seal"}
    sealed: list[Any] = ["table", link_id, "t-1 é", 25, 6, 2, config.min_round_us, fields]
    if game is not None:
        sealed.append(str(game))
    assert table_seal(KEY, link_id=link_id, config=config, counters=counters) == _by_the_form(
        sealed
    )


def test_a_link_seal_is_the_keyed_hash_of_its_canonical_list() -> None:
    fields = {"meter_units": 5, "levels": '[{"a":1}]', "last_win": None}
    tables = [("t2", "b" * 64), ("t1", None)]
    assert link_seal(KEY, fields=fields, tables=tables) == _by_the_form(
        ["link", fields, sorted(tables)]
    )


def test_canonical_details_is_sorted_compact_json() -> None:
    value = {"b": [1, None, True], "a": {"é": 'x"y'}, "c": 1.5}
    assert canonical_details(value) == json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    assert canonical_details("as it is") == "as it is"


def test_a_counter_row_writes_its_claims_as_their_json() -> None:
    claim = HitClaim(table_seq=3, seat=2, hand=HandCategory.ROYAL_FLUSH, round=9, cards=(1, 2))
    other = HitClaim(table_seq=4, seat=5, hand=HandCategory.FLUSH, round=9, level=2)
    config = TableConfig(table_id="t1", denomination_cents=100)
    for ts in (
        TableState(config=config),
        TableState(config=config, last_hit_claim=claim, open_claims=(claim, other)),
        TableState(config=config, last_hit_claim=other, open_claims=(other,)),
    ):
        row = counter_fields(ts)
        assert row["open_claims"] == claims_json(ts.open_claims)
        assert row["last_hit_claim"] == (
            None if ts.last_hit_claim is None else canonical_details(ts.last_hit_claim.to_dict())
        )
