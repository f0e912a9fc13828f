"""Game protection, run beside the floor and never on its poll path.

The watch reads the history as it grows (every ``interval_s``: the entries of side bets and
hits after the last it read, per link) and tallies them (``controller.core.protection``). At
each look (every quarter hour of the floor's clock) it judges every subject, line and window;
an alarm not already open is raised, an open one no longer alarming is closed: written as
records with a row in the audit log each, logged, counted for ``/metrics`` and, where
configured, posted to a webhook. Only a process that drives the floor raises alerts (two that
do, an active and a standby, write each one once); any process answers what the tallies say.

All the work on the tallies (taking the history in, judging, the views) runs in one thread of
its own, one job at a time, so the event loop that polls the tables is never held up by it
and the tallies need no lock.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import hashlib
import json
import logging
import urllib.request
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from fractions import Fraction
from typing import Any, ParamSpec, TypeVar

from controller.core.dealers import DealerSpan
from controller.core.games import Game
from controller.core.luck import count_text
from controller.core.protection import (
    KEPT_DAYS,
    Calendar,
    Finding,
    Seen,
    TableFacts,
    Tallies,
    Watch,
)
from controller.core.reducer import LinkState
from controller.storage.protection import AlertClosing, AlertRecord, ProtectionRecords

log = logging.getLogger(__name__)

P = ParamSpec("P")
T = TypeVar("T")

__all__ = ["GameProtection", "alert_of", "facts_of"]

BATCH = 5000
ACTOR = "game protection"


def facts_of(states: dict[str, LinkState]) -> tuple[dict[str, TableFacts], dict[str, str]]:
    """Each table's game and the hands its paytable pays; and each table's link."""
    facts: dict[str, TableFacts] = {}
    links: dict[str, str] = {}
    for link_id, state in states.items():
        for table_id, ts in state.tables.items():
            game: Game = ts.config.game or state.game
            hands = tuple(line.hand for line in state.paytable_for(game).lines)
            facts[table_id] = TableFacts(table_id, game, hands)
            links[table_id] = link_id
    return facts, links


def _expected_text(value: Fraction) -> str:
    return f"{value.numerator}/{value.denominator}"


def alert_of(f: Finding, *, at_us: int, link_id: str | None, threshold: float) -> AlertRecord:
    """The record of a finding raised at the look ``at_us``; its id is its content's, so the
    same alert raised by two controllers is one."""
    key = "\x1f".join((*f.key, f.game.value, str(at_us)))
    return AlertRecord(
        alert_id=hashlib.sha256(key.encode()).hexdigest()[:32],
        at_us=at_us,
        scope=f.scope.value,
        subject=f.subject,
        link_id=link_id,
        table_id=f.table_id,
        seat=f.seat,
        dealer=f.dealer,
        game=f.game.value,
        line=f.line,
        line_label=f.line_label,
        window=f.window,
        since_us=f.since_us,
        observed=f.observed,
        trials=f.trials,
        expected=_expected_text(f.expected),
        direction=f.direction.value,
        p_value=f.p_value,
        threshold=threshold,
    )


def alert_key(a: AlertRecord) -> tuple[str, str, str, str]:
    return (a.scope, a.subject, a.line, a.window)


@dataclass
class GameProtection:
    """The watch of one process. ``raises``: this process drives the floor and records
    alerts; otherwise it only answers what the tallies say."""

    runtime_states: Callable[[], dict[str, LinkState]]
    records: ProtectionRecords
    calendar: Calendar
    now_us: Callable[[], int]
    raises: bool = True
    false_alarms_per_month: Fraction = Fraction(1, 10)
    interval_s: float = 10.0
    webhook_url: str | None = None
    # Who dealt at each table, cut into spans over a period (``Dealers.spans``); None: the
    # floor records no dealers.
    dealer_spans: Callable[[int, int], Awaitable[dict[str, list[DealerSpan]]]] | None = None
    # What /metrics reads.
    raised_total: int = 0
    closed_total: int = 0
    webhook_failures: int = 0
    loaded: bool = False
    watch: Watch = field(init=False)
    links: dict[str, str] = field(default_factory=dict)  # table -> link
    cursors: dict[str, int] = field(default_factory=dict)  # link -> last seq read
    open: dict[tuple[str, str, str, str], AlertRecord] = field(default_factory=dict)
    last_look_us: int = 0
    _pool: ThreadPoolExecutor = field(init=False)
    _spans: dict[str, list[DealerSpan]] = field(default_factory=dict)
    _span_starts: dict[str, list[int]] = field(default_factory=dict)
    _task: asyncio.Task[None] | None = None
    # One step at a time (the schedule's, or one asked for): each row is taken once.
    _stepping: asyncio.Lock = field(default_factory=asyncio.Lock)

    def __post_init__(self) -> None:
        facts, self.links = facts_of(self.runtime_states())
        self.watch = Watch(Tallies(self.calendar, facts, self._dealer), self.false_alarms_per_month)
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="game-protection")

    def _dealer(self, table_id: str, at_us: int) -> str | None:
        """Who dealt at the table then, from the spans read at this step."""
        spans = self._spans.get(table_id)
        if not spans:
            return None
        i = bisect.bisect_right(self._span_starts[table_id], at_us) - 1
        if i < 0:
            return None
        span = spans[i]
        return span.dealer if at_us < span.until_us else None

    async def _run(self, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(*args, **kwargs))

    async def run_in_watch(self, fn: Callable[[Watch], T]) -> T:
        """``fn(watch)`` in the watch's thread, after what it is doing (for the views)."""
        return await self._run(fn, self.watch)

    # -- running ---------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.create_task(self._forever(), name="game-protection")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._pool.shutdown(wait=True, cancel_futures=True)

    async def _forever(self) -> None:
        while True:
            try:
                await self.step()
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("game protection: a step failed; trying again")
            await asyncio.sleep(self.interval_s)

    async def load(self) -> None:
        """Where each link's reading starts: the first entry of the oldest kept gaming day;
        and the alerts left open."""
        now = self.now_us()
        first_day = self.calendar.day(now) - timedelta(days=KEPT_DAYS - 1)
        since = self.calendar.day_start(first_day)
        for link_id in self.runtime_states():
            if link_id not in self.cursors:
                self.cursors[link_id] = await self.records.first_seq_at(link_id, since)
        for a in await self.records.alerts():
            self.open[alert_key(a)] = a
        # The first look is the next quarter hour's, as every look after it: the alerts left
        # open stand until then, and a process that starts (a command, a standby taking over)
        # does not judge the whole floor on its way up.
        self.last_look_us = now // self.watch.look_us * self.watch.look_us
        self.loaded = True

    async def step(self, *, look_now: bool = False) -> None:
        """Read what the history gained, and judge at a look that came (or now)."""
        async with self._stepping:
            await self._step(look_now)

    async def _step(self, look_now: bool) -> None:
        if not self.loaded:
            await self.load()
        states = self.runtime_states()
        facts, links = facts_of(states)
        if links != self.links or facts != self.watch.tallies.tables:
            self.links = links
            await self._run(self.watch.tallies.set_tables, facts)
        if self.dealer_spans is not None:
            now = self.now_us()
            first = self.calendar.day(now) - timedelta(days=KEPT_DAYS)
            spans = await self.dealer_spans(self.calendar.day_start(first), now + 1)
            starts = {t: [s.from_us for s in v] for t, v in spans.items()}
            await self._run(self._set_spans, spans, starts)
        for link_id in states:
            if link_id not in self.cursors:
                self.cursors[link_id] = 0
            while True:
                rows = await self.records.seen_after(link_id, self.cursors[link_id], BATCH)
                if not rows:
                    break
                await self._run(self._take, rows)
                self.cursors[link_id] = rows[-1].seq
                if len(rows) < BATCH:
                    break
        now = self.now_us()
        look = now // self.watch.look_us * self.watch.look_us
        if look > self.last_look_us or look_now:
            self.last_look_us = look
            await self._look(now)

    def _set_spans(self, spans: dict[str, list[DealerSpan]], starts: dict[str, list[int]]) -> None:
        self._spans, self._span_starts = spans, starts

    def _take(self, rows: list[Any]) -> None:
        add = self.watch.tallies.add
        for r in rows:
            if r.table_id is None:
                continue
            add(
                Seen(
                    r.link_id,
                    r.seq,
                    r.at_us,
                    r.table_id,
                    details=r.details if r.hit_id is None else None,
                    hit_id=r.hit_id,
                    seat=r.seat,
                    hand=r.hand,
                    cards=r.cards,
                    hit_source=r.source,
                    hit_kind=r.hit_kind,
                )
            )

    async def _look(self, now_us: int) -> tuple[list[AlertRecord], list[AlertClosing]]:
        """Judge now: raise what newly alarms, close what no longer does."""
        watch = self.watch
        alarms, threshold = await self._run(lambda: (watch.alarms(now_us), watch.threshold()))
        alarming = {f.key: f for f in alarms}
        raised = [
            alert_of(f, at_us=now_us, link_id=self.links.get(f.table_id or ""), threshold=threshold)
            for key, f in alarming.items()
            if key not in self.open
        ]
        closing = [a for key, a in self.open.items() if key not in alarming]
        closings: list[AlertClosing] = []
        if closing:
            everything = await self._run(watch.judge, now_us)
            now_of = {f.key: f for f in everything}
            for a in closing:
                f = now_of.get(alert_key(a))
                closings.append(
                    AlertClosing(
                        a.alert_id,
                        now_us,
                        0 if f is None else f.observed,
                        0 if f is None else f.trials,
                        "0/1" if f is None else _expected_text(f.expected),
                        1.0 if f is None else f.p_value,
                    )
                )
        if not self.raises:
            return raised, closings
        written = set(await self.records.raise_alerts(raised, at_us=now_us, actor=ACTOR))
        for a in raised:
            self.open[alert_key(a)] = a
            if a.alert_id in written:
                self.raised_total += 1
                log.warning(
                    "game protection: %s, %s in %s: %d seen, %s expected (%s)",
                    a.subject,
                    a.line_label,
                    a.window.replace("_", " "),
                    a.observed,
                    count_text(float(Fraction(a.expected))),
                    alarming[alert_key(a)].text,
                )
        closed = set(await self.records.close_alerts(closings, at_us=now_us, actor=ACTOR))
        for a in closing:
            self.open.pop(alert_key(a), None)
        self.closed_total += len(closed)
        if self.webhook_url and (written or closed):
            posts = [("raised", a._asdict()) for a in raised if a.alert_id in written]
            posts += [("closed", c._asdict()) for c in closings if c.alert_id in closed]
            await self._run(self._post, posts)  # in the watch's own thread
        return raised, closings

    def _post(self, posts: list[tuple[str, dict[str, Any]]]) -> None:
        assert self.webhook_url is not None
        for event, body in posts:
            data = json.dumps({"event": f"protection_alert_{event}", "alert": body}).encode()
            request = urllib.request.Request(
                self.webhook_url,
                data=data,
                headers={"Content-Type": "application/json"},
                method="POST",
            )
            try:
                with urllib.request.urlopen(request, timeout=5) as answer:
                    answer.read()
            except OSError as exc:
                self.webhook_failures += 1
                log.warning("game protection: the webhook refused an alert: %s", exc)
