"""The reconciliation built a batch at a time: the same report however the entries arrive."""

from __future__ import annotations

import json
import random
from typing import Any

from controller.core.ledger import SealedEntry
from controller.core.money import contribution_units
from controller.core.reducer import EntryKind
from controller.paperwork.reconciliation import (
    WEEK_US,
    Fold,
    Reconciliation,
    reconcile,
    summary,
    week_start_us,
)
from controller.periods import DAY_US, MAX_SPAN_US
from tests.controller.history_entries import entry

T0 = 1_609_459_200_000_000  # 2021-01-01T00:00:00Z, a Friday


def history(rng: random.Random, since_us: int, until_us: int, opening: int) -> list[SealedEntry]:
    entries: list[SealedEntry] = []
    meter = opening
    at = since_us
    seq = 1
    while True:
        at += rng.randrange(1, 3 * DAY_US)
        if at >= until_us:
            return entries
        roll = rng.random()
        details = "{}"
        table = None
        if roll < 0.8:
            credits = rng.randrange(1, 50)
            table = f"t{rng.randrange(1, 4)}"
            details = json.dumps({"credits": credits, "denomination_cents": 100, "rate_bp": 8250})
            kind = EntryKind.CONTRIBUTION
            delta = contribution_units(credits=credits, denomination_cents=100, rate_bp=8250)
            delta += 1 if roll < 0.01 else 0  # now and then one that does not add up
        elif roll < 0.9:
            kind, delta = EntryKind.AWARD, -min(meter, rng.randrange(1, 10**9))
        elif roll < 0.95:
            kind, delta = EntryKind.JACKPOT_RESET, 10**9
        else:
            kind, delta = EntryKind.CORRECTION, rng.randrange(-(10**6), 10**6)
        entries.append(entry(seq, at, str(kind), meter, delta, meter + delta, table, details))
        meter += delta
        seq += 1


def reference_weeks(since: int, until: int, opening: int, entries: list[SealedEntry]) -> list[Any]:
    """Each calendar week reconciled on its own, from where the one before closed."""
    out = []
    start = since
    while start < until:
        end = min(until, week_start_us(start) + WEEK_US)
        week = reconcile("x", start, end, opening, [e for e in entries if start <= e.at_us < end])
        out.append(summary(week))
        opening, start = week.closing_units, end
    return out


def test_any_batching_gives_the_report_of_the_whole_at_once() -> None:
    rng = random.Random(7)
    since, until = T0, T0 + MAX_SPAN_US
    opening = 10**10
    entries = history(rng, since, until, opening)
    whole = Fold("x", since, until, opening)
    whole.add(entries)
    total, weeks = whole.finish()
    for _ in range(5):
        fold = Fold("x", since, until, opening)
        i = 0
        while i < len(entries):
            n = rng.randrange(0, 300)
            fold.add(entries[i : i + n])
            i += n
        t, w = fold.finish()
        assert summary(t) == summary(total)
        assert [summary(x) for x in w] == [summary(x) for x in weeks]

    assert [summary(x) for x in weeks] == reference_weeks(since, until, opening, entries)
    assert len(weeks) == 263  # the longest period answered: five years and a week
    assert weeks[0].since_us == since and weeks[-1].until_us == until
    assert all(week_start_us(w.since_us) == w.since_us for w in weeks[1:])  # Mondays
    assert sum(w.contributions_units for w in weeks) == total.contributions_units
    assert sum(w.entries for w in weeks) == total.entries == len(entries)
    assert weeks[-1].closing_units == total.closing_units == entries[-1].meter_after_units
    broken = [w for w in weeks if not w.balanced]
    assert broken and not total.balanced  # the entries that do not add up are flagged
    assert sum(w.difference_units for w in weeks) == total.difference_units > 0


def test_a_period_without_entries_keeps_its_opening() -> None:
    fold = Fold("x", T0, T0 + 10 * DAY_US, 12345)
    total, weeks = fold.finish()
    assert isinstance(total, Reconciliation) and total.balanced
    assert total.closing_units == 12345 and total.entries == 0
    assert [w.until_us - w.since_us for w in weeks] == [3 * DAY_US, 7 * DAY_US]


def test_tables_are_listed_as_the_floor_numbers_them() -> None:
    details = json.dumps({"credits": 1, "denomination_cents": 100, "rate_bp": 8000})
    delta = contribution_units(credits=1, denomination_cents=100, rate_bp=8000)
    tables = ["stud-10", "stud-2", "stud-1", "lir-3", "stud-11", "stud-9"]
    entries = [
        entry(n, T0 + n, str(EntryKind.CONTRIBUTION), n * delta, delta, (n + 1) * delta, t, details)
        for n, t in enumerate(tables)
    ]
    report = reconcile("x", T0, T0 + DAY_US, 0, entries)
    assert report.balanced
    assert [t["table_id"] for t in summary(report)["tables"]] == [
        "lir-3", "stud-1", "stud-2", "stud-9", "stud-10", "stud-11",
    ]  # fmt: skip
