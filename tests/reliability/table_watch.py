"""The fault soak's watch: every table as the API shows it, against how long it has gone
unanswered and unrecorded; and each fault's tables, until shown and back.

A table unanswered or unrecorded must be shown so: offline (or held as unrecorded) with the
reason, or, while it answers but its readings are not recorded, named by ``/readyz`` (itself,
its link, the database or the link locks). One that goes unanswered or unrecorded for longer
than ``SILENT_BOUND_S`` (three times the ceiling of the poll backoff), and unshown for longer
than that within it, is a silent table. Shown until its cause went, a table catching up is not
silent; the longest such time is kept (``longest_unshown_s``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from controller.runtime.table_polling import FAILURE_BACKOFF_MAX_S
from tests.reliability.fault_schedule import DATABASE_DOWN, Injected
from tests.reliability.soak_floor import SoakFloor

__all__ = ["LOOKED_AT_S", "SILENT_BOUND_S", "WATCH_S", "Silence", "Watch"]

# A table unanswered this long must be shown offline with the reason: three times the longest
# a failing table waits between polls.
SILENT_BOUND_S: Final = 3 * FAILURE_BACKOFF_MAX_S
# A table unanswered or unrecorded this long is looked at: is it shown so?
LOOKED_AT_S: Final = 2.0
WATCH_S: Final = 0.5  # how often


@dataclass
class Silence:
    """A table unanswered or unrecorded beyond the bound, and not shown so."""

    table: str
    began_s: float  # since the run started
    lasted_s: float
    state: str
    why: str
    faults: str  # the faults active as it began


class Watch:
    """Every table as the API shows it, against how long it has gone unanswered and
    unrecorded (see the module docstring); and each fault's tables, until shown and back."""

    def __init__(self, soak: SoakFloor, faults: Sequence[Injected], started: float) -> None:
        self.soak = soak
        self.faults = faults
        self.started = started  # when the run started (monotonic)
        self.silences: list[Silence] = []
        # The longest a table went unanswered, unrecorded, and, of such a time, unshown.
        self.longest_unanswered_s = self.longest_unrecorded_s = self.longest_unshown_s = 0.0
        self.silent: dict[str, Silence] = {}
        self.shown_us: dict[str, int] = {}  # when each table was last shown not playing, why
        self.since_us = soak.running.now_us()  # before its first answer, a table counts from here

    def active(self) -> list[Injected]:
        return [i for i in self.faults if i.began_us is not None and i.ended_us is None]

    async def tick(self) -> None:
        service = self.soak.running
        now = service.now_us()
        statuses = {tid: service.table_status(tid) for tid in self.soak.table_ids}
        problems: Mapping[str, str] | None = None

        async def readiness() -> Mapping[str, str]:
            nonlocal problems
            if problems is None:
                problems = await service.readiness()
            return problems

        for tid, st in statuses.items():
            unanswered = (now - (st.last_answer_us or self.since_us)) / 1e6
            unrecorded = (now - (st.last_reading_us or self.since_us)) / 1e6
            self.longest_unanswered_s = max(self.longest_unanswered_s, unanswered)
            self.longest_unrecorded_s = max(self.longest_unrecorded_s, unrecorded)
            stale = max(unanswered, unrecorded)
            if stale < LOOKED_AT_S:
                self._note(tid, None, st.state)
                continue
            # Shown: offline (or held) with the reason; a table that answers but whose
            # readings are not recorded may instead be named, with its link, the database or
            # the link locks, by /readyz.
            shown = (st.state == "offline" and bool(st.poll_problem)) or (
                st.state == "unrecorded" and bool(st.unrecorded_reason)
            )
            if not shown and unanswered <= SILENT_BOUND_S:
                said = await readiness()
                shown = any(
                    subject in said
                    for subject in (f"table {tid}", f"link {self.soak.link_of[tid]}",
                                    "database", "link locks")
                )  # fmt: skip
            if shown:
                self.shown_us[tid] = now
            # Unshown for longer than the bound, within a time unanswered or unrecorded for
            # longer than it. Shown until its cause went, a table is not silent while it
            # catches up.
            unshown = (now - max(now - int(stale * 1e6), self.shown_us.get(tid, 0))) / 1e6
            self.longest_unshown_s = max(self.longest_unshown_s, unshown)
            why = None
            if stale > SILENT_BOUND_S and unshown > SILENT_BOUND_S:
                why = (
                    f"unanswered {unanswered:.1f} s, unrecorded {unrecorded:.1f} s, unshown "
                    f"{unshown:.1f} s; poll problem {st.poll_problem!r}; /readyz says "
                    f"{dict(await readiness())}"
                )
            self._note(tid, why, st.state)
        for i in self.faults:
            if i.began_us is None:
                continue
            if i.shown_s is None and i.ended_us is None:
                if i.fault.kind == DATABASE_DOWN:
                    said = await readiness()
                    shown = any(
                        subject in ("database", "link locks") or "not recorded" in problem
                        for subject, problem in said.items()
                    )
                else:
                    shown = all(statuses[t].state in ("offline", "unrecorded") for t in i.tables)
                if shown:
                    i.shown_s = (now - i.began_us) / 1e6
            if i.ended_us is not None and i.back_s is None and not i.masked:
                end = i.ended_us
                # Its tables, but those another fault holds now: one still on, or lifted
                # later and not yet recovered from. With none left, its own recovery is not
                # seen.
                taken = {
                    t
                    for j in self.faults
                    if j is not i
                    and j.began_us is not None
                    and (j.ended_us is None or (j.ended_us > end and j.back_s is None))
                    for t in j.tables
                }
                judged = [statuses[t] for t in i.tables if t not in taken]
                if not judged:
                    i.masked = True
                elif all(
                    (st.last_answer_us or 0) >= end
                    and (st.last_reading_us or 0) >= end
                    and st.state not in ("offline", "unrecorded")
                    for st in judged
                ):
                    i.back_s = (now - end) / 1e6

    def _note(self, tid: str, why: str | None, state: str) -> None:
        at = time.monotonic() - self.started
        open_ = self.silent.get(tid)
        if why is None:
            if open_ is not None:
                del self.silent[tid]
            return
        if open_ is None:
            faults = ", ".join(f"{i.fault.kind} ({i.fault.target})" for i in self.active())
            open_ = self.silent[tid] = Silence(tid, at, 0.0, state, why, faults)
            self.silences.append(open_)
            self.soak.say(f"SILENT {tid}: shown {state!r}, {why}; faults: {faults or 'none'}")
        open_.lasted_s = at - open_.began_s

    def all_back(self, since_us: int) -> list[str]:
        """The tables not answering, recorded and shown playing since ``since_us``."""
        service = self.soak.running
        out = []
        for tid in self.soak.table_ids:
            st = service.table_status(tid)
            if (
                (st.last_answer_us or 0) < since_us
                or (st.last_reading_us or 0) < since_us
                or st.state not in ("online", "hit_pending")
            ):
                out.append(f"{tid}: {st.state}, {st.poll_problem or st.unrecorded_reason or ''}")
        return out
