"""Links and table handles against real peers: pymodbus servers over TCP, RTU over TCP, and a
serial line made of pseudo-terminals. The link's own timing (deadlines, backoffs, pacing, the
drain) runs on a virtual clock the test moves, so it is checked exactly; the peers are real."""

from __future__ import annotations

import asyncio
import os
import socket
import termios
import time
from collections.abc import Awaitable, Callable
from itertools import pairwise

import pytest
from pymodbus import FramerType
from pymodbus.client import AsyncModbusTcpClient

from link_adapters.errors import DeviceError, LinkDown, ProfileMismatch, ResponseTimeout
from link_adapters.modbus import ModbusLink, SerialParams, TcpParams, rtu_frame_gap_s
from link_adapters.profile_files import load_profile
from link_adapters.reading import TableCommand
from link_adapters.table import TableHandle
from tests.link_adapters.conftest import (
    JUNK_MODES,
    JunkServer,
    Layout,
    LoopbackServer,
    SerialLine,
    reference_block,
    reference_layout,
    u32,
)
from tests.link_adapters.virtual_clock import START, VirtualClock, until
from tests.serial_line import pty_refuses_parity

REFERENCE = load_profile()
LEGACY = load_profile("legacy-no-seats-v1")
FC_READ, FC_WRITE_ONE, FC_WRITE_MANY, FC_READ_WRITE = 3, 6, 16, 23
# Commands and the command register's value for each (register map v1: bit0, bit1).
PLAYING = TableCommand(disable_progressive=False)  # 0
DISABLED = TableCommand(disable_progressive=True)  # 1
PENDING_ONLY = TableCommand(disable_progressive=False, hit_pending=True)  # 2
HELD = TableCommand(disable_progressive=True, hit_pending=True)  # 3

StartLoopback = Callable[..., Awaitable[LoopbackServer]]
StartSerial = Callable[..., Awaitable[SerialLine]]
MakeLink = Callable[..., ModbusLink]


def fast_tcp(port: int, **overrides: float) -> TcpParams:
    settings: dict[str, float] = {
        "timeout_s": 0.5,
        "retries": 1,
        "backoff_s": 0.02,
        "reconnect_min_s": 0.05,
        "reconnect_max_s": 0.4,
    }
    settings.update(overrides)
    return TcpParams(host="127.0.0.1", port=port, **settings)  # type: ignore[arg-type]


def fast_serial(port: str, **overrides: float | None) -> SerialParams:
    settings: dict[str, float | None] = {
        "timeout_s": 0.1,
        "retries": 1,
        "backoff_s": 0.02,
        "reconnect_min_s": 0.05,
    }
    settings.update(overrides)
    return SerialParams(port=port, **settings)  # type: ignore[arg-type]


def free_port() -> int:
    """A port nobody listens on: the OS picks it, we let it go."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


# --- Modbus TCP ----------------------------------------------------------------------------


async def test_tcp_table_read_decodes_the_block(loopback: StartLoopback, links: MakeLink) -> None:
    server = await loopback({1: reference_layout(credits=70_000, rounds=12, status=0b0001)})
    table = TableHandle(links(fast_tcp(server.port)), 1, REFERENCE, name="T1")
    regs = await table.read()
    assert (regs.credits, regs.rounds, regs.lockout) == (70_000, 12, True)
    assert regs.head is None
    assert server.requests == [(1, FC_READ, 0, 34)]  # one block read per poll


async def test_tcp_several_units_share_one_link(loopback: StartLoopback, links: MakeLink) -> None:
    server = await loopback({unit: reference_layout(credits=1000 * unit) for unit in (1, 2, 3)})
    link = links(fast_tcp(server.port), name="pit 4")
    tables = [TableHandle(link, unit, REFERENCE, name=f"T{unit}") for unit in (1, 2, 3)]
    readings = await asyncio.gather(*(table.read() for table in tables))
    assert [regs.credits for regs in readings] == [1000, 2000, 3000]
    assert link.stats.requests == 3 and link.stats.timeouts == link.stats.errors == 0
    assert link.stats.last_latency_s > 0


async def test_tcp_wrong_profile_is_refused(loopback: StartLoopback, links: MakeLink) -> None:
    server = await loopback({1: reference_layout(profile_id=0x1234)})
    table = TableHandle(links(fast_tcp(server.port)), 1, REFERENCE, name="T3")
    with pytest.raises(ProfileMismatch, match="table T3: address 0 reads 0x1234"):
        await table.read()


async def test_tcp_writes_land_in_the_datastore_in_few_requests(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout()})
    table = TableHandle(links(fast_tcp(server.port)), 1, REFERENCE, name="T1")

    await table.write(command=PENDING_ONLY, meter_cents=123_456, heartbeat=7)
    # The acknowledgement is never part of a routine write.
    assert await server.registers(1, 100, 6) == [0, 0, 2, *u32(123_456), 7]
    assert server.requests == [(1, FC_WRITE_MANY, 102, 4)]

    await table.write(heartbeat=8)  # only the heartbeat: one single-register write
    assert await server.registers(1, 100, 6) == [0, 0, 2, *u32(123_456), 8]
    assert server.requests[-1] == (1, FC_WRITE_ONE, 105, 1)

    # One field given: still one request for the whole run, the others as last written.
    await table.write(meter_cents=99, heartbeat=9)
    assert await server.registers(1, 100, 6) == [0, 0, 2, *u32(99), 9]
    assert server.requests[-1] == (1, FC_WRITE_MANY, 102, 4)

    # The acknowledgement: a request of its own, both registers at once, nothing else.
    await table.acknowledge(0x12345)
    assert await server.registers(1, 100, 6) == [*u32(0x12345), 2, *u32(99), 9]
    assert server.requests[-1] == (1, FC_WRITE_MANY, 100, 2)
    await table.write(meter_cents=100, heartbeat=10)  # and it is not repeated afterwards
    assert server.requests[-1] == (1, FC_WRITE_MANY, 102, 4)
    assert len(server.requests) == 5


async def test_a_new_handle_tells_the_table_to_take_no_progressive_bets(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout()})
    table = TableHandle(links(fast_tcp(server.port)), 1, REFERENCE, name="T1")
    await table.write(meter_cents=5, heartbeat=1)  # command bits not given yet
    assert await server.registers(1, 102, 1) == [1]  # bit0: disable progressive wagering


async def test_tcp_exchange_writes_then_reads_in_one_request(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout(credits=70_000, rounds=12)})
    table = TableHandle(links(fast_tcp(server.port)), 1, REFERENCE, name="T1")

    regs = await table.exchange(command=PENDING_ONLY, meter_cents=123_456, heartbeat=7)
    assert (regs.credits, regs.rounds) == (70_000, 12)
    assert await server.registers(1, 100, 6) == [0, 0, 2, *u32(123_456), 7]
    # One request on the wire: the unit applies its write part, then answers its read part.
    assert server.requests == [(1, FC_READ_WRITE, 102, 4), (1, FC_READ_WRITE, 0, 34)]

    await table.exchange(heartbeat=8)  # the other fields repeat what was last asked
    assert await server.registers(1, 100, 6) == [0, 0, 2, *u32(123_456), 8]
    assert len(server.requests) == 4


async def test_table_writes_are_checked_whole_before_anything_is_taken(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout()})
    table = TableHandle(links(fast_tcp(server.port)), 1, REFERENCE, name="T1")
    await table.exchange(command=PENDING_ONLY, meter_cents=300, heartbeat=1)
    sent = len(server.requests)
    for call, message in (
        (lambda: table.exchange(command=PLAYING, meter_cents=1 << 32, heartbeat=2), "meter_cents"),
        (lambda: table.acknowledge(True), "ack_seq must be an int"),
        (lambda: table.acknowledge(1 << 32), "ack_seq must be between"),
        (lambda: table.exchange(command=DISABLED, heartbeat=65536), "heartbeat"),
        (lambda: table.write(command=1, heartbeat=2), "command must be a TableCommand"),  # type: ignore[arg-type]
    ):
        with pytest.raises(ValueError, match=message):
            await call()
    assert len(server.requests) == sent  # nothing went out
    await table.exchange(heartbeat=3)  # and nothing of the refused calls was taken
    assert await server.registers(1, 100, 6) == [0, 0, 2, *u32(300), 3]


async def test_exchange_needs_a_profile_that_reads_and_writes_at_once(links: MakeLink) -> None:
    table = TableHandle(links(fast_tcp(1502)), 5, LEGACY, name="L5")
    with pytest.raises(ValueError, match="does not read and write in one request"):
        await table.exchange(heartbeat=1)


async def test_tcp_legacy_profile_writes_each_run(loopback: StartLoopback, links: MakeLink) -> None:
    layout: Layout = [(200, [0x4C47, 2] + [0] * 13), (300, [0] * 4), (310, [0] * 2)]
    server = await loopback({5: layout})
    table = TableHandle(links(fast_tcp(server.port)), 5, LEGACY, name="L5")
    assert (await table.read()).per_seat_credits is None

    await table.write(meter_cents=0x30004, heartbeat=1)
    assert await server.registers(5, 300, 4) == [0, 0, 4, 3]  # low word first
    assert await server.registers(5, 310, 2) == [0, 1]
    assert server.requests[1:] == [(5, FC_WRITE_MANY, 302, 2), (5, FC_WRITE_ONE, 311, 1)]

    await table.acknowledge(0x10002)
    assert await server.registers(5, 300, 4) == [2, 1, 4, 3]
    assert server.requests[-1] == (5, FC_WRITE_MANY, 300, 2)

    await table.write(command=DISABLED, heartbeat=2)  # adjacent: one request
    assert await server.registers(5, 310, 2) == [1, 2]
    assert server.requests[-1] == (5, FC_WRITE_MANY, 310, 2)


async def test_tcp_exception_response_is_a_device_error(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout()})
    link = links(fast_tcp(server.port))
    with pytest.raises(DeviceError, match="illegal data address") as caught:
        await link.read_holding(1, 40, 10)
    assert caught.value.exception_code == 2
    assert link.stats.requests == 1  # the unit's answer stands: not retried
    assert (await link.read_holding(1, 0, 2)) == [0x5450, 1]  # and the link carries on


async def test_tcp_slow_unit_times_out_and_the_others_still_answer(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout(credits=11), 2: reference_layout(credits=22)})
    server.delays[2] = 0.4
    clock = VirtualClock()
    link = links(fast_tcp(server.port, timeout_s=0.125, retries=1, backoff_s=0.0625), clock=clock)
    slow = TableHandle(link, 2, REFERENCE, name="T2")
    started = clock.now
    reading = asyncio.create_task(slow.read())
    await until(lambda: link.stats.requests == 1)
    await clock.advance(0.125 - 1 / 1024)
    assert link.stats.timeouts == 0  # not a moment early
    await clock.advance(1 / 1024)  # the first attempt's deadline
    assert link.stats.timeouts == 1 and link.stats.requests == 1  # backing off
    await clock.advance(0.0625)
    await until(lambda: link.stats.requests == 2)
    await clock.advance(0.125)
    with pytest.raises(ResponseTimeout) as caught:
        await reading
    # Each attempt waited its whole timeout, the backoff between them.
    assert clock.now - started == 0.125 + 0.0625 + 0.125
    assert str(caught.value).startswith("table T2: link 127.0.0.1:")
    assert "unit 2 did not answer the read of 34 registers at 0 within 0.125 s (2 attempts)" in (
        str(caught.value)
    )
    assert link.stats.timeouts == link.stats.requests == 2  # given up before the late answer
    # Unit 1 is read before and after unit 2's late answers arrive (0.4 s of real time):
    # transaction ids keep them apart.
    for _ in range(3):
        assert (await TableHandle(link, 1, REFERENCE, name="T1").read()).credits == 11
    await asyncio.sleep(0.45)  # the late answers come; the server's handlers finish
    assert (await TableHandle(link, 1, REFERENCE, name="T1").read()).credits == 11
    assert link.stats.timeouts == 2 and link.stats.errors == 0


async def test_tcp_timeout_holds_after_many_quick_answers(
    loopback: StartLoopback, links: MakeLink
) -> None:
    """One timer per link watches every answer's deadline: requests answered well within the
    timeout move it on, and a silent unit after them still times out on time."""
    server = await loopback({1: reference_layout(credits=11), 2: reference_layout(credits=22)})
    server.delays[2] = 0.5
    clock = VirtualClock()
    link = links(fast_tcp(server.port, timeout_s=0.125, retries=0), clock=clock)
    quick = TableHandle(link, 1, REFERENCE, name="T1")
    for _ in range(6):  # past the deadlines of the first requests
        assert (await quick.read()).credits == 11
        await clock.advance(0.0625)
    assert link.stats.timeouts == 0
    # The timer set for the last quick read is due before the silent unit's deadline: it
    # finds that later deadline when it fires, and is set again for it.
    assert (await quick.read()).credits == 11
    await clock.advance(0.0625)
    started = clock.now
    silent = asyncio.create_task(link.read_holding(2, 0, 34))
    await until(lambda: link.stats.requests == 8)
    await clock.advance(0.0625)  # the earlier timer fires here
    assert not silent.done() and link.stats.timeouts == 0
    await clock.advance(0.0625 - 1 / 1024)
    assert not silent.done()
    await clock.advance(1 / 1024)
    with pytest.raises(ResponseTimeout, match=r"unit 2 did not answer .* within 0\.125 s"):
        await silent
    # Not early (a stale deadline), not late (the answer at 0.5 s would have been taken).
    assert clock.now - started == 0.125
    assert link.stats.timeouts == 1
    # Idle past the deadline, then answered at once: no stale deadline fires at it.
    await clock.advance(0.25)
    assert (await quick.read()).credits == 11
    await clock.advance(0.25)
    assert (await quick.read()).credits == 11
    assert link.stats.timeouts == 1
    await asyncio.sleep(0.5)  # the server's delayed handler


async def test_a_request_cancelled_from_outside_is_cancelled_not_timed_out(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout(credits=11), 2: reference_layout(credits=22)})
    server.delays[2] = 0.3
    clock = VirtualClock()
    link = links(fast_tcp(server.port, timeout_s=0.25, retries=1), clock=clock)
    waiting = asyncio.create_task(link.read_holding(2, 0, 34))
    await until(lambda: link.stats.requests == 1)
    await clock.advance(0.0625)
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting
    assert link.stats.timeouts == 0 and link.stats.requests == 1  # not retried either
    # The link goes on, and the cancelled request's deadline wakes nobody later.
    for _ in range(3):
        assert (await link.read_holding(1, 5, 2)) == [*u32(11)]
        await clock.advance(0.125)
    await clock.advance(0.25)  # past every deadline set
    assert link.stats.timeouts == 0 and clock.pending() is None
    await asyncio.sleep(0.3)  # the server's delayed handler


async def test_tcp_server_stopping_mid_poll_is_link_down_then_reconnects(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout(credits=5)})
    link = links(fast_tcp(server.port, timeout_s=1.0))
    table = TableHandle(link, 1, REFERENCE, name="T1")
    assert (await table.read()).credits == 5

    server.delays[1] = 0.3  # the next poll is in flight when the server goes away
    poll = asyncio.create_task(table.read())
    await asyncio.sleep(0.05)
    await server.stop()
    with pytest.raises(LinkDown, match=r"table T1: link 127\.0\.0\.1"):
        await poll
    assert link.stats.timeouts == 0  # noticed as the connection ended, not by the timeout
    assert not link.connection.connected
    with pytest.raises(LinkDown):
        await table.read()

    await server.start()  # same port, fresh datastore
    deadline = time.monotonic() + 3
    while True:
        try:
            regs = await table.read()
            break
        except LinkDown:
            assert time.monotonic() < deadline, "the link did not come back"
            await asyncio.sleep(0.02)
    assert regs.credits == 5 and link.connection.connected
    assert link.stats.reconnects == 1


async def test_tcp_connect_refused_backs_off_exponentially(links: MakeLink) -> None:
    clock = VirtualClock()
    link = links(
        fast_tcp(free_port(), reconnect_min_s=0.125, reconnect_max_s=0.375),
        name="dead",
        clock=clock,
    )
    with pytest.raises(
        LinkDown, match=r"link dead: cannot connect to .*next connection attempt in 0\.1 s"
    ):
        await link.connect()
    # Inside the backoff nothing touches the wire: refused as down, with no connection attempt
    # (one would answer "cannot connect"), up to the very end of the backoff.
    for wait in (0.125, 0.25, 0.375, 0.375):  # doubling, capped
        await clock.advance(wait - 1 / 1024)
        with pytest.raises(LinkDown, match=r"link dead is down .*next connection attempt in"):
            await link.connect()
        await clock.advance(1 / 1024)
        doubled = min(wait * 2, 0.375)
        with pytest.raises(LinkDown, match=rf"cannot connect .*attempt in {doubled:.1f} s"):
            await link.connect()
    assert link.stats.requests == 0 and clock.sleeps == []


async def test_tcp_connect_that_never_completes_gives_up_exactly_at_its_deadline(
    links: MakeLink, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A connect that hangs (a peer that never answers the handshake) is bounded by the
    link's timeout on the link's clock, like an answer, and then backs off."""
    attempts: list[float] = []

    async def hangs(client: AsyncModbusTcpClient) -> bool:
        attempts.append(clock.monotonic())
        await asyncio.get_running_loop().create_future()  # never done
        raise AssertionError("unreachable")

    monkeypatch.setattr(AsyncModbusTcpClient, "connect", hangs)
    clock = VirtualClock()
    link = links(
        fast_tcp(free_port(), timeout_s=0.5, reconnect_min_s=0.125), name="hung", clock=clock
    )
    connecting = asyncio.create_task(link.connect())
    await clock.advance(0.5 - 1 / 1024)
    assert attempts == [START] and not connecting.done()
    await clock.advance(1 / 1024)
    assert connecting.done() and clock.now == START + 0.5
    with pytest.raises(
        LinkDown, match=r"link hung: no connection within 0\.5 s; next connection attempt in 0\.1 s"
    ):
        await connecting
    assert not link.connection.connected and link.stats.requests == 0
    # The backoff runs from the deadline: no attempt until it is over.
    await clock.advance(0.125 - 1 / 1024)
    with pytest.raises(LinkDown, match=r"link hung is down \(no connection within 0\.5 s\)"):
        await link.connect()
    assert attempts == [START]


async def test_a_connect_cancelled_from_outside_is_cancelled_not_timed_out(
    links: MakeLink, monkeypatch: pytest.MonkeyPatch
) -> None:
    closed: list[bool] = []

    async def hangs(client: AsyncModbusTcpClient) -> bool:
        await asyncio.get_running_loop().create_future()  # never done
        raise AssertionError("unreachable")

    monkeypatch.setattr(AsyncModbusTcpClient, "connect", hangs)
    monkeypatch.setattr(AsyncModbusTcpClient, "close", lambda client: closed.append(True))
    clock = VirtualClock()
    link = links(fast_tcp(free_port(), timeout_s=0.5), name="hung", clock=clock)
    connecting = asyncio.create_task(link.connect())
    await clock.advance(0.25)
    connecting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await connecting
    assert closed  # nothing half-open stays behind
    # No backoff: a cancel is no failure of the link; the deadline wakes nobody.
    await clock.advance(0.5)
    connecting = asyncio.create_task(link.connect())
    await clock.advance(0.5)
    with pytest.raises(LinkDown, match=r"no connection within 0\.5 s"):
        await connecting


GARBAGE_OUTCOMES: dict[str, tuple[type[Exception], str]] = {
    # Nothing that frames as an answer: as good as silence.
    "noise": (ResponseTimeout, "did not answer"),
    "wrong_unit": (ResponseTimeout, "did not answer"),
    # Framed, but not the answer asked for.
    "short_answer": (DeviceError, "answered 2 registers where 34 were asked"),
    "odd_exception": (DeviceError, r"unknown exception \(Modbus exception 153\)"),
    # pymodbus cannot decode it and drops the connection.
    "bad_byte_count": (DeviceError, "bytes that are not a Modbus answer"),
    "unknown_function": (DeviceError, "bytes that are not a Modbus answer"),
}


@pytest.mark.parametrize("mode", sorted(JUNK_MODES))
async def test_tcp_garbage_is_never_a_value(
    junk_server: JunkServer, links: MakeLink, mode: str
) -> None:
    junk_server.mode = mode
    error, message = GARBAGE_OUTCOMES[mode]
    link = links(fast_tcp(junk_server.port, timeout_s=0.1, retries=1))
    with pytest.raises(error, match=message):
        await TableHandle(link, 1, REFERENCE, name="T1").read()
    with pytest.raises((DeviceError, ResponseTimeout)):
        await link.write_registers(1, 100, [1, 2])


async def test_close_is_idempotent_final_and_ends_a_request_in_flight(
    loopback: StartLoopback, links: MakeLink
) -> None:
    server = await loopback({1: reference_layout()})
    server.delays[1] = 0.3
    link = links(fast_tcp(server.port, timeout_s=1.0))
    poll = asyncio.create_task(link.read_holding(1, 0, 34))
    await asyncio.sleep(0.05)
    await link.close()
    await link.close()
    # Ended by the close, not answered by the server 0.3 s later nor timed out after 1 s.
    with pytest.raises(LinkDown, match="was closed during the read"):
        await poll
    assert link.stats.timeouts == 0
    with pytest.raises(LinkDown, match="is closed"):
        await link.read_holding(1, 0, 34)
    await asyncio.sleep(0.3)  # the server's delayed handler


async def test_requests_are_checked_before_they_leave(links: MakeLink) -> None:
    link = links(fast_tcp(free_port()))
    with pytest.raises(ValueError, match="count must be between 1 and 125"):
        await link.read_holding(1, 0, 126)
    with pytest.raises(ValueError, match="last address must be between 0 and 65535"):
        link.prepare_read_write(
            1, read_address=0, read_count=34, write_address=65534, write_count=6
        )
    prepared = link.prepare_read_write(
        1, read_address=0, read_count=34, write_address=100, write_count=6
    )
    for values, message in (
        ([0] * 5, "writes 6 values"),
        ([0, 0, 0, 0, 0, 70_000], "value for register 105 must be between 0 and 65535"),
        ([0, 0, True, 0, 0, 0], "value for register 102 must be an int"),
    ):
        with pytest.raises(ValueError, match=message):
            await link.read_write_prepared(prepared, values)
    other = links(fast_tcp(free_port()))
    with pytest.raises(ValueError, match="prepared for another link"):
        await other.read_write_prepared(prepared, [0] * 6)
    assert link.stats.requests == other.stats.requests == 0
    with pytest.raises(ValueError, match="value for register 101 must be between 0 and 65535"):
        await link.write_registers(1, 100, [0, 70_000])
    with pytest.raises(ValueError, match="unit must be between 0 and 255"):
        await link.read_holding(256, 0, 1)


# --- RTU over TCP ----------------------------------------------------------------------------


async def test_rtu_over_tcp_reads_and_writes(loopback: StartLoopback, links: MakeLink) -> None:
    server = await loopback(
        {1: reference_layout(credits=7), 2: reference_layout(credits=8)}, framer=FramerType.RTU
    )
    link = links(fast_tcp(server.port, rtu_over_tcp=True))
    assert [
        (await TableHandle(link, u, REFERENCE, name=f"T{u}").read()).credits for u in (1, 2)
    ] == [
        7,
        8,
    ]
    await TableHandle(link, 2, REFERENCE, name="T2").write(command=HELD, heartbeat=4)
    assert await server.registers(2, 100, 6) == [0, 0, 3, 0, 0, 4]
    with pytest.raises(DeviceError, match="illegal data address"):
        await link.read_holding(1, 50, 1)
    with pytest.raises(ValueError, match="unit must be between 1 and 247"):
        await link.read_holding(0, 0, 1)  # broadcast: nobody would answer


# --- RTU on a serial line ------------------------------------------------------------------


async def test_serial_reads_several_units_and_writes(
    serial_line: StartSerial, links: MakeLink
) -> None:
    line = await serial_line({unit: reference_layout(credits=unit * 10) for unit in (1, 2, 3)})
    link = links(fast_serial(line.port))
    tables = {unit: TableHandle(link, unit, REFERENCE, name=f"S{unit}") for unit in (1, 2, 3)}
    readings = await asyncio.gather(*(table.read() for table in tables.values()))
    assert [regs.credits for regs in readings] == [10, 20, 30]
    await tables[2].acknowledge(5)
    await tables[2].write(command=DISABLED, meter_cents=1_000_000, heartbeat=1)
    assert await line.server.registers(2, 100, 6) == [0, 5, 1, *u32(1_000_000), 1]
    assert await line.server.registers(3, 100, 6) == [0] * 6


async def test_serial_port_refusing_its_settings_is_a_link_down(
    serial_line: StartSerial, links: MakeLink
) -> None:
    # The operating system refuses the port's settings: a pseudo-terminal takes no parity bit,
    # and pyserial lets termios.error (no OSError) out of opening it.
    if not pty_refuses_parity():
        pytest.skip("this system's pseudo-terminals take a parity bit")
    line = await serial_line({1: reference_layout(credits=10)})
    refused = (
        rf"table S1: link rs485: serial port {line.port} refused its settings \(19200 baud, "
        r"8 data bits, parity E, 1 stop bit\): Invalid argument \(errno 22\); check that the "
        r"adapter can do them; next connection attempt in 0\.5 s"
    )
    link = links(SerialParams(port=line.port, parity="E", reconnect_min_s=0.5), name="rs485")
    table = TableHandle(link, 1, REFERENCE, name="S1")
    with pytest.raises(LinkDown, match=refused):
        await table.read()
    # ... and then waits out the reconnect backoff like any link that cannot be opened.
    with pytest.raises(LinkDown, match=r"link rs485 is down \(serial port .* parity E"):
        await table.read()


@pytest.mark.parametrize("stopbits", [1, 2])
async def test_serial_stop_bits_reach_the_port(
    serial_line: StartSerial, links: MakeLink, stopbits: int
) -> None:
    line = await serial_line({1: reference_layout(credits=10)})
    link = links(SerialParams(port=line.port, stopbits=stopbits), name="rs485")
    assert (await TableHandle(link, 1, REFERENCE, name="S1").read()).credits == 10
    # What the line is set to, as the operating system holds it for the open port.
    fd = os.open(line.port, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    try:
        cflag = termios.tcgetattr(fd)[2]
    finally:
        os.close(fd)
    assert bool(cflag & termios.CSTOPB) is (stopbits == 2)


async def test_serial_silent_unit_costs_only_its_own_timeout(
    serial_line: StartSerial, links: MakeLink
) -> None:
    line = await serial_line({1: reference_layout(credits=1), 2: reference_layout(credits=2)})
    line.bus.silent.add(9)
    timeout, backoff, gap = 0.125, 0.0625, 1 / 512
    quiet = timeout / 4  # the drain after each timeout: a quarter of it, at least the gap
    clock = VirtualClock(auto_sleep=True)
    link = links(
        fast_serial(line.port, timeout_s=timeout, retries=1, backoff_s=backoff, min_gap_s=gap),
        clock=clock,
    )
    silent = TableHandle(link, 9, REFERENCE, name="S9")
    for round_ in range(1, 3):
        assert (await TableHandle(link, 1, REFERENCE, name="S1").read()).credits == 1
        started = clock.now
        reading = asyncio.create_task(silent.read())
        asked = link.stats.requests
        for attempt in (1, 2):
            await until(lambda sent=asked + attempt: link.stats.requests == sent)
            await clock.advance(timeout)
        with pytest.raises(ResponseTimeout, match=r"table S9: .*unit 9 did not answer"):
            await reading
        # The gap after S1, then every attempt waited its whole timeout and drained the line.
        assert clock.now - started == gap + 2 * (timeout + quiet) + backoff
        assert (await TableHandle(link, 2, REFERENCE, name="S2").read()).credits == 2
        # The silent unit cost its own attempts and nothing else: the others were asked once.
        units = [frame.unit for frame in line.bus.requests()]
        assert (units.count(1), units.count(9), units.count(2)) == (round_, 2 * round_, round_)
        assert link.stats.timeouts == 2 * round_
    assert link.stats.errors == 0


async def test_serial_pacer_keeps_the_gap_and_one_talker(
    serial_line: StartSerial, links: MakeLink
) -> None:
    line = await serial_line({unit: reference_layout(credits=unit) for unit in (1, 2, 3)})
    gap = 0.03125
    clock = VirtualClock(auto_sleep=True)
    link = links(fast_serial(line.port, min_gap_s=gap), clock=clock)

    async def poll(unit: int) -> None:
        table = TableHandle(link, unit, REFERENCE, name=f"S{unit}")
        for _ in range(3):
            assert (await table.read()).credits == unit

    await asyncio.gather(*(poll(unit) for unit in (1, 2, 3)))
    frames = line.bus.frames
    # Nine reads, nine answers, and no retry: no deadline passed.
    assert sum(frame.kind == "answer" for frame in frames) == 9
    assert sum(frame.kind == "request" for frame in frames) == 9
    assert frames[0].kind == "request"
    # One talker: no answer ever follows another, no request goes out while one is answered.
    for first, second in pairwise(frames):
        assert first.kind != second.kind
    # Every request after the first waited the whole gap from the end of the one before
    # (time stands still while the bus works), and nothing else was waited for.
    assert clock.sleeps == [gap] * 8
    assert clock.now == START + 8 * gap


async def test_serial_unit_gap(serial_line: StartSerial, links: MakeLink) -> None:
    line = await serial_line({1: reference_layout(), 2: reference_layout()})
    clock = VirtualClock(auto_sleep=True)
    link = links(fast_serial(line.port, min_gap_s=0.0), clock=clock)
    link.set_unit_gap(1, 0.125)
    for _ in range(3):
        await link.read_holding(1, 0, 2)
        await link.read_holding(2, 0, 2)
    # Unit 1 waits its gap before each request after its first; unit 2 never waits.
    assert clock.sleeps == [0.125, 0.125]
    # Unit 2 is not held to unit 1's gap: asked at once inside a long one.
    link.set_unit_gap(1, 5.0)
    before = clock.now
    await link.read_holding(2, 0, 2)
    assert clock.now == before and len(clock.sleeps) == 2
    assert [frame.unit for frame in line.bus.requests()] == [1, 2] * 3 + [2]


def test_serial_default_gap_is_three_and_a_half_characters() -> None:
    assert SerialParams(port="/dev/ttyS0").frame_gap_s == pytest.approx(3.5 * 10 / 19200)
    assert SerialParams(port="/dev/ttyS0", baudrate=9600, parity="E").frame_gap_s == (
        pytest.approx(3.5 * 11 / 9600)
    )
    assert rtu_frame_gap_s(115200) == 0.00175  # fixed above 19200 baud
    assert SerialParams(port="/dev/ttyS0", min_gap_s=0.01).frame_gap_s == 0.01


async def test_serial_late_answer_is_drained_not_taken(
    serial_line: StartSerial, links: MakeLink
) -> None:
    """RTU has no transaction ids: the late answer must not become the next one's."""
    line = await serial_line({3: reference_layout(credits=100)})
    timeout = 0.125
    quiet = timeout / 4  # the line is kept quiet this long after the last bytes heard
    clock = VirtualClock()
    link = links(fast_serial(line.port, timeout_s=timeout, retries=0, min_gap_s=0.0), clock=clock)
    table = TableHandle(link, 3, REFERENCE, name="S3")
    line.bus.hold[3] = [0.05]  # the first answer comes only after the deadline
    reading = asyncio.create_task(table.read())
    await until(lambda: link.stats.requests == 1)
    started = clock.now
    await clock.advance(timeout)  # no answer in time: the drain begins
    await clock.advance(quiet / 2)
    await until(lambda: any(frame.kind == "answer" for frame in line.bus.frames))
    await asyncio.sleep(0.05)  # the late answer reaches the link, which hears it
    await clock.advance(quiet / 2)
    assert not reading.done()  # the line was heard from: quiet again, counted from then
    await clock.advance(quiet / 2 - 1 / 1024)
    assert not reading.done()
    await clock.advance(1 / 1024)
    with pytest.raises(ResponseTimeout):
        await reading
    assert clock.now - started == timeout + quiet / 2 + quiet
    await line.server.set_registers(3, 5, u32(200))
    assert (await table.read()).credits == 200
    first, second = line.bus.requests()
    late = next(frame for frame in line.bus.frames if frame.kind == "answer")
    assert first.started < late.ended < second.started


async def test_serial_corrupt_answer_is_retried(serial_line: StartSerial, links: MakeLink) -> None:
    line = await serial_line({4: reference_layout(credits=44)})
    link = links(fast_serial(line.port, timeout_s=0.1, retries=1))
    line.bus.corrupt_next.add(4)
    assert (await TableHandle(link, 4, REFERENCE, name="S4").read()).credits == 44
    assert (link.stats.requests, link.stats.timeouts) == (2, 1)


async def test_serial_port_that_does_not_exist_is_link_down(links: MakeLink) -> None:
    link = links(fast_serial("/dev/does-not-exist-0"))
    with pytest.raises(LinkDown, match="cannot open serial port /dev/does-not-exist-0"):
        await link.connect()


# --- parameters ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: TcpParams(host=""), "host must be"),
        (lambda: TcpParams(host="h", port=0), "port must be between 1 and 65535"),
        (lambda: TcpParams(host="h", timeout_s=0), "timeout_s must be greater than 0"),
        (lambda: TcpParams(host="h", retries=-1), "retries must be between 0 and 10"),
        (lambda: TcpParams(host="h", reconnect_max_s=0.1), "reconnect_max_s"),
        (lambda: TcpParams(host="h", min_gap_s=float("nan")), "min_gap_s must be a finite"),
        (lambda: SerialParams(port="p", bytesize=7), "bytesize must be 8"),
        (lambda: SerialParams(port="p", parity="M"), "parity must be"),
        (lambda: SerialParams(port="p", stopbits=3), "stopbits must be 1 or 2"),
    ],
)
def test_bad_parameters_are_refused(make: Callable[[], object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()


def test_reference_block_helper_matches_the_profile() -> None:
    assert len(reference_block()) == REFERENCE.read_count
