"""The jackpot slip: the paper of one award, printed from the records, checkable against the
meter history.

``slip_content`` is pure: from the hit as stored, the history entry that paid it (its award,
or for a fixed pay its pay at the table), the names people call the link, table, game and
level, and the property's letterhead and amounts, it builds every line of the slip. Times are
written in the property's time zone; card faces as dealt ("As Ks Qs Js Ts"). A slip names no
patron: an award at or above the operator's tax-reporting amount carries the reference of
the tax form it was reported on, or a blank line to write it on.

``slip_pdf`` prints it (deterministic bytes); ``load_slip_source`` reads what it is built
from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from controller.core.games import Game
from controller.core.hands import HandCategory, ShownCards
from controller.core.ledger import SealedEntry
from controller.core.money import UNITS_PER_CENT, displayed_cents, format_cents
from controller.core.reducer import EngineError, EntryKind
from controller.paperwork.pdf import Fields, Letterhead, render_pdf
from controller.rules.house import needs_second_signature, needs_tax_form
from controller.storage.entries import Entries
from controller.storage.handles import Database
from controller.storage.hits import HitRecord
from controller.storage.link_names import link_names
from controller.storage.unit_of_work import connected

__all__ = [
    "BLANK",
    "SIGNATURES",
    "Slip",
    "SlipRefused",
    "SlipSource",
    "load_slip_source",
    "named",
    "slip_content",
    "slip_pdf",
]

# What the slip is signed by at the table: the technician who verified and the supervisor
# (the second signature). A slip names no patron.
SIGNATURES = ("Technician", "Supervisor")
BLANK = "_" * 32  # a line to write on
_PAID_KINDS = (EntryKind.AWARD, EntryKind.PAID_AT_TABLE)


class SlipRefused(EngineError):
    """A hit no slip is printed for (refused: nothing was paid)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SlipSource:
    """What a slip is built from: the records, and the names people use."""

    hit: HitRecord
    entry: SealedEntry | None  # the award (or the pay at the table) in the meter history
    link_name: str
    table_name: str | None = None
    game: Game | None = None
    # The levels' names by key ("L1": "Grand"), for a link of several levels only: a link of
    # one meter has no level to name.
    level_names: Mapping[str, str] | None = None


@dataclass(frozen=True, slots=True)
class Slip:
    """The slip's lines: sections of (label, value), each value as printed."""

    title: str
    hit_id: str
    sections: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    from_meter: bool

    def value(self, label: str) -> str | None:
        """The value printed beside ``label`` (None: the slip has no such line)."""
        for _, lines in self.sections:
            for name, value in lines:
                if name == label:
                    return value
        return None


def _units(units: int) -> str:
    """An amount of the meter: the cents it shows, and its exact units where they differ."""
    cents = format_cents(displayed_cents(units))
    rest = units % UNITS_PER_CENT
    return cents if rest == 0 else f"{cents} (+{rest:,}/10,000 cent)"


def _cards(text: str | None, kind: str) -> str:
    shown = ShownCards.of(text)
    if shown.codes is not None or shown.problem is not None:
        return shown.words()
    if kind == "mystery":
        return "none: a mystery level's trigger, decided by no cards"
    if kind == "envy":
        return "none: an envy bonus for another seat's hand"
    return "not reported"


def _mark(who: str | None, at_us: int | None, when: Letterhead, missing: str) -> str:
    if who is None or at_us is None:
        return missing
    return f"{who}, {when.when(at_us)}"


def _meter_lines(source: SlipSource, entry: SealedEntry) -> tuple[tuple[str, str], ...]:
    """The meter the award was paid from, before and after: the level's own meter for a link
    of levels (the entry's sealed split), the link's meter otherwise."""
    hit = source.hit
    split = entry.meters()
    key = hit.level or "L1"
    if split is not None and key in split:
        before, delta = split[key]
        meter = f"level {key}"
    else:
        before, delta = entry.meter_before_units, entry.delta_units
        meter = "link"
    return (
        ("Meter", meter),
        ("Meter before the award", _units(before)),
        ("Award from the meter", _units(-delta)),
        ("Meter after the award", _units(before + delta)),
    )


def slip_content(
    source: SlipSource,
    *,
    letterhead: Letterhead,
    tax_reporting_from_cents: int,
    second_signature_from_cents: int,
) -> Slip:
    """Every line of the jackpot slip of ``source.hit`` (``SlipRefused`` for a refused hit,
    or an award from a meter whose history entry is not there to check it against)."""
    hit = source.hit
    if hit.status != "awarded":
        raise SlipRefused(
            f"hit {hit.hit_id} was refused ({hit.refusal or 'no reason recorded'}): "
            "nothing was paid, so there is no jackpot slip"
        )
    from_meter = hit.paid_from == "meter"
    entry = source.entry
    if entry is None:
        raise SlipRefused(
            f"hit {hit.hit_id}: no entry of the meter history records its pay, so no slip "
            "can be checked against the ledger"
        )
    hand = HandCategory[hit.hand]
    table = named(source.table_name, hit.table_id)
    award: list[tuple[str, str]] = [
        ("Link", source.link_name),
        ("Table", table),
        ("Seat", str(hit.seat)),
    ]
    if source.game is not None:
        award.append(("Game", source.game.label))
    if source.level_names and hit.level:
        award.append(("Level", named(source.level_names.get(hit.level), hit.level)))
    award += [
        ("Hand", hand.label),
        ("Amount", format_cents(hit.award_cents)),
        ("Paid", "from the jackpot meter" if from_meter else "at the table (a fixed pay)"),
        ("Hit taken", letterhead.when(hit.at_us)),
        ("Round", str(hit.round)),
    ]
    cards = (
        ("Cards as dealt", _cards(hit.cards, hit.kind)),
        ("Cards as verified", _cards(hit.verified_cards, hit.kind) if hit.verified_by else "-"),
    )
    second = needs_second_signature(
        award_cents=hit.award_cents, from_cents=second_signature_from_cents
    )
    unsigned = (
        "not yet signed"
        if second
        else f"not required (under {format_cents(second_signature_from_cents)})"
    )
    marks: list[tuple[str, str]] = [
        ("Verified by", _mark(hit.verified_by, hit.verified_at_us, letterhead, "not verified")),
        (
            "Signed by (second)",
            _mark(hit.signed_off_by, hit.signed_off_at_us, letterhead, unsigned),
        ),
    ]
    if hit.hand_paid_by is not None and hit.hand_paid_cents is not None:
        paid = _mark(hit.hand_paid_by, hit.hand_paid_at_us, letterhead, "")
        marks.append(("Hand pay", f"{format_cents(hit.hand_paid_cents)} by {paid}"))
    marks.append(
        ("Table reset by", _mark(hit.released_by, hit.released_at_us, letterhead, "not yet reset"))
    )
    sections: list[tuple[str, tuple[tuple[str, str], ...]]] = [
        ("Award", tuple(award)),
        ("Cards", cards),
    ]
    if from_meter:
        sections.append(("Meter", _meter_lines(source, entry)))
    sections.append(("Signatures recorded", tuple(marks)))
    if needs_tax_form(award_cents=hit.award_cents, from_cents=tax_reporting_from_cents):
        reference = hit.tax_form_reference or BLANK
        tax: list[tuple[str, str]] = [("Tax form reference", reference)]
        if hit.tax_form_reference is not None:
            tax.append(("Recorded by", _mark(hit.tax_form_by, hit.tax_form_at_us, letterhead, "")))
        sections.append(
            (f"Tax form (awards from {format_cents(tax_reporting_from_cents)})", tuple(tax))
        )
    sections.append(
        (
            "Check against the meter history",
            (
                ("Hit", hit.hit_id),
                ("History entry", f"{entry.seq} of link {hit.link_id} ({entry.kind})"),
                ("Entry seal", entry.hash),
            ),
        )
    )
    return Slip(
        title=f"Jackpot slip: {format_cents(hit.award_cents)}, {hand.label}",
        hit_id=hit.hit_id,
        sections=tuple(sections),
        from_meter=from_meter,
    )


def named(name: str | None, key: str) -> str:
    """A link or table as people call it, with its id when the name is not the id."""
    return key if not name or name == key else f"{name} ({key})"


def slip_pdf(slip: Slip, letterhead: Letterhead) -> bytes:
    """The slip, printed: the property's letterhead, its lines, a signature block."""
    body = [(heading, Fields(lines)) for heading, lines in slip.sections]
    return render_pdf(slip.title, body, letterhead=letterhead, signatures=SIGNATURES)


async def load_slip_source(
    engine: Database,
    hit: HitRecord,
    *,
    game: Game | None,
    level_names: Mapping[str, str] | None,
) -> SlipSource:
    """The records a slip of ``hit`` is built from: its entry of the history, the names."""
    async with connected(engine) as conn:
        entry = await Entries(conn).of_hit(hit.link_id, hit.hit_id, hit.at_us, _PAID_KINDS)
    names = await link_names(engine, hit.link_id)
    return SlipSource(
        hit=hit,
        entry=entry,
        link_name=named(names.name if names else None, hit.link_id),
        table_name=None if names is None else names.tables.get(hit.table_id),
        game=game,
        level_names=level_names,
    )
