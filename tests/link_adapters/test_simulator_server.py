"""The table simulator as a controller sees it: real pymodbus clients against real servers.

Every test talks Modbus over a real socket or a real pseudo-terminal line; the floor's state
is checked against the pure table model it serves (``SimTable``) and its round records.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import signal
import sys
import textwrap
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from pymodbus.client import AsyncModbusSerialClient, AsyncModbusTcpClient
from pymodbus.exceptions import ModbusIOException
from pymodbus.pdu import ModbusPDU

from app.cli import main
from controller.core.games import Game
from controller.core.hands import HandCategory
from link_adapters.register_map import (
    COMMAND_DISABLE_PROGRESSIVE,
    COMMAND_HIT_PENDING,
    STATUS_PROGRESSIVE_DISABLED,
    hand_code_named,
)
from link_adapters.simulator.clock import VirtualClock
from link_adapters.simulator.config import SimConfigError, load_config, parse_config
from link_adapters.simulator.gateway import GatewaySpec, SimulatorError
from link_adapters.simulator.registers import (
    ADDR_ACK,
    ADDR_COMMAND,
    ADDR_CREDITS,
    ADDR_HEAD_CARDS,
    ADDR_HEAD_HAND,
    ADDR_HEAD_ROUND,
    ADDR_HEAD_SEAT,
    ADDR_HEAD_SEQ,
    ADDR_HEARTBEAT,
    ADDR_METER,
    ADDR_PENDING_HITS,
    ADDR_ROUNDS,
    ADDR_SEAT_CREDITS,
    ADDR_STATUS,
    CARD_NOT_REPORTED,
    PROFILE_ID,
    PROFILE_VERSION,
    READ_COUNT,
    from_pair,
    u32_pair,
)
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table import SimTable
from link_adapters.simulator.table_types import U32, SimTableConfig, split_credits
from tests.conftest import process_env
from tests.serial_line import pty_line

STUD, DRAW, LIR = Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW, Game.LET_IT_RIDE_BONUS
HEARTBEAT_TIMEOUT_US = 300_000
SLOW = 1e-4  # rounds per second: the schedule deals nothing during a test


def spec(game: Game, *, tables: int = 3, **table: Any) -> GatewaySpec:
    config = SimTableConfig(game=game, heartbeat_timeout_us=HEARTBEAT_TIMEOUT_US, **table)
    return GatewaySpec(game=game, tables=tables, port=0, table=config)


@contextlib.asynccontextmanager
async def serving(floor: SimFloor) -> AsyncIterator[SimFloor]:
    await floor.start()
    try:
        yield floor
    finally:
        await floor.stop()


@contextlib.asynccontextmanager
async def tcp(port: int, answer_within: float = 1.0) -> AsyncIterator[AsyncModbusTcpClient]:
    client = AsyncModbusTcpClient("127.0.0.1", port=port, timeout=answer_within, retries=0)
    try:
        assert await client.connect(), f"cannot connect to 127.0.0.1:{port}"
        yield client
    finally:
        client.close()


class Unit:
    """One table controller as the polling side addresses it."""

    def __init__(self, client: AsyncModbusTcpClient | AsyncModbusSerialClient, unit: int):
        self.client = client
        self.unit = unit
        self.beat = 0

    async def block(self) -> list[int]:
        response = await self.client.read_holding_registers(
            0, count=READ_COUNT, device_id=self.unit
        )
        assert not response.isError(), response
        assert len(response.registers) == READ_COUNT
        return list(response.registers)

    async def write(self, address: int, values: list[int]) -> ModbusPDU:
        return await self.client.write_registers(address, values, device_id=self.unit)

    async def heartbeat(self) -> None:
        self.beat = (self.beat + 1) & 0xFFFF
        response = await self.client.write_register(ADDR_HEARTBEAT, self.beat, device_id=self.unit)
        assert not response.isError(), response


def u32(block: list[int], address: int) -> int:
    return from_pair(block[address], block[address + 1])


def seat_credits(block: list[int]) -> list[int]:
    return [u32(block, ADDR_SEAT_CREDITS + 2 * i) for i in range(7)]


def exception_code(response: ModbusPDU) -> int:
    assert response.isError(), f"expected an exception response, got {response}"
    return int(response.exception_code)


# --------------------------------------------------------------------------------- TCP


async def test_every_unit_of_three_gateways_serves_its_live_block() -> None:
    floor = SimFloor([spec(STUD), spec(DRAW), spec(LIR)], rounds_per_second=40, seed=11)
    async with serving(floor):
        ports = floor.ports
        assert sorted(ports) == ["caribbean_draw", "caribbean_stud", "let_it_ride_bonus"]
        assert len(set(ports.values())) == 3 and 0 not in ports.values()
        for name, port in ports.items():
            async with tcp(port) as client:
                units = [Unit(client, n) for n in (1, 2, 3)]
                first = {}
                for u in units:
                    block = await u.block()
                    assert block[:2] == [PROFILE_ID, PROFILE_VERSION]
                    first[u.unit] = block
                    await u.heartbeat()
                deadline = time.monotonic() + 5
                moved: set[int] = set()
                while moved != {1, 2, 3}:
                    assert time.monotonic() < deadline, f"{name}: counters did not move"
                    await asyncio.sleep(0.05)
                    for u in units:
                        await u.heartbeat()
                        block = await u.block()
                        # One read is one moment: the seats always add up to the total.
                        assert sum(seat_credits(block)) % U32 == u32(block, ADDR_CREDITS)
                        assert u32(block, ADDR_ROUNDS) >= u32(first[u.unit], ADDR_ROUNDS)
                        if u32(block, ADDR_CREDITS) > u32(first[u.unit], ADDR_CREDITS):
                            moved.add(u.unit)
                for u in units:
                    block = await u.block()
                    table = floor.tables[(name, u.unit)]
                    # The dealer goes on between the read and this look at the table (40 rounds
                    # a second): the block is the table's state of a moment ago.
                    assert (
                        0 < u32(block, ADDR_ROUNDS) <= table.rounds <= u32(block, ADDR_ROUNDS) + 8
                    )
                    assert 0 < u32(block, ADDR_CREDITS) <= table.credits


async def test_royal_flush_is_reported_in_the_fifo_and_popped_by_its_ack() -> None:
    floor = SimFloor([spec(STUD), spec(DRAW, report_cards=False)], rounds_per_second=SLOW, seed=3)
    async with serving(floor), tcp(floor.ports["caribbean_stud"]) as client:
        u = Unit(client, 2)
        await u.heartbeat()
        table = floor.tables[("caribbean_stud", 2)]
        floor.force_hand("caribbean_stud", 2, 1, HandCategory.ROYAL_FLUSH)
        floor.force_hand("caribbean_stud", 2, 4, HandCategory.STRAIGHT_FLUSH)
        record = floor.play_round_now("caribbean_stud", 2)
        assert {(h.seat, h.hand) for h in record.hits} >= {
            (1, HandCategory.ROYAL_FLUSH),
            (4, HandCategory.STRAIGHT_FLUSH),
        }
        royal = record.hits[0]  # seat 1 is settled first
        block = await u.block()
        assert block[ADDR_PENDING_HITS] == len(record.hits)
        assert u32(block, ADDR_HEAD_SEQ) == royal.seq
        assert block[ADDR_HEAD_SEAT] == 1
        assert block[ADDR_HEAD_HAND] == 1
        assert u32(block, ADDR_HEAD_ROUND) == record.round == u32(block, ADDR_ROUNDS)
        assert tuple(block[ADDR_HEAD_CARDS : ADDR_HEAD_CARDS + 5]) == royal.cards
        assert sorted(royal.cards) == [35, 39, 43, 47, 51]  # ten to ace of spades

        # A wrong sequence number pops nothing; the right one pops the head.
        assert not (await u.write(ADDR_ACK, list(u32_pair(royal.seq + 99)))).isError()
        assert u32(await u.block(), ADDR_HEAD_SEQ) == royal.seq
        for expected in record.hits:
            block = await u.block()
            assert u32(block, ADDR_HEAD_SEQ) == expected.seq
            assert block[ADDR_HEAD_SEAT] == expected.seat
            assert block[ADDR_HEAD_HAND] == hand_code_named(expected.hand.name)
            assert not (await u.write(ADDR_ACK, list(u32_pair(expected.seq)))).isError()
        block = await u.block()
        assert block[ADDR_PENDING_HITS] == 0 and table.head_hit is None
        assert block[ADDR_HEAD_SEQ : ADDR_HEAD_CARDS + 5] == [0] * 11

        # Half of a 32-bit acknowledge is refused whole (illegal data value).
        assert exception_code(await client.write_register(ADDR_ACK, 0, device_id=2)) == 3

    # A table that does not report cards shows 0xFFFF in their place.
    floor = SimFloor([spec(DRAW, report_cards=False)], rounds_per_second=SLOW, seed=4)
    async with serving(floor), tcp(floor.ports["caribbean_draw"]) as client:
        u = Unit(client, 1)
        await u.heartbeat()
        floor.force_hand("caribbean_draw", 1, 2, HandCategory.FOUR_OF_A_KIND)
        floor.play_round_now("caribbean_draw", 1)
        block = await u.block()
        assert block[ADDR_HEAD_HAND] >= 1 and block[ADDR_PENDING_HITS] >= 1
        assert block[ADDR_HEAD_CARDS : ADDR_HEAD_CARDS + 5] == [CARD_NOT_REPORTED] * 5


async def test_heartbeat_timeout_disables_the_progressive_over_the_wire() -> None:
    floor = SimFloor([spec(LIR, tables=1)], rounds_per_second=SLOW, seed=5)
    name = "let_it_ride_bonus"
    async with serving(floor), tcp(floor.ports[name]) as client:
        u = Unit(client, 1)
        # Never spoken to: disabled, and a seat that wants to bet is refused.
        assert (await u.block())[ADDR_STATUS] & STATUS_PROGRESSIVE_DISABLED
        floor.force_hand(name, 1, 1, HandCategory.FLUSH)
        refused = floor.play_round_now(name, 1)
        assert refused.credits == 0 and 1 in refused.refused_seats

        await u.heartbeat()
        assert not (await u.block())[ADDR_STATUS] & STATUS_PROGRESSIVE_DISABLED
        floor.force_hand(name, 1, 1, HandCategory.FLUSH)
        taken = floor.play_round_now(name, 1)
        assert taken.credits >= 1 and 1 in taken.bet_seats

        await asyncio.sleep(HEARTBEAT_TIMEOUT_US / 1e6 + 0.15)  # the controller goes quiet
        block = await u.block()
        assert block[ADDR_STATUS] & STATUS_PROGRESSIVE_DISABLED
        credits = u32(block, ADDR_CREDITS)
        floor.force_hand(name, 1, 1, HandCategory.FLUSH)
        refused = floor.play_round_now(name, 1)
        assert refused.credits == 0 and refused.bet_seats == ()
        assert u32(await u.block(), ADDR_CREDITS) == credits

        await u.heartbeat()  # back: bets are taken again
        assert not (await u.block())[ADDR_STATUS] & STATUS_PROGRESSIVE_DISABLED
        floor.force_hand(name, 1, 1, HandCategory.FLUSH)
        assert floor.play_round_now(name, 1).credits >= 1


async def test_command_bits_block_bets_and_the_meter_write_is_stored() -> None:
    floor = SimFloor([spec(STUD, tables=2)], rounds_per_second=SLOW, seed=6)
    name = "caribbean_stud"
    async with serving(floor), tcp(floor.ports[name]) as client:
        u = Unit(client, 2)
        table = floor.tables[(name, 2)]
        await u.heartbeat()
        # Bit1 (hit pending) is an indicator: the map gives bit0 alone the power to disable.
        assert not (await u.write(ADDR_COMMAND, [COMMAND_HIT_PENDING])).isError()
        assert table.command_bits == COMMAND_HIT_PENDING
        assert not (await u.block())[ADDR_STATUS] & STATUS_PROGRESSIVE_DISABLED
        floor.force_hand(name, 2, 3, HandCategory.FLUSH)
        assert floor.play_round_now(name, 2).credits >= 1

        command = COMMAND_DISABLE_PROGRESSIVE | COMMAND_HIT_PENDING
        assert not (await u.write(ADDR_COMMAND, [command])).isError()
        assert (await u.block())[ADDR_STATUS] & STATUS_PROGRESSIVE_DISABLED
        floor.force_hand(name, 2, 3, HandCategory.FLUSH)
        assert floor.play_round_now(name, 2).credits == 0

        assert not (await u.write(ADDR_COMMAND, [0])).isError()
        assert not (await u.block())[ADDR_STATUS] & STATUS_PROGRESSIVE_DISABLED
        floor.force_hand(name, 2, 3, HandCategory.FLUSH)
        assert floor.play_round_now(name, 2).credits >= 1

        assert not (await u.write(ADDR_METER, list(u32_pair(1_234_567_89)))).isError()
        assert table.meter_display_cents == 1_234_567_89
        # Everything the controller writes, in one request, lands in address order.
        beat = u.beat + 1
        response = await u.write(ADDR_ACK, [0, 0, 0, *u32_pair(U32 - 1), beat])
        assert not response.isError(), response
        assert table.meter_display_cents == U32 - 1 and table.heartbeat_value == beat
        assert floor.tables[(name, 1)].meter_display_cents == 0  # the other unit is untouched


async def test_addresses_outside_the_map_get_exception_responses() -> None:
    floor = SimFloor([spec(STUD, tables=2)], rounds_per_second=SLOW, seed=7)
    async with serving(floor), tcp(floor.ports["caribbean_stud"]) as client:
        illegal_address, illegal_function = 2, 1
        for address, count in ((34, 1), (0, 35), (33, 2), (50, 4), (99, 1), (100, 6), (106, 1)):
            response = await client.read_holding_registers(address, count=count, device_id=1)
            assert exception_code(response) == illegal_address, (address, count)
        for address in (0, 2, 33, 40, 99, 106, 500):
            response = await client.write_register(address, 1, device_id=1)
            assert exception_code(response) == illegal_address, address
        response = await client.write_registers(104, [1, 2, 3], device_id=1)  # runs past 105
        assert exception_code(response) == illegal_address
        assert exception_code(await client.read_input_registers(0, count=2, device_id=1)) == (
            illegal_function
        )
        assert exception_code(await client.read_coils(0, count=8, device_id=1)) == (
            illegal_function
        )
        # A unit id the gateway does not have: "gateway target device failed to respond".
        response = await client.read_holding_registers(0, count=READ_COUNT, device_id=9)
        assert exception_code(response) == 0x0B
        # After all that, the units still answer.
        assert (await Unit(client, 2).block())[0] == PROFILE_ID


async def test_a_silent_unit_times_out_while_its_neighbours_answer() -> None:
    floor = SimFloor([spec(DRAW, tables=3)], rounds_per_second=SLOW, seed=8)
    name = "caribbean_draw"
    async with serving(floor), tcp(floor.ports[name], answer_within=0.3) as client:
        floor.set_silent(name, 2, True)
        with pytest.raises(ModbusIOException):
            await client.read_holding_registers(0, count=READ_COUNT, device_id=2)
        with pytest.raises(ModbusIOException):  # writes are not taken either
            await client.write_register(ADDR_HEARTBEAT, 5, device_id=2)
        assert floor.tables[(name, 2)].heartbeat_value is None
        for unit in (1, 3):
            assert (await Unit(client, unit).block())[0] == PROFILE_ID
        floor.set_silent(name, 2, False)
        assert (await Unit(client, 2).block())[0] == PROFILE_ID


async def test_a_gateway_switched_off_and_on_serves_again_where_it_did() -> None:
    floor = SimFloor([spec(DRAW, tables=2)], rounds_per_second=SLOW, seed=8)
    name = "caribbean_draw"
    async with serving(floor):
        port = floor.ports[name]
        async with tcp(port, answer_within=0.3) as client:
            assert (await Unit(client, 1).block())[0] == PROFILE_ID
            await floor.close_gateway(name)
            await floor.close_gateway(name)  # idempotent
            with pytest.raises(ModbusIOException):  # the connection was dropped
                await client.read_holding_registers(0, count=READ_COUNT, device_id=1)
        refused = AsyncModbusTcpClient("127.0.0.1", port=port, timeout=0.3, retries=0)
        try:
            assert not await refused.connect()
        finally:
            refused.close()
        await floor.open_gateway(name)
        assert floor.ports[name] == port
        async with tcp(port) as client:
            assert (await Unit(client, 2).block())[0] == PROFILE_ID
        with pytest.raises(KeyError, match="no gateway 'baccarat'"):
            await floor.close_gateway("baccarat")


async def test_records_add_up_to_the_counters_read_over_modbus_across_the_wrap() -> None:
    clock = [1_767_225_600_000_000]  # the floor deals by this clock only

    def now() -> int:
        return clock[0]

    start = U32 - 60
    floor = SimFloor(
        [spec(STUD, tables=2, start_credits=start, bet_probability_pct=90)],
        rounds_per_second=25,
        seed=9,
        now_us=now,
    )
    name = "caribbean_stud"
    async with serving(floor), tcp(floor.ports[name]) as client:
        units = [Unit(client, 1), Unit(client, 2)]
        for _ in range(60):  # 60 x 50 ms of table time: about 75 rounds a table
            for u in units:
                await u.heartbeat()
            clock[0] += 50_000
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)  # the clock stands still: the dealer catches up and waits
        records = floor.records()
        for u in units:
            block = await u.block()
            dealt = records[(name, u.unit)]
            total = sum(r.credits for r in dealt)
            assert total > 60, "the counter should have wrapped"
            assert u32(block, ADDR_CREDITS) == (start + total) % U32 < start
            assert u32(block, ADDR_ROUNDS) == len(dealt) > 40
            # The per-seat counters start at the start credits shared out over the seats, and
            # add up to the all-seats counter at every reading.
            per_seat = list(split_credits(start, 7))
            for record in dealt:
                for seat in record.bet_seats:
                    per_seat[seat - 1] += 1
            assert seat_credits(block) == [credits % U32 for credits in per_seat]
            assert sum(seat_credits(block)) % U32 == u32(block, ADDR_CREDITS)
            # The table's own schedule: rounds strictly later, about 40 ms apart on average.
            times = [r.time_us for r in dealt]
            assert times == sorted(times) and len(set(times)) == len(times)
        assert floor.records() == records  # the clock stood still: nothing more was dealt


async def test_the_same_seed_deals_the_same_rounds_on_the_same_clock() -> None:
    dealt = []
    for _ in range(2):
        clock = [1_000_000_000]

        def now(clock: list[int] = clock) -> int:
            return clock[0]

        floor = SimFloor(
            [spec(STUD, tables=2), spec(LIR, tables=1)],
            rounds_per_second=100,
            seed=42,
            now_us=now,
        )
        async with serving(floor):
            for step in range(1, 21):  # 2 s of table time in 100 ms steps
                for table in floor.tables.values():
                    table.heartbeat(step, clock[0])
                clock[0] += 100_000
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.2)
        dealt.append(
            {
                key: [(r.round, r.time_us, r.bet_seats, r.hands) for r in rounds]
                for key, rounds in floor.records().items()
            }
        )
    assert dealt[0] == dealt[1]
    for rounds in dealt[0].values():
        assert 150 < len(rounds) < 250
        assert sum(len(r[2]) for r in rounds) > 100


def _stepped(seed: int, clock: VirtualClock) -> SimFloor:
    return SimFloor(
        [spec(STUD, tables=2), spec(LIR, tables=1)],
        rounds_per_second=2,
        seed=seed,
        now_us=clock.now_us,
        autodeal=False,
    )


def test_a_stepped_floor_deals_exactly_what_its_clock_reaches() -> None:
    clock = VirtualClock()
    floor = _stepped(42, clock)
    for table in floor.tables.values():
        table.heartbeat(1, clock.now_us())
    assert floor.deal_due() == []  # the schedule starts now: nothing is due yet
    dealt = []
    for _ in range(8):
        clock.advance(0.25)
        step = floor.deal_due()
        assert all(d.record.time_us <= clock.now_us() for d in step)
        dealt += step
    assert floor.deal_due() == []  # the clock stood still
    times = [d.record.time_us for d in dealt]
    assert times == sorted(times)
    for key, table in floor.tables.items():
        mine = [d.record for d in dealt if (d.gateway, d.unit) == key]
        assert [r.round for r in mine] == list(range(1, table.rounds + 1))
        assert sum(r.credits for r in mine) == table.credits
        # 2 s at 2 rounds a second, each wait 0.25-0.75 s: 2 to 8 rounds.
        assert 2 <= len(mine) <= 8

    # The same seed and the same steps deal the same rounds, in one step or in many, and
    # a long step skips nothing (only the background dealer skips rounds it was late for).
    again = VirtualClock()
    other = _stepped(42, again)
    for table in other.tables.values():
        table.heartbeat(1, again.now_us())
    other.deal_due()
    again.advance(2)
    assert [(d.gateway, d.unit, d.record) for d in other.deal_due()] == [
        (d.gateway, d.unit, d.record) for d in dealt
    ]
    again.advance(60)
    late = other.deal_due()
    assert 3 * 80 <= len(late) <= 3 * 240
    assert [r.time_us for r in (d.record for d in late)] == sorted(d.record.time_us for d in late)


async def test_a_floor_without_autodeal_deals_only_when_asked() -> None:
    clock = VirtualClock()
    floor = _stepped(7, clock)
    async with serving(floor):
        clock.advance(30)
        await asyncio.sleep(0.05)
        assert all(not table.records for table in floor.tables.values())
        dealt = floor.deal_due()
        assert len(dealt) >= 3 * 20
        assert sum(table.rounds for table in floor.tables.values()) == len(dealt)
        record = floor.play_round_now("caribbean_stud", 1)
        assert record.time_us == clock.now_us()
    with pytest.raises(ValueError, match="autodeal"):
        SimFloor([spec(STUD)], autodeal=1)  # type: ignore[arg-type]


def test_virtual_clock_moves_only_forwards_and_when_told() -> None:
    clock = VirtualClock(start_us=1_000)
    assert clock.now_us() == 1_000
    assert clock.advance(0.5) == 501_000
    assert clock.advance_us(7) == clock.now_us() == 501_007
    assert clock.advance(0) == 501_007
    for bad in (-1, float("nan"), float("inf"), True, "1"):
        with pytest.raises(ValueError, match="seconds"):
            clock.advance(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="microseconds"):
        clock.advance_us(-1)
    with pytest.raises(ValueError, match="start_us"):
        VirtualClock(start_us=-5)


async def test_a_port_in_use_is_a_clear_error_and_nothing_is_left_running() -> None:
    first = SimFloor([spec(STUD, tables=1)], rounds_per_second=SLOW)
    async with serving(first):
        taken = first.ports["caribbean_stud"]
        clash = SimFloor(
            [spec(DRAW, tables=1), GatewaySpec(game=STUD, tables=1, port=taken)],
            rounds_per_second=SLOW,
        )
        with pytest.raises(SimulatorError, match=rf"caribbean_stud.*127\.0\.0\.1:{taken}.*in use"):
            await clash.start()


# --------------------------------------------------------------------------------- serial


async def test_several_units_on_one_rtu_line() -> None:
    async with pty_line() as (server_end, client_end):
        line = GatewaySpec(
            game=STUD,
            tables=3,
            serial_port=server_end,
            baudrate=38400,
            table=SimTableConfig(game=STUD, heartbeat_timeout_us=HEARTBEAT_TIMEOUT_US),
        )
        floor = SimFloor([line], rounds_per_second=SLOW, seed=10)
        async with serving(floor):
            assert floor.ports == {}
            assert "Modbus RTU" in floor.describe()[0] and "unit ids 1-3" in floor.describe()[0]
            client = AsyncModbusSerialClient(client_end, baudrate=38400, timeout=0.5, retries=0)
            try:
                assert await client.connect()
                for unit in (3, 1, 2):
                    u = Unit(client, unit)
                    await u.heartbeat()
                    block = await u.block()
                    assert block[:2] == [PROFILE_ID, PROFILE_VERSION]
                    assert not block[ADDR_STATUS] & STATUS_PROGRESSIVE_DISABLED
                    assert floor.tables[("caribbean_stud", unit)].heartbeat_value == 1
                floor.force_hand("caribbean_stud", 2, 5, HandCategory.ROYAL_FLUSH)
                record = floor.play_round_now("caribbean_stud", 2)
                block = await Unit(client, 2).block()
                assert u32(block, ADDR_HEAD_SEQ) == record.hits[0].seq
                assert u32(block, ADDR_CREDITS) == record.credits
                # On a serial line a missing or silent unit simply does not answer.
                floor.set_silent("caribbean_stud", 1, True)
                for unit in (1, 4):
                    with pytest.raises(ModbusIOException):
                        await client.read_holding_registers(0, count=2, device_id=unit)
                assert (await Unit(client, 3).block())[0] == PROFILE_ID
            finally:
                client.close()


async def test_an_rtu_gateway_switched_off_goes_quiet_and_answers_once_on() -> None:
    async with pty_line() as (server_end, client_end):
        line = GatewaySpec(game=STUD, tables=2, serial_port=server_end, baudrate=38400)
        floor = SimFloor([line], rounds_per_second=SLOW, seed=10)
        async with serving(floor):
            client = AsyncModbusSerialClient(client_end, baudrate=38400, timeout=0.3, retries=0)
            try:
                assert await client.connect()
                assert (await Unit(client, 1).block())[0] == PROFILE_ID
                await floor.close_gateway("caribbean_stud")
                with pytest.raises(ModbusIOException):
                    await client.read_holding_registers(0, count=2, device_id=1)
                await floor.open_gateway("caribbean_stud")
                assert (await Unit(client, 2).block())[0] == PROFILE_ID
            finally:
                client.close()


# --------------------------------------------------------------------------------- config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "sim.toml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_config_file_builds_gateways(tmp_path: Path) -> None:
    config = load_config(
        write(
            tmp_path,
            """
            seed = 7
            rounds_per_second = 0.5
            [[gateway]]
            game = "caribbean_stud"
            port = 15020
            tables = 4
            start_credits = 4294967000
            report_cards = true
            [[gateway]]
            game = "let_it_ride_bonus"
            serial_port = "/dev/ttyUSB0"
            baudrate = 9600
            tables = 2
            heartbeat_timeout_seconds = 2.5
            [[gateway]]
            game = "caribbean_stud"
            name = "stud_annex"
            port = 15030
            """,
        )
    )
    assert config.seed == 7 and config.rounds_per_second == 0.5
    stud, lir, annex = config.gateways
    assert (stud.name, stud.port, stud.tables, stud.host) == (
        "caribbean_stud",
        15020,
        4,
        "127.0.0.1",
    )
    assert stud.table_config().start_credits == 4294967000 and stud.table_config().report_cards
    assert (lir.serial_port, lir.baudrate, lir.tables, lir.port) == ("/dev/ttyUSB0", 9600, 2, None)
    assert lir.table_config().heartbeat_timeout_us == 2_500_000
    assert (annex.name, annex.port, annex.tables) == ("stud_annex", 15030, 4)


BAD_CONFIGS = {
    "unknown top key": ('sedd = 3\n[[gateway]]\ngame = "caribbean_stud"\n', "unknown key 'sedd'"),
    "unknown gateway key": (
        '[[gateway]]\ngame = "caribbean_stud"\n[[gateway]]\ngame = "caribbean_draw"\ntabels = 2\n',
        "[[gateway]] #2: unknown key 'tabels'",
    ),
    "no gateway": ("seed = 1\n", "no [[gateway]]"),
    "bad game": ('[[gateway]]\ngame = "baccarat"\n', "[[gateway]] #1: key 'game': 'baccarat'"),
    "missing game": ("[[gateway]]\nport = 1\n", "[[gateway]] #1: key 'game' is missing"),
    "tables zero": ('[[gateway]]\ngame = "caribbean_stud"\ntables = 0\n', "key 'tables'"),
    "tables text": ('[[gateway]]\ngame = "caribbean_stud"\ntables = "4"\n', "key 'tables'"),
    "port and serial": (
        '[[gateway]]\ngame = "caribbean_stud"\nport = 1\nserial_port = "/dev/x"\n',
        "not both",
    ),
    "start credits too big": (
        '[[gateway]]\ngame = "caribbean_stud"\nstart_credits = 4294967296\n',
        "key 'start_credits'",
    ),
    "report cards not bool": (
        '[[gateway]]\ngame = "caribbean_stud"\nreport_cards = "yes"\n',
        "key 'report_cards'",
    ),
    "rate zero": (
        'rounds_per_second = 0\n[[gateway]]\ngame = "caribbean_stud"\n',
        "rounds_per_second",
    ),
    "same port twice": (
        '[[gateway]]\ngame = "caribbean_stud"\nport = 15020\n'
        '[[gateway]]\ngame = "caribbean_draw"\nport = 15020\n',
        "[[gateway]] #2: key 'port': 127.0.0.1:15020 is already used by [[gateway]] #1",
    ),
    "same name twice": (
        '[[gateway]]\ngame = "caribbean_stud"\nport = 1\n[[gateway]]\ngame = "caribbean_stud"\nport = 2\n',
        "[[gateway]] #2: name 'caribbean_stud' is already used",
    ),
    "gateway not an array": ('[gateway]\ngame = "caribbean_stud"\n', "array of tables"),
    "toml syntax": ('[[gateway]]\ngame = "caribbean_stud\n', "not valid TOML"),
}


@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_bad_config_files_are_refused_naming_the_key(tmp_path: Path, case: str) -> None:
    text, message = BAD_CONFIGS[case]
    path = write(tmp_path, text)
    with pytest.raises(SimConfigError) as caught:
        load_config(path)
    assert message in str(caught.value) and str(path) in str(caught.value)
    result = CliRunner().invoke(main, ["simulate", "--config", str(path)])
    assert result.exit_code == 1 and message in result.output, result.output


def test_cli_refuses_conflicting_options(tmp_path: Path) -> None:
    path = write(tmp_path, '[[gateway]]\ngame = "caribbean_stud"\n')
    result = CliRunner().invoke(main, ["simulate", "--config", str(path), "--tables", "2"])
    assert result.exit_code == 2 and "--config and --tables cannot be combined" in result.output
    result = CliRunner().invoke(main, ["simulate", "--serial-port", "/dev/null"])
    assert result.exit_code == 2 and "--serial-port needs --game" in result.output
    result = CliRunner().invoke(main, ["simulate", "--config", str(tmp_path / "nope.toml")])
    assert result.exit_code == 1 and "cannot read the config file" in result.output
    with pytest.raises(SimConfigError, match="config: key 'seed'"):
        parse_config({"seed": True, "gateway": [{"game": "caribbean_stud"}]})


# --------------------------------------------------------------------------------- CLI


async def test_progressive_simulate_serves_its_config_and_stops_on_sigint(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        seed = 7
        rounds_per_second = 20
        [[gateway]]
        game = "caribbean_stud"
        port = 0
        tables = 2
        [[gateway]]
        game = "let_it_ride_bonus"
        port = 0
        tables = 3
        start_credits = 4294967000
        """,
    )
    env = process_env()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        "simulate",
        "--config",
        str(path),
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    try:
        lines: list[str] = []
        async with asyncio.timeout(15):
            while not lines or "Ctrl-C stops" not in lines[-1]:
                line = (await proc.stdout.readline()).decode()
                assert line, f"simulate ended early: {lines}"
                lines.append(line)
        ports = {}
        for line in lines[:-1]:
            found = re.match(
                r"(\w+): .* on Modbus TCP 127\.0\.0\.1:(\d+), unit ids (\d+)-(\d+)", line
            )
            assert found, line
            ports[found[1]] = int(found[2])
            assert found[3] == "1"
        assert sorted(ports) == ["caribbean_stud", "let_it_ride_bonus"]
        assert "unit ids 1-3" in lines[1]
        async with tcp(ports["let_it_ride_bonus"]) as client:
            block = await Unit(client, 3).block()
            assert block[:2] == [PROFILE_ID, PROFILE_VERSION]
            assert u32(block, ADDR_CREDITS) == 4294967000  # no heartbeat yet: no bets
        proc.send_signal(signal.SIGINT)
        async with asyncio.timeout(10):
            out, err = await proc.communicate()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
    assert proc.returncode == 0, err.decode()
    assert out.decode().strip().endswith("stopped")


def test_floor_refuses_bad_arguments() -> None:
    with pytest.raises(ValueError, match="rounds_per_second"):
        SimFloor([spec(STUD)], rounds_per_second=0)
    with pytest.raises(ValueError, match="two gateways are named"):
        SimFloor([spec(STUD), spec(STUD)])
    with pytest.raises(ValueError, match="not both"):
        GatewaySpec(game=STUD, port=1, serial_port="/dev/x")
    with pytest.raises(ValueError, match="tables are caribbean_draw tables"):
        GatewaySpec(game=STUD, table=SimTableConfig(game=DRAW))
    assert GatewaySpec(game=DRAW).port == 15021
    floor = SimFloor([spec(STUD)])
    with pytest.raises(KeyError, match="unit ids 1-3"):
        floor.set_silent("caribbean_stud", 4, True)
    with pytest.raises(KeyError, match="no gateway"):
        floor.power_cycle("baccarat", 1)
    with pytest.raises(RuntimeError, match="start"):
        _ = floor.ports
    assert isinstance(floor.tables[("caribbean_stud", 1)], SimTable)
