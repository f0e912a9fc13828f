"""Game protection: every table's luck held against the exact odds of its paytable lines.

What is judged is only what a table built to the register map reports, as the history records
it: the side bets each reading took (the seats whose credits rose, the rounds dealt, the seats
the sensors showed dark or lit without a credit, credits after the dealer's lockout: a
contribution's details, ``controller.core.reducer.readings.bets_record``) and the hits the
table claimed (hand, seat, cards). Never what only a simulator knows.

Observations are tallied as they come, in sums per gaming day and per shift for each subject:
a table, one seat of a table, a dealer, a game (``Tallies``). At each look the windows are the
shift so far, the gaming day so far, and the last 7 and 30 gaming days, and every line of every
subject in every window is judged (``controller.core.luck``): the hands of a paytable line seen
against the hands bet x the line's exact probability, in the more unlikely direction; and for a
table, its faults (late bets, seats credited with their sensor dark, seats sensed without a
credit, hits whose cards do not make the hand claimed) against a tolerated rate of glitches.

The threshold keeps an honest floor quiet (``Watch.threshold``): the false alarms a floor
accepts a month, divided among every test its looks make in a month (Bonferroni).

Pure: no clock, no I/O. Counts are whole numbers; expected counts are exact fractions; only
the tail probabilities are floating point, and no amount is ever derived from them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, timedelta
from enum import StrEnum
from fractions import Fraction
from typing import Any, Final, NamedTuple, Protocol

from controller.core.games import Game, rules_of
from controller.core.hands import HandCategory, InvalidCards
from controller.core.luck import (
    DEFAULT_FALSE_ALARMS_PER_MONTH,
    Direction,
    luck_text,
    threshold,
)

__all__ = [
    "FAULTS",
    "LOOK_US",
    "TOLERATED_FAULT_RATE",
    "WINDOWS",
    "Calendar",
    "DayPoint",
    "Finding",
    "LineView",
    "Scope",
    "Seen",
    "TableFacts",
    "TableRank",
    "Tallies",
    "Watch",
    "daily_line",
    "floor_ranks",
    "hand_of",
    "line_views",
    "seats_of",
]

MINUTE_US: Final = 60_000_000
DAY_US: Final = 86_400_000_000
# How often the windows are judged: every quarter hour of the floor's clock. Each look is a
# test of every line of every subject in every window, counted in the threshold.
LOOK_US: Final = 15 * MINUTE_US
LOOKS_PER_MONTH: Final = 30 * DAY_US // LOOK_US
# A table's faults are judged against this rate of honest glitches per hand (or per reading,
# or per claim with cards): a bet counted a poll late, a card misread. A table that does it on
# every round is flagged within a few rounds; an honest one stays quiet.
TOLERATED_FAULT_RATE: Final = Fraction(1, 1000)


class Scope(StrEnum):
    TABLE = "table"
    SEAT = "seat"
    DEALER = "dealer"
    GAME = "game"


class Window(NamedTuple):
    name: str
    label: str
    days: int  # 0: the shift so far; 1: the gaming day so far; n: the last n gaming days


WINDOWS: Final = (
    Window("shift", "this shift", 0),
    Window("gaming_day", "this gaming day", 1),
    Window("7_days", "the last 7 gaming days", 7),
    Window("30_days", "the last 30 gaming days", 30),
)
KEPT_DAYS: Final = max(w.days for w in WINDOWS)

# What each tally holds, by index; a game's lines follow from ``_LINES``.
_HANDS_LOW, _HANDS_HIGH, _READINGS, _LATE, _UNSENSED, _UNCREDITED, _CLAIMS, _MISMATCHED = range(8)
_LINES: Final = 8


class Fault(NamedTuple):
    name: str
    label: str
    counted: int  # index of what is counted
    trials: int  # ... among
    what: str


# A table's faults: seen only in the table's own tallies.
FAULTS: Final = (
    Fault("late_bets", "side bets after lockout", _LATE, _READINGS, "readings that took credits"),
    Fault(
        "credits_without_bets", "credits with the bet sensor dark", _UNSENSED, _HANDS_LOW, "hands"
    ),
    Fault(
        "bets_without_credits", "bet sensor lit without a credit", _UNCREDITED, _HANDS_LOW, "hands"
    ),
    Fault(
        "cards_not_matching",
        "hits whose cards do not make the hand",
        _MISMATCHED,
        _CLAIMS,
        "hits reported with cards",
    ),
)


def seats_of(mask: int) -> list[int]:
    """The seats of a bitmap, bit n-1 = seat n."""
    return [bit + 1 for bit in range(mask.bit_length()) if mask >> bit & 1]


def hand_of(name: str) -> HandCategory | None:
    try:
        return HandCategory[name]
    except KeyError:
        return None


@dataclass(frozen=True, slots=True)
class TableFacts:
    """What the watch needs of a table: its game and the hands its paytable pays."""

    table_id: str
    game: Game
    hands: tuple[HandCategory, ...]


class Seen(NamedTuple):
    """One entry of a link's history that game protection reads: a reading's side bets
    (``details``, a contribution's or registered bets') or a hit (its claim's seat, hand and
    cards). ``hit_source``: "table" for what a table reported (a technician's entry is no
    report of the table); ``hit_kind``: "hand" for a hand (envy and mystery are not)."""

    link_id: str
    seq: int
    at_us: int
    table_id: str
    details: str | None = None
    hit_id: str | None = None
    seat: int | None = None
    hand: str | None = None
    cards: tuple[int, ...] | None = None
    hit_source: str | None = None
    hit_kind: str | None = None


@dataclass(frozen=True, slots=True)
class Finding:
    """One line of one subject in one window, judged. ``line`` is a paytable hand's name
    (``ROYAL_FLUSH``) or a fault's (``late_bets``)."""

    scope: Scope
    subject: str
    table_id: str | None
    seat: int | None
    dealer: str | None
    game: Game
    line: str
    line_label: str
    window: str
    since_us: int
    observed: int
    trials: int
    exposure: int  # the hands (or readings, or hits) the expected count is of
    chance: Fraction  # of the line per one of them
    direction: Direction
    p_value: float

    @property
    def expected(self) -> Fraction:
        return self.exposure * self.chance

    @property
    def text(self) -> str:
        return luck_text(self.p_value)

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What an open alert is for: the same subject, line and window at a later look is
        the same alert."""
        return (self.scope.value, self.subject, self.line, self.window)


@dataclass(slots=True)
class _Subject:
    scope: Scope
    subject: str
    game: Game
    table_id: str | None = None
    seat: int | None = None
    dealer: str | None = None
    days: dict[date, list[int]] = field(default_factory=dict)
    shifts: dict[int, list[int]] = field(default_factory=dict)  # by the shift's start
    # The sums of the days before a day, by (window's days, that day): see window_sums.
    closed: dict[tuple[int, date], list[int]] = field(default_factory=dict)


# A finding before its tail is taken: subject, window, since, line, label, observed, trials,
# exposure, chance, direction.
_Row = tuple["_Subject", "Window", int, str, str, int, int, int, Fraction, Direction]
_LINE_ODDS: dict[tuple[Game, tuple[tuple[HandCategory, int], ...]], list[Any]] = {}


def _line_odds(
    game: Game, lines: Mapping[HandCategory, int]
) -> list[tuple[str, str, int, int, int, Fraction]]:
    """Each line with odds, as a judge reads it: name, label, index, ways, total, chance."""
    key = (game, tuple(lines.items()))
    found = _LINE_ODDS.get(key)
    if found is None:
        odds = odds_of(game)
        found = _LINE_ODDS[key] = [
            (h.name, h.label, i, odds[h].numerator, odds[h].denominator, odds[h])
            for h, i in lines.items()
            if h in odds
        ]
    return found


class Calendar(Protocol):
    """How the property cuts time (``controller.periods.FloorCalendar``): its gaming days and
    its shifts, in its own zone."""

    def day(self, at_us: int) -> date: ...

    def day_start(self, day: date) -> int: ...

    def shift_start(self, at_us: int) -> int: ...

    def periods_of(self, at_us: int) -> tuple[date, int, int, int]:
        """``(gaming day, its start, the shift's start, the shift's end)`` holding ``at_us``."""
        ...


class Tallies:
    """The sums of every subject by gaming day and by shift, kept for ``KEPT_DAYS`` days.

    ``add`` takes each ``Seen`` once, in any order within the kept days; ``dealer_of`` says who
    dealt at a table at a moment (None: nobody signed in).
    """

    def __init__(
        self,
        floor: Calendar,
        tables: Mapping[str, TableFacts],
        dealer_of: Callable[[str, int], str | None] = lambda table_id, at_us: None,
    ) -> None:
        self.floor = floor
        self.tables = dict(tables)
        self.dealer_of = dealer_of
        self.subjects: dict[tuple[Scope, str, Game], _Subject] = {}
        self._lines: dict[Game, dict[HandCategory, int]] = {}
        self._hit_ids: dict[str, int] = {}  # hits counted, with when (each once)
        self._newest_day: date | None = None
        self.seen = 0
        # The shift the last moment asked fell in: (its start, its end, its day).
        self._shift: tuple[int, int, date] = (0, 0, date.min)

    def _when(self, at_us: int) -> tuple[date, int]:
        """The gaming day and the shift's start of ``at_us`` (the last shift asked is kept:
        the history comes in time order)."""
        since, until, day = self._shift
        if not since <= at_us < until:
            day, _, since, until = self.floor.periods_of(at_us)
            self._shift = (since, until, day)
        return day, since

    # -- the lines of a game -------------------------------------------------------------------

    def lines(self, game: Game) -> dict[HandCategory, int]:
        """The hands any table of ``game`` pays, each with its index in a tally."""
        lines = self._lines.get(game)
        if lines is None:
            hands = sorted(
                {h for t in self.tables.values() if t.game is game for h in t.hands},
                key=lambda h: -int(h),
            )
            lines = self._lines[game] = {h: _LINES + i for i, h in enumerate(hands)}
        return lines

    def set_tables(self, tables: Mapping[str, TableFacts]) -> None:
        """The floor's tables changed (a table added, a paytable changed): tallies so far are
        kept where their lines still exist."""
        old = {g: dict(v) for g, v in self._lines.items()}
        self.tables = dict(tables)
        self._lines = {}
        for subject in self.subjects.values():
            before, after = old.get(subject.game, {}), self.lines(subject.game)
            if before == after:
                continue
            subject.days = {d: _moved(v, before, after) for d, v in subject.days.items()}
            subject.shifts = {t: _moved(v, before, after) for t, v in subject.shifts.items()}
            subject.closed.clear()

    # -- taking what is seen --------------------------------------------------------------------

    def _tallies(self, facts: TableFacts, at_us: int) -> list[list[int]]:
        """The day and shift sums ``at_us`` falls in, for the table, the dealer then and the
        game; new ones made."""
        game = facts.game
        day, shift = self._when(at_us)
        if self._newest_day is None or day > self._newest_day:
            self._newest_day = day
            self._forget(day)
        out: list[list[int]] = []
        width = _LINES + len(self.lines(game))
        subjects = [self._subject(Scope.TABLE, facts.table_id, game, table_id=facts.table_id)]
        dealer = self.dealer_of(facts.table_id, at_us)
        if dealer is not None:
            subjects.append(self._subject(Scope.DEALER, dealer, game, dealer=dealer))
        subjects.append(self._subject(Scope.GAME, f"{game.label}, every table", game))
        for s in subjects:
            out += self._sums(s, day, shift, width)
        return out

    def _sums(self, s: _Subject, day: date, shift: int, width: int) -> tuple[list[int], list[int]]:
        """The subject's sums of ``day`` and of the shift starting at ``shift``, made when new;
        an entry of a day already closed makes it forget the closed days' sums."""
        if self._newest_day is not None and day < self._newest_day and s.closed:
            s.closed.clear()
        day_sums = s.days.get(day)
        if day_sums is None:
            day_sums = s.days[day] = [0] * width
        shift_sums = s.shifts.get(shift)
        if shift_sums is None:
            shift_sums = s.shifts[shift] = [0] * width
        return day_sums, shift_sums

    def _subject(self, scope: Scope, name: str, game: Game, **who: object) -> _Subject:
        key = (scope, name, game)
        s = self.subjects.get(key)
        if s is None:
            s = self.subjects[key] = _Subject(scope, name, game, **who)  # type: ignore[arg-type]
        return s

    def _forget(self, today: date) -> None:
        """Days older than the longest window, and shifts before yesterday, are let go."""
        oldest = today - timedelta(days=KEPT_DAYS - 1)
        shifts_from = self.floor.day_start(today - timedelta(days=1))
        for s in self.subjects.values():
            for day in [d for d in s.days if d < oldest]:
                del s.days[day]
            for start in [t for t in s.shifts if t < shifts_from]:
                del s.shifts[start]
            s.closed = {k: v for k, v in s.closed.items() if k[1] >= today}
        first = self.floor.day_start(oldest)
        self._hit_ids = {h: at for h, at in self._hit_ids.items() if at >= first}

    def add(self, seen: Seen) -> None:
        facts = self.tables.get(seen.table_id)
        if facts is None:
            return
        if self._newest_day is not None:
            oldest = self._newest_day - timedelta(days=KEPT_DAYS - 1)
            if self._when(seen.at_us)[0] < oldest:
                return
        if seen.details is not None:
            self._add_bets(facts, seen)
        elif seen.hit_id is not None:
            self._add_hit(facts, seen)

    def _add_bets(self, facts: TableFacts, seen: Seen) -> None:
        assert seen.details is not None
        try:
            record = json.loads(seen.details)
        except ValueError:
            return
        seats_mask = int(record.get("seats", 0))
        rounds = record.get("rounds")
        seats = seats_of(seats_mask)
        hands = len(seats)
        most = hands * max(1, int(rounds)) if rounds is not None else hands
        late = 1 if record.get("late") else 0
        unsensed = len(seats_of(int(record.get("unsensed", 0))))
        uncredited = len(seats_of(int(record.get("uncredited", 0))))
        self.seen += 1
        table_and_more = self._tallies(facts, seen.at_us)
        seat_rounds = max(1, int(rounds)) if rounds is not None else 1
        for sums in table_and_more:
            sums[_HANDS_LOW] += hands
            sums[_HANDS_HIGH] += most
            sums[_READINGS] += 1
            sums[_LATE] += late
            sums[_UNSENSED] += unsensed
            sums[_UNCREDITED] += uncredited
        for seat in seats:
            day_sums, shift_sums = self._seat_sums(facts, seen.at_us, seat)
            for sums in (day_sums, shift_sums):
                sums[_HANDS_LOW] += 1
                sums[_HANDS_HIGH] += seat_rounds
                sums[_READINGS] += 1

    def _seat_sums(self, facts: TableFacts, at_us: int, seat: int) -> tuple[list[int], list[int]]:
        s = self._subject(
            Scope.SEAT,
            f"{facts.table_id} seat {seat}",
            facts.game,
            table_id=facts.table_id,
            seat=seat,
        )
        day, shift = self._when(at_us)
        return self._sums(s, day, shift, _LINES + len(self.lines(facts.game)))

    def _add_hit(self, facts: TableFacts, seen: Seen) -> None:
        assert seen.hit_id is not None
        if seen.hit_source != "table" or seen.hit_kind != "hand" or seen.hit_id in self._hit_ids:
            return
        self._hit_ids[seen.hit_id] = seen.at_us
        self.seen += 1
        hand = None if seen.hand is None else hand_of(seen.hand)
        index = None if hand is None else self.lines(facts.game).get(hand)
        mismatched = 0
        with_cards = 0
        if seen.cards is not None:
            with_cards = 1
            mismatched = 0 if _cards_make(facts.game, seen.cards, hand) else 1
        table_and_more = self._tallies(facts, seen.at_us)
        for sums in table_and_more:
            sums[_CLAIMS] += with_cards
            sums[_MISMATCHED] += mismatched
            if index is not None:
                sums[index] += 1
        if seen.seat is not None and index is not None and seen.seat >= 1:
            for sums in self._seat_sums(facts, seen.at_us, seen.seat):
                sums[index] += 1

    # -- windows ---------------------------------------------------------------------------------

    def window_since(self, window: Window, now_us: int) -> int:
        """When ``window`` starts at ``now_us``: the shift's start, or the first gaming day's."""
        if window.days == 0:
            return self.floor.shift_start(now_us)
        return self.floor.day_start(self.floor.day(now_us) - timedelta(days=window.days - 1))

    def window_sums(self, subject: _Subject, window: Window, now_us: int) -> tuple[int, list[int]]:
        """``(since_us, sums)`` of ``subject`` over ``window`` at ``now_us``. The days before
        today are summed once per day and kept (``_Subject.closed``); a day closed that gains
        an entry later (a link's history read late) forgets them."""
        width = _LINES + len(self.lines(subject.game))
        day, shift = self._when(now_us)
        if window.days == 0:
            return shift, list(subject.shifts.get(shift, [0] * width))
        first = day - timedelta(days=window.days - 1)
        key = (window.days, day)
        closed = subject.closed.get(key)
        if closed is None or len(closed) != width:
            closed = [0] * width
            for d, sums in subject.days.items():
                if first <= d < day:
                    for i, v in enumerate(sums):
                        closed[i] += v
            subject.closed[key] = closed
        today = subject.days.get(day)
        total = closed if today is None else [a + b for a, b in zip(closed, today, strict=True)]
        return self.floor.day_start(first), list(total)

    def daily(self, subject: _Subject, now_us: int) -> list[tuple[date, list[int]]]:
        """The subject's sums of each of the kept gaming days up to ``now_us``'s, oldest first
        (days with nothing are there, as zeros)."""
        today = self.floor.day(now_us)
        width = _LINES + len(self.lines(subject.game))
        days = [today - timedelta(days=n) for n in range(KEPT_DAYS - 1, -1, -1)]
        return [(d, list(subject.days.get(d, [0] * width))) for d in days]


def _moved(
    sums: list[int], before: Mapping[HandCategory, int], after: Mapping[HandCategory, int]
) -> list[int]:
    out = sums[:_LINES] + [0] * len(after)
    for hand, i in after.items():
        j = before.get(hand)
        if j is not None and j < len(sums):
            out[i] = sums[j]
    return out


def _cards_make(game: Game, cards: Sequence[int], hand: HandCategory | None) -> bool:
    """Whether the cards a table reported make the hand it claimed (the game's own judge)."""
    if hand is None:
        return False
    try:
        return rules_of(game).judge(tuple(cards)) is hand
    except InvalidCards:
        return False


def _probabilities(game: Game) -> dict[HandCategory, Fraction]:
    """A game's exact odds of each hand, or none where its par sheet states an assumption
    (Caribbean Draw: the hand after the draw depends on the cards each player keeps; Super
    Sevens: how the third card goes): luck is held only against odds that are exact."""
    rules = rules_of(game)
    if rules.assumption is not None:
        return {}
    counts = rules.count()
    return {h: Fraction(w, counts.total) for h, w in counts.ways.items() if w}


_ODDS: dict[Game, dict[HandCategory, Fraction]] = {}


def odds_of(game: Game) -> dict[HandCategory, Fraction]:
    """The exact probability of each hand of ``game`` per hand dealt (made once per game)."""
    odds = _ODDS.get(game)
    if odds is None:
        odds = _ODDS[game] = _probabilities(game)
    return odds


@dataclass(slots=True)
class Watch:
    """Judges the tallies at each look and says which findings alarm.

    ``false_alarms_per_month``: what an honest floor may raise, all its tests together.
    """

    tallies: Tallies
    false_alarms_per_month: Fraction = DEFAULT_FALSE_ALARMS_PER_MONTH
    fault_rate: Fraction = TOLERATED_FAULT_RATE
    look_us: int = LOOK_US  # how often it is judged: each look is a test of everything

    @property
    def looks_per_month(self) -> int:
        return 30 * DAY_US // self.look_us

    def tests_per_month(self) -> int:
        return self.tests_per_look() * self.looks_per_month

    def tests_per_look(self) -> int:
        """The tests one look makes: every line (both ways) and, for a table, every fault, of
        every subject the floor has or may have, in every window. A subject counts whether
        seen yet or not: every table, each of its seats, a dealer per table, each game."""
        total = 0
        games: set[Game] = set()
        for facts in self.tables():
            lines = len(self._lines_with_odds(facts.game))
            seats = len(_SEATS)
            games.add(facts.game)
            # The table: its lines both ways and its faults; its seats; a dealer.
            total += 2 * lines + len(FAULTS) + seats * 2 * lines + 2 * lines
        for game in games:
            total += 2 * len(self._lines_with_odds(game))
        return total * len(WINDOWS)

    def tables(self) -> Iterable[TableFacts]:
        return self.tallies.tables.values()

    def threshold(self) -> float:
        """The p-value at or below which a finding alarms."""
        return threshold(max(1, self.tests_per_month()), self.false_alarms_per_month)

    def _lines_with_odds(self, game: Game) -> list[HandCategory]:
        odds = odds_of(game)
        return [h for h in self.tallies.lines(game) if h in odds]

    def judge(self, now_us: int, subjects: Iterable[_Subject] | None = None) -> list[Finding]:
        """Every finding of every subject (or of ``subjects``), line and window at
        ``now_us``: each line out of line with its odds either way, each fault above its
        tolerated rate. The tails are taken all at once (scipy's, over arrays)."""
        rows: list[_Row] = []
        for subject in self.tallies.subjects.values() if subjects is None else subjects:
            self._candidates(subject, now_us, rows)
        if not rows:
            return []
        # Imported when first judged: scipy is a second of every process's start (each
        # command of the command line among them), and most never judge.
        import numpy
        from scipy.stats import binom

        observed = numpy.array([r[5] for r in rows], dtype=numpy.int64)
        trials = numpy.array([r[6] for r in rows], dtype=numpy.int64)
        # The exact chances, divided only here: scipy's tails take them in floating point
        # (probabilities, never amounts).
        ways = numpy.array([r[8].numerator for r in rows], dtype=numpy.float64)
        chance = ways / numpy.array([r[8].denominator for r in rows], dtype=numpy.float64)
        many = numpy.array([r[9] is Direction.TOO_MANY for r in rows])
        values = numpy.where(
            many,
            binom.sf(observed - 1, trials, chance),
            binom.cdf(observed, trials, chance),
        )
        return [
            Finding(
                subject.scope,
                subject.subject,
                subject.table_id,
                subject.seat,
                subject.dealer,
                subject.game,
                line,
                label,
                window.name,
                since,
                seen,
                n,
                exposure,
                odds,
                direction,
                float(value),
            )
            for (
                subject,
                window,
                since,
                line,
                label,
                seen,
                n,
                exposure,
                odds,
                direction,
            ), value in zip(rows, values, strict=True)
        ]

    def _candidates(self, subject: _Subject, now_us: int, rows: list[_Row]) -> None:
        tallies = self.tallies
        lines = _line_odds(subject.game, tallies.lines(subject.game))
        many, few = Direction.TOO_MANY, Direction.TOO_FEW
        for window in WINDOWS:
            since, sums = tallies.window_sums(subject, window, now_us)
            low, high = sums[_HANDS_LOW], sums[_HANDS_HIGH]
            for name, label, index, ways, total, p in lines:
                observed = sums[index]
                if observed * total > high * ways:
                    rows.append(
                        (
                            subject,
                            window,
                            since,
                            name,
                            label,
                            observed,
                            max(high, observed),
                            high,
                            p,
                            many,
                        )
                    )
                elif observed * total < low * ways:
                    rows.append((subject, window, since, name, label, observed, low, low, p, few))
            if subject.scope is not Scope.TABLE:
                continue
            rate = self.fault_rate
            for fault in FAULTS:
                observed = sums[fault.counted]
                trials = max(sums[fault.trials], observed)
                if not observed or observed * rate.denominator <= trials * rate.numerator:
                    continue
                rows.append(
                    (
                        subject,
                        window,
                        since,
                        fault.name,
                        fault.label,
                        observed,
                        trials,
                        trials,
                        rate,
                        many,
                    )
                )

    def alarms(self, now_us: int) -> list[Finding]:
        """The findings at or below the threshold, most unlikely first."""
        at = self.threshold()
        found = [f for f in self.judge(now_us) if f.p_value <= at]
        return sorted(found, key=lambda f: f.p_value)


_SEATS: Final = range(1, 8)


# -- what people read ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LineView:
    """One line of one subject over one window: seen, expected, and how unlikely."""

    line: str
    label: str
    window: str
    observed: int
    trials: int
    expected: Fraction
    p_value: float  # of the more unlikely direction; 1.0 when in line
    direction: Direction | None


@dataclass(frozen=True, slots=True)
class DayPoint:
    """One gaming day of a line, summed from the first kept day: the hands bet, the hands of
    the line seen, the expected count and the band outside which a look alarms."""

    day: date
    hands: int
    observed: int
    expected: Fraction
    band_low: int
    band_high: int


def line_views(watch: Watch, subject_key: tuple[Scope, str, Game], now_us: int) -> list[LineView]:
    """Every line and fault of a subject in every window, in line or not."""
    subject = watch.tallies.subjects.get(subject_key)
    if subject is None:
        return []
    found = {(f.line, f.window): f for f in watch.judge(now_us, (subject,))}
    odds = odds_of(subject.game)
    out: list[LineView] = []
    for window in WINDOWS:
        _, sums = watch.tallies.window_sums(subject, window, now_us)
        rows: list[tuple[str, str, int, int, Fraction]] = [
            (h.name, h.label, sums[i], sums[_HANDS_HIGH], sums[_HANDS_HIGH] * odds[h])
            for h, i in watch.tallies.lines(subject.game).items()
            if h in odds
        ]
        if subject.scope is Scope.TABLE:
            rows += [
                (
                    fault.name,
                    fault.label,
                    sums[fault.counted],
                    sums[fault.trials],
                    sums[fault.trials] * watch.fault_rate,
                )
                for fault in FAULTS
            ]
        for line, label, observed, trials, expected in rows:
            f = found.get((line, window.name))
            if f is None:
                out.append(
                    LineView(line, label, window.name, observed, trials, expected, 1.0, None)
                )
            else:
                out.append(LineView(line, label, window.name, *_judged(f)))
    return out


def _judged(f: Finding) -> tuple[int, int, Fraction, float, Direction]:
    return f.observed, f.trials, f.expected, f.p_value, f.direction


def daily_line(
    watch: Watch, subject_key: tuple[Scope, str, Game], hand: HandCategory, now_us: int
) -> list[DayPoint]:
    """A line of a subject day by day over the kept days, summed from the first: what a chart
    of observed against expected with its alarm band draws."""
    subject = watch.tallies.subjects.get(subject_key)
    if subject is None:
        return []
    p = odds_of(subject.game).get(hand)
    index = watch.tallies.lines(subject.game).get(hand)
    if p is None or index is None:
        return []
    at = watch.threshold()
    days = watch.tallies.daily(subject, now_us)
    import numpy
    from scipy.stats import binom

    hands = numpy.cumsum([sums[_HANDS_HIGH] for _, sums in days])
    seen = numpy.cumsum([sums[index] for _, sums in days])
    lows = binom.ppf(at, hands, float(p))
    highs = binom.isf(at, hands, float(p))
    return [
        DayPoint(day, int(n), int(k), int(n) * p, _whole(lo), _whole(hi))
        for (day, _), n, k, lo, hi in zip(days, hands, seen, lows, highs, strict=True)
    ]


def _whole(value: float) -> int:
    """A quantile of no hands (nan) as 0."""
    return 0 if math.isnan(value) else int(value)


@dataclass(frozen=True, slots=True)
class TableRank:
    """A table as the floor at a glance shows it: its most unlikely line in any window."""

    table_id: str
    game: Game
    hands_today: int
    worst: Finding | None


def floor_ranks(watch: Watch, now_us: int) -> list[TableRank]:
    """Every table, the most unlikely luck first (tables in line last, by name)."""
    tallies = watch.tallies
    findings = watch.judge(now_us, [s for s in tallies.subjects.values() if s.scope is Scope.TABLE])
    worst: dict[str, Finding] = {}
    for f in findings:
        assert f.table_id is not None
        if f.table_id not in worst or f.p_value < worst[f.table_id].p_value:
            worst[f.table_id] = f
    out: list[TableRank] = []
    day = next(w for w in WINDOWS if w.days == 1)
    for facts in tallies.tables.values():
        subject = tallies.subjects.get((Scope.TABLE, facts.table_id, facts.game))
        hands = 0 if subject is None else tallies.window_sums(subject, day, now_us)[1][_HANDS_LOW]
        out.append(TableRank(facts.table_id, facts.game, hands, worst.get(facts.table_id)))
    return sorted(out, key=lambda r: (1.0 if r.worst is None else r.worst.p_value, r.table_id))
