"""A gaming day's or a shift's report of a link as documents: PDF (the property's letterhead,
times in its zone, a signature block), CSV (cards written "As Ks Qs Js Ts") and JSON.

Every amount of the meter is given in cents and in exact units (1/10,000 cent): the units
add up, to the unit, as ``opening + contributions + seeded + anomalies approved - awards +
corrections + other = closing``; the cents are what the meter showed.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

from controller.core.hands import HandCategory, ShownCards
from controller.core.money import displayed_cents, format_cents
from controller.paperwork import reconciliation
from controller.paperwork.export import CsvWriter
from controller.paperwork.floor_reports import FloorReport
from controller.paperwork.pdf import Fields, Letterhead, Table, render_pdf
from controller.paperwork.slips import named
from controller.storage.hits import HitRecord
from controller.storage.papers.export import Reduction

__all__ = [
    "REPORT_SIGNATURES",
    "TERMS",
    "hit_cards",
    "local_iso",
    "report_csv",
    "report_json",
    "report_pdf",
    "terms",
]

REPORT_SIGNATURES = ("Prepared by", "Reviewed by")

# The conservation law's terms as printed: (summary field, label).
TERMS = (
    ("opening", "Opening meter"),
    ("contributions", "+ Contributions"),
    ("seeded", "+ Reset amounts seeded"),
    ("anomalies_approved", "+ Anomalies approved"),
    ("awards_paid", "- Awards paid"),
    ("corrections", "+ Corrections"),
    ("other", "+ Other"),
    ("expected_closing", "= Expected closing"),
    ("closing", "Closing meter"),
)


def local_iso(at_us: int, letterhead: Letterhead) -> str:
    """A time in the property's zone, ISO 8601 with its offset (for files)."""
    return letterhead.local(at_us).isoformat(timespec="seconds")


def _short(at_us: int, letterhead: Letterhead) -> str:
    return letterhead.local(at_us).strftime("%d %b %H:%M:%S %Z")


def _amount(units: int) -> str:
    return format_cents(displayed_cents(units))


def hit_cards(text: str | None) -> str:
    """Cards as people read them ("As Ks Qs Js Ts"), "" when none were reported."""
    return ShownCards.of(text).words()


def _level(hit: HitRecord, names: dict[str, str]) -> str:
    if hit.level is None:
        return ""
    named = names.get(hit.level) if len(names) > 1 else None
    return hit.level if named is None else f"{hit.level} {named}"


def _hand(hit: HitRecord, by_id: Mapping[str, HitRecord]) -> str:
    """The hand a hit was paid for. An envy bonus is another seat's hand: it says whose (the
    winner's table and seat, from the winning hit it was paid with), never as if the seat it
    was paid to had made the hand."""
    hand = HandCategory.label_of(hit.hand)
    if hit.kind != "envy":
        return hand
    # An envy bonus's id is its winning hit's, then "/envy" and the seat it was paid to.
    winner = by_id.get(hit.hit_id.rpartition("/")[0])
    where = f"{winner.table_id} seat {winner.seat}" if winner is not None else hit.table_id
    amount = f"{format_cents(hit.award_cents)} " if hit.award_cents else ""
    return f"envy: {amount}for the {hand} at {where}"


def _paid(hit: HitRecord) -> str:
    if hit.status != "awarded":
        return "refused"
    return "meter" if hit.paid_from == "meter" else "at table"


def _reason(r: Reduction) -> str:
    """The entry's explanation (a correction's names its category, requester and reason),
    with the second person who approved a correction."""
    explanation, approved_by = r.entry.explanation, r.correction and r.correction.approved_by
    if approved_by and approved_by not in explanation:
        return f"{explanation} (approved by {approved_by})"
    return explanation


def terms(report: FloorReport) -> list[tuple[str, str, int]]:
    """(label, cents as shown, exact units) of each term of the meter over the period."""
    s = reconciliation.summary(report.total, report.level_names)
    return [(label, format_cents(s[f"{k}_cents"]), s[f"{k}_units"]) for k, label in TERMS]


# ----------------------------------------------------------------------------- PDF


def _period_fields(report: FloorReport, letterhead: Letterhead) -> Fields:
    t = report.total
    verdict = (
        "balanced to the unit"
        if t.balanced
        else f"NOT BALANCED: difference {t.difference_units:+,d} units"
    )
    return Fields(
        [
            ("Link", named(report.link_name, report.link_id)),
            ("From", letterhead.when(report.period.since_us)),
            ("To", letterhead.when(report.period.until_us)),
            ("Length", _length(report.period.until_us - report.period.since_us)),
            ("Meter", f"{verdict}; {t.entries:,} history entries"),
        ]
    )


def _length(us: int) -> str:
    """A period's length in hours (a gaming day across a clock change: 23 or 25)."""
    hours, rest = divmod(us, 3_600_000_000)
    minutes = rest // 60_000_000
    return f"{hours} hours" + (f" {minutes} minutes" if minutes else "")


def report_pdf(report: FloorReport, letterhead: Letterhead) -> bytes:
    """The report, printed (deterministic bytes)."""
    t = report.total
    s = reconciliation.summary(t, report.level_names)
    sections: list[tuple[str, Any]] = [("Period", _period_fields(report, letterhead))]
    sections.append(
        (
            "Meter (exact units: 1/10,000 cent)",
            [["Term", "Amount", "Exact units"]]
            + [[label, cents, f"{units:,}"] for label, cents, units in terms(report)],
        )
    )
    if len(s["meters"]) > 1:
        sections.append(("Meter by meter", meters_table(s["meters"])))
    by_table = [["Table", "Credits", "Contributions", "Exact units"]] + [
        [x["table_id"], f"{x['credits']:,}", format_cents(x["contributions_cents"]),
         f"{x['contributions_units']:,}"]
        for x in s["tables"]
    ]  # fmt: skip
    sections.append(("Contributions by table", by_table if s["tables"] else ["none"]))
    if (fp := s["fixed_pay"]) is not None:
        sections.append(
            (
                f"Bets registered and fixed pays ({fp['clause']})",
                Fields(
                    [
                        ("Bets registered", f"{fp['bets_credits']:,} credits, "
                         f"{format_cents(fp['bets_cents'])}"),
                        ("Fixed pays", f"{fp['pays']:,}, {format_cents(fp['pays_cents'])}"),
                        ("Hold", format_cents(fp["hold_cents"])),
                    ]
                ),
            )
        )  # fmt: skip
    by_id = {h.hit_id: h for h in report.hits}
    hits = [["When", "Table, seat", "Hand", "Cards", "Level", "Amount", "Paid"], *[
        [_short(h.at_us, letterhead), f"{h.table_id}, {h.seat}", _hand(h, by_id),
         hit_cards(h.cards), _level(h, report.level_names) or "-", format_cents(h.award_cents),
         _paid(h)]
        for h in report.hits
    ]]  # fmt: skip
    sections.append(
        (
            f"Hits ({len(report.hits)})",
            Table(hits, (24, 11, 15, 18, 8, 14, 10)) if report.hits else ["none"],
        )
    )
    reductions = [
        ["Entry", "When", "Change", "Reason"],
        *[
            [
                str(r.entry.seq),
                _short(r.entry.at_us, letterhead),
                _amount(r.entry.delta_units),
                _reason(r),
            ]
            for r in report.reductions
        ],
    ]
    sections.append(
        (
            f"Reductions ({len(report.reductions)})",
            Table(reductions, (8, 20, 14, 58)) if report.reductions else ["none"],
        )
    )
    sections.append(("Problems", t.problems or ["none"]))
    sections.append(("History", report.anchors))
    return render_pdf(report.title, sections, letterhead=letterhead, signatures=REPORT_SIGNATURES)


def meters_table(meters: Sequence[dict[str, Any]]) -> list[list[str]]:
    """A reconciliation's meters, one row each (``meter_lines``' terms), for a printed page."""
    head = ["Meter", "Opening", "+Contrib.", "+Seeded", "+Moved", "-Awarded", "+Corr.", "Closing"]
    return [head] + [
        [
            m["meter"] + (f" ({m['name']})" if m["name"] and m["pot"] == "meter" else ""),
            format_cents(m["opening_cents"]),
            format_cents(m["contributed_cents"]),
            format_cents(m["seeded_cents"]),
            format_cents(m["moved_cents"]),
            format_cents(m["awarded_cents"]),
            format_cents(m["corrected_cents"] + m["other_cents"]),
            format_cents(m["closing_cents"]),
        ]
        for m in meters
    ]


# ----------------------------------------------------------------------------- CSV and JSON

HIT_COLUMNS = (
    "at", "hit_id", "table_id", "seat", "hand", "hand_name", "cards", "verified_cards",
    "level", "award_cents", "paid_from", "status", "verified_by", "released_by",
)  # fmt: skip
REDUCTION_COLUMNS = (
    "seq", "at", "kind", "delta_units", "delta_cents", "reason", "hit_id", "correction_id",
)  # fmt: skip


def _hit_row(h: HitRecord, letterhead: Letterhead) -> dict[str, Any]:
    return {
        "at": local_iso(h.at_us, letterhead),
        "hit_id": h.hit_id,
        "table_id": h.table_id,
        "seat": h.seat,
        "hand": h.hand,
        "hand_name": HandCategory.label_of(h.hand),
        "cards": ShownCards.of(h.cards).compact() or "",
        "verified_cards": ShownCards.of(h.verified_cards).compact() or "",
        "level": h.level or "",
        "award_cents": h.award_cents,
        "paid_from": h.paid_from or "",
        "status": h.status,
        "verified_by": h.verified_by or "",
        "released_by": h.released_by or "",
    }


def _reduction_row(r: Reduction, letterhead: Letterhead) -> dict[str, Any]:
    e = r.entry
    return {
        "seq": e.seq,
        "at": local_iso(e.at_us, letterhead),
        "kind": e.kind,
        "delta_units": e.delta_units,
        "delta_cents": displayed_cents(e.delta_units),
        "reason": _reason(r),
        "hit_id": e.hit_id or "",
        "correction_id": e.correction_id or "",
    }


def report_csv(report: FloorReport, letterhead: Letterhead) -> str:
    """The report as CSV, in blocks separated by an empty row, each with its header."""
    s = reconciliation.summary(report.total, report.level_names)
    out = io.StringIO()
    w = CsvWriter(out)
    w.row(["report", "link_id", "gaming_day", "shift", "from", "to", "time_zone", "balanced",
           "jurisdiction", "demonstration"])  # fmt: skip
    w.row([
        "shift" if report.period.shift else "gaming day", report.link_id,
        report.period.day.isoformat(), report.period.shift or "",
        local_iso(report.period.since_us, letterhead),
        local_iso(report.period.until_us, letterhead), letterhead.zone.key,
        "yes" if s["balanced"] else "NO", letterhead.jurisdiction or "",
        letterhead.demonstration or "",
    ])  # fmt: skip
    w.row([])
    w.row(["term", "cents", "units"])
    for key, _ in TERMS:
        w.row([key, s[f"{key}_cents"], s[f"{key}_units"]])
    w.row(["difference", displayed_cents(s["difference_units"]), s["difference_units"]])
    w.row([])
    w.row(["table_id", "credits", "contributions_cents", "contributions_units"])
    for x in s["tables"]:
        w.row([x["table_id"], x["credits"], x["contributions_cents"], x["contributions_units"]])
    if (fp := s["fixed_pay"]) is not None:
        w.row([])
        w.row(["bets_credits", "bets_cents", "pays", "pays_cents", "hold_cents"])
        w.row([fp["bets_credits"], fp["bets_cents"], fp["pays"], fp["pays_cents"],
               fp["hold_cents"]])  # fmt: skip
    w.row([])
    w.row(HIT_COLUMNS)
    for h in report.hits:
        row = _hit_row(h, letterhead)
        w.row(row[c] for c in HIT_COLUMNS)
    w.row([])
    w.row(REDUCTION_COLUMNS)
    for r in report.reductions:
        line = _reduction_row(r, letterhead)
        w.row(line[c] for c in REDUCTION_COLUMNS)
    w.row([])
    for problem in s["problems"]:
        w.row(["problem", problem])
    for anchor in report.anchors:
        w.row([anchor])
    return out.getvalue()


def _hit_json(h: HitRecord, letterhead: Letterhead) -> dict[str, Any]:
    return {
        **_hit_row(h, letterhead),
        "at_us": h.at_us,
        "cards": _json_cards(h.cards),
        "verified_cards": _json_cards(h.verified_cards),
    }


def _json_cards(text: str | None) -> list[str] | str | None:
    """A card text each (``"As"``, the joker ``"JK"``), or what makes them unreadable."""
    shown = ShownCards.of(text)
    return shown.texts() if shown.problem is None else shown.compact()


def report_json(report: FloorReport, letterhead: Letterhead) -> dict[str, Any]:
    """The report as JSON: the reconciliation's summary, the period, the hits (cards as
    faces), the reductions with their reasons."""
    p = report.period
    return {
        "link_id": report.link_id,
        "link_name": report.link_name,
        "gaming_day": p.day.isoformat(),
        "shift": p.shift,
        "time_zone": letterhead.zone.key,
        # The law the report was made under, and demonstration mode where it applies.
        "jurisdiction": letterhead.jurisdiction,
        "demonstration": letterhead.demonstration,
        "from": local_iso(p.since_us, letterhead),
        "to": local_iso(p.until_us, letterhead),
        "reconciliation": reconciliation.summary(report.total, report.level_names),
        "hits": [_hit_json(h, letterhead) for h in report.hits],
        "reductions": [
            {**_reduction_row(r, letterhead), "at_us": r.entry.at_us} for r in report.reductions
        ],
    }
