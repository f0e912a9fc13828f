"""Faults a Modbus TCP gateway shows on a casino floor, made on demand for tests.

* ``JUNK_MODES``: kinds of garbage a gateway answers with, each a function of the request's
  transaction id and unit id.
* ``FaultyGateway``: a TCP proxy on 127.0.0.1 in front of a real gateway (the simulator's
  pymodbus server). It forwards requests and answers frame by frame (MBAP framing) and, when
  told, answers the next requests with garbage instead of forwarding them, holds the next
  answers back longer than the client waits, or stops mid-poll: a request arrives, every
  connection is cut and the port refuses connections until ``come_back``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

# --- garbage on TCP --------------------------------------------------------------------------


def _mbap(tid: bytes, unit: int, pdu: bytes) -> bytes:
    return tid + b"\x00\x00" + (len(pdu) + 1).to_bytes(2, "big") + bytes([unit]) + pdu


JUNK_MODES: dict[str, Callable[[bytes, int], bytes]] = {
    # Bytes that are no MBAP frame at all (protocol id not 0).
    "noise": lambda tid, unit: bytes(range(0x20, 0x60)),
    # A well-framed read answer carrying 2 registers where 34 were asked.
    "short_answer": lambda tid, unit: _mbap(tid, unit, b"\x03\x04\x00\x01\x00\x02"),
    # A read answer whose byte count claims more than the frame carries.
    "bad_byte_count": lambda tid, unit: _mbap(tid, unit, b"\x03\xc8\x00\x01"),
    # A function code nobody defined.
    "unknown_function": lambda tid, unit: _mbap(tid, unit, b"\x41\x00\x00"),
    # The answer of another unit.
    "wrong_unit": lambda tid, unit: _mbap(tid, unit + 1, b"\x03\x02\x00\x01"),
    # An exception response with a code outside the standard.
    "odd_exception": lambda tid, unit: _mbap(tid, unit, b"\x83\x99"),
}


async def _read_frame(reader: asyncio.StreamReader) -> bytes:
    header = await reader.readexactly(7)
    return header + await reader.readexactly(int.from_bytes(header[4:6], "big") - 1)


class FaultyGateway:
    """A misbehaving TCP gateway in front of ``upstream_port`` (see the module docstring)."""

    def __init__(self, upstream_port: int) -> None:
        self.upstream_port = upstream_port
        self.port = 0
        self.garbage_next = 0  # the next requests answered with garbage, never forwarded
        self.slow_next: list[float] = []  # delays (s) of the next answers
        self.stop_next = False  # the next request stops the gateway
        self.stopped = asyncio.Event()
        self.injected: Counter[str] = Counter()  # faults that reached a request, by kind
        self.forwarded = 0
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()
        self._junk = itertools.cycle(sorted(JUNK_MODES))

    @property
    def up(self) -> bool:
        return self._server is not None

    async def start(self) -> None:
        """Listen (again, on the same port after a stop)."""
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]
        self.stopped.clear()

    async def stop(self) -> None:
        """The gateway goes away: listener closed, every connection cut."""
        server, self._server = self._server, None
        if server is not None:
            server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        # With their connections cut the handlers end by themselves (a stream server's
        # handler must not be cancelled: asyncio reports it as an error).
        tasks = [t for t in self._tasks if t is not asyncio.current_task()]
        await asyncio.gather(*tasks, return_exceptions=True)
        if server is not None:
            await server.wait_closed()
        self.stopped.set()

    async def come_back(self) -> None:
        await self.start()

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        self._writers.add(writer)
        up_writer: asyncio.StreamWriter | None = None
        answers: asyncio.Task[None] | None = None
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream_port)
            self._writers.add(up_writer)
            answers = asyncio.create_task(self._answers(up_reader, writer))
            while True:
                request = await _read_frame(reader)
                if self.stop_next:
                    # Mid-poll: the request is in, no answer will ever come.
                    self.stop_next = False
                    self.injected["stopped_mid_poll"] += 1
                    self._spawn(self.stop())
                    return
                if self.garbage_next > 0:
                    self.garbage_next -= 1
                    mode = next(self._junk)
                    self.injected[f"garbage:{mode}"] += 1
                    writer.write(JUNK_MODES[mode](request[0:2], request[6]))
                    await writer.drain()
                    continue
                self.forwarded += 1
                up_writer.write(request)
                await up_writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            return
        finally:
            if answers is not None:
                answers.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await answers
            for w in (writer, up_writer):
                if w is not None:
                    self._writers.discard(w)
                    w.transport.abort()

    async def _answers(self, up_reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError, OSError):
            while True:
                answer = await _read_frame(up_reader)
                if self.slow_next:
                    # Later than the client waits: it has given up on this answer.
                    self.injected["slow_answer"] += 1
                    await asyncio.sleep(self.slow_next.pop(0))
                writer.write(answer)
                await writer.drain()
