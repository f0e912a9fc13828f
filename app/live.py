"""Live push to the floor displays: one hub per process, one channel per link.

A display connects to ``/ws/links/{link_id}`` and receives JSON text messages, one per
WebSocket text frame::

    {
      "type": "snapshot" | "update" | "heartbeat",
      "seq": 17,
      "link_id": "stud",
      "name": "Main pit Caribbean Stud",
      "game": "caribbean_stud",
      "game_label": "Caribbean Stud Poker",  # a mixed link: "... and Caribbean Draw Poker"
      "meter_cents": 104250,          # the link's meter now
      "reset_cents": 100000,
      "rate_bp": 8000,
      "display": {                    # the win announced now (68 IAC 10-6-5(g)-(i))
        "mode": "live" | "won" | "reset",
        "amount_cents": 104250,       # the amount to show in that mode
        "won_cents": null | int,      # the last win, during the hit phase
        "winning_table": null | "stud-1",
        "winning_table_name": null | "Table 1",
        "seats": [3],
        "hand": null | "ROYAL_FLUSH",
        "hand_label": null | "Royal flush"  # the hand as patrons read it
      },
      "fixed_pay": false,             # a bonus link paying fixed amounts: no meter, no level
      "levels": [                     # the pool's levels, level 1 first (a classic link: one)
        {"key": "L1", "name": "Grand", "amount_cents": 1000080, "mode": "live" | "won" |
         "reset", "must_hit_by_cents": null | int, "won_cents": null | int}, ...
      ],
      "pays": [{"hand": "ROYAL_FLUSH", "fixed_cents": 1000000}, ...],  # a fixed-pay link's
      "paytables": [                  # every game's paytable, the link's own game first
        {"game": "caribbean_stud", "game_label": "Caribbean Stud Poker", "lines": [
          {"hand": "ROYAL_FLUSH", "hand_label": "Royal flush", "percent_bp": 10000 | null,
           "fixed_cents": null | int, "level": 1 | null, "level_name": "Grand" | null,
           "envy_cents": null | int}, ...]}, ...
      ],
      "property": {"name": null | "Blue River Casino", "colour": "#0b5d3b",
                   "accent": "#e8c15a"},  # the property's name and display colours
      "jurisdiction": "Indiana (68 IAC 10)",  # the law it runs under, its name and code
      "demonstration": {"installation": false,  # the installation runs in demonstration mode
                        "links": [],            # the link, when it was opened in it
                        "statement": null | "DEMONSTRATION MODE: ..."},  # to show, always
      "tables": [{"table_id": "stud-1", "name": "Table 1"}, ...],
      "fresh": true,                  # a table of the link answered recently
      "degraded": false,              # the tables' readings are not being recorded now
      "at_us": 1767225600000000       # when this state was framed (heartbeat: when sent)
    }

* ``levels``: each level's frame (``controller.core.reducer.level_frames``): the level won
  last goes through the hit phase, the others show their meters; a mystery level carries
  the ceiling it must hit by, never its trigger; hidden (reserve) and overflow meters are
  never sent. A fixed-pay link sends no level and its paytable as ``pays``.
* ``paytables`` and ``property`` are what patrons read around the amounts
  (``app.live_patron``); ``tables`` names the link's tables (a winning table is named by its
  id). The feed is read without signing in unless the installation requires display tokens:
  it carries nothing a patron's display does not need, never a table's state, counters, bets
  or switches (``GET /api/v1/tables``, to dealers and up) nor a hidden meter.
* ``snapshot`` is the first message of every connection: the whole current state.
* ``update``: the state changed (meter, hit, the display's mode, freshness); ``seq`` is one
  more than the link's previous update. States are whole, never deltas: a client that falls
  behind skips to the latest one.
* ``degraded``: the controller cannot record what the tables report (the database is out of
  reach). Polling, heartbeats and this push go on, but the amounts are those of the last
  recorded state: a display never shows an amount that is not in the meter history
  (68 IAC 10-6-5(b)), so it shows the last recorded one, marked as such, and catches up once
  the database is back and the backlog is committed.
* ``heartbeat``: every few seconds, the current state again with the seq of the last update
  and ``at_us`` now, so that a page can tell a live connection from a silent one.

``seq`` counts per link and per process; a page takes every snapshot as its new baseline (a
reconnect, or a restarted server whose count began again). With several processes on
PostgreSQL, each process learns of the others' commits from ``controller.runtime.change_feed`` and
pushes them the same way: a display connected to any process shows the same states.

The server decides every frame: the hit phase (the won amount at once, then won and reset
amounts in turn) is ``controller.core.reducer.display_frame``; a ticker re-evaluates it and pushes
the changes of mode. Wins close together are announced one at a time, each for its whole time
(``controller.core.reducer.display.announcements`` says the order): the hub notes every
committed win of the links it serves (and each pay of a fixed-pay bonus that holds the table
for a technician), and ``display`` and ``levels`` show the one announced now while the other
levels count on live. Two wins of one commit (one reading round) are one announcement, the
link's last win.

Each message is encoded once per link and the same text goes to every client. Each client
holds at most one undelivered message (the latest wins), so a slow client costs the server
nothing that grows; a client whose send has been stalled beyond a limit is dropped and will
reconnect.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import dataclass
from typing import Any, Literal

from app.live_delivery import Channel, Client, Receive, Resume, Send, encode
from app.live_patron import paytables_content, property_content
from controller.core.reducer import Outcome, display_frame, level_frames
from controller.core.reducer.display import Slot, announcements, announcing, won_level
from controller.core.reducer.state import LastWin, LinkState
from controller.runtime.service import FloorService

__all__ = ["Ending", "HubTiming", "LiveHub"]

log = logging.getLogger(__name__)

Ending = Literal["left", "dropped", "closing"]

# Wins kept to announce per link, a bound that play never reaches (a queue this long is hours
# of announcements), and keys of wins already noted.
WINS_KEPT = 256
NOTED_KEPT = 4096


@dataclass(frozen=True, slots=True, kw_only=True)
class HubTiming:
    """How often the hub looks, and how long it waits."""

    # How often the display frame and freshness are re-evaluated (the hit phase changes
    # mode on whole seconds; a quarter second keeps every display within that of the rule).
    tick_s: float = 0.25
    heartbeat_s: float = 2.0
    # A client whose send has not finished in this long is not reading: drop it.
    stall_limit_s: float = 10.0
    # Fresh: a table of the link answered within this many of its slowest poll intervals,
    # and never less than the floor.
    fresh_intervals: int = 4
    fresh_floor_us: int = 3_000_000


class LiveHub:
    """Pushes each link's display state to its connected displays.

    ``start()`` subscribes to the runtime's committed outcomes and starts the ticker;
    ``serve(link_id, send, receive)`` runs one connection until it leaves or is dropped;
    ``stop()`` ends everything.
    """

    def __init__(self, service: FloorService, *, timing: HubTiming | None = None) -> None:
        self.service = service
        self.timing = timing or HubTiming()
        self.channels: dict[str, Channel] = {}
        self.dropped = 0  # clients dropped for not keeping up, since start
        self._opening = asyncio.Lock()
        self._dirty: set[str] = set()
        self._flush_handle: asyncio.Handle | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stopping = False
        # Each link's wins still to announce or being announced, with the place of the
        # level won, and the wins already noted (a state keeps its last win long after).
        self._wins: dict[str, list[tuple[LastWin, int]]] = {}
        self._noted: dict[str, set[tuple[int, str, str | None, int]]] = {}

    # ------------------------------------------------------------------------- running

    async def start(self) -> None:
        self._loop = asyncio.get_running_loop()
        self.service.memory.listeners.append(self.on_outcome)
        self.service.memory.reload_listeners.append(self.on_link_changed)
        self._ticker = asyncio.create_task(self._tick_forever(), name="display hub ticker")

    async def stop(self) -> None:
        """Idempotent; every connection still served ends with ``"closing"``."""
        self._stopping = True
        with contextlib.suppress(ValueError, RuntimeError):
            self.service.memory.listeners.remove(self.on_outcome)
        with contextlib.suppress(ValueError, RuntimeError):
            self.service.memory.reload_listeners.remove(self.on_link_changed)
        if self._flush_handle is not None:
            self._flush_handle.cancel()
            self._flush_handle = None
        ticker, self._ticker = self._ticker, None
        if ticker is not None:
            ticker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await ticker
        tasks = [c.task for ch in self.channels.values() for c in ch.clients if c.task]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def clients(self, link_id: str | None = None) -> int:
        channels = self.channels.values() if link_id is None else [self.channels[link_id]]
        return sum(len(ch.clients) for ch in channels)

    # ------------------------------------------------------------------------- one connection

    async def serve(self, link_id: str, send: Send, receive: Receive) -> Ending:
        """A snapshot, then every update, until the client leaves or is dropped."""
        channel = await self.channel(link_id)
        client = Client(channel, send)
        channel.clients.add(client)
        sender = asyncio.create_task(self._send_forever(client), name=f"display {link_id}")
        client.task = sender
        listener = asyncio.create_task(_until_disconnect(receive), name=f"display {link_id} in")
        try:
            await asyncio.wait((sender, listener), return_when=asyncio.FIRST_COMPLETED)
        finally:
            channel.clients.discard(client)
            sender.cancel()
            listener.cancel()
            await asyncio.gather(sender, listener, return_exceptions=True)
        if client.dropped:
            return "dropped"
        return "closing" if self._stopping else "left"

    async def _send_forever(self, client: Client) -> None:
        loop = asyncio.get_running_loop()
        client.pending = None  # the snapshot says everything offered until now
        text: str | None = client.channel.snapshot()
        while True:
            if text is None:
                waiter = client.waiter = loop.create_future()
                await waiter
                client.waiter = None
                if client.failed is not None:
                    raise client.failed
                if client.inflight is not None:
                    # An eager send that had to wait: finish it here.
                    coro, yielded = client.inflight
                    try:
                        await Resume(coro, yielded)
                    finally:
                        client.inflight = None
                    client.sending_since = None
                    client.sent += 1
                text, client.pending = client.pending, None
                continue
            client.sending_since = loop.time()
            await client.send(text)
            client.sending_since = None
            client.sent += 1
            text, client.pending = client.pending, None

    def _drop(self, client: Client) -> None:
        client.dropped = True
        client.channel.clients.discard(client)
        self.dropped += 1
        if client.task is not None:
            client.task.cancel()

    # ------------------------------------------------------------------------- channels

    async def channel(self, link_id: str) -> Channel:
        """The link's channel, opened (its names read, its first state framed) when new."""
        found = self.channels.get(link_id)
        if found is not None:
            return found
        async with self._opening:
            found = self.channels.get(link_id)
            if found is not None:
                return found
            name, table_names = await self.service.link_names(link_id)
            channel = Channel(link_id, name, table_names)
            self._refresh(channel, self.service.now_us())
            self.channels[link_id] = channel
            return channel

    def on_outcome(self, outcome: Outcome) -> None:
        """A runtime listener: called right after each commit, so it only takes note."""
        state = outcome.state
        if state.link_id in self.channels:
            # Every commit's win, though several commits come before the next framing.
            self._note(state, state.last_win)
            if state.fixed_pay:
                # A bonus paying fixed amounts has no last win. Its pays big enough for the
                # house to hold the table for a technician are announced; the routine ones
                # (two pair, every few hands) would keep a queue of announcements growing.
                for hit in outcome.hits:
                    if hit.status == "awarded" and hit.award_cents > 0 and hit.needs_technician:
                        paid = LastWin(
                            won_cents=hit.award_cents,
                            table_id=hit.table_id,
                            seats=(hit.claim.seat,),
                            hand=hit.claim.hand,
                            at_us=hit.at_us,
                        )
                        self._note(state, paid)
        self.on_link_changed(state.link_id)

    def _note(self, state: LinkState, win: LastWin | None) -> None:
        if win is None:
            return
        key = (win.at_us, win.table_id, win.level, win.won_cents)
        noted = self._noted.setdefault(state.link_id, set())
        if key in noted:
            return
        if len(noted) > NOTED_KEPT:
            noted.clear()  # the older wins are long announced: their keys go
        noted.add(key)
        wins = self._wins.setdefault(state.link_id, [])
        wins.append((win, won_level(state, win)))
        del wins[:-WINS_KEPT]

    def _slots(self, state: LinkState, now_us: int) -> tuple[Slot, ...]:
        """The link's announcements; once none is left, its noted wins are let go."""
        self._note(state, state.last_win)
        wins = self._wins.get(state.link_id, [])
        slots = announcements(wins)
        if wins and announcing(slots, now_us) is None and all(s.end_us <= now_us for s in slots):
            wins.clear()
        return slots

    def on_link_changed(self, link_id: str) -> None:
        """The link changed here, or another process's commit to it was read."""
        if link_id not in self.channels:
            return
        self._dirty.add(link_id)
        if self._flush_handle is None and self._loop is not None:
            self._flush_handle = self._loop.call_soon(self._flush)

    def _flush(self) -> None:
        self._flush_handle = None
        dirty, self._dirty = self._dirty, set()
        now_us = self.service.now_us()
        for link_id in dirty:
            channel = self.channels.get(link_id)
            if channel is not None:
                self._guarded_refresh(channel, now_us)

    def _guarded_refresh(self, channel: Channel, now_us: int) -> None:
        try:
            self._refresh(channel, now_us)
        except Exception:
            # A display must never take the controller down; the next tick tries again.
            log.exception("framing the display state of link %s failed", channel.link_id)

    def _refresh(self, channel: Channel, now_us: int) -> bool:
        """Frame the link now; when anything shown changed, push an update. True if pushed."""
        content = self._content(channel, now_us)
        if content == channel.content:
            return False
        channel.seq += 1
        channel.content = content
        channel.at_us = now_us
        channel.snapshot_text = None
        text = channel.update_text = encode("update", channel.seq, content, now_us)
        for client in channel.clients:
            client.offer(text)
        return True

    def _content(self, channel: Channel, now_us: int) -> dict[str, Any]:
        service = self.service
        link_id = channel.link_id
        state = service.memory.states[link_id]
        slots = self._slots(state, now_us)
        frame = display_frame(state, now_us=now_us, slots=slots)
        win = frame.win
        names = channel.table_names
        display: dict[str, Any] = {
            "mode": frame.mode,
            "amount_cents": frame.amount_cents,
            "won_cents": win.won_cents if win else None,
            "winning_table": win.table_id if win else None,
            "winning_table_name": names.get(win.table_id, win.table_id) if win else None,
            "seats": list(win.seats) if win else [],
            "hand": win.hand.name if win else None,
            "hand_label": win.hand.title if win else None,
        }
        tables = [
            {"table_id": s.table_id, "name": names.get(s.table_id, s.table_id)}
            for s in service.table_statuses(link_id)
        ]
        return {
            "link_id": link_id,
            "name": channel.name,
            "game": state.game.value,
            # A mixed-game link names every game its tables deal.
            "game_label": " and ".join(g.label for g in state.games),
            "meter_cents": state.meter_cents,
            "reset_cents": state.reset_cents,
            "rate_bp": state.rate_bp,
            "display": display,
            "fixed_pay": state.fixed_pay,
            "levels": [
                {
                    "key": f.key,
                    "name": f.name,
                    "amount_cents": f.amount_cents,
                    "mode": f.mode,
                    "must_hit_by_cents": f.must_hit_by_cents,
                    "won_cents": f.win.won_cents if f.win else None,
                }
                for f in level_frames(state, now_us=now_us, slots=slots)
            ],
            "pays": [
                {"hand": line.hand.name, "fixed_cents": line.fixed_cents}
                for line in sorted(state.paytable.lines, key=lambda line: -(line.fixed_cents or 0))
                if state.fixed_pay and line.fixed_cents is not None
            ],
            "paytables": paytables_content(state),
            "property": property_content(service.settings),
            # The law the display runs under, and demonstration mode (rules.statement).
            **service.statement(link_id).for_patrons().as_dict(),
            "tables": tables,
            "fresh": self._fresh(link_id, now_us),
            "degraded": service.degraded(link_id),
        }

    def _fresh(self, link_id: str, now_us: int) -> bool:
        answered = self.service.link_answered_us(link_id)
        if answered is None:
            return False
        interval = self.service.link_poll_interval_us(link_id) or 0
        window = max(self.timing.fresh_floor_us, self.timing.fresh_intervals * interval)
        return now_us - answered <= window

    # ------------------------------------------------------------------------- the ticker

    async def _tick_forever(self) -> None:
        loop = asyncio.get_running_loop()
        timing = self.timing
        next_beat = loop.time() + timing.heartbeat_s
        while True:
            await asyncio.sleep(timing.tick_s)
            now_us = self.service.now_us()
            beat = loop.time() >= next_beat
            if beat:
                next_beat = loop.time() + timing.heartbeat_s
            for channel in list(self.channels.values()):
                if not channel.clients:
                    continue
                self._guarded_refresh(channel, now_us)
                if beat:
                    text = channel.heartbeat_text = encode(
                        "heartbeat", channel.seq, channel.content, now_us
                    )
                    for client in channel.clients:
                        client.offer_heartbeat(text)
            self._drop_stalled(loop.time())

    def _drop_stalled(self, now: float) -> None:
        limit = self.timing.stall_limit_s
        for channel in self.channels.values():
            stalled = [
                c
                for c in channel.clients
                if c.sending_since is not None and now - c.sending_since > limit
            ]
            for client in stalled:
                log.warning("display client of link %s dropped: not reading", channel.link_id)
                self._drop(client)


async def _until_disconnect(receive: Receive) -> None:
    # Displays have nothing to say; reading keeps the connection's input flowing and tells
    # when it ends.
    while True:
        message = await receive()
        if message.get("type") == "websocket.disconnect":
            return
