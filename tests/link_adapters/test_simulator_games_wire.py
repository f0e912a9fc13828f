"""Super Sevens and Pai Gow Poker tables read over real pymodbus (Modbus TCP on loopback and
Modbus RTU on a pseudo-terminal line) with the reference-v2 profile, as the controller reads
them: every hit's cards judged by the game's module to be the hand reported, at the exact
odds; the bet bitmap and the per-seat counters consistent at every read."""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator
from fractions import Fraction

from controller.core.games import Game
from controller.core.hands import JOKER, HandCategory
from link_adapters.modbus import ModbusLink, SerialParams, TcpParams
from link_adapters.profile_files import load_profile
from link_adapters.reading import TableCommand, TableRegisters
from link_adapters.simulator.clock import VirtualClock
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import U32, RoundRecord, SimTableConfig
from link_adapters.table import TableHandle
from tests.serial_line import pty_line

H = HandCategory
V2 = load_profile("reference-v2")
PLAYING = TableCommand(disable_progressive=False)
# Chi-square with 4 degrees of freedom: exceeded by chance once in a thousand runs.
CHI2_4_P001 = 18.467


@contextlib.asynccontextmanager
async def served(floor: SimFloor) -> AsyncIterator[SimFloor]:
    await floor.start()
    try:
        yield floor
    finally:
        await floor.stop()


@contextlib.asynccontextmanager
async def handle(params: TcpParams | SerialParams, unit: int = 1) -> AsyncIterator[TableHandle]:
    link = ModbusLink(params, name="pit")
    try:
        yield TableHandle(link, unit, V2, name="T1")
    finally:
        await link.close()


def one_table(game: Game, clock: VirtualClock, seed: int, **config: object) -> SimFloor:
    table = SimTableConfig(game=game, **config)  # type: ignore[arg-type]
    return SimFloor(
        [GatewaySpec(game=game, tables=1, port=0, name="gw", table=table)],
        seed=seed,
        now_us=clock.now_us,
        autodeal=False,
    )


def consistent(regs: TableRegisters, table: SimTable, record: RoundRecord | None) -> None:
    """What every read must show: counters that add up, and the bitmap of the round."""
    assert regs.per_seat_credits is not None
    assert sum(regs.per_seat_credits) % U32 == regs.credits == table.credits
    if record is not None:
        assert regs.rounds == record.round
        assert regs.bet_seats == tuple(sorted(record.bet_seats))


async def drain(
    t: TableHandle, table: SimTable, record: RoundRecord, game: Game
) -> list[tuple[HandCategory, tuple[int, ...]]]:
    """Read and acknowledge every pending hit of the round just dealt, as the controller
    does, checking each read; the hits as (hand, cards) read off the wire."""
    judge = game.rules.judge
    seen = []
    regs = await t.read()
    consistent(regs, table, record)
    while regs.head is not None:
        head = regs.head
        assert head.hand is not None and head.cards is not None
        hand = H[head.hand.name]
        assert judge(head.cards) is hand  # the module judges the cards as reported
        # The hit belongs to the round the counter shows: its seat bet, and so did every
        # seat the bitmap names (envy is paid from it).
        assert head.round == regs.rounds and head.seat in regs.bet_seats
        seen.append((hand, head.cards))
        await t.acknowledge(head.seq)
        regs = await t.read()
        consistent(regs, table, record)
    return seen


async def test_super_sevens_hits_over_modbus_follow_the_exact_odds() -> None:
    clock = VirtualClock()
    floor = one_table(
        Game.SUPER_SEVENS, clock, seed=2026, bet_probability_pct=85, seat_change_pct=0
    )
    rounds = 6_000
    async with served(floor), handle(TcpParams(host="127.0.0.1", port=floor.ports["gw"])) as t:
        table = floor.tables[("gw", 1)]
        first = await t.exchange(command=PLAYING, heartbeat=1)
        consistent(first, table, None)
        hits: Counter[HandCategory] = Counter()
        for _ in range(rounds):
            record = floor.play_round_now("gw", 1)
            for hand, cards in await drain(t, table, record, Game.SUPER_SEVENS):
                hits[hand] += 1
                assert len(cards) == {H.SEVEN: 2}.get(hand, 3)
        bets = (await t.read()).credits - first.credits  # one credit a bet

    # Exact odds (68 IAC 10-12-3, six decks), pooled so every cell expects five or more.
    odds = Game.SUPER_SEVENS.rules.count()
    three = H.THREE_SEVENS, H.THREE_SUITED_SEVENS
    cells = {
        "no seven first": (bets - sum(hits.values()), Fraction(odds.no_hand, odds.total)),
        "seven": (hits[H.SEVEN], odds.probability(H.SEVEN)),
        "two sevens": (hits[H.TWO_SEVENS], odds.probability(H.TWO_SEVENS)),
        "two suited": (hits[H.TWO_SUITED_SEVENS], odds.probability(H.TWO_SUITED_SEVENS)),
        "three": (sum(hits[h] for h in three), sum(odds.probability(h) for h in three)),
    }
    assert bets > 30_000
    expected = {name: p * bets for name, (_, p) in cells.items()}
    assert min(expected.values()) > 5
    chi2 = sum((n - expected[name]) ** 2 / expected[name] for name, (n, _) in cells.items())
    assert chi2 < CHI2_4_P001, (chi2, {name: n for name, (n, _) in cells.items()}, expected)


async def test_pai_gow_reports_seven_card_hits_with_the_joker() -> None:
    clock = VirtualClock()
    # Counters start near the wrap; players come and go.
    floor = one_table(Game.PAI_GOW_POKER, clock, seed=53, start_credits=U32 - 200)
    async with served(floor), handle(TcpParams(host="127.0.0.1", port=floor.ports["gw"])) as t:
        table = floor.tables[("gw", 1)]
        consistent(await t.exchange(command=PLAYING, heartbeat=1), table, None)
        seen: list[tuple[HandCategory, tuple[int, ...]]] = []
        for _ in range(300):
            record = floor.play_round_now("gw", 1)
            seen += await drain(t, table, record, Game.PAI_GOW_POKER)
        assert table.credits < U32 - 200  # the counters wrapped, still adding up
    assert len(seen) > 50 and all(len(cards) == 7 for _, cards in seen)
    with_joker = [hand for hand, cards in seen if JOKER in cards]
    assert len(with_joker) > 5
    assert {hand for hand, _ in seen} >= {H.STRAIGHT, H.FLUSH, H.THREE_OF_A_KIND}


async def test_forced_super_sevens_hits_over_a_serial_line() -> None:
    clock = VirtualClock()
    async with pty_line() as (server_end, client_end):
        floor = SimFloor(
            [
                GatewaySpec(game=Game.SUPER_SEVENS, tables=1, serial_port=server_end, name="s7"),
            ],
            seed=4,
            now_us=clock.now_us,
            autodeal=False,
        )
        params = SerialParams(port=client_end, baudrate=19200, timeout_s=0.5)
        async with served(floor), handle(params) as t:
            table = floor.tables[("s7", 1)]
            consistent(await t.exchange(command=PLAYING, heartbeat=1), table, None)
            floor.force_hand("s7", 1, 3, H.THREE_SUITED_SEVENS)
            floor.force_hit("s7", 1, 5, H.TWO_SEVENS, (23, 22, 4), level=1)
            record = floor.play_round_now("s7", 1)
            judge = Game.SUPER_SEVENS.rules.judge
            regs = await t.read()
            consistent(regs, table, record)
            read = []
            while regs.head is not None:
                assert regs.head.cards is not None and regs.head.hand is not None
                assert judge(regs.head.cards) is H[regs.head.hand.name]
                read.append((regs.head.seat, regs.head.cards, regs.head.level))
                await t.acknowledge(regs.head.seq)
                regs = await t.read()
                consistent(regs, table, record)
    assert (3, (23, 23, 23), None) in read and (5, (23, 22, 4), 1) in read
