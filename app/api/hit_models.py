"""The hits of the floor's JSON API: a hit as taken and the technician's marks on it.

A hit is always shown: a part of its record that cannot be read (cards that are no cards, a
hand the controller does not know) is shown empty, with what is wrong (``problem``) and the
stored text (``raw``), and logged once, so one bad record never breaks a list of hits.
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from controller.core.hands import HandCategory, ShownCards
from controller.rules.house import (
    SECOND_SIGNATURE_FROM_CENTS,
    TAX_REPORTING_FROM_CENTS,
    needs_second_signature,
    needs_tax_form,
)
from controller.storage.hits import HitRecord, holds_table


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
            "level": "L1",
            "level_name": "Grand",
            "kind": "hand",
            "needs_technician": True,
            "holds_table": True,
            "needs_second_signature": True,
            "signed_off_by": None,
            "signed_off_at_us": None,
            "needs_tax_form": True,
            "tax_form_reference": None,
            "tax_form_by": None,
            "tax_form_at_us": None,
        }
    )

    hit_id: str
    link_id: str
    table_id: str
    seat: int
    hand: str
    hand_label: str
    round: int
    cards: list[str] | None = Field(
        description="as the table reported them, two characters each, the joker 'JK'; null: "
        "not reported (or unreadable: see problem)"
    )
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
    level: str | None = Field(
        default=None, description="the level of the pool an award from a meter was paid from"
    )
    level_name: str | None = Field(default=None, description="that level's name, for people")
    kind: str = Field(default="hand", description="hand, mystery (a level's draw) or envy")
    needs_technician: bool = Field(
        default=True,
        description="false: a fixed pay under the operator's amount, paid with no technician",
    )
    holds_table: bool = Field(
        default=False,
        description="an award from a meter or a refused claim at a table not reset since",
    )
    needs_second_signature: bool = Field(
        default=False,
        description="an award from a meter at or above the second-signature amount: a second "
        "person, not the verifier, signs it off before the table is reset",
    )
    signed_off_by: str | None = None
    signed_off_at_us: int | None = None
    needs_tax_form: bool = Field(
        default=False, description="the award reaches the operator's tax-reporting amount"
    )
    tax_form_reference: str | None = None
    tax_form_by: str | None = None
    tax_form_at_us: int | None = None
    problem: str | None = Field(
        default=None,
        description="what in the stored record cannot be read, when something cannot: that "
        "part is shown empty (null cards, the stored hand name as its label)",
    )
    raw: dict[str, str] | None = Field(
        default=None, description="the stored text of each part that cannot be read, by field"
    )

    @classmethod
    def of(
        cls,
        row: HitRecord,
        *,
        second_signature_from_cents: int = SECOND_SIGNATURE_FROM_CENTS,
        tax_reporting_from_cents: int = TAX_REPORTING_FROM_CENTS,
        level_name: str | None = None,
    ) -> HitRead:
        """The hit as the API shows it; the amounts are the house's (settings), the level's
        name its pool's."""
        awarded = row.status == "awarded"
        problems: list[str] = []
        raw: dict[str, str] = {}
        hand = HandCategory.__members__.get(row.hand)
        if hand is None:
            problems.append(f"the stored hand {row.hand!r} is no hand the controller knows")
            raw["hand"] = row.hand
        cards = ShownCards.of(row.cards)
        verified = ShownCards.of(row.verified_cards)
        for field, shown in (("cards", cards), ("verified_cards", verified)):
            if shown.problem is not None and shown.raw is not None:
                problems.append(f"{field}: {shown.problem}")
                raw[field] = shown.raw
        return cls(
            hit_id=row.hit_id,
            link_id=row.link_id,
            table_id=row.table_id,
            seat=row.seat,
            hand=row.hand,
            hand_label=row.hand if hand is None else hand.label,
            round=row.round,
            cards=cards.texts(),
            source=row.source,
            status=row.status,
            award_cents=row.award_cents,
            paid_from=row.paid_from,
            refusal=row.refusal,
            entered_by=row.entered_by,
            at_us=row.at_us,
            verified_by=row.verified_by,
            verified_at_us=row.verified_at_us,
            verified_cards=verified.texts(),
            released_by=row.released_by,
            released_at_us=row.released_at_us,
            hand_paid_by=row.hand_paid_by,
            hand_paid_at_us=row.hand_paid_at_us,
            hand_paid_cents=row.hand_paid_cents,
            level=row.level,
            level_name=level_name,
            kind=row.kind,
            needs_technician=row.needs_technician,
            holds_table=holds_table(row),
            needs_second_signature=awarded
            and needs_second_signature(
                award_cents=row.award_cents,
                from_cents=second_signature_from_cents,
                from_meter=row.paid_from == "meter",
            ),
            signed_off_by=row.signed_off_by,
            signed_off_at_us=row.signed_off_at_us,
            needs_tax_form=awarded
            and needs_tax_form(award_cents=row.award_cents, from_cents=tax_reporting_from_cents),
            tax_form_reference=row.tax_form_reference,
            tax_form_by=row.tax_form_by,
            tax_form_at_us=row.tax_form_at_us,
            problem="; ".join(problems) or None,
            raw=raw or None,
        )


log = logging.getLogger(__name__)
# Hits whose unreadable record was logged, per floor: once each, not at every poll of a page.
# Bounded: past it, a bad record is logged again, which beats a memory without end.
_LOGGED_MAX = 10_000
_logged: weakref.WeakKeyDictionary[object, set[str]] = weakref.WeakKeyDictionary()


def note_problems(floor: object, shown: Iterable[HitRead]) -> None:
    """Log each hit of ``floor`` whose record cannot be read in full, the first time it is
    shown."""
    seen = _logged.setdefault(floor, set())
    for hit in shown:
        if hit.problem is None or hit.hit_id in seen:
            continue
        if len(seen) >= _LOGGED_MAX:
            seen.clear()
        seen.add(hit.hit_id)
        log.warning("hit %s is shown without what cannot be read: %s", hit.hit_id, hit.problem)
