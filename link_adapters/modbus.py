"""Modbus links: one object per physical link (a TCP host:port or a serial port).

Every unit on a link shares its ``ModbusLink``: an RS-485 bus has one talker at a time and a
TCP gateway forwards one request at a time to its bus, so one ``asyncio.Lock`` per link keeps
a single request on the wire, and a pacer keeps a minimum gap between the end of one request
and the start of the next (the RTU inter-frame gap, or whatever a slow gateway needs).

pymodbus does the framing only. Its clients are built with ``retries=0``, ``reconnect_delay=0``
(no reconnect task) and no timeout of their own: the timeout (one timer per link, see
``ModbusLink._arm``), the retries with backoff, the reconnect backoff and the line drain after
a timeout are decided here, where they can be tested. Everything pymodbus raises or returns as
an error is mapped at this boundary to ``LinkDown``, ``ResponseTimeout`` or ``DeviceError``.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, NoReturn

from pymodbus import FramerType
from pymodbus.client import AsyncModbusSerialClient, AsyncModbusTcpClient
from pymodbus.client.base import ModbusBaseClient
from pymodbus.exceptions import ConnectionException, ModbusException, ModbusIOException
from pymodbus.pdu import ModbusPDU

from link_adapters.errors import AdapterError, DeviceError, LinkDown, ResponseTimeout

__all__ = [
    "LinkStats",
    "ModbusLink",
    "ReadWrite",
    "SerialParams",
    "TcpParams",
    "rtu_frame_gap_s",
]

log = logging.getLogger(__name__)

_U16_MAX: Final = 0xFFFF
_MAX_READ: Final = 125  # registers per read holding registers (function 3)
_MAX_WRITE: Final = 123  # registers per write multiple registers (function 16)
_MAX_RETRIES: Final = 10

_FC_READ_HOLDING: Final = 3
_FC_WRITE_SINGLE: Final = 6
_FC_WRITE_MULTIPLE: Final = 16
_FC_READ_WRITE: Final = 23
_MAX_READ_WRITE_WRITE: Final = 121  # registers written by one read/write request (function 23)

# Modbus exception codes the unit (or a gateway) may answer with.
_EXCEPTION_NAMES: Final = {
    1: "illegal function",
    2: "illegal data address",
    3: "illegal data value",
    4: "server device failure",
    5: "acknowledge (still processing)",
    6: "server device busy",
    8: "memory parity error",
    10: "gateway path unavailable",
    11: "gateway target device failed to respond",
}
# A gateway answering 10 or 11 says the unit behind it did not answer: that is a timeout of
# the unit, not a refusal, and is retried like one.
_GATEWAY_NO_ANSWER: Final = frozenset({10, 11})
# Busy is a transient refusal; every other exception is the unit's deliberate answer.
_RETRYABLE_EXCEPTIONS: Final = frozenset({6})

# After a timeout on an RTU line the answer may still come: we keep the line quiet until it
# has been silent for this fraction of the timeout (at least the frame gap), so a late answer
# lands while nobody waits for it and is discarded, instead of after our next request.
_DRAIN_FRACTION: Final = 0.25
# pymodbus's own answer timeout is off (None: it waits for the answer as long as it is let):
# ours is the one timeout. pymodbus's would also count timeouts and drop a TCP connection
# after a few, even when only one unit behind a gateway is silent, and on Python 3.11 its
# wait_for costs every request a timer and a pass of the event loop more. Connecting is
# bounded by our timeout too (``_ensure_connected``).
_PYMODBUS_NO_TIMEOUT: Final[Any] = None


# --- parameters ----------------------------------------------------------------------------


def _check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    return value


def _check_seconds(name: str, value: object, *, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number of seconds, got {value!r}")
    if value < 0 or (positive and value == 0):
        kind = "greater than 0" if positive else "0 or more"
        raise ValueError(f"{name} must be {kind} seconds, got {value}")
    return float(value)


def _check_policy(
    timeout_s: object,
    retries: object,
    backoff_s: object,
    reconnect_min_s: object,
    reconnect_max_s: object,
) -> None:
    _check_seconds("timeout_s", timeout_s, positive=True)
    _check_int("retries", retries, 0, _MAX_RETRIES)
    _check_seconds("backoff_s", backoff_s, positive=False)
    low = _check_seconds("reconnect_min_s", reconnect_min_s, positive=True)
    high = _check_seconds("reconnect_max_s", reconnect_max_s, positive=True)
    if high < low:
        raise ValueError(f"reconnect_max_s ({high}) must not be less than reconnect_min_s ({low})")


@dataclass(frozen=True, kw_only=True, slots=True)
class TcpParams:
    """A Modbus TCP link (MBAP framing), or RTU frames over TCP (a serial gateway in raw mode).

    ``timeout_s`` bounds one attempt (and the connect); ``retries`` more attempts follow a
    timeout after ``backoff_s``, doubling. ``min_gap_s`` is kept between the end of one
    request and the start of the next. A failed connect waits ``reconnect_min_s`` before the
    next attempt, doubling up to ``reconnect_max_s``.
    """

    host: str
    port: int = 502
    rtu_over_tcp: bool = False
    timeout_s: float = 0.5
    retries: int = 1
    backoff_s: float = 0.05
    min_gap_s: float = 0.0
    reconnect_min_s: float = 0.5
    reconnect_max_s: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.host, str) or not self.host.strip():
            raise ValueError(f"host must be a host name or address, got {self.host!r}")
        _check_int("port", self.port, 1, 65535)
        if not isinstance(self.rtu_over_tcp, bool):
            raise ValueError(f"rtu_over_tcp must be true or false, got {self.rtu_over_tcp!r}")
        _check_seconds("min_gap_s", self.min_gap_s, positive=False)
        _check_policy(
            self.timeout_s,
            self.retries,
            self.backoff_s,
            self.reconnect_min_s,
            self.reconnect_max_s,
        )

    @property
    def frame_gap_s(self) -> float:
        return self.min_gap_s


def rtu_frame_gap_s(
    baudrate: int, bytesize: int = 8, parity: str = "N", stopbits: int = 1
) -> float:
    """The RTU inter-frame gap: 3.5 character times, or 1.75 ms above 19200 baud.

    Modbus over serial line v1.02, 2.5.1.1: above 19200 baud the gap is fixed at 1.75 ms so
    fast lines are not held to timer resolutions a device cannot keep.
    """
    if baudrate > 19200:
        return 0.00175
    bits_per_char = 1 + bytesize + (0 if parity == "N" else 1) + stopbits
    return 3.5 * bits_per_char / baudrate


@dataclass(frozen=True, kw_only=True, slots=True)
class SerialParams:
    """An RS-485 (or RS-232) serial port speaking Modbus RTU.

    ``min_gap_s`` None keeps the RTU inter-frame gap (3.5 character times at the line's
    settings, see ``rtu_frame_gap_s``). Timeouts, retries and reconnects as in TcpParams.
    """

    port: str
    baudrate: int = 19200
    bytesize: int = 8
    parity: str = "N"
    stopbits: int = 1
    timeout_s: float = 0.2
    retries: int = 1
    backoff_s: float = 0.02
    min_gap_s: float | None = None
    reconnect_min_s: float = 0.5
    reconnect_max_s: float = 30.0

    def __post_init__(self) -> None:
        if not isinstance(self.port, str) or not self.port.strip():
            raise ValueError(f"port must be a serial device path, got {self.port!r}")
        _check_int("baudrate", self.baudrate, 50, 4_000_000)
        # RTU frames are binary: with 7 data bits every byte above 127 would be mangled.
        if self.bytesize != 8 or isinstance(self.bytesize, bool):
            raise ValueError(f"bytesize must be 8 (Modbus RTU), got {self.bytesize!r}")
        if self.parity not in ("N", "E", "O"):
            raise ValueError(f"parity must be 'N', 'E' or 'O', got {self.parity!r}")
        if self.stopbits not in (1, 2) or isinstance(self.stopbits, bool):
            raise ValueError(f"stopbits must be 1 or 2, got {self.stopbits!r}")
        if self.min_gap_s is not None:
            _check_seconds("min_gap_s", self.min_gap_s, positive=False)
        _check_policy(
            self.timeout_s,
            self.retries,
            self.backoff_s,
            self.reconnect_min_s,
            self.reconnect_max_s,
        )

    @property
    def frame_gap_s(self) -> float:
        """``min_gap_s``, or the RTU inter-frame gap at this line's settings."""
        if self.min_gap_s is not None:
            return self.min_gap_s
        return rtu_frame_gap_s(self.baudrate, self.bytesize, self.parity, self.stopbits)


@dataclass(slots=True)
class LinkStats:
    """Counters of one link, for health pages and metrics (a live view: read, do not write).

    ``requests`` counts attempts put on the wire (a retry is one more); ``timeouts`` attempts
    with no answer in time; ``errors`` attempts that failed otherwise (an exception response,
    a garbled answer, the connection lost); ``reconnects`` connections made after the first;
    ``last_latency_s`` the round trip of the latest answered request (0.0 before any).
    """

    requests: int = 0
    timeouts: int = 0
    errors: int = 0
    reconnects: int = 0
    last_latency_s: float = 0.0


# --- pacing --------------------------------------------------------------------------------


class _Pacer:
    """Minimum gaps between requests: on the whole link, and optionally per unit.

    Used under the link's lock, so the gap measured from the last request holds for
    whichever unit is addressed next.
    """

    __slots__ = ("_gap_s", "_last_end", "_unit_gap_s", "_unit_last_end", "paced")

    def __init__(self, gap_s: float) -> None:
        self._gap_s = gap_s
        self._last_end = -math.inf
        self._unit_gap_s: dict[int, float] = {}
        self._unit_last_end: dict[int, float] = {}
        # Any gap to keep at all: without one (a TCP gateway) requests are not timed.
        self.paced = gap_s > 0

    @property
    def gap_s(self) -> float:
        return self._gap_s

    def set_unit_gap(self, unit: int, seconds: float) -> None:
        if seconds:
            self._unit_gap_s[unit] = seconds
        else:
            self._unit_gap_s.pop(unit, None)
            self._unit_last_end.pop(unit, None)
        self.paced = self._gap_s > 0 or bool(self._unit_gap_s)

    def delay(self, unit: int) -> float:
        """Seconds to wait before the next request to ``unit`` may start (0 or less: none)."""
        ready_at = self._last_end + self._gap_s
        if unit in self._unit_gap_s:
            unit_end = self._unit_last_end.get(unit, -math.inf)
            ready_at = max(ready_at, unit_end + self._unit_gap_s[unit])
        return ready_at - time.monotonic()

    def done(self, unit: int) -> None:
        self._last_end = time.monotonic()
        if unit in self._unit_gap_s:
            self._unit_last_end[unit] = self._last_end


# --- prepared requests ---------------------------------------------------------------------


def _all_words(values: Sequence[int]) -> bool:
    """Every value an int 0-65535 (not a bool)."""
    for value in values:  # noqa: SIM110 (a loop: no generator made at every poll)
        if type(value) is not int or not 0 <= value <= _U16_MAX:
            return False
    return True


class ReadWrite:
    """One unit's read/write request (function 23), addresses checked once by
    ``ModbusLink.prepare_read_write``."""

    __slots__ = ("link", "read_address", "read_count", "unit", "write_address", "write_count")

    def __init__(
        self,
        link: ModbusLink,
        unit: int,
        read_address: int,
        read_count: int,
        write_address: int,
        write_count: int,
    ) -> None:
        self.link = link
        self.unit = unit
        self.read_address = read_address
        self.read_count = read_count
        self.write_address = write_address
        self.write_count = write_count

    def __repr__(self) -> str:
        return f"ReadWrite(unit {self.unit} on {self.link.name}: {self.describe()})"

    def describe(self) -> str:
        return (
            f"read of {self.read_count} registers at {self.read_address} with a write of "
            f"{self.write_count} at {self.write_address}"
        )

    def check(self, pdu: ModbusPDU) -> str | None:
        if pdu.function_code != _FC_READ_WRITE:
            return f"answered function {pdu.function_code} to a read/write (function 23)"
        if len(pdu.registers) != self.read_count:
            return f"answered {len(pdu.registers)} registers where {self.read_count} were asked"
        return None


# --- the link ------------------------------------------------------------------------------

_Send = Callable[[ModbusBaseClient], Awaitable[ModbusPDU]]
_Check = Callable[[ModbusPDU], str | None]
# Says what a request was ("read of 34 registers at 0"), for error messages only: called
# only when one is made.
_What = Callable[[], str]
# Why the task waiting for an answer was woken.
_LOST: Final = "connection lost"
_TIMED_OUT: Final = "timed out"


class ModbusLink:
    """One physical link: one TCP host:port or one serial port, shared by every unit on it.

    ``connect()`` is optional: a request on a link that is down connects first. Connecting
    obeys the reconnect backoff: while it runs, connect() and requests raise LinkDown at once
    without touching the wire, so pollers can keep their own cadence on a dead link. The first
    attempt after a connection is lost is immediate. ``close()`` is final.

    Requests are retried after a timeout, a garbled answer, a busy unit or a lost connection;
    a Modbus exception is the unit's answer and is not. Writes are therefore retried too:
    write only values that are safe to write twice (the reference map's are).
    """

    def __init__(self, params: TcpParams | SerialParams, *, name: str = "") -> None:
        if not isinstance(params, (TcpParams, SerialParams)):
            raise ValueError(f"params must be TcpParams or SerialParams, got {params!r}")
        if not isinstance(name, str):
            raise ValueError(f"name must be a string, got {name!r}")
        self._params = params
        if isinstance(params, TcpParams):
            self._target = f"{params.host}:{params.port}"
            self._rtu = params.rtu_over_tcp
        else:
            self._target = params.port
            self._rtu = True
        self.name = name or self._target
        self.stats = LinkStats()
        self._lock = asyncio.Lock()
        self._queued = 0  # requests waiting for the lock
        self._pacer = _Pacer(params.frame_gap_s)
        self._client: ModbusBaseClient | None = None
        self._lost: asyncio.Future[None] | None = None
        self._closed = False
        self._ever_connected = False
        self._reconnect_delay_s = params.reconnect_min_s
        self._next_connect_at = -math.inf
        self._last_connect_problem = ""
        self._rx_at = -math.inf  # when bytes last arrived, for the drain
        self._rx_seen = False  # bytes arrived during the current attempt
        self._waiter: asyncio.Task[object] | None = None  # the task waiting for an answer
        self._woken: str | None = None  # ... and why it was woken (_LOST, _TIMED_OUT)
        # The answer's deadline (loop time; None while no request waits), watched by one timer
        # per link that is re-armed lazily (see ``_watch``).
        self._deadline: float | None = None
        self._watchdog: asyncio.TimerHandle | None = None

    def __repr__(self) -> str:
        return f"ModbusLink({self.name!r}, {self._target!r})"

    @property
    def params(self) -> TcpParams | SerialParams:
        return self._params

    @property
    def connected(self) -> bool:
        return self._is_up()

    def set_unit_gap(self, unit: int, seconds: float) -> None:
        """Keep ``seconds`` between the end of a request to ``unit`` and the next one to it
        (for controllers that need a rest after answering); 0 removes the gap."""
        self._check_unit(unit)
        self._pacer.set_unit_gap(unit, _check_seconds("seconds", seconds, positive=False))

    # --- connection ----------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the link now. Raises LinkDown if it cannot be opened, or the backoff runs."""
        async with self._lock:
            await self._ensure_connected()

    async def close(self) -> None:
        """Close the link for good. Idempotent; a request in flight ends with LinkDown."""
        if self._closed:
            return
        self._closed = True
        self._drop_client()
        # Wait for a request in flight to see the loss and clean up its task, and for a
        # connect in progress to finish (it drops what it opened once it sees we closed).
        async with self._lock:
            self._drop_client()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    def _is_up(self) -> bool:
        return (
            self._client is not None
            and self._client.connected
            and self._lost is not None
            and not self._lost.done()
        )

    async def _ensure_connected(self) -> ModbusBaseClient:
        if self._closed:
            raise LinkDown(f"link {self.name} is closed")
        if self._is_up():
            assert self._client is not None
            return self._client
        self._drop_client()
        wait = self._next_connect_at - time.monotonic()
        if wait > 0:
            raise LinkDown(
                f"link {self.name} is down ({self._last_connect_problem}); "
                f"next connection attempt in {wait:.1f} s"
            )
        lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        client = self._new_client(lost)
        problem = ""
        try:
            opened = await asyncio.wait_for(client.connect(), self._params.timeout_s)
        except TimeoutError:
            opened, problem = False, f"no connection within {self._params.timeout_s} s"
        except (OSError, ModbusException) as exc:
            opened, problem = False, str(exc)
        except BaseException:  # cancelled: nothing half-open may stay behind
            client.close()
            raise
        if self._closed:
            client.close()
            raise LinkDown(f"link {self.name} was closed while connecting")
        if not opened or not client.connected:
            client.close()
            self._connect_failed(problem or self._connect_refusal())
        self._client, self._lost = client, lost
        self._reconnect_delay_s = self._params.reconnect_min_s
        self._next_connect_at = -math.inf
        if self._ever_connected:
            self.stats.reconnects += 1
            log.info("link %s: connected again to %s", self.name, self._target)
        self._ever_connected = True
        return client

    def _connect_refusal(self) -> str:
        if isinstance(self._params, SerialParams):
            return f"cannot open serial port {self._target}"
        return f"cannot connect to {self._target}"

    def _connect_failed(self, problem: str) -> NoReturn:
        delay = self._reconnect_delay_s
        self._next_connect_at = time.monotonic() + delay
        self._reconnect_delay_s = min(delay * 2, self._params.reconnect_max_s)
        self._last_connect_problem = problem
        log.warning("link %s: %s; next attempt in %.1f s", self.name, problem, delay)
        raise LinkDown(f"link {self.name}: {problem}; next connection attempt in {delay:.1f} s")

    def _new_client(self, lost: asyncio.Future[None]) -> ModbusBaseClient:
        params = self._params
        on_connect = partial(self._on_connection_change, lost)
        if isinstance(params, TcpParams):
            return AsyncModbusTcpClient(
                params.host,
                port=params.port,
                framer=FramerType.RTU if params.rtu_over_tcp else FramerType.SOCKET,
                name=self.name,
                timeout=_PYMODBUS_NO_TIMEOUT,
                retries=0,
                reconnect_delay=0,
                reconnect_delay_max=0,
                trace_packet=self._on_packet,
                trace_connect=on_connect,
            )
        return AsyncModbusSerialClient(
            params.port,
            framer=FramerType.RTU,
            baudrate=params.baudrate,
            bytesize=params.bytesize,
            parity=params.parity,
            stopbits=params.stopbits,
            name=self.name,
            timeout=_PYMODBUS_NO_TIMEOUT,
            retries=0,
            reconnect_delay=0,
            reconnect_delay_max=0,
            trace_packet=self._on_packet,
            trace_connect=on_connect,
        )

    def _on_connection_change(self, lost: asyncio.Future[None], connected: bool) -> None:
        # pymodbus calls this with False when the peer or the port drops the connection (not
        # when we close it): wake a request waiting for an answer that cannot come.
        if not connected and not lost.done():
            lost.set_result(None)
            self._wake_waiter(lost)

    def _on_packet(self, sending: bool, data: bytes) -> bytes:
        if not sending:
            self._rx_at = time.monotonic()
            self._rx_seen = True
        return data

    def _drop_client(self) -> None:
        client, self._client = self._client, None
        lost = self._lost
        if lost is not None and not lost.done():
            lost.set_result(None)
            self._wake_waiter(lost)
        self._lost = None
        if client is not None:
            client.close()

    # --- requests ------------------------------------------------------------------------

    async def read_holding(self, unit: int, address: int, count: int) -> list[int]:
        """``count`` holding registers from ``address`` of ``unit``."""
        self._check_unit(unit)
        _check_int("address", address, 0, _U16_MAX)
        _check_int("count", count, 1, _MAX_READ)
        _check_int("last address", address + count - 1, 0, _U16_MAX)

        def check(pdu: ModbusPDU) -> str | None:
            if pdu.function_code != _FC_READ_HOLDING:
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
        _check_int("read address", read_address, 0, _U16_MAX)
        _check_int("read count", read_count, 1, _MAX_READ)
        _check_int("last read address", read_address + read_count - 1, 0, _U16_MAX)
        _check_int("address", write_address, 0, _U16_MAX)
        _check_int("number of values", write_count, 1, _MAX_READ_WRITE_WRITE)
        _check_int("last address", write_address + write_count - 1, 0, _U16_MAX)
        return ReadWrite(self, unit, read_address, read_count, write_address, write_count)

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
        words = self._check_words(write_address, values, _MAX_READ_WRITE_WRITE)
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
        if request.link is not self:
            raise ValueError(f"{request!r} was prepared for another link")
        if len(values) != request.write_count or not _all_words(values):
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
        _check_int("address", address, 0, _U16_MAX)
        if _all_words(values):
            words = list(values)
        else:
            words = [
                _check_int(f"value for register {address + offset}", value, 0, _U16_MAX)
                for offset, value in enumerate(values)
            ]
        _check_int("number of values", len(words), 1, most)
        _check_int("last address", address + len(words) - 1, 0, _U16_MAX)
        return words

    async def write_registers(self, unit: int, address: int, values: Sequence[int]) -> None:
        """Write ``values`` to consecutive holding registers from ``address`` (function 16)."""
        self._check_unit(unit)
        words = self._check_words(address, values, _MAX_WRITE)

        def check(pdu: ModbusPDU) -> str | None:
            if pdu.function_code != _FC_WRITE_MULTIPLE:
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
        _check_int("address", address, 0, _U16_MAX)
        _check_int(f"value for register {address}", value, 0, _U16_MAX)

        def check(pdu: ModbusPDU) -> str | None:
            if pdu.function_code != _FC_WRITE_SINGLE:
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
            _check_int("unit", unit, 1, 247)
        else:
            _check_int("unit", unit, 0, 255)

    async def _request(self, unit: int, what: _What, send: _Send, check: _Check) -> ModbusPDU:
        params = self._params
        attempts = params.retries + 1
        failure: AdapterError | None = None
        task = asyncio.current_task()
        assert task is not None
        for attempt in range(attempts):
            if attempt:
                # The lock is free while we back off: other units on the link go meanwhile.
                await asyncio.sleep(params.backoff_s * 2 ** (attempt - 1))
            self._queued += 1
            try:
                await self._lock.acquire()
            finally:
                self._queued -= 1
            try:
                if not self._is_up():  # checked here: a coroutine per request costs
                    await self._ensure_connected()
                pacer = self._pacer
                paced = pacer.paced
                if paced and (delay := pacer.delay(unit)) > 0:
                    await asyncio.sleep(delay)
                try:
                    # One attempt, here rather than in a coroutine of its own: every coroutine
                    # between a poll and pymodbus is passed through at each of its wake-ups.
                    client, started = self._start_attempt(task)
                    try:
                        if self._woken is not None:
                            raise asyncio.CancelledError
                        pdu = await send(client)
                    except asyncio.CancelledError:
                        if not self._woken_here(task):
                            raise  # cancelled from outside (also, or only)
                        if self._woken is _LOST:
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
                        self._waiter = self._deadline = None
                    pdu = self._checked(pdu, unit, what, check, started)
                except (ResponseTimeout, DeviceError, LinkDown) as exc:
                    if self._closed or not _retryable(exc):
                        raise
                    failure = exc
                    continue
                finally:
                    if paced:
                        pacer.done(unit)
            finally:
                self._lock.release()
            if self._queued:
                # Let the next request on the link go out before this one's answer is
                # decoded and recorded: the bus works while we do.
                await asyncio.sleep(0)
            return pdu
        assert failure is not None
        if attempts > 1:
            failure.args = (f"{failure} ({attempts} attempts)",)
        raise failure

    def _start_attempt(self, task: asyncio.Task[object]) -> tuple[ModbusBaseClient, float]:
        """Count the attempt, make ``task`` the waiter for its answer and set its deadline;
        the client to send with and when the attempt started.

        pymodbus keeps waiting for an answer when the connection drops: the loss wakes the
        waiter instead (``_wake_waiter``), as does the deadline (``_watch``), and either is
        told apart from a cancel from outside (``_woken_here``).
        """
        client, lost = self._client, self._lost
        assert client is not None and lost is not None
        self.stats.requests += 1
        self._rx_seen = False
        self._waiter, self._woken = task, _LOST if lost.done() else None
        return client, self._arm(self._params.timeout_s)

    def _woken_here(self, task: asyncio.Task[object]) -> bool:
        """Whether the waiter's cancellation is this link's doing only (a loss, a deadline);
        if it is, it is taken back."""
        if self._woken is None:
            return False
        return not (task.cancelling() and task.uncancel() > 0)

    def _arm(self, timeout_s: float) -> float:
        """Set the deadline of the answer now awaited; the time now (the event loop's,
        the monotonic clock).

        One timer per link watches every deadline: requests follow one another in well under
        a timeout, so the timer set for the first of them finds a later deadline when it
        fires and is set again for that one. A request costs no timer of its own (a timer
        per request is a heap push and a cancelled handle left behind each time).
        """
        loop = asyncio.get_running_loop()
        now = loop.time()
        deadline = self._deadline = now + timeout_s
        watchdog = self._watchdog
        if watchdog is None or deadline < watchdog.when():
            if watchdog is not None:
                watchdog.cancel()
            self._watchdog = loop.call_at(deadline, self._watch)
        return now

    def _watch(self) -> None:
        self._watchdog = None
        deadline = self._deadline
        if deadline is None:
            return  # no request waits: the timer stays off until the next one
        loop = asyncio.get_running_loop()
        if loop.time() < deadline:
            self._watchdog = loop.call_at(deadline, self._watch)
            return
        waiter = self._waiter
        if waiter is not None and self._woken is None:
            self._woken = _TIMED_OUT
            waiter.cancel()

    def _wake_waiter(self, lost: asyncio.Future[None]) -> None:
        waiter = self._waiter
        if waiter is asyncio.current_task():
            return  # the waiter itself is handling the loss
        if waiter is not None and lost is self._lost and self._woken is None:
            self._woken = _LOST
            waiter.cancel()

    def _connection_lost_during(self, unit: int, describe: _What) -> NoReturn:
        self.stats.errors += 1
        what = describe()
        garbled = self._rx_seen
        self._drop_client()
        if self._closed:
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
        self, pdu: ModbusPDU, unit: int, describe: _What, check: _Check, started: float
    ) -> ModbusPDU:
        if pdu.isError():
            prefix, what = f"link {self.name}: unit {unit}", describe()
            code = int(getattr(pdu, "exception_code", 0))
            meaning = _EXCEPTION_NAMES.get(code, "unknown exception")
            if code in _GATEWAY_NO_ANSWER:
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
        self.stats.last_latency_s = time.monotonic() - started
        return pdu

    def _mapped(self, problem: BaseException, unit: int, describe: _What) -> AdapterError:
        self.stats.errors += 1
        prefix, what = f"link {self.name}: unit {unit}", describe()
        if isinstance(problem, (ConnectionException, OSError)):
            self._drop_client()
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
        started = time.monotonic()
        give_up = started + self._params.timeout_s
        while True:
            now = time.monotonic()
            wait = max(started, self._rx_at) + quiet - now
            if wait <= 0 or now >= give_up:
                return
            await asyncio.sleep(min(wait, give_up - now))


def _retryable(error: AdapterError) -> bool:
    if isinstance(error, DeviceError):
        return error.exception_code is None or error.exception_code in _RETRYABLE_EXCEPTIONS
    return True
