"""Delivery to the floor displays: each link's channel (its current message, encoded once for
every client) and each client's slot for the latest undelivered message, sent eagerly and
finished by the client's own task only when the send has to wait (``app.live`` runs them)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Coroutine, Generator, Mapping
from typing import Any

__all__ = ["Channel", "Client", "Receive", "Resume", "Send", "encode"]

Send = Callable[[str], Coroutine[Any, Any, None]]
Receive = Callable[[], Awaitable[Mapping[str, Any]]]


class Client:
    """One display connection: a slot for the latest undelivered message, and its sender.

    Delivery is eager: a message offered to an idle client is sent at once, from the code
    that framed it, as far as the send can go without waiting (on a healthy connection, all
    the way: the frame is written to the socket). Only a send that has to wait (the
    connection's buffer is full) is handed to the client's own task to finish. Waking a
    task per client per message cost more than the send itself with thousands of displays.
    """

    __slots__ = (
        "channel",
        "dropped",
        "failed",
        "inflight",
        "pending",
        "send",
        "sending_since",
        "sent",
        "task",
        "waiter",
    )

    def __init__(self, channel: Channel, send: Send) -> None:
        self.channel = channel
        self.send = send
        self.pending: str | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.sending_since: float | None = None
        self.sent = 0
        self.dropped = False
        self.task: asyncio.Task[None] | None = None
        # A send started eagerly that has to wait: the coroutine and what it waits for.
        self.inflight: tuple[Coroutine[Any, Any, None], Any] | None = None
        self.failed: BaseException | None = None  # an eager send that raised

    def offer(self, text: str) -> None:
        """The latest state replaces any older one not yet sent."""
        waiter = self.waiter
        if waiter is None or waiter.done() or self.failed is not None:
            self.pending = text  # busy: its task sends the latest when it is free
            return
        self.pending = None
        coro = self.send(text)
        try:
            yielded = coro.send(None)
        except StopIteration:
            self.sent += 1
            return
        except BaseException as exc:  # the connection is gone: its task ends the client
            self.failed = exc
            waiter.set_result(None)
            return
        self.inflight = (coro, yielded)
        self.sending_since = asyncio.get_running_loop().time()
        waiter.set_result(None)

    def offer_heartbeat(self, text: str) -> None:
        # A state waiting to go out says as much as a heartbeat would.
        if self.pending is None:
            self.offer(text)


class Resume:
    """Awaiting this finishes, in the awaiting task, a coroutine started outside any task
    that stopped at ``yielded`` (what it waits for)."""

    __slots__ = ("coro", "yielded")

    def __init__(self, coro: Coroutine[Any, Any, None], yielded: Any) -> None:
        self.coro = coro
        self.yielded = yielded

    def __await__(self) -> Generator[Any, Any, None]:
        coro, value = self.coro, self.yielded
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as exc:
                try:
                    value = coro.throw(exc)
                except StopIteration:
                    return
            else:
                try:
                    value = coro.send(sent)
                except StopIteration:
                    return


class Channel:
    """One link's current message and the clients that receive it."""

    __slots__ = (
        "at_us",
        "clients",
        "content",
        "heartbeat_text",
        "link_id",
        "name",
        "seq",
        "snapshot_text",
        "table_names",
        "update_text",
    )

    def __init__(self, link_id: str, name: str, table_names: dict[str, str]) -> None:
        self.link_id = link_id
        self.name = name
        self.table_names = table_names
        self.seq = 0
        self.content: dict[str, Any] = {}
        self.at_us = 0
        self.update_text = ""
        self.snapshot_text: str | None = None
        self.heartbeat_text = ""
        self.clients: set[Client] = set()

    def snapshot(self) -> str:
        """The current state as a snapshot, encoded once per seq."""
        if self.snapshot_text is None:
            self.snapshot_text = encode("snapshot", self.seq, self.content, self.at_us)
        return self.snapshot_text


def encode(kind: str, seq: int, content: Mapping[str, Any], at_us: int) -> str:
    message = {"type": kind, "seq": seq, **content, "at_us": at_us}
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)
