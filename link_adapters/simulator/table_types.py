"""What a simulated table is and what it reports: its settings, its hits, its rounds.

Also the argument checks the table model shares. The register-map bits it shows (status,
register 2) and obeys (commands, register 102) are ``link_adapters.register_map``'s, named
here too for the table model. Pure values: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, NamedTuple

from controller.core.games import Game
from controller.core.hands import HandCategory
from link_adapters.register_map import MAX_CARD_CODE, seat_bitmap
from link_adapters.simulator.faults import RoundFaults, TableFaults

__all__ = [
    "DEALT_GAMES",
    "MAX_CARDS",
    "MAX_SEATS",
    "PAI_GOW_SEATS",
    "REGISTER_MAPS",
    "U16_MAX",
    "U32",
    "RoundRecord",
    "SeatHand",
    "SimHit",
    "SimTableConfig",
    "all_hits",
    "check_claim",
    "check_int",
    "check_time",
    "least_map",
    "most_seats",
    "split_credits",
    "total_credits",
]

U32: Final = 1 << 32
MAX_SEATS: Final = 7
# The games the simulator deals: every game, each by its own rules. Super Sevens and Pai Gow
# Poker tables report hands map v1 has no code for (and three or seven cards, the joker): they
# speak map v2 only.
DEALT_GAMES: Final = tuple(Game)
# Pai Gow Poker deals seven stacks of seven whatever the players, one of them the dealer's
# (68 IAC 10-9-12(a), (c)): six player seats at most.
PAI_GOW_SEATS: Final = 6
U16_MAX: Final = 0xFFFF
REGISTER_MAPS: Final = (1, 2)  # the reference register maps a simulated table can speak
MAX_CARDS: Final = 7  # the most cards a hit reports under map v2 (five under v1)


def check_int(name: str, value: object, low: int, high: int) -> int:
    if type(value) is int and low <= value <= high:  # the common case, at every poll
        return value
    # bool is an int subclass, but True as a seat count is a caller bug, not a 1.
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r} ({type(value).__name__})")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    return value


def check_time(now_us: object) -> int:
    return check_int("now_us", now_us, 0, (1 << 63) - 1)


# --- parameters and records ----------------------------------------------------------------


def least_map(game: Game) -> int:
    """The lowest register map a table of ``game`` can report its hits in: 1 for the five-card
    games, 2 for Super Sevens and Pai Gow Poker (their hand codes, cards and joker)."""
    return game.rules.register.map_version


def most_seats(game: Game) -> int:
    """The most player seats a table of ``game`` has: six at Pai Gow Poker, else seven."""
    return PAI_GOW_SEATS if game is Game.PAI_GOW_POKER else MAX_SEATS


def _needs_v2(game: Game) -> str:
    fields = game.rules.register
    why = [f"{fields.cards_per_hit} cards"] if fields.cards_per_hit > 5 else []
    if game is Game.SUPER_SEVENS:
        why = ["one to three cards"]
    if fields.joker_code:
        why.append("the joker (card code 52)")
    if fields.new_hand_codes:
        why.append("hand codes map v1 does not have (10-15)")
    return (
        f"a {game.label} table reports {' and '.join(why)}: it speaks register map v2 only; "
        "set register_map = 2 (or leave it out)"
    )


@dataclass(frozen=True, kw_only=True, slots=True)
class SimTableConfig:
    """What one simulated table is: its game, its seats and how its players behave.

    ``seats`` and ``register_map`` left out (None) are the game's: seven seats (six at Pai
    Gow Poker), and the lowest map its hits fit (v1 for the five-card games, v2 for Super
    Sevens and Pai Gow Poker). Once made, both are always ints.
    """

    game: Game
    seats: int | None = None
    bet_probability_pct: int = 60
    seat_change_pct: int = 5
    credits_per_bet: int = 1
    # Where the counters start; the per-seat counters start at ``split_credits`` of it, so
    # that they add up to the all-seats counter from the first reading.
    start_credits: int = 0
    start_rounds: int = 0
    first_hit_seq: int = 1  # the number of the first hit; 0 is a valid hit number
    heartbeat_timeout_us: int = 5_000_000
    report_cards: bool = True
    # The reference register map the table speaks: 1 (shared/DESIGN.md) or 2 (a level and up
    # to seven cards per hit, docs/register-map-v2.md); the controller reads it with the
    # profile reference-v1 or reference-v2.
    register_map: int | None = None
    # What is wrong with the table (faults.py); None: nothing.
    faults: TableFaults | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.game, Game):
            raise ValueError(
                f"game must be a Game, got {self.game!r}; one of "
                f"{', '.join(g.value for g in DEALT_GAMES)}, e.g. Game('caribbean_stud')"
            )
        if self.game not in DEALT_GAMES:
            raise ValueError(
                f"the simulator deals only {', '.join(g.value for g in DEALT_GAMES)}, "
                f"not {self.game.value}"
            )
        if self.seats is None:
            object.__setattr__(self, "seats", most_seats(self.game))
        seats = check_int("seats", self.seats, 1, MAX_SEATS)
        if seats > most_seats(self.game):
            raise ValueError(
                f"seats must be at most {most_seats(self.game)} at a {self.game.label} table "
                "(seven stacks of seven are dealt, one of them the dealer's), "
                f"got {seats}"
            )
        check_int("bet_probability_pct", self.bet_probability_pct, 0, 100)
        check_int("seat_change_pct", self.seat_change_pct, 0, 100)
        # One bet per seat per round; the register map's counters are whole credits.
        check_int("credits_per_bet", self.credits_per_bet, 1, U16_MAX)
        check_int("start_credits", self.start_credits, 0, U32 - 1)
        check_int("start_rounds", self.start_rounds, 0, U32 - 1)
        # Sequence numbers never wrap: the first must be one the table can hand out.
        check_int("first_hit_seq", self.first_hit_seq, 0, U32 - 1)
        check_int("heartbeat_timeout_us", self.heartbeat_timeout_us, 1, (1 << 63) - 1)
        if not isinstance(self.report_cards, bool):
            raise ValueError(f"report_cards must be a bool, got {self.report_cards!r}")
        if self.register_map is None:
            object.__setattr__(self, "register_map", least_map(self.game))
        if isinstance(self.register_map, bool) or self.register_map not in REGISTER_MAPS:
            raise ValueError(f"register_map must be 1 or 2, got {self.register_map!r}")
        if self.register_map < least_map(self.game):
            raise ValueError(_needs_v2(self.game))
        if self.faults is not None:
            if not isinstance(self.faults, TableFaults):
                raise ValueError(f"faults must be a TableFaults or None, got {self.faults!r}")
            self.faults.check_for(self.game, seats)

    @property
    def seat_count(self) -> int:
        """``seats``, as an int (the game's default filled in)."""
        assert self.seats is not None
        return self.seats

    @property
    def map_version(self) -> int:
        """``register_map``, as an int (the game's default filled in)."""
        assert self.register_map is not None
        return self.register_map


def split_credits(credits: int, seats: int) -> tuple[int, ...]:
    """Seven per-seat counters that add up to ``credits``: shared out over the first ``seats``
    seats as evenly as whole credits allow (the lower seats take the remainder); the seats a
    table does not have stay 0. A table that starts its all-seats counter at ``credits`` starts
    its per-seat counters here, so that they agree at every reading."""
    share, extra = divmod(credits, seats)
    return tuple(
        (share + (1 if seat < extra else 0)) if seat < seats else 0 for seat in range(MAX_SEATS)
    )


@dataclass(frozen=True, slots=True)
class SimHit:
    """One entry of the hit FIFO: a betting seat's paying hand, as the table reports it."""

    seq: int
    seat: int
    hand: HandCategory
    round: int
    cards: tuple[int, ...]
    level: int | None = None  # the level of the pool it is for (map v2); None: not said


def check_claim(
    register_map: int, cards: Sequence[int], level: int | None, *, copies: int = 1
) -> tuple[tuple[int, ...], int | None]:
    """The cards and level of a hit a table is made to report, checked against what its map
    can carry: v1 five cards 0-51 and no level; v2 one to seven cards 0-52 (52 the joker of
    68 IAC 10-9-3(b)) and a level 1-65535 or None. A card may appear ``copies`` times (the
    decks of a shoe)."""
    if isinstance(cards, str | bytes) or not isinstance(cards, Sequence):
        raise ValueError(f"cards must be a sequence of card codes, got {cards!r}")
    if register_map == 1:
        if len(cards) != 5:
            raise ValueError(f"a map v1 table reports five cards, not {len(cards)}")
        if level is not None:
            raise ValueError("a map v1 table cannot say the level of a hit: use register_map 2")
    elif not 1 <= len(cards) <= MAX_CARDS:
        raise ValueError(f"a map v2 table reports one to {MAX_CARDS} cards, not {len(cards)}")
    highest = MAX_CARD_CODE[register_map]
    codes = tuple(check_int("card code", card, 0, highest) for card in cards)
    if any(codes.count(code) > copies for code in codes):
        times = "twice" if copies == 1 else f"more than {copies} times"
        raise ValueError(f"cards {codes} hold one card {times}")
    return codes, None if level is None else check_int("level", level, 1, U16_MAX)


class SeatHand(NamedTuple):
    """What a seat was dealt and what its side bet is judged to be.

    ``cards``: the cards the side bet is judged on, in the order received, as a hit reports
    them: the final five of a five-card game, the one to three first cards that decide a Super
    Sevens hand, the seven of a Pai Gow Poker hand (the joker as 52). ``category``: the
    five-card games' poker category (always one), else the game's judge (None: no hand the
    game ranks). ``played``: the whole blackjack hand where the game deals more than the side
    bet counts (Super Sevens), else empty. ``setting``: the high (five-card) and low (two-card)
    hands a Pai Gow Poker player set, else None.
    """

    cards: tuple[int, ...]
    category: HandCategory | None
    played: tuple[int, ...] = ()
    setting: tuple[tuple[int, ...], tuple[int, ...]] | None = None


@dataclass(frozen=True, slots=True)
class RoundRecord:
    """Everything one round did, so tests can recompute counters and hits from records alone.

    ``credits`` is the plain number of credits this round added (not reduced modulo 2**32);
    ``hands`` holds every occupied seat, betting or not. ``refused_seats`` wanted to bet but
    the table refused (progressive disabled or locked out): they added nothing.
    ``dealer_cards``: the dealer's five (Caribbean games), blackjack hand (Super Sevens) or
    seven (Pai Gow Poker); ``community_cards``: the Let It Ride bonus's two. ``faults``:
    what the table's faults did (None at a table without faults).
    """

    round: int
    time_us: int
    bet_seats: tuple[int, ...]
    refused_seats: tuple[int, ...]
    credits: int
    hands: Mapping[int, SeatHand]
    hits: tuple[SimHit, ...]
    dealer_cards: tuple[int, ...] = ()
    community_cards: tuple[int, ...] = ()
    faults: RoundFaults | None = None

    @property
    def bet_bitmap(self) -> int:
        """The seats that really bet (a faulty bet sensor shows ``faults.sensor_bitmap``)."""
        return seat_bitmap(self.bet_seats)


def total_credits(records: Iterable[RoundRecord]) -> int:
    """Credits wagered over ``records``, not reduced modulo 2**32."""
    return sum(record.credits for record in records)


def all_hits(records: Iterable[RoundRecord]) -> list[SimHit]:
    """Every hit of ``records``, in the order the table enqueued them."""
    return [hit for record in records for hit in record.hits]
