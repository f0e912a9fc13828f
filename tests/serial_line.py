"""A serial line for tests: two pseudo-terminals joined like a null-modem cable; its far
adapter unplugged and plugged back in; serial ports that refuse their settings."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import pty
import termios
import tty
import types
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any


class SerialLine:
    """Two serial device paths joined like a null-modem cable (two pty pairs, bridged by this
    process's event loop): ``near`` and ``far``.

    With ``far_link`` the far end is reached by that symbolic link, as udev names an adapter
    under /dev/serial/by-id, and it can be unplugged and plugged back in (``replug``): whoever
    has the far end open sees the port hang up (reads fail with EIO), and opening ``far``
    again reaches the new adapter. Bytes sent from the near end meanwhile are lost.
    """

    def __init__(self, far_link: Path | None = None) -> None:
        self._far_link = far_link
        self._near: tuple[int, int] | None = None  # (master, slave)
        self._far: tuple[int, int] | None = None
        self.replugs = 0

    @property
    def near(self) -> str:
        assert self._near is not None, "open() first"
        return os.ttyname(self._near[1])

    @property
    def far(self) -> str:
        if self._far_link is not None:
            return str(self._far_link)
        assert self._far is not None, "open() first"
        return os.ttyname(self._far[1])

    def open(self) -> None:
        self._near = self._pair()
        self._plug()

    def close(self) -> None:
        for pair in (self._far, self._near):
            if pair is not None:
                self._unplug(pair)
        self._near = self._far = None
        if self._far_link is not None:
            self._far_link.unlink(missing_ok=True)

    def replug(self) -> None:
        """The far adapter pulled out and plugged back in: a new device behind ``far``."""
        old = self._far
        self._plug()  # the new one first: whoever sees the hang-up finds it there
        if old is not None:
            self._unplug(old)
        self.replugs += 1

    def _pair(self) -> tuple[int, int]:
        master, slave = pty.openpty()
        tty.setraw(slave)
        os.set_blocking(master, False)
        # The slave stays open here, so the master never reads EIO when the far side closes.
        asyncio.get_running_loop().add_reader(master, self._pump, master)
        return master, slave

    def _plug(self) -> None:
        self._far = self._pair()
        if self._far_link is not None:
            staged = self._far_link.with_name(self._far_link.name + ".new")
            staged.unlink(missing_ok=True)
            staged.symlink_to(os.ttyname(self._far[1]))
            staged.replace(self._far_link)

    def _unplug(self, pair: tuple[int, int]) -> None:
        master, slave = pair
        asyncio.get_running_loop().remove_reader(master)
        os.close(master)
        os.close(slave)

    def _pump(self, src: int) -> None:
        near, far = self._near, self._far
        if near is None or far is None:
            return
        dst = far[0] if src == near[0] else near[0]
        with contextlib.suppress(BlockingIOError):
            data = os.read(src, 4096)
            if data:
                os.write(dst, data)

    async def __aenter__(self) -> SerialLine:
        self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


@contextlib.asynccontextmanager
async def pty_line() -> AsyncIterator[tuple[str, str]]:
    """Two serial device paths joined like a null-modem cable (two pty pairs, bridged)."""
    async with SerialLine() as line:
        yield line.near, line.far


class SettingsRefusal:
    """The serial ports of this process refusing their settings, as an adapter refuses a baud
    rate or parity it cannot do: while a device is named in ``refuse``, pyserial setting its
    attributes gets ``termios.error`` (EINVAL) from ``tcsetattr``, which is what Linux answers.

    Installed in pyserial's module (``install``; ``uninstall`` puts the real termios back),
    so only pyserial's calls are refused. ``refused`` counts the refusals made.
    """

    def __init__(self) -> None:
        self._devices: set[str] = set()
        self.refused = 0
        self._installed: Any = None

    def install(self) -> None:
        import serial.serialposix as posix

        if self._installed is None:
            self._installed = posix.termios
            posix.termios = _RefusingTermios(self)

    def uninstall(self) -> None:
        import serial.serialposix as posix

        if self._installed is not None:
            posix.termios, self._installed = self._installed, None

    def refuse(self, device: str) -> None:
        self._devices.add(device)

    def accept(self, device: str) -> None:
        self._devices.discard(device)

    def refuses(self, fd: int) -> bool:
        opened = os.readlink(f"/proc/self/fd/{fd}")
        return any(os.path.realpath(device) == opened for device in self._devices)


class _RefusingTermios(types.ModuleType):
    """termios as pyserial sees it under a ``SettingsRefusal``."""

    def __init__(self, refusal: SettingsRefusal) -> None:
        super().__init__("termios")
        self._refusal = refusal

    def __getattr__(self, name: str) -> Any:
        return getattr(termios, name)

    def tcsetattr(self, fd: int, when: int, attributes: list[Any]) -> None:
        if self._refusal.refuses(fd):
            self._refusal.refused += 1
            raise termios.error(errno.EINVAL, os.strerror(errno.EINVAL))
        termios.tcsetattr(fd, when, attributes)


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
