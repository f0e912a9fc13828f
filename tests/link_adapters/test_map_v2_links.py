"""A map v2 table next to a v1 table on one line: the simulator serving both over real
pymodbus servers (Modbus TCP on loopback, Modbus RTU on a pseudo-terminal line), read by table
handles with their own profiles, the v2 hit carried to the engine's claim."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.runtime.table_values import to_reading
from link_adapters.errors import DeviceError, ProfileMismatch
from link_adapters.modbus import ModbusLink, SerialParams, TcpParams
from link_adapters.profile_files import load_profile
from link_adapters.reading import HeadHit, HitHand, TableCommand
from link_adapters.simulator.config import SimConfigError, parse_config
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table_types import SimTableConfig
from link_adapters.table import TableHandle
from tests.serial_line import pty_line

STUD = Game.CARIBBEAN_STUD
GW = "stud"
V1, V2 = load_profile("reference-v1"), load_profile("reference-v2")
SEVEN_WITH_JOKER = (51, 47, 43, 39, 52, 0, 5)  # A K Q J of spades, the joker, 2c, 3d
ROYAL = (51, 47, 43, 39, 35)
PLAYING = TableCommand(disable_progressive=False)
SLOW = 1e-4  # rounds per second: the schedule deals nothing during a test


def mixed_gateway(**where: Any) -> GatewaySpec:
    """Units 1 and 3 speak map v1, unit 2 map v2, all behind one gateway (one line)."""
    v1 = SimTableConfig(game=STUD, seat_change_pct=0)
    v2 = SimTableConfig(game=STUD, seat_change_pct=0, register_map=2)
    return GatewaySpec(game=STUD, tables=3, name=GW, table=v1, unit_tables={2: v2}, **where)


@contextlib.asynccontextmanager
async def serving(floor: SimFloor) -> AsyncIterator[SimFloor]:
    await floor.start()
    try:
        yield floor
    finally:
        await floor.stop()


@contextlib.asynccontextmanager
async def linked(params: TcpParams | SerialParams) -> AsyncIterator[ModbusLink]:
    link = ModbusLink(params, name="pit 1")
    try:
        yield link
    finally:
        await link.close()


async def v1_and_v2_side_by_side(floor: SimFloor, link: ModbusLink) -> None:
    v1 = TableHandle(link, 1, V1, name="T1")
    v2 = TableHandle(link, 2, V2, name="T2")
    # One request per poll each (function 23), the controller's way; the heartbeat opens bets.
    for handle in (v1, v2):
        regs = await handle.exchange(command=PLAYING, meter_cents=12_345, heartbeat=1)
        assert regs.head is None and not regs.progressive_disabled  # written, then read
    before = [(await h.read()).version for h in (v1, v2)]
    assert before == [1, 2]
    # A stud table made to lie: seven cards with the joker are no stud hand, but map v2
    # carries them; the controller's judge is what refuses them.
    floor.force_hit(GW, 2, 4, HandCategory.ROYAL_FLUSH, SEVEN_WITH_JOKER, level=3, lying=True)
    floor.force_hit(GW, 1, 5, HandCategory.ROYAL_FLUSH, ROYAL)
    dealt = {unit: floor.play_round_now(GW, unit) for unit in (1, 2)}
    forced = {unit: next(h for h in r.hits if h.seat in (4, 5)) for unit, r in dealt.items()}

    for unit, handle in ((1, v1), (2, v2)):
        table = floor.tables[(GW, unit)]
        # Pop what the round dealt ahead of the forced hit, as the controller would.
        while (regs := await handle.exchange(heartbeat=2 + unit)).head is not None:
            if regs.head.seq == forced[unit].seq:
                break
            await handle.acknowledge(regs.head.seq)
        assert regs.head is not None and regs.head.seq == forced[unit].seq
        assert regs.credits == table.credits and regs.per_seat_credits == table.per_seat_credits
        claim = to_reading(regs, table_id=f"T{unit}", poll_seq=9, at_us=1).head_hit
        assert claim is not None and claim.hand is HandCategory.ROYAL_FLUSH
        if unit == 2:
            assert (regs.head.cards, regs.head.level) == (SEVEN_WITH_JOKER, 3)
            assert (claim.cards, claim.level) == (SEVEN_WITH_JOKER, 3)
        else:  # the v1 table beside it: five cards, no level, as ever
            assert regs.head == HeadHit(
                forced[1].seq, 5, HitHand.ROYAL_FLUSH, forced[1].round, ROYAL
            )
            assert (claim.cards, claim.level) == (ROYAL, None)
        await handle.acknowledge(regs.head.seq)
        assert forced[unit] not in table.hit_fifo
        assert table.meter_display_cents == 12_345


async def test_v1_and_v2_tables_share_a_tcp_line() -> None:
    floor = SimFloor([mixed_gateway(port=0)], rounds_per_second=SLOW, seed=4)
    async with serving(floor), linked(TcpParams(host="127.0.0.1", port=floor.ports[GW])) as link:
        await v1_and_v2_side_by_side(floor, link)


async def test_v1_and_v2_tables_share_a_serial_line() -> None:
    async with pty_line() as (server_end, client_end):
        floor = SimFloor(
            [mixed_gateway(serial_port=server_end, baudrate=115_200)],
            rounds_per_second=SLOW,
            seed=4,
        )
        async with (
            serving(floor),
            linked(SerialParams(port=client_end, baudrate=115_200, timeout_s=0.5)) as link,
        ):
            await v1_and_v2_side_by_side(floor, link)


@pytest.mark.parametrize(
    ("unit", "profile", "error", "message"),
    [
        # A v2 profile asks a v1 table for registers it does not have: exception 2.
        (1, V2, DeviceError, "table T1: .* read of 38 registers at 0: illegal data address"),
        # A v1 profile reading a v2 table sees version 2: refused before anything else.
        (2, V1, ProfileMismatch, "table T2: address 1 reads 2, expected profile version 1"),
    ],
)
async def test_a_table_read_with_the_other_map_is_refused(
    unit: int, profile: object, error: type[Exception], message: str
) -> None:
    floor = SimFloor([mixed_gateway(port=0)], rounds_per_second=SLOW, seed=4)
    async with serving(floor), linked(TcpParams(host="127.0.0.1", port=floor.ports[GW])) as link:
        handle = TableHandle(link, unit, profile, name=f"T{unit}")  # type: ignore[arg-type]
        with pytest.raises(error, match=message):
            await handle.read()


def test_unit_tables_are_checked() -> None:
    v2 = SimTableConfig(game=STUD, register_map=2)
    make: Callable[..., GatewaySpec] = GatewaySpec
    with pytest.raises(ValueError, match="unit_tables names unit 4; its unit ids are 1-3"):
        make(game=STUD, tables=3, port=0, unit_tables={4: v2})
    with pytest.raises(ValueError, match="unit_tables\\[1\\] must be a SimTableConfig"):
        make(game=STUD, tables=3, port=0, unit_tables={1: "v2"})
    draw = SimTableConfig(game=Game.CARIBBEAN_DRAW)
    with pytest.raises(ValueError, match="its tables are caribbean_draw tables"):
        make(game=STUD, tables=3, port=0, unit_tables={1: draw})
    spec = make(game=STUD, tables=3, port=0, unit_tables={2: v2})
    assert [spec.table_config(u).register_map for u in spec.units] == [1, 2, 1]


def test_a_simulate_config_sets_a_gateway_to_map_v2() -> None:
    config = parse_config({"gateway": [{"game": "caribbean_stud", "port": 0, "register_map": 2}]})
    assert config.gateways[0].table_config(1).register_map == 2
    config = parse_config({"gateway": [{"game": "caribbean_stud", "port": 0}]})
    assert config.gateways[0].table_config(1).register_map == 1
    with pytest.raises(SimConfigError, match="key 'register_map': must be between 1 and 2, got 3"):
        parse_config({"gateway": [{"game": "caribbean_stud", "register_map": 3}]})
