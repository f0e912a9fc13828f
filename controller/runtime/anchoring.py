"""Writing signed checkpoints while the controller runs (the record: paperwork.checkpoints).

The store tells ``Checkpointer.note`` the entries of every commit once durable; it feeds each
link's running digest in memory (a hash update per entry, nothing else on the poll path). A
task of its own signs a checkpoint of every link whose chain moved: every ``interval_s``
(default one minute), at once after a commit holding an award, and at a clean stop. The
file append and its fsync run on a thread of the checkpointer's own, the syslog and HTTP
copies on another, so neither ever delays a poll.

At start, before anything is polled, ``open`` compares the database with the last signed
checkpoint of each link and refuses a database behind it: one restored from an earlier
copy, or one whose newest entries were taken away. A link whose running digest lost step
(entries committed by another process, a failed write) has it rebuilt from the database
before its next checkpoint.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import logging.handlers
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from controller.core.ledger import Checkpoint, SealedEntry, SignedCheckpoint, entry_bytes
from controller.core.reducer import EntryKind
from controller.paperwork.checkpoints import (
    CheckpointError,
    append_lines,
    read_checkpoints,
    sign_line,
)
from controller.periods import Clock, at_text
from controller.runtime.clock import SystemClock
from controller.schedule import set_within
from controller.storage.store import LedgerStore

log = logging.getLogger(__name__)

_AWARD = str(EntryKind.AWARD)


@dataclass(slots=True)
class _Chain:
    """What this process knows of one link's chain since its last checkpoint."""

    prev_seq: int  # the last checkpoint's sequence number (0: none yet)
    seq: int = 0
    hash: str = ""
    meter_units: int = 0
    digest: Any = field(default_factory=hashlib.sha256)
    in_step: bool = False  # False: rebuild seq..digest from the database before signing


class BehindCheckpoint(CheckpointError):
    """The database is behind a checkpoint this controller signed: refuse to start."""


class Sinks:
    """Copies of each line kept elsewhere, best effort: syslog and an HTTP endpoint."""

    def __init__(self, *, syslog: str | None = None, url: str | None = None) -> None:
        self.url = url
        self._syslog: logging.Logger | None = None
        self._handler: logging.Handler | None = None
        if syslog:
            address: str | tuple[str, int] = syslog
            if ":" in syslog and not syslog.startswith("/"):
                host, port = syslog.rsplit(":", 1)
                address = (host, int(port))
            self._handler = logging.handlers.SysLogHandler(address=address)
            self._syslog = logging.getLogger(f"{__name__}.syslog.{id(self)}")
            self._syslog.propagate = False
            self._syslog.addHandler(self._handler)
            self._syslog.setLevel(logging.INFO)

    @property
    def configured(self) -> bool:
        return self._syslog is not None or self.url is not None

    def send(self, lines: Sequence[str]) -> None:
        """Blocking; called on the sinks' thread. Failures are logged, never raised."""
        for line in lines:
            if self._syslog is not None:
                try:
                    self._syslog.info("progressive-checkpoint %s", line)
                except Exception:  # a log sink must not stop the next one
                    log.warning("checkpoint not copied to syslog", exc_info=True)
            if self.url is not None:
                req = urllib.request.Request(
                    self.url,
                    data=line.encode(),
                    headers={"Content-Type": "application/json"},
                    method="POST",
                )
                try:
                    with urllib.request.urlopen(req, timeout=5) as resp:
                        resp.read()
                except Exception as exc:
                    log.warning("checkpoint not posted to %s: %s", self.url, exc)

    def close(self) -> None:
        if self._handler is not None and self._syslog is not None:
            self._syslog.removeHandler(self._handler)
            self._handler.close()


class Checkpointer:
    def __init__(
        self,
        key: Ed25519PrivateKey,
        path: Path,
        *,
        interval_s: float = 60.0,
        sinks: Sinks | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.key = key
        self.path = path
        self.interval_s = interval_s
        self.sinks = sinks or Sinks()
        self.clock: Clock = clock or SystemClock()
        self.chains: dict[str, _Chain] = {}
        self.last: dict[str, Checkpoint] = {}  # the last checkpoint of each link in the file
        self.written = 0
        self._store: LedgerStore | None = None
        self._jackpot = asyncio.Event()
        self._lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        # While the installed software fails its self-check, nothing is signed
        # (``controller.rules.software``); the chains' digests go on, signed once it passes.
        self.software_fault: str | None = None
        self._file_thread: ThreadPoolExecutor | None = None
        self._sink_thread: ThreadPoolExecutor | None = None

    # ------------------------------------------------------------------------- start

    async def open(self, store: LedgerStore) -> None:
        """Read the file, refuse a database behind it, then follow the store's commits."""
        self._store = store
        self._file_thread = ThreadPoolExecutor(1, thread_name_prefix="checkpoint-file")
        if self.sinks.configured:
            self._sink_thread = ThreadPoolExecutor(1, thread_name_prefix="checkpoint-sinks")
        loop = asyncio.get_running_loop()
        try:
            read = await loop.run_in_executor(
                self._file_thread, read_checkpoints, self.path, self.key.public_key()
            )
            # A last line cut short by a crash is ended by the next write; any other line
            # that does not verify was put there by someone else.
            bad = [p for p in read.problems if not (read.torn_tail and "cut short" in p)]
            if bad:
                raise CheckpointError(
                    "refusing to start: the checkpoint file does not verify with this "
                    "controller's key: " + "; ".join(bad)
                )
            last = read.last_per_link()
            await check_not_behind(store, last)
        except BaseException:
            self._store = None
            self._close_threads()
            raise
        self.last = {lid: sc.checkpoint for lid, sc in last.items()}
        store.sealed_listeners.append(self.note)
        for lid in await store.link_ids():
            cp = self.last.get(lid)
            self.chains[lid] = chain = _Chain(prev_seq=cp.seq if cp else 0)
            # Read now, before anything is polled: the first time, a link's whole history.
            await self._rebuild(lid, chain)

    def start(self) -> None:
        """Sign the heads now (anchoring what happened while stopped), then keep at it."""
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="checkpoints")

    async def stop(self) -> None:
        """The last checkpoint of every moved chain, then the threads closed. Idempotent."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self._store is not None:
            with contextlib.suppress(ValueError):
                self._store.sealed_listeners.remove(self.note)
            try:
                await self.flush()
            except Exception:
                log.exception("the last checkpoints could not be written")
        self._close_threads()

    def _close_threads(self) -> None:
        # Idle by now but for copies still being sent (each bounded by its timeout): the
        # polls have stopped, so waiting for them delays nothing that matters.
        for attr in ("_file_thread", "_sink_thread"):
            pool: ThreadPoolExecutor | None = getattr(self, attr)
            setattr(self, attr, None)
            if pool is not None:
                pool.shutdown(wait=True)
        self.sinks.close()

    # ------------------------------------------------------------------------- the poll path

    def note(self, entries: Sequence[SealedEntry]) -> None:
        """Committed entries, fed to their link's running digest (called by the store)."""
        for e in entries:
            if e.kind == _AWARD:
                self._jackpot.set()
            chain = self.chains.get(e.link_id)
            if chain is None:  # a link created since: its digest is read from the database
                self.chains[e.link_id] = _Chain(prev_seq=0)
                continue
            if not chain.in_step or e.seq <= chain.seq:
                continue
            if e.seq != chain.seq + 1:
                chain.in_step = False  # committed elsewhere meanwhile: rebuild
                continue
            chain.digest.update(entry_bytes(e))
            chain.seq, chain.hash, chain.meter_units = e.seq, e.hash, e.meter_after_units

    # ------------------------------------------------------------------------- signing

    async def _run(self) -> None:
        while True:
            try:
                await self.flush()
            except Exception:
                log.exception("checkpoints not written; trying again")
            self._jackpot.clear()
            await set_within(self._jackpot, self.interval_s)

    async def _rebuild(self, link_id: str, chain: _Chain) -> None:
        """Read the entries since the link's last checkpoint back from the database."""
        assert self._store is not None
        # Commits noted while this reads are left out (not in step); if the read missed
        # them, the next one noted is out of step and the link is read again.
        chain.in_step = False
        digest, seq, hash_, meter, prev = hashlib.sha256(), chain.prev_seq, "", 0, chain.prev_seq
        async for entry in self._store.entries_after(link_id, prev):
            if seq == prev and entry.seq != prev + 1:
                prev = entry.seq - 1  # older entries purged (retention): start there
            digest.update(entry_bytes(entry))
            seq, hash_, meter = entry.seq, entry.hash, entry.meter_after_units
        chain.prev_seq, chain.digest, chain.seq = prev, digest, seq
        if hash_:
            chain.hash, chain.meter_units = hash_, meter
        chain.in_step = True

    def _sign_and_append(self, made: Sequence[Checkpoint]) -> list[str]:
        # Blocking (about 50 us a signature, then the fsync): on the file thread.
        lines = [sign_line(self.key, cp) for cp in made]
        append_lines(self.path, lines)
        return lines

    async def flush(self) -> list[Checkpoint]:
        """Sign and write a checkpoint of every chain that moved since its last one."""
        if self.software_fault is not None:
            log.warning("no checkpoint signed: %s", self.software_fault)
            return []
        async with self._lock:
            for link_id, chain in list(self.chains.items()):
                if not chain.in_step:
                    await self._rebuild(link_id, chain)
            now = self.clock.now_us()
            made: list[Checkpoint] = []
            for link_id, chain in sorted(self.chains.items()):
                if chain.seq == chain.prev_seq or not chain.hash:
                    continue
                made.append(
                    Checkpoint(
                        link_id=link_id,
                        seq=chain.seq,
                        hash=chain.hash,
                        meter_units=chain.meter_units,
                        at_us=now,
                        prev_seq=chain.prev_seq,
                        digest=chain.digest.hexdigest(),
                    )
                )
                # Entries committed while this is written start the next digest.
                chain.prev_seq, chain.digest = chain.seq, hashlib.sha256()
            if not made:
                return []
            loop = asyncio.get_running_loop()
            try:
                lines = await loop.run_in_executor(self._file_thread, self._sign_and_append, made)
            except BaseException:
                for cp in made:  # not written: the next one covers these entries again
                    chain = self.chains[cp.link_id]
                    old = self.last.get(cp.link_id)
                    chain.prev_seq = old.seq if old else 0
                    chain.in_step = False
                raise
            for cp in made:
                self.last[cp.link_id] = cp
            self.written += len(made)
            if self._sink_thread is not None:
                # Not awaited: a slow endpoint delays only its own copies.
                self._sink_thread.submit(self.sinks.send, lines)
            return made


async def check_not_behind(store: LedgerStore, last: dict[str, SignedCheckpoint]) -> None:
    """Refuse a database behind the last signed checkpoint of any link."""
    if not last:
        return
    heads = await store.chain_heads()
    seals = await store.entry_seals((lid, sc.checkpoint.seq) for lid, sc in last.items())
    problems: list[str] = []
    for lid, sc in sorted(last.items()):
        cp = sc.checkpoint
        signed = f"signed at {at_text(cp.at_us)}, line {sc.line}"
        if lid not in heads:
            problems.append(
                f"link {lid}: a checkpoint ({signed}) covers its entry {cp.seq} but the "
                "database has no such link (database rolled back or link removed)"
            )
        elif heads[lid][0] < cp.seq:
            problems.append(
                f"link {lid}: chain ends at entry {heads[lid][0]} but the checkpoint ({signed}) "
                f"covers entry {cp.seq}: entries truncated or database rolled back"
            )
        elif seals.get((lid, cp.seq)) != cp.hash:
            problems.append(
                f"link {lid}: entry {cp.seq}'s seal differs from the signed checkpoint "
                f"({signed}): history rewritten"
                if (lid, cp.seq) in seals
                else f"link {lid}: entry {cp.seq}, covered by the checkpoint ({signed}), is "
                "missing: entries deleted"
            )
    if problems:
        raise BehindCheckpoint(
            "refusing to start: the database is behind this controller's signed checkpoints: "
            + "; ".join(problems)
        )
