"""Sealed blocks, on real SQLite and PostgreSQL: the compactor checks a block's entries before
it seals the block; ``ledger verify`` checks the seal and joins the block's runs to the chain,
and finds every edit made without the key, as it does entry by entry."""

from __future__ import annotations

import json
import zlib
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from sqlalchemy import select, update

from controller.core.ledger import ChainVerifier, Checkpoint, SealedEntry, digest_of
from controller.paperwork.checkpoints import parse_checkpoints, sign_line
from controller.runtime.compaction import CompactionJob
from controller.storage import verify as verify_module
from controller.storage.blocks import (
    BLOCK_KINDS,
    Run,
    UnsealableBlock,
    block_seal,
    blockable,
    decode,
    encode,
    runs_of,
)
from controller.storage.compaction import compact_link
from controller.storage.models import MeterBlockRow, MeterEntryRow
from controller.storage.store import LedgerStore
from controller.storage.unit_of_work import reading
from controller.storage.verify import verify_ledger
from tests.conftest import KEY
from tests.controller.core.levels_history import LINK, Play, played
from tests.controller.storage.helpers import compact, drop_guards
from tests.controller.storage.test_blocks import CALENDAR
from tests.controller.storage.test_verify_levels import store_levels_link


def _longer() -> Play:
    """A link of levels (a mystery hit, its re-arming, a royal flush from the Grand) played on
    for a while: runs of contributions between the rows of its hits."""
    p = played()
    credits = {"t1": 80, "t2": 400}
    for n in range(60):
        tid = ("t1", "t2")[n % 2]
        credits[tid] += 7 + n % 11
        p.read(tid, credits[tid], rounds=9 + n)
    return p


async def _entries(store: LedgerStore) -> list[SealedEntry]:
    async with reading(store.engine) as uow:
        return [e async for e in uow.entries.stream(LINK, 0)]


async def _blocks(store: LedgerStore) -> list[Any]:
    async with store.engine.connect() as conn:
        return list(
            (await conn.execute(select(MeterBlockRow).order_by(MeterBlockRow.first_seq))).all()
        )


async def _sealed_levels_link(store: LedgerStore, most: int = 8) -> list[SealedEntry]:
    p = _longer()
    await store_levels_link(store, p.outcomes)
    before = await _entries(store)
    assert await compact(store.engine, LINK, most=most) >= 2
    return before


@pytest.mark.parametrize(("segment", "workers"), [(100_000, 1), (3, 1), (10, 2)])
async def test_sealed_blocks_verify_as_every_entry_does(
    store: LedgerStore, monkeypatch: pytest.MonkeyPatch, segment: int, workers: int
) -> None:
    before = await _sealed_levels_link(store)
    blocks = await _blocks(store)
    # Every block is sealed, but perhaps one: a stretch in which the pool moved before it first
    # named its levels' meters (the history's first split) continues nothing and is checked
    # entry by entry.
    sealed = [b for b in blocks if b.seal is not None]
    assert len(sealed) >= len(blocks) - 1 and all(len(b.seal) == 32 for b in sealed)
    monkeypatch.setattr(verify_module, "SEGMENT", segment)
    monkeypatch.setattr(verify_module, "PARALLEL_FROM", 0)
    fast = await verify_ledger(store.engine, KEY, workers=workers)
    full = await verify_ledger(store.engine, KEY, workers=workers, every_seal=True)
    assert fast.ok and full.ok, (fast.problems, full.problems)
    assert fast.entries == full.entries == len(before)
    assert fast.sealed == sum(b.entries for b in sealed) and full.sealed == 0
    assert fast.unverifiable == full.unverifiable == []


async def test_runs_join_the_chain_as_their_entries_would(store: LedgerStore) -> None:
    """A chain fed entry by entry and fed runs of it at once end in the same place, meters
    included; a run that does not fit where the chain stands is named as its entry would be."""
    p = _longer()
    await store_levels_link(store, p.outcomes)
    entries = await _entries(store)
    plain = ChainVerifier(KEY, LINK)
    assert plain.feed_many(entries) is None

    def fed(change: Any = None) -> ChainVerifier:
        v = ChainVerifier(KEY, LINK)
        i = 0
        while i < len(entries):
            j = i
            while j < len(entries) and blockable(entries[j]) and j - i < 6:
                j += 1
            if j - i < 2:
                v.feed_many(entries[i : i + 1])
                i += 1
                continue
            stretch = entries[i:j]
            runs = runs_of(KEY, stretch)
            if runs is None:  # the first split: not sealable, fed entry by entry
                v.feed_many(stretch)
            else:
                ((first, last, prev, before, after, meters),) = json.loads(zlib.decompress(runs))
                if change is not None:
                    first, prev, before, meters = change(first, prev, before, meters)
                mv = {k: tuple(m) for k, m in meters.items()}
                v.feed_run(first, last, prev, stretch[-1].hash, before, after, mv)
            if v.problem is not None:
                return v
            i = j
        return v

    whole = fed()
    assert whole.problem is None
    assert (whole.seq, whole.prev_hash, whole.meter, whole.count) == (
        plain.seq,
        plain.prev_hash,
        plain.meter,
        plain.count,
    )
    assert whole.trail.meters == plain.trail.meters and len(plain.trail.meters or {}) >= 4

    def moved_meter(first: int, prev: str, before: int, meters: dict[str, Any]) -> Any:
        if meters and first > 20:
            k = sorted(meters)[-1]
            meters = {**meters, k: [meters[k][0], meters[k][1] + 5, meters[k][2]]}
            moved.append(k)
        return first, prev, before, meters

    moved: list[str] = []
    problem = fed(moved_meter).problem
    assert problem is not None and f"meter {moved[0]} starts from" in problem.what
    assert problem.seq is not None and problem.seq > 20

    def skipped(first: int, prev: str, before: int, meters: Any) -> Any:
        return (first + 1 if first > 20 else first), prev, before, meters

    problem = fed(skipped).problem
    assert problem is not None and "missing" in problem.what

    def rechained(first: int, prev: str, before: int, meters: Any) -> Any:
        return first, ("0" * 64 if first > 20 else prev), before, meters

    problem = fed(rechained).problem
    assert problem is not None and "previous entry's seal" in problem.what


async def test_a_block_edited_without_the_key_is_found(store: LedgerStore) -> None:
    await _sealed_levels_link(store)
    blocks = await _blocks(store)
    target = next(b for b in blocks[1:] if b.seal is not None)
    runs = json.loads(zlib.decompress(target.runs))
    # A run's meters edited (the body left whole): its seal fails, named at the block.
    first_run = runs[0]
    key = sorted(first_run[5])[0]
    first_run[5][key][1] += 100
    edited = zlib.compress(json.dumps(runs, separators=(",", ":"), sort_keys=True).encode())
    where = MeterBlockRow.first_seq == target.first_seq
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        await conn.execute(update(MeterBlockRow).where(where).values(runs=edited))
    (problem,) = (await verify_ledger(store.engine, KEY)).problems
    assert problem.seq == target.first_seq and "seal of the block" in problem.what
    # Sealed again with another key: the same.
    other = b"another ledger key, 32 bytes!!!!"
    forged = block_seal(other, LINK, edited, target.body)
    async with store.engine.begin() as conn:
        await conn.execute(update(MeterBlockRow).where(where).values(seal=forged))
    (problem,) = (await verify_ledger(store.engine, KEY)).problems
    assert "seal of the block" in problem.what
    # Its runs and seal taken away: its entries are checked one by one, and are whole.
    async with store.engine.begin() as conn:
        await conn.execute(update(MeterBlockRow).where(where).values(runs=None, seal=None))
    report = await verify_ledger(store.engine, KEY)
    assert report.ok, report.problems
    assert report.sealed == sum(b.entries for b in blocks if b.seal is not None) - target.entries
    # Another sealed block moved to another link: its seal names its own link.
    moved = next(b for b in blocks if b.seal is not None and b.first_seq != target.first_seq)
    async with store.engine.begin() as conn:
        await conn.execute(
            update(MeterBlockRow)
            .where(MeterBlockRow.first_seq == moved.first_seq)
            .values(link_id="elsewhere")
        )
    problems = (await verify_ledger(store.engine, KEY)).problems
    assert any(p.link_id == LINK and "missing" in p.what for p in problems), problems
    assert any(p.link_id == "elsewhere" for p in problems), problems


async def test_checkpoints_inside_a_sealed_block_are_checked_by_their_seal(
    store: LedgerStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    entries = await _sealed_levels_link(store, most=40)
    signing = Ed25519PrivateKey.generate()
    # A checkpoint every five entries, as the controller signs them: the seal of its entry
    # and the digest of the entries since the one before.
    lines: list[str] = []
    prev = 0
    for e in entries[4::5]:
        digest = digest_of(entries[prev : e.seq])
        cp = Checkpoint(LINK, e.seq, e.hash, e.meter_after_units, e.at_us, prev, digest)
        lines.append(sign_line(signing, cp))
        prev = e.seq
    monkeypatch.setattr(verify_module, "SEGMENT", 12)
    monkeypatch.setattr(verify_module, "PARALLEL_FROM", 0)

    async def check(text: str, every_seal: bool = False) -> Any:
        cps = parse_checkpoints(text.encode(), signing.public_key(), "cps").checkpoints
        return await verify_ledger(store.engine, KEY, checkpoints=cps, every_seal=every_seal)

    fast = await check("\n".join(lines) + "\n")
    assert fast.ok and fast.checkpoints == len(lines), fast.problems
    assert 0 < fast.digests_by_block_seal < len(lines)
    full = await check("\n".join(lines) + "\n", every_seal=True)
    assert full.ok and full.digests_by_block_seal == 0
    # A checkpoint whose entry lies inside a sealed block, signed with another seal: found.
    spans = [(b.first_seq, b.last_seq) for b in await _blocks(store) if b.seal is not None]
    inside = next(
        i
        for i, e in enumerate(entries[4::5])
        if any(f < e.seq < last for f, last in spans) and e.kind in BLOCK_KINDS
    )
    e = entries[4::5][inside]
    cp = json.loads(lines[inside])
    wrong = Checkpoint(
        LINK, e.seq, "ab" * 32, e.meter_after_units, e.at_us, cp["prev_seq"], cp["digest"]
    )
    lines[inside] = sign_line(signing, wrong)
    report = await check("\n".join(lines) + "\n")
    assert [(p.seq, "seal differs" in p.what) for p in report.problems] == [(e.seq, True)]


def test_a_run_knows_the_seal_of_each_of_its_entries() -> None:
    seals = bytes(range(32)) + bytes(range(32, 64)) + bytes(range(64, 96))
    run = Run(LINK, 10, 11, "00" * 32, 0, 5, {}, seals, 1)
    assert run.seal_of(10) == bytes(range(32, 64)).hex() and run.seal == bytes(range(64, 96)).hex()
    assert run.entries == 2


async def test_against_signed_checkpoints_a_block_counts_only_with_their_key(
    store: LedgerStore,
) -> None:
    """The ledger key makes a block's seal; someone holding it could seal an edited block. A
    history checked against signed checkpoints asks for the checkpoint key's signature of the
    block too, which the ledger key cannot make: such a block is then checked entry by entry,
    and the edit is found."""
    p = _longer()
    await store_levels_link(store, p.outcomes)
    signing = Ed25519PrivateKey.generate()
    done = await compact_link(
        store.engine, LINK, key=KEY, signer=signing, until_us=2**62, day_end=_day_end, most=8
    )
    assert done.blocks >= 2
    blocks = await _blocks(store)
    sealed = [b for b in blocks if b.seal is not None]
    assert sealed and all(b.signature is not None and len(b.signature) == 64 for b in sealed)
    public = signing.public_key()
    signed = await verify_ledger(store.engine, KEY, public_key=public)
    assert signed.ok and signed.sealed == sum(b.entries for b in sealed)
    # Another checkpoint key: every block checked entry by entry, the history still whole.
    other = await verify_ledger(
        store.engine, KEY, public_key=Ed25519PrivateKey.generate().public_key()
    )
    assert other.ok and other.sealed == 0 and other.entries == signed.entries
    # One credit more in an entry of a block, the block sealed again with the ledger key.
    target = sealed[-1]
    entries = decode(LINK, target.body)
    e = entries[2]
    entries[2] = e._replace(
        delta_units=e.delta_units + 1, meter_after_units=e.meter_after_units + 1
    )
    body, _ = encode(entries)
    seal = block_seal(KEY, LINK, target.runs, body)
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        await conn.execute(
            update(MeterBlockRow)
            .where(MeterBlockRow.first_seq == target.first_seq)
            .values(body=body, seal=seal)
        )
    (problem,) = (await verify_ledger(store.engine, KEY, public_key=public)).problems
    assert problem.seq == e.seq and "seal does not match" in problem.what
    (problem,) = (await verify_ledger(store.engine, KEY, every_seal=True)).problems
    assert problem.seq == e.seq


def _day_end(at_us: int) -> int:
    return (at_us // 86_400_000_000 + 1) * 86_400_000_000


async def test_the_scheduled_compaction_seals_and_signs(store: LedgerStore) -> None:
    p = _longer()
    await store_levels_link(store, p.outcomes)
    signing = Ed25519PrivateKey.generate()
    job = CompactionJob(
        store.engine,
        key=KEY,
        signer=signing,
        link_ids=lambda: [LINK],
        calendar=CALENDAR,
        now_us=lambda: p.at + 3 * 86_400_000_000,  # the days played have all closed
        first_run_s=3600,
        interval_s=3600,
    )
    done = await job.run_once()
    assert done.entries > 0 and job.failures == 0
    blocks = await _blocks(store)
    assert all(b.seal is not None and b.signature is not None for b in blocks[1:])
    report = await verify_ledger(store.engine, KEY, public_key=signing.public_key())
    assert report.ok and report.sealed == sum(b.entries for b in blocks if b.seal is not None)


async def test_entries_that_fail_their_check_are_never_packed(store: LedgerStore) -> None:
    """The compaction seals only what it checked: an entry edited in its row stops the link's
    compaction there, naming it, and stays a row, where verify finds it."""
    p = _longer()
    await store_levels_link(store, p.outcomes)
    entries = await _entries(store)
    edited = [e for e in entries if e.kind in BLOCK_KINDS][20]
    async with store.engine.begin() as conn:
        await drop_guards(conn)
        await conn.execute(
            update(MeterEntryRow)
            .where(MeterEntryRow.seq == edited.seq)
            .values(explanation="nothing to see")
        )
    with pytest.raises(UnsealableBlock, match=f"entry {edited.seq}: the seal does not match"):
        await compact(store.engine, LINK, most=8)
    async with store.engine.connect() as conn:
        still = await conn.scalar(
            select(MeterEntryRow.explanation).where(MeterEntryRow.seq == edited.seq)
        )
    assert still == "nothing to see"
    assert all(not b.first_seq <= edited.seq <= b.last_seq for b in await _blocks(store))
    (problem,) = (await verify_ledger(store.engine, KEY)).problems
    assert problem.seq == edited.seq
