"""Moving the ordinary entries of closed gaming days into blocks (``controller.storage.blocks``).

One block a transaction: the block is written and the rows it holds are deleted together, so
an entry is always in exactly one place. Only entries of days that have ended move (entries
are written in time order, so no entry joins a closed day), a block never spans two gaming
days (a day's history is read, reported and purged whole), and the newest rows of a day
still open stay rows: the poll path writes rows and never waits on a block.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.core.ledger import SealedEntry
from controller.storage.blocks import BLOCK_KINDS, blockable, pack
from controller.storage.entries import ENTRIES, SEALED_COLUMNS
from controller.storage.errors import Duplicate
from controller.storage.unit_of_work import unit_of_work

# Entries to a block: a busy link's hour or so. Large enough that the seal of each entry is
# most of its size, small enough that reading one entry of a block costs a few milliseconds
# and that one transaction holds SQLite's writer lock for a moment only.
BLOCK_MOST = 8_192


@dataclass(slots=True)
class Compacted:
    blocks: int = 0
    entries: int = 0


async def compact_link(
    engine: AsyncEngine,
    link_id: str,
    *,
    key: bytes | None,
    signer: Ed25519PrivateKey | None = None,
    until_us: int,
    day_end: Callable[[int], int],
    most: int = BLOCK_MOST,
    stop: Callable[[], bool] = lambda: False,
) -> Compacted:
    """Move the link's blockable rows older than ``until_us`` (the start of the gaming day
    still open) into blocks, a block at a time, each within the gaming day that ``day_end``
    (an entry's time -> the end of its gaming day) gives. With ``key`` each block's entries
    are checked and the block sealed (``blocks.pack``), and signed with the checkpoint key
    ``signer`` when there is one: a block that fails its check stays rows
    (``UnsealableBlock`` is raised, naming it). ``stop`` is asked between blocks."""
    # The entries are checked and packed on a thread: a block's check takes a moment of
    # processor, the event loop's polls do not wait for it.
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="compaction") as thread:
        loop = asyncio.get_running_loop()
        done = Compacted()
        after = 0
        while not stop():
            # The rows are read, checked and packed outside the transaction that moves them:
            # history is append-only, and the move deletes exactly the rows packed or nothing.
            async with unit_of_work(engine) as uow:
                rows = [
                    SealedEntry._make(r)
                    for r in await uow.conn.execute(
                        select(*SEALED_COLUMNS)
                        .where(
                            ENTRIES.c.link_id == link_id,
                            ENTRIES.c.seq > after,
                            ENTRIES.c.at_us < until_us,
                            ENTRIES.c.kind.in_(sorted(BLOCK_KINDS)),
                        )
                        .order_by(ENTRIES.c.seq)
                        .limit(most)
                    )
                ]
            if not rows:
                break
            end = min(until_us, day_end(rows[0].at_us))
            block = [e for e in rows if e.at_us < end and blockable(e)]
            after = next((e.seq for e in reversed(rows) if e.at_us < end), rows[-1].seq)
            if not block:
                continue
            packed = await loop.run_in_executor(thread, pack, block, key, signer)
            try:
                async with unit_of_work(engine) as uow:
                    await uow.entries.add_block(packed)
                    moved = await uow.entries.remove_blocked(link_id, [e.seq for e in block])
                    if moved != len(block):
                        raise RuntimeError(
                            f"link {link_id}: {moved} rows deleted for a block of "
                            f"{len(block)} entries"
                        )
            except Duplicate:
                # Another process (a standby) moved these first: nothing is lost, go on.
                continue
            done.blocks += 1
            done.entries += len(block)
        return done
