"""A Modbus link's connection: opening it with a reconnect backoff, noticing its loss, and
the one watchdog per link that wakes a request whose answer is late or cannot come.

A ``ModbusLink`` (``link_adapters.modbus``) holds one ``LinkConnection`` and sends its requests
through it: it takes the connection's lock, makes sure it is up, and starts and ends each
attempt here, so the watchdog knows which task waits for which deadline.
"""

from __future__ import annotations

import asyncio
import logging
import math
from functools import partial
from typing import Any, Final, NoReturn

from pymodbus import FramerType
from pymodbus.client import AsyncModbusSerialClient, AsyncModbusTcpClient
from pymodbus.client.base import ModbusBaseClient
from pymodbus.exceptions import ModbusException

from link_adapters.errors import LinkDown
from link_adapters.link_clock import SYSTEM_CLOCK, LinkClock, Timer
from link_adapters.modbus_params import LinkStats, SerialParams, TcpParams

__all__ = ["LOST", "TIMED_OUT", "LinkConnection"]

# Logged as the link's, as before the connection had a module of its own.
log = logging.getLogger("link_adapters.modbus")

# pymodbus's own answer timeout is off (None: it waits for the answer as long as it is let):
# ours is the one timeout. pymodbus's would also count timeouts and drop a TCP connection
# after a few, even when only one unit behind a gateway is silent, and on Python 3.11 its
# wait_for costs every request a timer and a pass of the event loop more. Connecting is
# bounded by our timeout too, on the link's clock (``ensure_connected``).
_PYMODBUS_NO_TIMEOUT: Final[Any] = None

# What a serial port raises when the operating system refuses its settings (a parity, stop
# bits or a baud rate the adapter cannot do): pyserial lets ``termios.error`` (no OSError) out
# of ``tcsetattr``, and a ValueError out of setting a custom baud rate.
try:
    import termios
except ImportError:  # no termios: pyserial's own platform code
    _SERIAL_SETTINGS_REFUSED: tuple[type[Exception], ...] = (ValueError,)
else:
    _SERIAL_SETTINGS_REFUSED = (termios.error, ValueError)

# Why the task waiting for an answer was woken.
LOST: Final = "connection lost"
TIMED_OUT: Final = "timed out"


class LinkConnection:
    """The connection of one physical link and the waiter for its answer (see ModbusLink).

    ``lock`` is held by whoever uses the wire: a request from sending to its answer, a
    connect while it opens. With it held, ``ensure_connected`` opens the connection if it is
    down, and each attempt of a request runs between ``start_attempt`` and ``end_attempt``;
    ``woken`` then says whether the wait was cut short by a loss or the deadline.
    ``stats`` counts the requests and reconnects here; the link counts their failures in it.
    """

    def __init__(
        self, params: TcpParams | SerialParams, *, name: str = "", clock: LinkClock | None = None
    ) -> None:
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
        # Every wait and every time read of the connection: deadlines, the reconnect backoff,
        # when bytes arrived (the link that holds it keeps its time on the same clock).
        self._clock = SYSTEM_CLOCK if clock is None else clock
        self.stats = LinkStats()
        self.lock = asyncio.Lock()
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
        self._woken: str | None = None  # ... and why it was woken (LOST, TIMED_OUT)
        # The answer's deadline (the clock's time; None while no request waits), watched by
        # one timer per link that is re-armed lazily (see ``_watch``).
        self._deadline: float | None = None
        self._watchdog: Timer | None = None

    def __repr__(self) -> str:
        return f"LinkConnection({self.name!r}, {self._target!r})"

    @property
    def params(self) -> TcpParams | SerialParams:
        return self._params

    @property
    def target(self) -> str:
        """What the link connects to: ``host:port``, or the serial port."""
        return self._target

    @property
    def rtu(self) -> bool:
        """Whether the link speaks RTU framing (a serial port, or RTU over TCP)."""
        return self._rtu

    @property
    def connected(self) -> bool:
        return (
            self._client is not None
            and self._client.connected
            and self._lost is not None
            and not self._lost.done()
        )

    @property
    def closed(self) -> bool:
        """Whether ``close()`` was called: the connection is not opened again."""
        return self._closed

    @property
    def woken(self) -> str | None:
        """Why the task waiting for an answer was woken (``LOST``, ``TIMED_OUT``); None while
        it was not."""
        return self._woken

    @property
    def rx_seen(self) -> bool:
        """Whether bytes arrived during the current attempt."""
        return self._rx_seen

    @property
    def rx_at(self) -> float:
        """When bytes last arrived (the link's clock), for the drain after a timeout."""
        return self._rx_at

    # --- connection ----------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the link now. Raises LinkDown if it cannot be opened, or the backoff runs."""
        async with self.lock:
            await self.ensure_connected()

    async def close(self) -> None:
        """Close the link for good. Idempotent; a request in flight ends with LinkDown."""
        if self._closed:
            return
        self._closed = True
        self.drop()
        # Wait for a request in flight to see the loss and clean up its task, and for a
        # connect in progress to finish (it drops what it opened once it sees we closed).
        async with self.lock:
            self.drop()
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None

    async def ensure_connected(self) -> ModbusBaseClient:
        """The client of the open connection, opened now if it is down (with ``lock`` held).
        Raises LinkDown if it cannot be opened, or the backoff runs."""
        if self._closed:
            raise LinkDown(f"link {self.name} is closed")
        if self.connected:
            assert self._client is not None
            return self._client
        self.drop()
        wait = self._next_connect_at - self._clock.monotonic()
        if wait > 0:
            raise LinkDown(
                f"link {self.name} is down ({self._last_connect_problem}); "
                f"next connection attempt in {wait:.1f} s"
            )
        task = asyncio.current_task()
        assert task is not None
        lost: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        client = self._new_client(lost)
        problem = ""
        # The connecting task waits as a request waits for its answer: the link's watchdog
        # wakes it at the deadline, on the link's clock.
        self._waiter, self._woken = task, None
        self._arm(self._params.timeout_s)
        try:
            opened = await client.connect()
        except asyncio.CancelledError:
            if not self.woken_here(task):
                client.close()  # cancelled from outside: nothing half-open may stay behind
                raise
            opened, problem = False, f"no connection within {self._params.timeout_s} s"
        except (OSError, ModbusException) as exc:
            opened, problem = False, str(exc)
        except _SERIAL_SETTINGS_REFUSED as exc:
            if not isinstance(self._params, SerialParams):
                client.close()
                raise
            opened, problem = False, self._settings_refused(self._params, exc)
        except BaseException:
            client.close()
            raise
        finally:
            self._waiter = self._deadline = None
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

    def _settings_refused(self, params: SerialParams, exc: Exception) -> str:
        """The refusal of a serial port's settings, naming the port and every setting."""
        parts = exc.args
        if len(parts) == 2 and isinstance(parts[0], int):  # termios.error: (errno, text)
            why = f"{parts[1]} (errno {parts[0]})"
        else:
            why = str(exc) or type(exc).__name__
        stops = "1 stop bit" if params.stopbits == 1 else f"{params.stopbits} stop bits"
        return (
            f"serial port {self._target} refused its settings ({params.baudrate} baud, "
            f"{params.bytesize} data bits, parity {params.parity}, {stops}): {why}; "
            "check that the adapter can do them"
        )

    def _connect_refusal(self) -> str:
        if isinstance(self._params, SerialParams):
            return f"cannot open serial port {self._target}"
        return f"cannot connect to {self._target}"

    def _connect_failed(self, problem: str) -> NoReturn:
        delay = self._reconnect_delay_s
        self._next_connect_at = self._clock.monotonic() + delay
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
            self._rx_at = self._clock.monotonic()
            self._rx_seen = True
        return data

    def drop(self) -> None:
        """Close the connection now and wake the task waiting for an answer on it; the next
        request opens a new one."""
        client, self._client = self._client, None
        lost = self._lost
        if lost is not None and not lost.done():
            lost.set_result(None)
            self._wake_waiter(lost)
        self._lost = None
        if client is not None:
            client.close()

    # --- waiting for an answer ---------------------------------------------------------

    def start_attempt(self, task: asyncio.Task[object]) -> tuple[ModbusBaseClient, float]:
        """Count the attempt, make ``task`` the waiter for its answer and set its deadline;
        the client to send with and when the attempt started.

        pymodbus keeps waiting for an answer when the connection drops: the loss wakes the
        waiter instead (``_wake_waiter``), as does the deadline (``_watch``), and either is
        told apart from a cancel from outside (``woken_here``). If the connection was already
        lost, ``woken`` says so at once.
        """
        client, lost = self._client, self._lost
        assert client is not None and lost is not None
        self.stats.requests += 1
        self._rx_seen = False
        self._waiter, self._woken = task, LOST if lost.done() else None
        return client, self._arm(self._params.timeout_s)

    def end_attempt(self) -> None:
        """The attempt is over: no task waits for an answer, and no deadline runs."""
        self._waiter = self._deadline = None

    def woken_here(self, task: asyncio.Task[object]) -> bool:
        """Whether the waiter's cancellation is this link's doing only (a loss, a deadline);
        if it is, it is taken back."""
        if self._woken is None:
            return False
        return not (task.cancelling() and task.uncancel() > 0)

    def _arm(self, timeout_s: float) -> float:
        """Set the deadline of the answer now awaited; the time now (the link's clock).

        One timer per link watches every deadline: requests follow one another in well under
        a timeout, so the timer set for the first of them finds a later deadline when it
        fires and is set again for that one. A request costs no timer of its own (a timer
        per request is a heap push and a cancelled handle left behind each time).
        """
        clock = self._clock
        now = clock.monotonic()
        deadline = self._deadline = now + timeout_s
        watchdog = self._watchdog
        if watchdog is None or deadline < watchdog.when():
            if watchdog is not None:
                watchdog.cancel()
            self._watchdog = clock.call_at(deadline, self._watch)
        return now

    def _watch(self) -> None:
        self._watchdog = None
        deadline = self._deadline
        if deadline is None:
            return  # no request waits: the timer stays off until the next one
        clock = self._clock
        if clock.monotonic() < deadline:
            self._watchdog = clock.call_at(deadline, self._watch)
            return
        waiter = self._waiter
        if waiter is not None and self._woken is None:
            self._woken = TIMED_OUT
            waiter.cancel()

    def _wake_waiter(self, lost: asyncio.Future[None]) -> None:
        waiter = self._waiter
        if waiter is asyncio.current_task():
            return  # the waiter itself is handling the loss
        if waiter is not None and lost is self._lost and self._woken is None:
            self._woken = LOST
            waiter.cancel()
