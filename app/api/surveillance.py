"""Game protection for surveillance and auditors: the alerts, the floor at a glance, one
table's lines against their odds, and a line's chart (``controller.core.protection``)."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Literal
from urllib.parse import urlencode

from fastapi import APIRouter, Depends, HTTPException, Query, Response
from pydantic import BaseModel, Field

from app.api.deps import ServiceDep
from app.api.floor_models import SinceQuery, UntilQuery, errors, instant, period
from app.api.surveillance_chart import line_chart_svg
from app.security.authentication import Principal, require
from controller.core.luck import count_text, luck_text
from controller.core.protection import (
    WINDOWS,
    Scope,
    daily_line,
    floor_ranks,
    hand_of,
    line_views,
)
from controller.paperwork.hold_report import hold_csv, hold_pdf, hold_report
from controller.paperwork.pdf import letterhead_of
from controller.periods import iso_text
from controller.roles import Role
from controller.runtime.protection import GameProtection
from controller.runtime.service import FloorService
from controller.storage.protection import AlertRecord

router = APIRouter(prefix="/api/v1/surveillance", tags=["surveillance"])

READERS = require(Role.SURVEILLANCE, Role.AUDITOR, Role.SUPERVISOR, Role.ADMIN)
Reader = Annotated[Principal, Depends(READERS)]
WINDOW_LABEL = {w.name: w.label for w in WINDOWS}


def _watching(service: FloorService) -> GameProtection:
    protection = service.protection
    if protection is None:
        raise HTTPException(503, "game protection does not run in this process")
    return protection


def _fraction(text: str) -> Fraction:
    return Fraction(text)


def _round(value: Fraction) -> float:
    """An expected count to read (never an amount)."""
    return round(float(value), 6)


class AlertRead(BaseModel):
    alert_id: str
    scope: Literal["table", "seat", "dealer", "game"] = Field(
        description="what is out of line: a table, one seat of a table, a dealer, a game"
    )
    subject: str = Field(description="the table, 'table seat n', the dealer or the game")
    link_id: str | None
    table_id: str | None
    seat: int | None
    dealer: str | None
    game: str
    line: str = Field(
        description="the paytable hand (ROYAL_FLUSH, ...) or the fault: late_bets, "
        "credits_without_bets, bets_without_credits, cards_not_matching"
    )
    line_label: str
    window: Literal["shift", "gaming_day", "7_days", "30_days"]
    direction: Literal["too_many", "too_few"]
    observed: int = Field(description="hands of the line (or faults) seen in the window")
    trials: int = Field(description="the hands bet (or readings, or hits with cards) in it")
    expected: float = Field(description="what the exact odds and the hands bet predict")
    expected_exact: str = Field(description="the same, exact: numerator/denominator")
    p_value: float = Field(description="the probability of seeing that by luck alone")
    luck: str = Field(description="the same, as a person reads it: '1 in 2.4 million by luck'")
    threshold: float = Field(description="the p-value at or below which an alert is raised")
    since: str = Field(description="the window's start (ISO 8601, UTC)")
    since_us: int
    raised_at: str
    raised_at_us: int
    closed_at: str | None
    closed_at_us: int | None
    text: str = Field(description="what was seen, what was expected, how unlikely it is")
    history_url: str | None = Field(
        description="the link's history over the window: the rounds (side bets) and hits behind it"
    )
    hits_url: str | None = Field(description="the link's hits")

    @classmethod
    def of(cls, a: AlertRecord) -> AlertRead:
        expected = _fraction(a.expected)
        luck = luck_text(a.p_value)
        seen = "seen" if a.scope != "dealer" else "dealt"
        text = (
            f"{a.subject}: {a.observed} {a.line_label} {seen} in {WINDOW_LABEL[a.window]} "
            f"where {count_text(float(expected))} were expected "
            f"({a.direction.replace('_', ' ')}): "
            f"{luck}"
        )
        history = hits = None
        if a.link_id is not None:
            period = {
                "since": iso_text(a.since_us),
                "until": iso_text((a.closed_at_us or a.at_us) + 1),
            }
            history = f"/api/v1/links/{a.link_id}/history?{urlencode(period)}"
            hits = f"/api/v1/links/{a.link_id}/hits"
        return cls(
            alert_id=a.alert_id,
            scope=a.scope,
            subject=a.subject,
            link_id=a.link_id,
            table_id=a.table_id,
            seat=a.seat,
            dealer=a.dealer,
            game=a.game,
            line=a.line,
            line_label=a.line_label,
            window=a.window,
            direction=a.direction,
            observed=a.observed,
            trials=a.trials,
            expected=_round(expected),
            expected_exact=a.expected,
            p_value=a.p_value,
            luck=luck,
            threshold=a.threshold,
            since=iso_text(a.since_us),
            since_us=a.since_us,
            raised_at=iso_text(a.at_us),
            raised_at_us=a.at_us,
            closed_at=None if a.closed_at_us is None else iso_text(a.closed_at_us),
            closed_at_us=a.closed_at_us,
            text=text,
            history_url=history,
            hits_url=hits,
        )


@router.get(
    "/alerts",
    summary="Game protection's alerts: open ones, most unlikely first",
    description="Each table, seat, dealer or game whose hands of a paytable line (or whose "
    "faults: side bets after lockout, credits with the bet sensor dark, a sensor lit without a "
    "credit, hits whose cards do not make the hand) are out of line with the exact odds in a "
    "window, at or below the threshold that keeps an honest floor quiet. With `since`, also "
    "the alerts closed since then, newest first.",
    responses=errors(401, 403, 422),
)
async def alerts(service: ServiceDep, _: Reader, since: SinceQuery = None) -> list[AlertRead]:
    since_us = None if since is None else instant("since", since)
    records = service.protection_records
    return [AlertRead.of(a) for a in await records.alerts(since_us=since_us)]


class WorstRead(BaseModel):
    line: str
    line_label: str
    window: str
    direction: str
    observed: int
    expected: float
    p_value: float
    luck: str


class TableRankRead(BaseModel):
    table_id: str
    link_id: str | None
    game: str
    hands_today: int = Field(description="side-bet hands this gaming day")
    worst: WorstRead | None = Field(description="its most unlikely line or fault, any window")
    alarming: bool


class WindowRead(BaseModel):
    window: Literal["shift", "gaming_day", "7_days", "30_days"]
    label: str = Field(examples=["this gaming day"])
    since: str = Field(
        description="when the window starts (ISO 8601, UTC): the shift's start, "
        "or its first gaming day's"
    )
    since_us: int


class FloorRead(BaseModel):
    at: str
    windows: list[WindowRead] = Field(description="the windows judged, as they stand now")
    threshold: float = Field(description="the p-value at or below which an alert is raised")
    threshold_luck: str
    false_alarms_per_month: float = Field(
        description="what an honest floor may raise a month, all its tests together"
    )
    tests_per_month: int = Field(
        description="every line and fault of every table, seat, dealer and game, in every "
        "window, at every look (each quarter hour): the count the threshold divides among"
    )
    loaded: bool = Field(description="false while the watch reads the kept history at start")
    open_alerts: int
    tables: list[TableRankRead]


@router.get(
    "/floor",
    summary="The floor at a glance: tables ranked by how unlikely their luck is",
    responses=errors(401, 403, 503),
)
async def floor(service: ServiceDep, _: Reader) -> FloorRead:
    protection = _watching(service)
    now = service.now_us()

    def ranked(watch):  # type: ignore[no-untyped-def]
        starts = [(w, watch.tallies.window_since(w, now)) for w in WINDOWS]
        return floor_ranks(watch, now), watch.threshold(), watch.tests_per_month(), starts

    ranks, at, per_month, starts = await protection.run_in_watch(ranked)
    open_alerts = await service.protection_records.alerts()
    tables = [
        TableRankRead(
            table_id=r.table_id,
            link_id=protection.links.get(r.table_id),
            game=r.game.value,
            hands_today=r.hands_today,
            worst=None
            if r.worst is None
            else WorstRead(
                line=r.worst.line,
                line_label=r.worst.line_label,
                window=r.worst.window,
                direction=r.worst.direction.value,
                observed=r.worst.observed,
                expected=_round(r.worst.expected),
                p_value=r.worst.p_value,
                luck=r.worst.text,
            ),
            alarming=r.worst is not None and r.worst.p_value <= at,
        )
        for r in ranks
    ]
    return FloorRead(
        at=iso_text(now),
        windows=[
            WindowRead(window=w.name, label=w.label, since=iso_text(since), since_us=since)
            for w, since in starts
        ],
        threshold=at,
        threshold_luck=luck_text(at),
        false_alarms_per_month=float(protection.false_alarms_per_month),
        tests_per_month=per_month,
        loaded=protection.loaded,
        open_alerts=len(open_alerts),
        tables=tables,
    )


class LineRead(BaseModel):
    line: str
    line_label: str
    window: str
    observed: int
    trials: int
    expected: float
    p_value: float
    luck: str
    direction: str | None = Field(description="too_many, too_few, or null when in line")
    alarming: bool


class SeatRead(BaseModel):
    seat: int
    lines: list[LineRead]


class TableLinesRead(BaseModel):
    table_id: str
    link_id: str | None
    game: str
    threshold: float
    lines: list[LineRead] = Field(description="every line and fault in every window")
    seats: list[SeatRead]
    chart_lines: list[str] = Field(description="the lines a chart can be drawn of")


def _line_reads(views, at: float) -> list[LineRead]:  # type: ignore[no-untyped-def]
    return [
        LineRead(
            line=v.line,
            line_label=v.label,
            window=v.window,
            observed=v.observed,
            trials=v.trials,
            expected=_round(v.expected),
            p_value=v.p_value,
            luck=luck_text(v.p_value),
            direction=None if v.direction is None else v.direction.value,
            alarming=v.direction is not None and v.p_value <= at,
        )
        for v in views
    ]


@router.get(
    "/tables/{table_id}",
    summary="One table's lines and faults against their odds, in every window, and its seats'",
    responses=errors(401, 403, 404, 503),
)
async def table_lines(service: ServiceDep, _: Reader, table_id: str) -> TableLinesRead:
    protection = _watching(service)
    now = service.now_us()

    def view(watch):  # type: ignore[no-untyped-def]
        facts = watch.tallies.tables.get(table_id)
        if facts is None:
            return None
        table = line_views(watch, (Scope.TABLE, table_id, facts.game), now)
        seats = {
            s.seat: line_views(watch, key, now)
            for key, s in watch.tallies.subjects.items()
            if s.scope is Scope.SEAT and s.table_id == table_id and s.seat is not None
        }
        hands = [h.name for h in watch.tallies.lines(facts.game)]
        return facts, table, seats, hands, watch.threshold()

    found = await protection.run_in_watch(view)
    if found is None:
        raise HTTPException(404, f"no table {table_id!r} on the floor")
    facts, table, seats, hands, at = found
    return TableLinesRead(
        table_id=table_id,
        link_id=protection.links.get(table_id),
        game=facts.game.value,
        threshold=at,
        lines=_line_reads(table, at),
        seats=[SeatRead(seat=n, lines=_line_reads(v, at)) for n, v in sorted(seats.items())],
        chart_lines=hands,
    )


@router.get(
    "/tables/{table_id}/chart.svg",
    summary="A line of a table over the last 30 gaming days: seen against expected, with the band "
    "outside which an alert is raised (SVG)",
    response_class=Response,
    responses={**errors(401, 403, 404, 503), 200: {"content": {"image/svg+xml": {}}}},
)
async def line_chart(
    service: ServiceDep,
    _: Reader,
    table_id: str,
    line: Annotated[str, Query(max_length=32, description="a paytable hand: ROYAL_FLUSH, ...")],
) -> Response:
    protection = _watching(service)
    now = service.now_us()
    hand = hand_of(line)
    if hand is None:
        raise HTTPException(404, f"no paytable line {line!r}")

    def points(watch):  # type: ignore[no-untyped-def]
        facts = watch.tallies.tables.get(table_id)
        if facts is None:
            return None
        return daily_line(watch, (Scope.TABLE, table_id, facts.game), hand, now)

    days = await protection.run_in_watch(points)
    if days is None:
        raise HTTPException(404, f"no table {table_id!r} on the floor")
    svg = line_chart_svg(days, title=f"{table_id}: {hand.label}")
    return Response(svg, media_type="image/svg+xml", headers={"Cache-Control": "no-store"})


@router.get(
    "/hold-report.{fmt}",
    summary="Theoretical against actual hold per table, game and for the floor, with the "
    "variance (PDF or CSV)",
    description="Mississippi Gaming Commission regulation 13-8-4.14: theoretical and actual "
    "hold side by side, with the standard deviation that says whether a difference is luck. "
    "Default period: the gaming day so far.",
    response_class=Response,
    responses={
        200: {"content": {"application/pdf": {}, "text/csv": {}}},
        **errors(401, 403, 422, 503),
    },
)
async def hold_report_document(
    service: ServiceDep,
    _: Reader,
    fmt: Literal["pdf", "csv"],
    since: SinceQuery = None,
    until: UntilQuery = None,
) -> Response:
    now = service.now_us()
    if since is None and until is None:
        calendar = service.settings.calendar
        since_us, until_us = calendar.day_start(calendar.day(now)), now
    else:
        since_us, until_us = period(since, until, now)
    states = dict(service.memory.states)
    records = service.protection_records
    bets = await records.bets_in(list(states), since_us, until_us)
    paid = await records.paid_in(list(states), since_us, until_us)
    letterhead = letterhead_of(service.settings)
    async with service.workers.job() as job:
        report = await job.run(
            hold_report, states, bets, paid, since_us=since_us, until_us=until_us
        )
        stem = f"hold-report-{iso_text(since_us)[:10]}-to-{iso_text(until_us)[:10]}"
        if fmt == "csv":
            text = await job.run(hold_csv, report, letterhead)
            return Response(
                text,
                media_type="text/csv",
                headers={"Content-Disposition": f'attachment; filename="{stem}.csv"'},
            )
        pdf = await job.run(hold_pdf, report, letterhead)
    return Response(
        pdf,
        media_type="application/pdf",
        headers={"Content-Disposition": f'attachment; filename="{stem}.pdf"'},
    )
