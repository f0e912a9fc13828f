"""A store's memory of each chain's head and each row's seal, and the checks made with it.

A link's seal (as last read or written) is the condition of its next write: if it changed,
another writer did. Its tables' seals go into the link's next seal, so a cycle reseals only
the tables it touched.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.core.reducer import LinkState, TableState
from controller.core.state_seal import link_seal, table_seal
from controller.storage.codec import counter_fields, has_own_levels, link_fields


@dataclass(frozen=True, slots=True)
class SealMemory:
    """A copy of a book's heads and seals, to put back when a commit fails."""

    heads: dict[str, tuple[int, str]]
    seals: dict[str, str | None]
    table_seals: dict[str, str | None]
    meters: dict[str, int]


@dataclass(slots=True)
class SealBook:
    key: bytes
    heads: dict[str, tuple[int, str]] = field(default_factory=dict)
    seals: dict[str, str | None] = field(default_factory=dict)
    table_seals: dict[str, str | None] = field(default_factory=dict)
    # Each link's meter at its head, as last read or written: where its next step must start.
    meters: dict[str, int] = field(default_factory=dict)
    # Links whose stored state failed its check when last read, with what differs.
    broken: dict[str, str] = field(default_factory=dict)
    # Whether each link was opened in demonstration mode, as its history says: read once,
    # since nothing ever changes it.
    demonstration: dict[str, bool] = field(default_factory=dict)

    def remember(self) -> SealMemory:
        return SealMemory(
            dict(self.heads), dict(self.seals), dict(self.table_seals), dict(self.meters)
        )

    def restore(self, memory: SealMemory) -> None:
        self.heads, self.seals, self.table_seals, self.meters = (
            memory.heads,
            memory.seals,
            memory.table_seals,
            memory.meters,
        )

    def seal_table(self, link_id: str, ts: TableState) -> str:
        return table_seal(self.key, link_id=link_id, config=ts.config, counters=counter_fields(ts))

    def seal_link(
        self,
        state: LinkState,
        last_seq: int,
        last_hash: str,
        new_table_seals: Mapping[str, str] | None = None,
        *,
        fields: Mapping[str, Any] | None = None,
    ) -> str:
        """The link row's seal; ``fields``: ``link_fields(state)`` when the caller has made
        them already (a commit writes them too)."""
        fresh = new_table_seals or {}
        fields = link_fields(state) if fields is None else dict(fields)
        # The levels and other games' paytables are sealed only where they say something the
        # rest of the row does not (a link of levels, a fixed-pay link of a game that is not
        # fixed-pay only, a mixed-game link): every seal made before them still verifies.
        if not has_own_levels(state):
            del fields["levels"]
        if fields["paytables"] is None:
            del fields["paytables"]
        return link_seal(
            self.key,
            fields={
                **fields,
                "last_seq": last_seq,
                "last_hash": last_hash,
                "game": str(state.game),
                "hit_policy": str(state.hit_policy),
                "paytable": state.paytable.to_dicts(),
            },
            tables=[
                (tid, fresh[tid] if tid in fresh else self.table_seals.get(tid))
                for tid in state.tables
            ],
        )

    def check_seals(self, state: LinkState, stored: str | None, sealing: bool) -> str | None:
        """Do the link's rows match their seals? (The first that does not is named; "LINK":
        the link row's own seal, for the caller to diagnose.)"""
        lid = state.link_id
        for tid, ts in sorted(state.tables.items()):
            seal_ = self.table_seals[tid]
            if seal_ is None:
                if sealing:
                    return f"table {tid}: its counter row has no seal"
            elif not hmac.compare_digest(self.seal_table(lid, ts), seal_):
                return (
                    f"table {tid}: its counter row was changed since it was sealed (it shows "
                    f"credits {ts.credits}, rounds {ts.rounds}, poll {ts.poll_seq}, last hit "
                    f"{ts.last_hit_seq})"
                )
        if stored is None:
            return "the link row has no seal" if sealing else None
        last_seq, last_hash = self.heads[lid]
        if not hmac.compare_digest(self.seal_link(state, last_seq, last_hash), stored):
            return "LINK"
        return None
