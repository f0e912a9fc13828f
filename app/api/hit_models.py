"""The hits of the floor's JSON API: a hit as taken and the technician's marks on it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from controller.core.hands import HandCategory, card_text
from controller.core.verification import parse_stored_cards
from controller.storage.hits import HitRecord


def _example(value: dict[str, Any]) -> ConfigDict:
    return ConfigDict(json_schema_extra={"examples": [value]})


class HitRead(BaseModel):
    model_config = _example(
        {
            "hit_id": "stud-1#3",
            "link_id": "stud",
            "table_id": "stud-1",
            "seat": 3,
            "hand": "ROYAL_FLUSH",
            "hand_label": "royal flush",
            "round": 412,
            "cards": ["As", "Ks", "Qs", "Js", "Ts"],
            "source": "table",
            "status": "awarded",
            "award_cents": 1234567,
            "paid_from": "meter",
            "refusal": None,
            "entered_by": None,
            "at_us": 1767225600000000,
            "verified_by": None,
            "verified_at_us": None,
            "verified_cards": None,
            "released_by": None,
            "released_at_us": None,
            "hand_paid_by": None,
            "hand_paid_at_us": None,
            "hand_paid_cents": None,
        }
    )

    hit_id: str
    link_id: str
    table_id: str
    seat: int
    hand: str
    hand_label: str
    round: int
    cards: list[str] | None = Field(description="as the table reported them; null: not reported")
    source: str = Field(description="table or technician")
    status: str = Field(description="awarded or refused")
    award_cents: int
    paid_from: str | None = Field(description="meter (a share of the jackpot) or table (fixed)")
    refusal: str | None
    entered_by: str | None
    at_us: int
    verified_by: str | None
    verified_at_us: int | None
    verified_cards: list[str] | None
    released_by: str | None
    released_at_us: int | None
    hand_paid_by: str | None
    hand_paid_at_us: int | None
    hand_paid_cents: int | None

    @classmethod
    def of(cls, row: HitRecord) -> HitRead:
        return cls(
            hit_id=row.hit_id,
            link_id=row.link_id,
            table_id=row.table_id,
            seat=row.seat,
            hand=row.hand,
            hand_label=HandCategory[row.hand].label,
            round=row.round,
            cards=_cards(row.cards),
            source=row.source,
            status=row.status,
            award_cents=row.award_cents,
            paid_from=row.paid_from,
            refusal=row.refusal,
            entered_by=row.entered_by,
            at_us=row.at_us,
            verified_by=row.verified_by,
            verified_at_us=row.verified_at_us,
            verified_cards=_cards(row.verified_cards),
            released_by=row.released_by,
            released_at_us=row.released_at_us,
            hand_paid_by=row.hand_paid_by,
            hand_paid_at_us=row.hand_paid_at_us,
            hand_paid_cents=row.hand_paid_cents,
        )


def _cards(text: str | None) -> list[str] | None:
    codes = parse_stored_cards(text)
    return None if codes is None else [card_text(c) for c in codes]
