"""A serial line for tests: two pseudo-terminals joined like a null-modem cable."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import pty
import termios
import tty
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any


@contextlib.asynccontextmanager
async def pty_line() -> AsyncIterator[tuple[str, str]]:
    """Two serial device paths joined like a null-modem cable (two pty pairs, bridged)."""
    loop = asyncio.get_running_loop()
    (m1, s1), (m2, s2) = pty.openpty(), pty.openpty()
    for fd in (s1, s2):
        tty.setraw(fd)
    for fd in (m1, m2):
        os.set_blocking(fd, False)

    def pump(src: int, dst: int) -> None:
        with contextlib.suppress(BlockingIOError):
            data = os.read(src, 4096)
            if data:
                os.write(dst, data)

    loop.add_reader(m1, pump, m1, m2)
    loop.add_reader(m2, pump, m2, m1)
    try:
        yield os.ttyname(s1), os.ttyname(s2)
    finally:
        loop.remove_reader(m1)
        loop.remove_reader(m2)
        for fd in (m1, s1, m2, s2):
            os.close(fd)


@contextlib.contextmanager
def refusing_settings(device: str, refuses: Callable[[list[Any]], bool]) -> Iterator[None]:
    """While open, the serial port ``device`` refuses the settings ``refuses`` picks out of
    the termios attributes set on it, as the driver of an adapter that cannot do them does:
    ``tcsetattr`` fails with EINVAL and pyserial lets the ``termios.error`` out of ``open``.

    A pseudo-terminal takes every setting, so the refusal is put where the driver's would
    come from (the ``termios`` pyserial calls); opening the port and everything else on it
    stay real, and other ports are not touched.
    """
    import serial.serialposix as serialposix

    class Refusing:
        def __getattr__(self, name: str) -> Any:
            return getattr(termios, name)

        @staticmethod
        def tcsetattr(fd: int, when: int, attributes: list[Any]) -> None:
            if os.ttyname(fd) == device and refuses(attributes):
                raise termios.error(errno.EINVAL, os.strerror(errno.EINVAL))
            termios.tcsetattr(fd, when, attributes)

    real = serialposix.termios
    serialposix.termios = Refusing()  # type: ignore[assignment]
    try:
        yield
    finally:
        serialposix.termios = real


def parity_set(attributes: list[Any]) -> bool:
    """Whether termios attributes ask for a parity bit."""
    return bool(attributes[2] & termios.PARENB)


def two_stop_bits(attributes: list[Any]) -> bool:
    """Whether termios attributes ask for two stop bits."""
    return bool(attributes[2] & termios.CSTOPB)
