"""A serial line for tests: two pseudo-terminals joined like a null-modem cable."""

from __future__ import annotations

import asyncio
import contextlib
import os
import pty
import termios
import tty
from collections.abc import AsyncIterator


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


def pty_refuses_parity() -> bool:
    """Whether this system's pseudo-terminals refuse a parity bit as pyserial sets it (and
    pymodbus then sets it again): Linux refuses it with EINVAL, raised as ``termios.error``."""
    import serial

    master, slave = pty.openpty()
    try:
        port = serial.Serial(os.ttyname(slave), baudrate=19200, parity="E")
        try:
            port.timeout = 0
        finally:
            port.close()
    except termios.error:
        return True
    finally:
        os.close(master)
        os.close(slave)
    return False
