"""Response and request schemas of the floor's JSON API: links, tables, hits, records.

Amounts are integer cents (``*_cents``), rates basis points (``*_bp``), times integer
microseconds since the epoch, UTC (``*_us``). Cards travel as two-character text ("As", "Td").
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import HTTPException, Query
from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator

from app.api.level_models import FixedPayRead, LevelRead, fixed_pays_of, levels_of
from app.api.text_fields import Note, optional_line
from controller import periods
from controller.core.dealers import DealerTurn
from controller.core.hands import InvalidCards, card_code
from controller.core.money import MAX_AMOUNT_CENTS, format_bp
from controller.core.reducer import LinkState
from controller.paperwork.meter_lines import LevelHits
from controller.refusal import at
from controller.rules.integrity import INTEGRITY_CLAUSE
from controller.rules.jurisdictions import INDIANA
from controller.rules.statement import Statement
from controller.runtime.service import TableStateName, TableStatus

__all__ = [
    "HandPayRequest",
    "LastWinRead",
    "LinkRead",
    "PaytableLineRead",
    "Responses",
    "ReviewRequest",
    "SinceQuery",
    "TableFlagsRead",
    "TableRead",
    "TimeText",
    "UntilQuery",
    "VerifyRequest",
    "bad_input",
    "errors",
    "instant",
    "period",
]


def _example(value: dict[str, Any]) -> ConfigDict:
    return ConfigDict(json_schema_extra={"examples": [value]})


class TableFlagsRead(BaseModel):
    """What a table reported of its own state at its last answered poll."""

    lockout: bool = Field(description="the dealer's lockout switch: no more bets")
    door_open: bool
    fault: bool
    progressive_disabled: bool = Field(description="the table takes no progressive side bets")


class TableRead(BaseModel):
    model_config = _example(
        {
            "table_id": "stud-1",
            "link_id": "stud",
            "state": "online",
            "online": True,
            "hit_pending": False,
            "denomination_cents": 100,
            "seats": 7,
            "credits": 1234,
            "rounds": 410,
            "last_reading_us": 1767225600000000,
            "last_answer_us": 1767225600000000,
            "failures": 0,
            "seats_with_bets": [1, 3, 4],
            "status_flags": {
                "lockout": False,
                "door_open": False,
                "fault": False,
                "progressive_disabled": False,
            },
            "progressive_disabled": False,
            "dealer": "dee.dealer",
            "dealer_since_us": 1767225000000000,
        }
    )

    table_id: str
    link_id: str
    state: TableStateName = Field(
        description="inoperable: its link failed its state check (see the link); "
        "offline: not answering; hit_pending: held for a technician after a hit; "
        f"unpolled: no reading applied yet; out_of_play: removed from play ({INTEGRITY_CLAUSE}); "
        "awaiting_approval: its link is not approved by the commission yet; standby: its link "
        "is driven by another controller (the one holding its lock), this one stands by; "
        "unrecorded: its reading could not be recorded (``unrecorded_reason`` says why): held "
        "with progressive wagering disabled, its hits waiting at the table, tried again until "
        "it records"
    )
    online: bool
    hit_pending: bool
    denomination_cents: int
    seats: int
    credits: int | None = Field(description="cumulative progressive credits wagered (counter)")
    rounds: int | None = Field(description="the table's round counter: the round being dealt")
    last_reading_us: int | None
    last_answer_us: int | None
    failures: int = Field(description="failed polls in a row")
    seats_with_bets: list[int] = Field(
        description="seats whose side bet the wagering devices accepted this round"
    )
    status_flags: TableFlagsRead | None = Field(
        description="the table's own switches and state; null before it answers"
    )
    progressive_disabled: bool | None
    unrecorded_reason: str | None = None
    poll_problem: str | None = Field(
        default=None,
        description="why its last poll failed (the table does not answer, its serial port "
        "refuses its settings, a fault): null while it answers; an offline table says why here",
    )
    dealer: str | None = Field(
        default=None,
        description="the dealer signed in at the table now (POST /api/v1/tables/{table_id}/"
        "dealer); null: no one is",
    )
    dealer_since_us: int | None = Field(
        default=None, description="since when the dealer has dealt here; null with no dealer"
    )

    @classmethod
    def of(
        cls, status: TableStatus, state: LinkState, dealing: DealerTurn | None = None
    ) -> TableRead:
        """``dealing``: the dealer's turn open at the table, if any."""
        cfg = state.table(status.table_id).config
        return cls(
            table_id=status.table_id,
            link_id=status.link_id,
            state=status.state,
            online=status.online,
            hit_pending=status.hit_pending,
            denomination_cents=cfg.denomination_cents,
            seats=cfg.seats,
            credits=status.credits,
            rounds=status.rounds,
            last_reading_us=status.last_reading_us,
            last_answer_us=status.last_answer_us,
            failures=status.failures,
            seats_with_bets=list(status.seats_with_bets),
            status_flags=None
            if (flags := status.status_flags) is None
            else TableFlagsRead(
                lockout=flags.lockout,
                door_open=flags.door_open,
                fault=flags.fault,
                progressive_disabled=flags.progressive_disabled,
            ),
            progressive_disabled=status.progressive_disabled,
            unrecorded_reason=status.unrecorded_reason,
            poll_problem=status.poll_problem,
            dealer=None if dealing is None else dealing.dealer,
            dealer_since_us=None if dealing is None else dealing.from_us,
        )


class PaytableLineRead(BaseModel):
    hand: str = Field(examples=["ROYAL_FLUSH"])
    percent_bp: int | None = Field(default=None, description="share of the meter")
    fixed_cents: int | None = Field(default=None, description="fixed amount paid at the table")
    description: str = Field(examples=["royal flush: 100% of the meter"])


class LastWinRead(BaseModel):
    won_cents: int
    table_id: str
    seats: list[int]
    hand: str
    at_us: int
    level: str | None = Field(default=None, description="the level won (L1, L2, ...)")


class LinkRead(BaseModel):
    model_config = _example(
        {
            "link_id": "stud",
            "name": "Caribbean Stud bank",
            "game": "caribbean_stud",
            "game_label": "Caribbean Stud Poker",
            "meter_cents": 1234567,
            "reset_cents": 1000000,
            "rate_bp": 8000,
            "hit_policy": "split",
            "state": "playing",
            "last_win": None,
            "paytable": [
                {
                    "hand": "ROYAL_FLUSH",
                    "percent_bp": 10000,
                    "fixed_cents": None,
                    "description": "royal flush: 100% of the meter",
                }
            ],
            "table_count": 2,
            "tables": [],
        }
    )

    link_id: str
    name: str
    game: str
    game_label: str
    meter_cents: int | None = Field(
        description="level 1's meter as shown (a classic link's one meter); null for a "
        "fixed-pay link, which has no meter"
    )
    reset_cents: int
    rate_bp: int = Field(
        description="the rate of progression as the link's jurisdiction reads it (under "
        "Indiana the levels' shown shares; a hidden share funds resets and is not part of it)"
    )
    rate: str = Field(examples=["80%"], description='the rate of progression, or "fixed pays"')
    fixed_pay: bool = Field(description="a bonus link paying fixed amounts: no meter, no level")
    hit_policy: str
    state: Literal["playing", "hit_pending", "offline", "inoperable"] = Field(
        description="inoperable: the state it would resume from failed its check against its "
        "seals and history, nothing is recorded or credited until it is recovered "
        "(``inoperable_reason`` says what differs); offline: no table answers; hit_pending: a "
        "table waits for a technician (the link itself plays on); playing otherwise"
    )
    inoperable_reason: str | None = None
    last_win: LastWinRead | None
    paytable: list[PaytableLineRead]
    table_count: int = Field(description="how many tables the link has")
    tables: list[TableRead] = Field(
        description="each table's state, counters, bets and switches: to those who may read "
        "the tables (dealers and up, as GET /api/v1/tables); empty for anyone else"
    )
    levels: list[LevelRead] = Field(
        default=[],
        description="the pool's levels, level 1 first (a classic link: its one level); "
        "none for a fixed-pay link",
    )
    fixed_pays: list[FixedPayRead] = Field(
        default=[], description="a fixed-pay link's pays, the hand and its fixed amount"
    )
    last_entry_us: int | None = Field(
        default=None,
        description="the time of the newest entry of the link's meter history (none yet: null), "
        "so that a chart can open on the link's most recent activity",
    )
    jurisdiction: str = Field(
        default="",
        description="the jurisdiction the link plays under, its name and code",
        examples=[INDIANA.title],
    )
    demonstration: bool = Field(
        default=False,
        description="the link was opened in demonstration mode, without its notice period: its "
        "history says so, for good",
    )
    installation_demonstration: bool = Field(
        default=False,
        description="the installation runs in demonstration mode (PROGRESSIVE_DEMONSTRATION) now",
    )
    demonstration_statement: str | None = Field(
        default=None,
        description="what every display and page of the link states of demonstration mode; "
        "null when neither the link nor the installation is in it",
    )

    @classmethod
    def of(
        cls,
        state: LinkState,
        name: str,
        tables: list[TableRead],
        inoperable: str | None = None,
        *,
        level_hits: dict[str, LevelHits] | None = None,
        staff: bool = False,
        table_viewer: bool = False,
        statement: Statement | None = None,
    ) -> LinkRead:
        """``statement``: what the installation states of the link (its jurisdiction, and
        demonstration mode)."""
        win = state.last_win
        link_state: Literal["playing", "hit_pending", "offline", "inoperable"] = "playing"
        if inoperable is not None:
            link_state = "inoperable"
        elif tables and not any(t.online for t in tables):
            link_state = "offline"
        elif any(t.hit_pending for t in tables):
            link_state = "hit_pending"
        return cls(
            link_id=state.link_id,
            name=name,
            game=str(state.game),
            game_label=state.game.label,
            meter_cents=None if state.fixed_pay else state.meter_cents,
            reset_cents=state.reset_cents,
            rate_bp=state.rate_of_progression_bp,
            rate="fixed pays" if state.fixed_pay else format_bp(state.rate_of_progression_bp),
            fixed_pay=state.fixed_pay,
            hit_policy=str(state.hit_policy),
            state=link_state,
            inoperable_reason=inoperable,
            last_win=None
            if win is None
            else LastWinRead(
                won_cents=win.won_cents,
                table_id=win.table_id,
                seats=list(win.seats),
                hand=win.hand.name,
                at_us=win.at_us,
                level=win.level,
            ),
            paytable=[
                PaytableLineRead(
                    hand=line.hand.name,
                    percent_bp=line.percent_bp,
                    fixed_cents=line.fixed_cents,
                    description=line.describe(),
                )
                for line in state.paytable.lines
            ],
            table_count=len(tables),
            tables=tables if table_viewer else [],
            levels=levels_of(state, level_hits or {}, staff=staff),
            fixed_pays=fixed_pays_of(state) if state.fixed_pay else [],
            last_entry_us=state.last_at_us or None,
            jurisdiction="" if statement is None else statement.jurisdiction,
            demonstration=state.demonstration,
            installation_demonstration=statement is not None and statement.installation,
            demonstration_statement=None if statement is None else statement.demonstration,
        )


class VerifyRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"cards": ["As", "Ks", "Qs", "Js", "Ts"]}, {}]},
    )

    cards: list[Annotated[str, StringConstraints(max_length=8)]] | None = Field(
        default=None,
        max_length=7,
        description="the cards the technician saw (five; one to three for Super Sevens, seven "
        "for Pai Gow Poker, the joker 'JK' or 'Joker'), needed when the table reported none; "
        "when it did, they are optional and must be the reported cards",
    )

    @field_validator("cards")
    @classmethod
    def _known_cards(cls, cards: list[str] | None) -> list[str] | None:
        if cards is not None:
            for c in cards:
                try:
                    # The joker is read here; whether the hit's game deals one, its
                    # verification says (68 IAC 10-9-3(b)).
                    card_code(c, joker=True)
                except InvalidCards as exc:
                    raise ValueError(str(exc)) from None
        return cards

    def codes(self) -> tuple[int, ...] | None:
        if self.cards is None:
            return None
        return tuple(card_code(c, joker=True) for c in self.cards)


class HandPayRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid", json_schema_extra={"examples": [{"amount_cents": 50000}]}
    )

    amount_cents: int = Field(
        strict=True, gt=0, le=MAX_AMOUNT_CENTS, description="what was paid, whole cents"
    )


class ReviewRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        json_schema_extra={"examples": [{"reason": "dealer confirmed the table was reset"}]},
    )

    reason: Note = Field(min_length=3, description="why, for the record")

    @field_validator("reason")
    @classmethod
    def _not_blank(cls, reason: str) -> str:
        if len(reason.strip()) < 3:
            raise ValueError("a reason is a few words, not blank")
        return reason.strip()


# ------------------------------------------------------------------------- periods

# A date or time: one line, and short.
TimeText = Annotated[str, optional_line(64)]
SinceQuery = Annotated[
    TimeText | None,
    Query(
        description="start of the period (included): a date or ISO 8601 time, UTC unless it "
        f"says otherwise; default: a day before 'until'. A period is at most "
        f"{periods.MAX_SPAN_DAYS} days long (five years of records and a week)",
        examples=["2026-01-01"],
    ),
]
UntilQuery = Annotated[
    TimeText | None,
    Query(
        description="end of the period (excluded); default: now",
        examples=["2026-01-02T08:00"],
    ),
]


def bad_input(where: str, problem: str) -> HTTPException:
    """A 422 shaped like the application's own validation errors."""
    return HTTPException(
        status_code=422,
        detail={
            "message": "the request is not valid",
            "problems": [{"where": where, "problem": problem}],
        },
    )


def instant(name: str, text: str) -> int:
    """A time of the query string in microseconds, or 422 naming the parameter."""
    with at("query"):
        return periods.parse_instant(text, where=name)


def period(since: str | None, until: str | None, now_us: int) -> tuple[int, int]:
    """The half-open period ``[since, until)`` in microseconds, at most
    ``periods.MAX_SPAN_DAYS`` long, or 422 naming the parameter to blame."""
    with at("query"):
        return periods.period(since, until, now_us)


Responses = dict[int | str, dict[str, Any]]

_ERRORS: dict[int, str] = {
    401: "no sign-in, or the token is not valid",
    403: "the signed-in role may not do this; the message names the roles that may",
    404: "no such link, table, hit, anomaly or document; the message names it",
    409: "refused by a rule (the message says which and why)",
    422: "the input is not valid; each problem names where it is",
    503: "busy with as many reports, exports and verifications as it takes at once; ask "
    "again after the Retry-After header's seconds",
}


def errors(*codes: int) -> Responses:
    """OpenAPI descriptions of the errors a path answers, all ``{"detail": ...}``."""
    return {code: {"description": _ERRORS[code]} for code in codes}
