"""The links in memory as the paperwork works on them: the runtime that drives them
(``controller.runtime.links.LinkRuntime``) is handed to the desks and jobs here, which read a
link's state and commit through it, and know it by no more than this."""

from __future__ import annotations

from collections.abc import Callable, Mapping, MutableMapping
from typing import Any, Protocol

from controller.core.reducer import LinkState, Outcome
from controller.periods import Clock
from controller.storage.store import Extra, LedgerStore


class Memory(Protocol):
    """What the paperwork reads of the links in memory (``runtime.link_memory.LinkMemory``)."""

    @property
    def states(self) -> Mapping[str, LinkState]:
        """Every link's state, by id."""
        ...

    @property
    def store(self) -> LedgerStore: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def go_live_at(self) -> MutableMapping[str, int | None]:
        """When each link begins to play (None: not approved yet)."""
        ...

    def is_live(self, link_id: str, now_us: int) -> bool: ...

    @property
    def inoperable(self) -> Mapping[str, str]:
        """The links that failed their check, with what differs, by id."""
        ...

    def is_inoperable(self, link_id: str) -> str | None:
        """What differs in the link's stored state, if it failed its check; else None."""
        ...

    def link_of(self, table_id: str) -> str: ...


class Commands(Protocol):
    """The commands the paperwork gives a link (``runtime.link_commands.LinkCommands``)."""

    async def command(
        self,
        link_id: str,
        step: Callable[[LinkState, int], Outcome],
        *,
        actor: str,
        action: str,
        target: str,
        extra: Extra | None = None,
        audit_after: Any = None,
    ) -> Outcome:
        """An operator command on one link: computed, audited and committed as one."""
        ...

    async def correct(
        self,
        link_id: str,
        *,
        delta_cents: int,
        category: str,
        reason: str,
        requested_by: str,
        approved_by: str | None,
        document: bytes | None = None,
        document_name: str = "",
        document_type: str = "application/octet-stream",
        correction_id: str | None = None,
        also: Extra | None = None,
        meter: str | None = None,
    ) -> Outcome:
        """A correcting entry with its supporting document, all in one transaction."""
        ...


class Links(Protocol):
    """What the paperwork asks of the links: their memory and their commands."""

    @property
    def memory(self) -> Memory: ...

    @property
    def commands(self) -> Commands: ...
