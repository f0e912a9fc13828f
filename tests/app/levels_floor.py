"""A link of four levels (one a mystery) and a fixed-pay Let It Ride bonus for the web tests,
opened by the real reducer and held in the runtime's memory (``floor.hold_in_memory``)."""

from __future__ import annotations

from controller.core.games import Game, Paytable, PaytableLine, default_paytable, make_paytable
from controller.core.hands import HandCategory
from controller.core.reducer.levels import AboveLimit, LevelConfig, Mystery, MysteryDraw
from tests.app.floor import WebFloor, hold_in_memory

H = HandCategory

GRAND = LevelConfig(name="Grand", reset_cents=10_000_00, rate_bp=4_000, reserve_bp=1_000)
MAJOR = LevelConfig(
    name="Major",
    reset_cents=1_000_00,
    rate_bp=1_500,
    reserve_bp=500,
    limit_cents=5_000_00,
    above_limit=AboveLimit.NEXT_LEVEL,
)
MINOR = LevelConfig(name="Minor", reset_cents=100_00, rate_bp=800, limit_cents=500_00)
MINI = LevelConfig(
    name="Mini",
    reset_cents=10_00,
    rate_bp=200,
    mystery=Mystery(floor_cents=10_01, ceiling_cents=50_00),
)
FOUR_LEVELS = (GRAND, MAJOR, MINOR, MINI)
TRIGGER = MysteryDraw(37_77, "5e" * 16)


def pool_paytable() -> Paytable:
    return make_paytable(
        Game.CARIBBEAN_STUD,
        (
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000, level=1),
            PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=10_000, level=2),
            PaytableLine(hand=H.FOUR_OF_A_KIND, percent_bp=10_000, level=3),
            PaytableLine(hand=H.FULL_HOUSE, fixed_cents=75_00),
            PaytableLine(hand=H.FLUSH, fixed_cents=50_00),
        ),
    )


async def hold_four_levels(wf: WebFloor, link_id: str = "stud") -> None:
    await hold_in_memory(
        wf,
        link_id,
        game=Game.CARIBBEAN_STUD,
        paytable=pool_paytable(),
        levels=FOUR_LEVELS,
        draws={3: [TRIGGER]},
    )


async def hold_fixed_pay(wf: WebFloor, link_id: str) -> None:
    lir = Game.LET_IT_RIDE_BONUS
    await hold_in_memory(wf, link_id, game=lir, paytable=default_paytable(lir), levels=())


# Five levels whose amounts are as long as a floor shows: the most a screen has to hold.
BIG = 1_234_567_89
FIVE_LEVELS = (
    LevelConfig(name="Grand Progressive", reset_cents=BIG, rate_bp=3_000, reserve_bp=1_000),
    LevelConfig(name="Major", reset_cents=BIG - 1_00, rate_bp=1_500, reserve_bp=500),
    LevelConfig(name="Minor", reset_cents=BIG - 2_00, rate_bp=1_000),
    LevelConfig(name="Mini", reset_cents=BIG - 3_00, rate_bp=800),
    LevelConfig(name="Bonus Jackpot", reset_cents=BIG - 4_00, rate_bp=600),
)


def five_level_paytables() -> tuple[Paytable, Paytable]:
    """Caribbean Stud and Caribbean Draw paying into the five levels, with envy pays."""
    stud = make_paytable(
        Game.CARIBBEAN_STUD,
        (
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000, level=1, envy_cents=500_00),
            PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=10_000, level=2, envy_cents=100_00),
            PaytableLine(hand=H.FOUR_OF_A_KIND, percent_bp=10_000, level=3),
            PaytableLine(hand=H.FULL_HOUSE, percent_bp=10_000, level=4),
            PaytableLine(hand=H.FLUSH, percent_bp=1_050, level=5),
            PaytableLine(hand=H.STRAIGHT, fixed_cents=500_00),
            PaytableLine(hand=H.THREE_OF_A_KIND, fixed_cents=50_00),
        ),
    )
    draw = make_paytable(
        Game.CARIBBEAN_DRAW,
        (
            PaytableLine(hand=H.ROYAL_FLUSH, percent_bp=10_000, level=1, envy_cents=250_00),
            PaytableLine(hand=H.STRAIGHT_FLUSH, percent_bp=10_000, level=2),
            PaytableLine(hand=H.FOUR_OF_A_KIND, percent_bp=10_000, level=5),
            PaytableLine(hand=H.FULL_HOUSE, fixed_cents=1_000_00),
        ),
    )
    return stud, draw


async def hold_five_levels(wf: WebFloor, link_id: str = "stud") -> None:
    """A mixed-game link of five levels: its tables deal Stud, the link pays Draw too."""
    stud, draw = five_level_paytables()
    await hold_in_memory(
        wf,
        link_id,
        game=Game.CARIBBEAN_STUD,
        paytable=stud,
        levels=FIVE_LEVELS,
        paytables={Game.CARIBBEAN_DRAW: draw},
    )
