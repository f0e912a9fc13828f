"""The links in memory, kept in step with the database: the runtime that drives them.

One object a job, each handed what it needs: ``memory`` (``link_memory``: reading, checking
and committing a link's state; stale and inoperable links), ``readings`` (``link_readings``:
the poll path, and the tables held when their readings cannot be recorded), ``commands``
(``link_commands``: operator commands, recovery, corrections) and ``hits`` (``hit_work``: the
technician's work after a hit, whose table reset is a command).
"""

from __future__ import annotations

from controller.periods import Clock
from controller.runtime.hit_work import HitWork
from controller.runtime.link_commands import LinkCommands
from controller.runtime.link_memory import LinkMemory
from controller.runtime.link_readings import LinkReadings
from controller.storage.store import LedgerStore


class LinkRuntime:
    """Every link of the floor in memory: polled, commanded and worked on after a hit."""

    def __init__(self, store: LedgerStore, clock: Clock | None = None) -> None:
        self.memory = LinkMemory(store, clock)
        self.readings = LinkReadings(self.memory)
        self.commands = LinkCommands(self.memory)
        self.hits = HitWork(self.memory, self.commands)
