"""Modbus links: one object per physical link (a TCP host:port or a serial port).

Every unit on a link shares its ``ModbusLink``: an RS-485 bus has one talker at a time and a
TCP gateway forwards one request at a time to its bus, so one ``asyncio.Lock`` per link keeps
a single request on the wire, and a pacer keeps a minimum gap between the end of one request
and the start of the next (the RTU inter-frame gap, or whatever a slow gateway needs).

pymodbus does the framing only. Its clients are built with ``retries=0``, ``reconnect_delay=0``
(no reconnect task) and no timeout of their own: the timeout (one timer per link, see
``LinkConnection._arm``), the retries with backoff, the reconnect backoff and the line drain
after a timeout are decided here, where they can be tested, on a clock that can be handed in
(``link_adapters.link_clock``). Everything pymodbus raises or returns as an error is mapped at
this boundary to ``LinkDown``, ``ResponseTimeout`` or ``DeviceError``.

The link's parts live beside it: its parameters (``modbus_params``), the pacer
(``modbus_pacing``), request shapes and retry rules (``modbus_requests``) and the connection
with its answer watchdog (``modbus_connection``), which the link holds as ``connection``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Final, NoReturn

from pymodbus.exceptions import ConnectionException, ModbusException, ModbusIOException
from pymodbus.pdu import ModbusPDU

from link_adapters.errors import AdapterError, DeviceError, LinkDown, ResponseTimeout
from link_adapters.link_clock import SYSTEM_CLOCK, LinkClock, SystemLinkClock
from link_adapters.modbus_connection import LOST, LinkConnection
from link_adapters.modbus_pacing import Pacer
from link_adapters.modbus_params import (
    LinkStats,
    SerialParams,
    TcpParams,
    check_int,
    check_seconds,
    rtu_frame_gap_s,
)
from link_adapters.modbus_requests import (
    EXCEPTION_NAMES,
    FC_READ_HOLDING,
    FC_WRITE_MULTIPLE,
    FC_WRITE_SINGLE,
    GATEWAY_NO_ANSWER,
    MAX_READ,
    MAX_READ_WRITE_WRITE,
    MAX_WRITE,
    U16_MAX,
    Check,
    ReadWrite,
    Send,
    What,
    all_words,
    retryable,
)

__all__ = [
    "LinkClock",
    "LinkStats",
    "ModbusLink",
    "ReadWrite",
    "SerialParams",
    "SystemLinkClock",
    "TcpParams",
    "rtu_frame_gap_s",
]

log = logging.getLogger(__name__)

# After a timeout on an RTU line the answer may still come: we keep the line quiet until it
# has been silent for this fraction of the timeout (at least the frame gap), so a late answer
# lands while nobody waits for it and is discarded, instead of after our next request.
_DRAIN_FRACTION: Final = 0.25


class ModbusLink:
    """One physical link: one TCP host:port or one serial port, shared by every unit on it.

    ``connect()`` is optional: a request on a link that is down connects first. Connecting
    obeys the reconnect backoff: while it runs, connect() and requests raise LinkDown at once
    without touching the wire, so pollers can keep their own cadence on a dead link. The first
    attempt after a connection is lost is immediate. ``close()`` is final.

    Requests are retried after a timeout, a garbled answer, a busy unit or a lost connection;
    a Modbus exception is the unit's answer and is not. Writes are therefore retried too:
    write only values that are safe to write twice (the reference map's are).

    ``clock`` keeps the link's time (pacing, deadlines, backoffs, the drain): the event
    loop's unless another ``LinkClock`` is given, as tests do to run on virtual time.

    ``stats`` counts the link's requests, failures and reconnects. ``connection`` is the
    link's ``LinkConnection``: whether it is up, what it connects to, its parameters.
    """

    def __init__(
        self, params: TcpParams | SerialParams, *, name: str = "", clock: LinkClock | None = None
    ) -> None:
        clock = SYSTEM_CLOCK if clock is None else clock
        self.connection = connection = LinkConnection(params, name=name, clock=clock)
        self.name = connection.name
        self.stats = connection.stats
        self._params = params
        self._rtu = connection.rtu
        self._clock = clock
        self._pacer = Pacer(params.frame_gap_s, clock)
        self._queued = 0  # requests waiting for the connection's lock

    def __repr__(self) -> str:
        return f"ModbusLink({self.name!r}, {self.connection.target!r})"

    async def connect(self) -> None:
        """Open the link now. Raises LinkDown if it cannot be opened, or the backoff runs."""
        await self.connection.connect()

    async def close(self) -> None:
        """Close the link for good. Idempotent; a request in flight ends with LinkDown."""
        await self.connection.close()

    def set_unit_gap(self, unit: int, seconds: float) -> None:
        """Keep ``seconds`` between the end of a request to ``unit`` and the next one to it
        (for controllers that need a rest after answering); 0 removes the gap."""
        self._check_unit(unit)
        self._pacer.set_unit_gap(unit, check_seconds("seconds", seconds, positive=False))

    # --- requests ------------------------------------------------------------------------

    async def read_holding(self, unit: int, address: int, count: int) -> list[int]:
        """``count`` holding registers from ``address`` of ``unit``."""
        self._check_unit(unit)
        check_int("address", address, 0, U16_MAX)
        check_int("count", count, 1, MAX_READ)
        check_int("last address", address + count - 1, 0, U16_MAX)

        def check(pdu: ModbusPDU) -> str | None:
            if pdu.function_code != FC_READ_HOLDING:
                return f"answered function {pdu.function_code} to a read (function 3)"
            if len(pdu.registers) != count:
                return f"answered {len(pdu.registers)} registers where {count} were asked"
            return None

        pdu = await self._request(
            unit,
            lambda: f"read of {count} registers at {address}",
            lambda client: client.read_holding_registers(address, count=count, device_id=unit),
            check,
        )
        return list(pdu.registers)

    def prepare_read_write(
        self,
        unit: int,
        *,
        read_address: int,
        read_count: int,
        write_address: int,
        write_count: int,
    ) -> ReadWrite:
        """A read/write request of ``unit`` (function 23) with its addresses checked once, for
        ``read_write_prepared``: a poll repeats the same request with new values."""
        self._check_unit(unit)
        check_int("read address", read_address, 0, U16_MAX)
        check_int("read count", read_count, 1, MAX_READ)
        check_int("last read address", read_address + read_count - 1, 0, U16_MAX)
        check_int("address", write_address, 0, U16_MAX)
        check_int("number of values", write_count, 1, MAX_READ_WRITE_WRITE)
        check_int("last address", write_address + write_count - 1, 0, U16_MAX)
        return ReadWrite(
            self.connection, unit, read_address, read_count, write_address, write_count
        )

    async def read_write(
        self,
        unit: int,
        *,
        read_address: int,
        read_count: int,
        write_address: int,
        values: Sequence[int],
    ) -> list[int]:
        """Write ``values`` from ``write_address``, then read ``read_count`` registers from
        ``read_address``, in one request (function 23; the unit writes before it reads)."""
        words = self._check_words(write_address, values, MAX_READ_WRITE_WRITE)
        request = self.prepare_read_write(
            unit,
            read_address=read_address,
            read_count=read_count,
            write_address=write_address,
            write_count=len(words),
        )
        return list(await self.read_write_prepared(request, words))

    async def read_write_prepared(self, request: ReadWrite, values: list[int]) -> Sequence[int]:
        """``read_write`` of a prepared request: ``values`` (ints 0-65535, as many as the
        request writes) are written; the registers read are returned as the answer holds
        them (ints 0-65535, ``read_count`` of them)."""
        if request.link is not self.connection:
            raise ValueError(f"{request!r} was prepared for another link")
        if len(values) != request.write_count or not all_words(values):
            self._check_words(request.write_address, values, request.write_count)
            raise ValueError(f"{request!r} writes {request.write_count} values, got {values!r}")
        unit = request.unit
        pdu = await self._request(
            unit,
            request.describe,
            lambda client: client.readwrite_registers(
                read_address=request.read_address,
                read_count=request.read_count,
                write_address=request.write_address,
                values=values,
                device_id=unit,
            ),
            request.check,
        )
        return pdu.registers

    def _check_words(self, address: int, values: Sequence[int], most: int) -> list[int]:
        check_int("address", address, 0, U16_MAX)
        if all_words(values):
            words = list(values)
        else:
            words = [
                check_int(f"value for register {address + offset}", value, 0, U16_MAX)
                for offset, value in enumerate(values)
            ]
        check_int("number of values", len(words), 1, most)
        check_int("last address", address + len(words) - 1, 0, U16_MAX)
        return words

    async def write_registers(self, unit: int, address: int, values: Sequence[int]) -> None:
        """Write ``values`` to consecutive holding registers from ``address`` (function 16)."""
        self._check_unit(unit)
        words = self._check_words(address, values, MAX_WRITE)

        def check(pdu: ModbusPDU) -> str | None:
            if pdu.function_code != FC_WRITE_MULTIPLE:
                return f"answered function {pdu.function_code} to a write (function 16)"
            if (pdu.address, pdu.count) != (address, len(words)):
                return (
                    f"confirmed a write of {pdu.count} registers at {pdu.address} where "
                    f"{len(words)} at {address} were written"
                )
            return None

        await self._request(
            unit,
            lambda: f"write of {len(words)} registers at {address}",
            lambda client: client.write_registers(address, words, device_id=unit),
            check,
        )

    async def write_register(self, unit: int, address: int, value: int) -> None:
        """Write one holding register (function 6)."""
        self._check_unit(unit)
        check_int("address", address, 0, U16_MAX)
        check_int(f"value for register {address}", value, 0, U16_MAX)

        def check(pdu: ModbusPDU) -> str | None:
            if pdu.function_code != FC_WRITE_SINGLE:
                return f"answered function {pdu.function_code} to a write (function 6)"
            echoed = pdu.registers[0] if pdu.registers else None
            if (pdu.address, echoed) != (address, value):
                return f"confirmed {echoed} at {pdu.address} where {value} at {address} was written"
            return None

        await self._request(
            unit,
            lambda: f"write of register {address}",
            lambda client: client.write_register(address, value, device_id=unit),
            check,
        )

    def _check_unit(self, unit: int) -> None:
        # On RTU, 0 is broadcast (nobody answers) and 248-255 are reserved; a TCP device
        # addressed directly often answers as unit 0 or 255.
        if self._rtu:
            check_int("unit", unit, 1, 247)
        else:
            check_int("unit", unit, 0, 255)

    async def _request(self, unit: int, what: What, send: Send, check: Check) -> ModbusPDU:
        params = self._params
        connection = self.connection
        lock = connection.lock
        attempts = params.retries + 1
        failure: AdapterError | None = None
        task = asyncio.current_task()
        assert task is not None
        for attempt in range(attempts):
            if attempt:
                # The lock is free while we back off: other units on the link go meanwhile.
                await self._clock.sleep(params.backoff_s * 2 ** (attempt - 1))
            self._queued += 1
            try:
                await lock.acquire()
            finally:
                self._queued -= 1
            try:
                if not connection.connected:  # checked here: a coroutine per request costs
                    await connection.ensure_connected()
                pacer = self._pacer
                paced = pacer.paced
                if paced and (delay := pacer.delay(unit)) > 0:
                    await self._clock.sleep(delay)
                try:
                    # One attempt, here rather than in a coroutine of its own: every coroutine
                    # between a poll and pymodbus is passed through at each of its wake-ups.
                    client, started = connection.start_attempt(task)
                    try:
                        if connection.woken is not None:
                            raise asyncio.CancelledError
                        pdu = await send(client)
                    except asyncio.CancelledError:
                        if not connection.woken_here(task):
                            raise  # cancelled from outside (also, or only)
                        if connection.woken is LOST:
                            self._connection_lost_during(unit, what)
                        self.stats.timeouts += 1
                        if self._rtu:
                            await self._drain()
                        raise ResponseTimeout(
                            f"link {self.name}: unit {unit} did not answer the {what()} within "
                            f"{params.timeout_s} s"
                        ) from None
                    except Exception as problem:
                        raise self._mapped(problem, unit, what) from problem
                    finally:
                        connection.end_attempt()
                    pdu = self._checked(pdu, unit, what, check, started)
                except (ResponseTimeout, DeviceError, LinkDown) as exc:
                    if connection.closed or not retryable(exc):
                        raise
                    failure = exc
                    continue
                finally:
                    if paced:
                        pacer.done(unit)
            finally:
                lock.release()
            if self._queued:
                # Let the next request on the link go out before this one's answer is
                # decoded and recorded: the bus works while we do.
                await asyncio.sleep(0)
            return pdu
        assert failure is not None
        if attempts > 1:
            failure.args = (f"{failure} ({attempts} attempts)",)
        raise failure

    def _connection_lost_during(self, unit: int, describe: What) -> NoReturn:
        self.stats.errors += 1
        what = describe()
        connection = self.connection
        garbled = connection.rx_seen
        connection.drop()
        if connection.closed:
            raise LinkDown(f"link {self.name} was closed during the {what} to unit {unit}")
        if garbled:
            # pymodbus lets a frame it cannot decode escape into the transport, which
            # then closes: the unit (or something on its port) answered garbage.
            raise DeviceError(
                f"link {self.name}: unit {unit} answered the {what} with bytes that are not a "
                "Modbus answer; the connection was dropped"
            )
        raise LinkDown(f"link {self.name}: connection lost during the {what} to unit {unit}")

    def _checked(
        self, pdu: ModbusPDU, unit: int, describe: What, check: Check, started: float
    ) -> ModbusPDU:
        if pdu.isError():
            prefix, what = f"link {self.name}: unit {unit}", describe()
            code = int(getattr(pdu, "exception_code", 0))
            meaning = EXCEPTION_NAMES.get(code, "unknown exception")
            if code in GATEWAY_NO_ANSWER:
                self.stats.timeouts += 1
                raise ResponseTimeout(
                    f"{prefix} did not answer the {what}: the gateway reports {meaning} "
                    f"(Modbus exception {code})"
                )
            self.stats.errors += 1
            raise DeviceError(
                f"{prefix} refused the {what}: {meaning} (Modbus exception {code})",
                exception_code=code,
            )
        problem = check(pdu)
        if problem is not None:
            self.stats.errors += 1
            raise DeviceError(f"link {self.name}: unit {unit} {problem}")
        self.stats.last_latency_s = self._clock.monotonic() - started
        return pdu

    def _mapped(self, problem: BaseException, unit: int, describe: What) -> AdapterError:
        self.stats.errors += 1
        prefix, what = f"link {self.name}: unit {unit}", describe()
        if isinstance(problem, (ConnectionException, OSError)):
            self.connection.drop()
            return LinkDown(f"link {self.name}: connection lost during the {what} ({problem})")
        if isinstance(problem, ModbusIOException):
            return DeviceError(f"{prefix} answered the {what} with a garbled frame ({problem})")
        if isinstance(problem, ModbusException):
            return DeviceError(f"{prefix}: the {what} failed ({problem})")
        # Not expected from pymodbus; still the unit's bytes caused it, and a poller must not
        # die of one table's garbage.
        log.warning("link %s: pymodbus failed on the %s", self.name, what, exc_info=problem)
        return DeviceError(f"{prefix}: the {what} failed ({type(problem).__name__}: {problem})")

    async def _drain(self) -> None:
        """Keep the line quiet until a late answer has come and gone, then forget it.

        RTU has no transaction ids: an answer arriving after our next request went out would
        be taken for its answer. pymodbus ignores bytes that come while no request waits and
        clears its buffer when it sends, so waiting here is enough.
        """
        quiet = max(self._pacer.gap_s, self._params.timeout_s * _DRAIN_FRACTION)
        clock = self._clock
        started = clock.monotonic()
        give_up = started + self._params.timeout_s
        while True:
            now = clock.monotonic()
            wait = max(started, self.connection.rx_at) + quiet - now
            if wait <= 0 or now >= give_up:
                return
            await clock.sleep(min(wait, give_up - now))
