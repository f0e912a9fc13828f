"""A Modbus link's parameters: a TCP (or RTU-over-TCP) link, a serial port, and its counters.

Frozen keyword-only dataclasses, checked whoever builds them; ``rtu_frame_gap_s`` gives the RTU
inter-frame gap a serial line keeps by default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Final

__all__ = [
    "LinkStats",
    "SerialParams",
    "TcpParams",
    "check_int",
    "check_seconds",
    "rtu_frame_gap_s",
]

_MAX_RETRIES: Final = 10


def check_int(name: str, value: object, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an int, got {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be between {low} and {high}, got {value}")
    return value


def check_seconds(name: str, value: object, *, positive: bool) -> float:
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
    check_seconds("timeout_s", timeout_s, positive=True)
    check_int("retries", retries, 0, _MAX_RETRIES)
    check_seconds("backoff_s", backoff_s, positive=False)
    low = check_seconds("reconnect_min_s", reconnect_min_s, positive=True)
    high = check_seconds("reconnect_max_s", reconnect_max_s, positive=True)
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
        check_int("port", self.port, 1, 65535)
        if not isinstance(self.rtu_over_tcp, bool):
            raise ValueError(f"rtu_over_tcp must be true or false, got {self.rtu_over_tcp!r}")
        check_seconds("min_gap_s", self.min_gap_s, positive=False)
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
        check_int("baudrate", self.baudrate, 50, 4_000_000)
        # RTU frames are binary: with 7 data bits every byte above 127 would be mangled.
        if self.bytesize != 8 or isinstance(self.bytesize, bool):
            raise ValueError(f"bytesize must be 8 (Modbus RTU), got {self.bytesize!r}")
        if self.parity not in ("N", "E", "O"):
            raise ValueError(f"parity must be 'N', 'E' or 'O', got {self.parity!r}")
        if self.stopbits not in (1, 2) or isinstance(self.stopbits, bool):
            raise ValueError(f"stopbits must be 1 or 2, got {self.stopbits!r}")
        if self.min_gap_s is not None:
            check_seconds("min_gap_s", self.min_gap_s, positive=False)
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
