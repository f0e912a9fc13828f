"""What the demo does besides serving: forced jackpots in turn, the demo technician, and the
board it prints (every link with its levels, fixed-pay links, the recent hits)."""

from __future__ import annotations

import random
from collections import Counter, deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime

from app.demo_floor import TABLES_PER_GATEWAY, DemoPlan
from controller.core.money import format_cents
from controller.core.reducer import Hit, LinkState, Outcome, display_frame
from controller.core.reducer.conservation import entry_details
from controller.core.reducer.display import level_frames
from controller.core.verification import HitWorkRefused
from controller.rules import RuleViolation
from controller.runtime.clock import SystemClock
from controller.runtime.service import FloorService
from controller.storage.errors import StoreError
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor

__all__ = ["BOARD_HITS", "DemoFloor", "RecentHit"]

US = 1_000_000
BOARD_HITS = 8  # the recent hits the board lists
_MODE = {"live": "", "won": "  WON", "reset": "  reset"}


@dataclass(frozen=True, slots=True)
class RecentHit:
    at_us: int
    text: str


def hit_text(state: LinkState, h: Hit) -> str:
    """One hit as the console and the board say it."""
    where = f"{state.link_id}/{h.table_id} seat {h.claim.seat}"
    if h.status != "awarded":
        return f"REFUSED  {where}: {h.refusal}"
    level = ""
    if h.level is not None and len(state.levels) > 1:
        index = int(h.level[1:].split(".")[0]) - 1
        if index < len(state.levels):
            level = f" ({state.levels[index].config.name})"
    paid = "from the meter" if h.paid_from == "meter" else "at the table"
    if h.kind == "mystery":
        what = f"mystery{level}"
    elif h.kind == "envy":
        what = "envy bonus"
    else:
        what = f"{h.claim.hand.label}{level}"
    return f"{h.kind.upper():<7}  {where}: {what}, {format_cents(h.award_cents)} paid {paid}"


class DemoFloor:
    """Forced jackpots, the demo technician and the board of a running demo."""

    def __init__(
        self,
        service: FloorService,
        sim: SimFloor,
        *,
        plan: DemoPlan,
        release_after_s: float,
        seed: int | None,
        say: Callable[[str], None],
    ) -> None:
        self.service = service
        self.sim = sim
        self.plan = plan
        self.release_after_s = release_after_s
        self.say = say
        self.clock = SystemClock()
        self.rng = random.Random(seed)
        self.held_since: dict[str, int] = {}
        # Held tables the demo technician could not release (left to a person on /tech).
        self.left_to_people: set[str] = set()
        self.turn = 0
        self.recent: deque[RecentHit] = deque(maxlen=BOARD_HITS)
        # Fixed pays below the technician's amount, by link: counted, not printed one by one.
        self.small_pays: Counter[str] = Counter()
        service.memory.listeners.append(self._on_outcome)

    def _on_outcome(self, o: Outcome) -> None:
        state = o.state
        envy: dict[tuple[str, str], list[Hit]] = {}
        for h in o.hits:
            small = h.kind == "hand" and h.paid_from == "table" and not h.needs_technician
            if h.status == "awarded" and small:
                self.small_pays[state.link_id] += 1
                continue
            if h.status == "awarded" and h.kind == "envy":
                envy.setdefault((h.table_id, h.hit_id.rsplit("/", 1)[0]), []).append(h)
                continue
            self._note(h.at_us, hit_text(state, h))
        for (table_id, _), paid in envy.items():
            seats = ", ".join(str(h.claim.seat) for h in paid)
            first = paid[0]
            self._note(
                first.at_us,
                f"ENVY     {state.link_id}/{table_id} seat{'s' if len(paid) > 1 else ''} "
                f"{seats}: {format_cents(first.award_cents)} each for the "
                f"{first.claim.hand.label}, paid at the table",
            )
        for ev in o.events:
            if ev.kind == "jackpot_reset":
                self.say(f"  {state.link_id}: {_reset_text(state, ev.details)}")
            elif ev.kind == "mystery_armed":
                self.say(f"  {state.link_id}: {ev.explanation}")
            elif ev.kind == "table_offline":
                self.say(f"  {ev.table_id} is offline: {ev.explanation}")

    def _note(self, at_us: int, text: str) -> None:
        self.recent.append(RecentHit(at_us, text))
        self.say(f"  {text}")

    def force_jackpot(self) -> None:
        """The next hand of the turn, at a table of its game not held for a technician."""
        forced = self.plan.forced
        gateway, hand = forced[self.turn % len(forced)]
        self.turn += 1
        spec = next(g for g in self.sim.gateways if g.name == gateway)
        link_id = self.plan.link_of(gateway)
        tables = self.service.memory.states[link_id].tables
        free = [
            n for n in range(1, TABLES_PER_GATEWAY + 1) if not tables[f"{gateway}-{n}"].hit_pending
        ]
        if not free:
            self.say(f"  (demo: every {spec.game.label} table is held; no forced hand this time)")
            return
        # At the table with the most players, to one of them: the others' envy is seen.
        tables_here = {n: self.sim.tables[(gateway, n)] for n in free}
        most = max(len(t.occupied_seats) for t in tables_here.values())
        unit = self.rng.choice([n for n, t in tables_here.items() if len(t.occupied_seats) == most])
        seats = tables_here[unit].occupied_seats or tuple(range(1, _seats(spec) + 1))
        seat = self.rng.choice(seats)
        self.sim.force_hand(gateway, unit, seat, hand)
        self.say(
            f"  (demo: the next round at {gateway}-{unit} deals {hand.label.lower()} "
            f"to seat {seat})"
        )

    async def demo_technician(self) -> None:
        """Verify and reset a table held longer than ``release_after_s``; an award at or
        above the second-signature amount is signed by the demo supervisor, a second person."""
        hits = self.service.hits
        now = self.clock.now_us()
        for state in list(self.service.memory.states.values()):
            for table_id, ts in state.tables.items():
                if not ts.hit_pending:
                    self.held_since.pop(table_id, None)
                    self.left_to_people.discard(table_id)
                    continue
                since = self.held_since.setdefault(table_id, now)
                if now - since < self.release_after_s * US or table_id in self.left_to_people:
                    continue
                try:
                    for hit in await hits.unverified(table_id):
                        await hits.verify(hit.hit_id, actor="demo technician")
                    for hit in await hits.unsigned(table_id):
                        await hits.sign_off(hit.hit_id, actor="demo supervisor")
                    await hits.release_table(table_id, actor="demo technician")
                except (HitWorkRefused, RuleViolation, StoreError) as exc:
                    # A hit the demo cannot judge (no cards reported, a record to correct):
                    # the table waits for a person, and the floor plays on.
                    self.left_to_people.add(table_id)
                    self.say(f"  {state.link_id}/{table_id} left for a technician on /tech: {exc}")
                    continue
                self.held_since.pop(table_id, None)
                self.say(f"  {state.link_id}/{table_id} verified and reset by the demo technician")

    def board(self) -> str:
        """Every link with its levels (a mystery level's "must hit by"), the fixed-pay links
        as "fixed pays", and the recent hits."""
        now = self.clock.now_us()
        lines = [f"board at {_clock(now)}"]
        for spec in self.plan.links:
            state = self.service.memory.states[spec.link_id]
            held = sum(1 for ts in state.tables.values() if ts.hit_pending)
            title = f"  {spec.link_id:<10} {spec.name}" + (f"  ({held} held)" if held else "")
            if state.fixed_pay:
                small = self.small_pays[spec.link_id]
                lines.append(f"{title}: fixed pays, {small} paid at the table")
                continue
            if len(state.levels) == 1:
                frame = display_frame(state, now_us=now)
                lines.append(f"{title}: {format_cents(frame.amount_cents)}{_MODE[frame.mode]}")
                continue
            lines.append(title)
            for lf in level_frames(state, now_us=now):
                must = (
                    ""
                    if lf.must_hit_by_cents is None
                    else f"  must hit by {format_cents(lf.must_hit_by_cents)}"
                )
                lines.append(
                    f"    {lf.name:<8} {format_cents(lf.amount_cents):>13}{_MODE[lf.mode]}{must}"
                )
        if self.recent:
            lines.append("  recent hits:")
            lines.extend(f"    {_clock(h.at_us)} {h.text}" for h in reversed(self.recent))
        return "\n".join(lines)


def _reset_text(state: LinkState, details: object) -> str:
    if isinstance(details, str):
        details = entry_details(details)
    level = details.get("level") if isinstance(details, Mapping) else None
    if isinstance(level, str) and level[1:].isdigit():
        lv = state.levels[int(level[1:]) - 1]
        return f"{lv.config.name} won, meter reset to {format_cents(lv.config.reset_cents)}"
    return f"jackpot won, meter reset to {format_cents(state.reset_cents)}"


def _seats(spec: GatewaySpec) -> int:
    seats = spec.table_config().seats
    assert seats is not None
    return seats


def _clock(at_us: int) -> str:
    return datetime.fromtimestamp(at_us / US).strftime("%H:%M:%S")
