"""Exports for auditors: meter history, hits and reductions for a period, as CSV or JSON.

Rows stream straight from the database to the output, so a five-year export does not sit in
memory. Amounts keep their integer scale in the column name (``*_units`` = 1/10,000 cent,
``*_cents``); times are ISO 8601 UTC; cards are written as people read them
(``As Ks Qs Js Ts``). Every export states the law it was made under
(``controller.rules.statement``): a JSON export in its head (``jurisdiction``, and
``demonstration`` with the links opened in it), a CSV export in two last columns of every
row, ``jurisdiction`` and ``demonstration`` ("yes" when the row's link was opened in
demonstration mode or the export was made in it), so that a row read alone still says so.

CSV is opened by auditors in spreadsheets, which run a cell that starts like a formula, and
read by tools that split lines on any CR or LF. Every CSV written for people is written by
``CsvWriter``: each cell goes through ``csv_cell`` (text is neutralised, numbers are not, so a
negative amount stays a number a spreadsheet can add up), and a cell holding a line break is
quoted (RFC 4180 line ends, so the writer quotes a lone CR as well as LF).
"""

from __future__ import annotations

import csv
import enum
import json
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any, TextIO, TypeVar

from controller.core.hands import ShownCards
from controller.core.ledger import (
    ENTRY_COLUMNS,
    SealedEntry,
    SignedCheckpoint,
    canonical_details,
    digest_of,
)
from controller.core.money import displayed_cents
from controller.core.reducer.conservation import entry_meters
from controller.paperwork.jobs import Job, step
from controller.periods import PeriodError, at_text, parse_instant
from controller.refusal import Invalid
from controller.rules.jurisdictions import INDIANA, Jurisdiction
from controller.rules.statement import statement
from controller.storage.handles import Connection, Database
from controller.storage.hits import HIT_COLUMNS, HitRecord, Hits
from controller.storage.papers import export as stored
from controller.storage.papers.export import Reduction
from controller.storage.unit_of_work import connected


class ExportError(Invalid):
    """A request for an export that cannot be answered (bad period, unknown format)."""


class ExportKind(enum.StrEnum):
    HISTORY = "history"
    HITS = "hits"
    REDUCTIONS = "reductions"


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
BATCH = 5_000  # rows read, and written, at a time


# What a spreadsheet takes for the start of a formula (or of a cell it re-parses).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n")
# Where a reader may take a new line to begin: the CSV reader only at a quoted cell's end, a
# naive one at any of these (str.splitlines splits at all of them).
_LINE_BREAKS = "\r\n\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
# A line of a cell that starts, after any blanks, like a formula: " =1+1", "\r=1+1", "x\n@A1".
_FORMULA_LINE = re.compile(f"(?:^|(?<=[{_LINE_BREAKS}]))(?=[^\\S{_LINE_BREAKS}]*[=+\\-@])")


def csv_cell(value: Any) -> Any:
    """A CSV cell as a spreadsheet should read it: text that looks like a formula is kept as
    text (a leading apostrophe), on every line of the cell and after leading blanks too, and
    a cell starting with a tab or line break is marked likewise; integers, including negative
    amounts, are left as numbers."""
    if not isinstance(value, str):
        return value
    text = _FORMULA_LINE.sub("'", value)
    if text.startswith(FORMULA_STARTS):
        text = "'" + text
    return text


class CsvWriter:
    """The one writer of CSV for people: every cell through ``csv_cell``, every cell with a
    delimiter, quote, CR or LF quoted (``\\r\\n`` line ends: Python's writer quotes a cell
    holding any character of the line terminator, and only those)."""

    def __init__(self, out: TextIO) -> None:
        self._writer = csv.writer(out, lineterminator="\r\n")

    def row(self, cells: Iterable[Any]) -> None:
        self._writer.writerow([csv_cell(c) for c in cells])


def iso(at_us: int) -> str:
    return (EPOCH + timedelta(microseconds=at_us)).isoformat(timespec="microseconds")


HISTORY_FIELDS = (
    "link_id",
    "seq",
    "at",
    "kind",
    "meter_before_units",
    "delta_units",
    "meter_after_units",
    "meter_after_cents",
    "table_id",
    "hit_id",
    "anomaly_id",
    "correction_id",
    "explanation",
    "details",
    "prev_hash",
    "hash",
    # How each meter of a link of levels moved ({key: [before_units, delta_units]}, the
    # canonical JSON of the entry's sealed split); empty for a link of one meter (L1).
    "meters",
)
# The hits' columns: fields of the one hit record, in this order, ``at_us`` written as ``at``.
_HIT_EXPORTED = (
    "hit_id",
    "link_id",
    "table_id",
    "at_us",
    "seat",
    "hand",
    "round",
    "cards",
    "source",
    "status",
    "award_cents",
    "paid_from",
    "settlement_group",
    "settlement_order",
    "policy",
    "refusal",
    "entered_by",
    "verified_by",
    "released_by",
    "level",
    "kind",
    "needs_technician",
)
if not set(_HIT_EXPORTED) <= set(HIT_COLUMNS):
    raise TypeError(f"exported hit fields {set(_HIT_EXPORTED) - set(HIT_COLUMNS)} are not stored")
HIT_FIELDS = tuple("at" if f == "at_us" else f for f in _HIT_EXPORTED)
REDUCTION_FIELDS = (
    "link_id",
    "seq",
    "at",
    "kind",
    "delta_units",
    "meter_before_units",
    "meter_after_units",
    "explanation",
    "hit_id",
    "correction_id",
    "correction_category",
    "requested_by",
    "approved_by",
    "document_sha256",
)


def _history_row(r: SealedEntry) -> dict[str, Any]:
    return {
        "link_id": r.link_id,
        "seq": r.seq,
        "at": iso(r.at_us),
        "kind": r.kind,
        "meter_before_units": r.meter_before_units,
        "delta_units": r.delta_units,
        "meter_after_units": r.meter_after_units,
        "meter_after_cents": displayed_cents(r.meter_after_units),
        "table_id": r.table_id,
        "hit_id": r.hit_id,
        "anomaly_id": r.anomaly_id,
        "correction_id": r.correction_id,
        "explanation": r.explanation,
        "details": r.details,
        "prev_hash": r.prev_hash,
        "hash": r.hash,
        "meters": meters_text(r.details),
    }


def meters_text(details: str) -> str:
    """The canonical JSON of how an entry moved each meter of its pool, or "" when it does
    not say (an entry of a link of one meter moves L1 by its delta)."""
    split = entry_meters(details)
    return "" if split is None else canonical_details({k: list(v) for k, v in split.items()})


def _hit_row(r: HitRecord) -> dict[str, Any]:
    row = {
        column: iso(r.at_us) if field == "at_us" else getattr(r, field)
        for column, field in zip(HIT_FIELDS, _HIT_EXPORTED, strict=True)
    }
    # Cards two characters each ("As Ks Qs Js Ts", the joker "JK"), never as the register
    # map's codes; a record whose cards are unreadable says so, with its stored text.
    row["cards"] = ShownCards.of(r.cards).compact()
    return row


def _reduction_row(r: Reduction) -> dict[str, Any]:
    e, c = r
    return {
        "link_id": e.link_id,
        "seq": e.seq,
        "at": iso(e.at_us),
        "kind": e.kind,
        "delta_units": e.delta_units,
        "meter_before_units": e.meter_before_units,
        "meter_after_units": e.meter_after_units,
        "explanation": e.explanation,
        "hit_id": e.hit_id,
        "correction_id": e.correction_id,
        "correction_category": c and c.category,
        "requested_by": c and c.requested_by,
        "approved_by": c and c.approved_by,
        "document_sha256": c and c.document_sha256,
    }


# The law an export was made under, the two last columns of every CSV row.
STATEMENT_FIELDS = ("jurisdiction", "demonstration")

R = TypeVar("R")  # one row of an export, as storage reads it
_Batches = Callable[[Connection], AsyncIterator[list[R]]]


async def export(
    engine: Database,
    out: TextIO,
    *,
    kind: ExportKind,
    fmt: str,
    since_us: int,
    until_us: int,
    link_id: str | None = None,
    job: Job | None = None,
    law: Jurisdiction = INDIANA,
    demonstration: bool = False,
) -> int:
    """Write the export to ``out``; returns the number of rows. Rows are read ``BATCH`` at a
    time; each batch is formatted and written in ``job``'s worker thread while the next is
    read. ``law``: the installation's jurisdiction; ``demonstration``: whether it runs in
    demonstration mode (every export states both, and the links opened in it)."""
    if until_us <= since_us:
        raise ExportError("the period is empty: --until must be after --since")
    async with connected(engine) as conn:
        shown = await stored.opened_in_demonstration(conn, link_id)
    said = statement(law, installation=demonstration, links=shown)
    head = {
        "kind": str(kind),
        "since": iso(since_us),
        "until": iso(until_us),
        "link_id": link_id,
        **said.as_dict(),
    }

    def stated(row: dict[str, Any]) -> dict[str, Any]:
        row["jurisdiction"] = said.jurisdiction
        row["demonstration"] = "yes" if demonstration or row["link_id"] in shown else "no"
        return row

    scope = stored.Scope(link_id=link_id, since_us=since_us, until_us=until_us)
    if kind is ExportKind.HITS:

        def hits(conn: Connection) -> AsyncIterator[list[HitRecord]]:
            return Hits(conn).in_period(
                since_us=since_us, until_us=until_us, link_id=link_id, batch=BATCH
            )

        return await _write(engine, out, fmt, head, HIT_FIELDS, _hit_row, hits, job, stated)
    if kind is ExportKind.HISTORY:
        entries = partial(stored.history_batches, scope=scope, batch=BATCH)
        return await _write(
            engine, out, fmt, head, HISTORY_FIELDS, _history_row, entries, job, stated
        )
    reductions = partial(stored.reduction_batches, scope=scope, batch=BATCH)
    return await _write(
        engine, out, fmt, head, REDUCTION_FIELDS, _reduction_row, reductions, job, stated
    )


async def _write(
    engine: Database,
    out: TextIO,
    fmt: str,
    head: dict[str, Any],
    fields: tuple[str, ...],
    conv: Callable[[R], dict[str, Any]],
    batches: _Batches[R],
    job: Job | None,
    stated: Callable[[dict[str, Any]], dict[str, Any]],
) -> int:
    """``stated`` adds the law the export was made under to a CSV row (``STATEMENT_FIELDS``);
    a JSON export says it once, in its ``head``."""
    write: Callable[[Sequence[R], bool], None]
    if fmt == "csv":
        writer = CsvWriter(out)
        columns = (*fields, *STATEMENT_FIELDS)

        def write(rows: Sequence[R], first: bool) -> None:
            for r in rows:
                row = stated(conv(r))
                writer.row(row[f] for f in columns)

        await step(job, writer.row, columns)
    elif fmt == "json":

        def write(rows: Sequence[R], first: bool) -> None:
            out.write(
                "".join(
                    ("\n" if first and i == 0 else ",\n") + json.dumps(conv(r), ensure_ascii=False)
                    for i, r in enumerate(rows)
                )
            )

        await step(job, out.write, json.dumps(head)[:-1] + ', "rows": [')
    else:
        raise ExportError(f"unknown format {fmt!r}; use csv or json")
    n = 0
    async with connected(engine) as conn:
        async for rows in batches(conn):
            await step(job, write, rows, n == 0)
            n += len(rows)
    if fmt == "json":
        await step(job, out.write, "\n]}\n")
    return n


# ----------------------------------------------------------------------------- offline check


@dataclass(slots=True)
class ExportCheck:
    entries: int = 0
    anchored: int = 0  # entries inside a signed checkpoint's digest
    checkpoints: int = 0  # checkpoints whose entries the export holds whole
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.anchored > 0


def _sealed_row(r: Mapping[str, Any]) -> tuple[Any, ...]:
    """An exported history row back in ``ENTRY_COLUMNS`` order, exactly as it was sealed."""
    row = {**r, "at_us": r["at_us"] if "at_us" in r else parse_instant(r["at"])}
    return tuple(row[c] for c in ENTRY_COLUMNS)


def verify_export(data: Mapping[str, Any], checkpoints: Sequence[SignedCheckpoint]) -> ExportCheck:
    """An auditor's check of a JSON history export with the signed checkpoints alone (no
    database, no ledger key): each link's exported entries follow one another (sequence
    numbers, previous seals, meters), and every checkpoint whose entries the export holds
    whole has their digest and its head's seal. Only entries inside such a checkpoint are
    proved unaltered; the rest are counted apart."""
    out = ExportCheck()
    if data.get("kind") != str(ExportKind.HISTORY):
        out.problems.append("not a history export (progressive export history --format json)")
        return out
    by_link: dict[str, list[tuple[Any, ...]]] = {}
    try:
        for r in data["rows"]:
            row = _sealed_row(r)
            by_link.setdefault(row[0], []).append(row)
    except (KeyError, TypeError, PeriodError) as exc:
        out.problems.append(f"an exported row lacks a sealed field ({exc})")
        return out
    cps: dict[str, list[SignedCheckpoint]] = {}
    for sc in checkpoints:
        cps.setdefault(sc.checkpoint.link_id, []).append(sc)
    for link_id, rows in sorted(by_link.items()):
        rows.sort(key=lambda row: row[1])
        out.entries += len(rows)
        at: dict[int, int] = {}
        for i, row in enumerate(rows):
            if i and (row[1] != rows[i - 1][1] + 1 or row[13] != rows[i - 1][14]):
                out.problems.append(
                    f"link {link_id}, entry {row[1]}: does not follow entry {rows[i - 1][1]} "
                    "(an entry removed, inserted or re-chained)"
                )
            elif i and row[4] != rows[i - 1][6]:
                out.problems.append(
                    f"link {link_id}, entry {row[1]}: starts from meter {row[4]} but entry "
                    f"{rows[i - 1][1]} ended at {rows[i - 1][6]}"
                )
            at[row[1]] = i
        anchored: set[int] = set()
        for sc in cps.get(link_id, []):
            cp = sc.checkpoint
            first, last = cp.prev_seq + 1, cp.seq
            if first not in at or last not in at or at[last] - at[first] != last - first:
                continue
            out.checkpoints += 1
            where = f"line {sc.line}, signed at {at_text(cp.at_us)}"
            if rows[at[last]][14] != cp.hash:
                out.problems.append(
                    f"link {link_id}, entry {last}: its seal differs from the signed checkpoint "
                    f"({where}): edited"
                )
            elif digest_of(rows[at[first] : at[last] + 1]) != cp.digest:
                out.problems.append(
                    f"link {link_id}, entries {first} to {last}: differ from what the checkpoint "
                    f"({where}) signed: edited"
                )
            else:
                anchored.update(range(first, last + 1))
        out.anchored += len(anchored)
    if not out.anchored and not out.problems:
        out.problems.append("no signed checkpoint covers any exported entry whole")
    return out
