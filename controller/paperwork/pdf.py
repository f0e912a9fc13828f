"""Printable documents for regulators: a title and sections of paragraphs or tables, as PDF.

The output is deterministic (a fixed creation date, no random file id), so the same content
always gives the same bytes and the same SHA-256: a filed document can be regenerated and
checked against what was kept.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

if TYPE_CHECKING:
    from controller.rules.statement import Statement
    from controller.settings import Settings

# Fixed, so the bytes depend on the content alone.
_CREATED = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)

Paragraphs = Sequence[str]
Rows = Sequence[Sequence[str]]  # a table: the first row is its header


@dataclass(frozen=True, slots=True)
class Fields:
    """A body of labelled values (a form such as a slip): two columns, no header row, the
    labels narrower than the values so that a long value (a seal) stays on one line."""

    lines: Sequence[tuple[str, str]]


@dataclass(frozen=True, slots=True)
class Table:
    """A table whose columns are not all alike: ``widths`` are the columns' relative widths
    (a long reason gets more of the page than an entry number). The first row is its header."""

    rows: Rows
    widths: Sequence[int]


_UTC = ZoneInfo("UTC")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
# Heights kept together on a page: a section's heading with its first lines, a signature line
# with the space above it.
_HEADING_WITH_A_LINE_MM = 22
_SIGNATURE_MM = 11
# The foot of a page that states demonstration mode: room for its three lines.
_FOOT_MM = 16


@dataclass(frozen=True, kw_only=True)
class Letterhead:
    """Who a document is from, under which law, and how its times are written: the property's
    name and gaming licence number (from settings) and the jurisdiction at the head of every
    page, demonstration mode at the foot of every page, times in its time zone."""

    property_name: str | None = None
    licence: str | None = None
    zone: ZoneInfo = _UTC
    # The jurisdiction the document is made under ("Indiana (68 IAC 10)"); None: a document
    # from before it was stated (a packet filed then prints as it did).
    jurisdiction: str | None = None
    # Demonstration mode as the document states it (controller.rules.statement); None: the
    # installation does not run in it and the document is of no link opened in it.
    demonstration: str | None = None

    def property_line(self) -> str:
        name = self.property_name or "Property name not set (PROGRESSIVE_PROPERTY_NAME)"
        licence = self.licence or "not set (PROGRESSIVE_PROPERTY_LICENCE)"
        return f"{name}  |  Gaming licence {licence}"

    def line(self) -> str:
        """The property and the jurisdiction, on one line (a page's letterhead)."""
        if self.jurisdiction is None:
            return self.property_line()
        return f"{self.property_line()}  |  {self.jurisdiction}"

    def local(self, at_us: int) -> dt.datetime:
        """``at_us`` (microseconds since the epoch, UTC) as the property's local time."""
        return (_EPOCH + dt.timedelta(microseconds=at_us)).astimezone(self.zone)

    def when(self, at_us: int) -> str:
        """``at_us`` as the property's local time, to the second, with its zone's
        abbreviation: "24 Nov 2026 09:05:07 EST"."""
        return self.local(at_us).strftime("%d %b %Y %H:%M:%S %Z")

    def day(self, at_us: int) -> str:
        return self.local(at_us).strftime("%d %b %Y")


def letterhead_of(settings: Settings, statement: Statement | None = None) -> Letterhead:
    """The property's letterhead, from its settings, stating its jurisdiction and, when the
    installation runs in demonstration mode or the document is of links opened in it
    (``statement``: what the document states; default the installation's alone), so."""
    said = settings.statement() if statement is None else statement
    return Letterhead(
        property_name=settings.property_name,
        licence=settings.property_licence,
        zone=settings.zone,
        jurisdiction=said.jurisdiction,
        demonstration=said.demonstration,
    )


def _latin1(text: str) -> str:
    """The built-in PDF fonts speak Latin-1; anything else is shown as '?' rather than lost."""
    return text.encode("latin-1", "replace").decode("latin-1")


def render_pdf(
    title: str,
    sections: Sequence[tuple[str, Paragraphs | Rows | Fields | Table]],
    *,
    letterhead: Letterhead | None = None,
    signatures: Sequence[str] = (),
) -> bytes:
    """A document with ``title`` and, per section, a heading and its paragraphs or table.

    A section's body is paragraphs (a sequence of strings), a table (a sequence of rows,
    each a sequence of strings; the first row is the header; ``Table`` to size its columns)
    or ``Fields`` (labelled values).
    With a ``letterhead``, every page is headed by the property's name and licence and the
    document says which time zone its times are in; each of ``signatures`` (a role:
    "Technician", "Supervisor") gets a line for a name, a signature and a date at the end.
    """
    # Imported here: fpdf (and what it imports) is a good part of a process's start, and most
    # processes (a controller restarting after a crash among them) print nothing.
    from fpdf import FPDF
    from fpdf.fonts import FontFace

    head = _latin1(letterhead.property_line()) if letterhead is not None else None
    law = letterhead.jurisdiction if letterhead is not None else None
    demonstration = letterhead.demonstration if letterhead is not None else None

    class _Document(FPDF):
        def header(self) -> None:
            if head is not None:
                self.set_font("Helvetica", size=8)
                self.cell(0, 5, head, new_x="LMARGIN", new_y="NEXT")
                if law is not None:
                    self.cell(0, 4, _latin1(f"Jurisdiction: {law}"), new_x="LMARGIN", new_y="NEXT")
                self.ln(1)

        def footer(self) -> None:
            # Every page says it, so that no page of a demonstration passes for a floor's.
            if demonstration is not None:
                self.set_y(-_FOOT_MM)
                self.set_font("Helvetica", style="B", size=8)
                self.multi_cell(
                    0, 3.5, _latin1(demonstration), new_x="LMARGIN", new_y="NEXT", align="L"
                )

    pdf = _Document(orientation="portrait", unit="mm", format="A4")
    pdf.set_creation_date(_CREATED)
    pdf.set_title(_latin1(title))
    pdf.set_creator("progressive")
    pdf.set_auto_page_break(auto=True, margin=15 if demonstration is None else _FOOT_MM + 4)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=15)
    # Left-aligned: a title that wraps is not stretched to the margin with wide gaps.
    pdf.multi_cell(0, 8, _latin1(title), new_x="LMARGIN", new_y="NEXT", align="L")
    pdf.ln(3)
    if letterhead is not None:
        pdf.set_font("Helvetica", size=8)
        zone = _latin1(f"Times are in {letterhead.zone.key}.")
        pdf.multi_cell(0, 4, zone, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)

    def room_for(height_mm: float) -> None:
        """A new page unless ``height_mm`` fits on this one: a heading is not left alone at
        the foot of a page, nor a signature block cut in two."""
        if pdf.get_y() + height_mm > pdf.h - pdf.b_margin:
            pdf.add_page()

    signing = 6 + _SIGNATURE_MM * len(signatures) if signatures else 0
    for i, (heading, body) in enumerate(sections):
        words = not isinstance(body, Fields | Table) and bool(body) and isinstance(body[0], str)
        last_words = i == len(sections) - 1 and words
        # A last section of a few lines (a decision) stays with the lines where it is signed.
        lines = len(body) if isinstance(body, Sequence) else 0
        room_for(_HEADING_WITH_A_LINE_MM + (5 * lines + signing if last_words else 0))
        pdf.set_font("Helvetica", style="B", size=11)
        pdf.multi_cell(0, 6, _latin1(heading), new_x="LMARGIN", new_y="NEXT", align="L")
        pdf.set_font("Helvetica", size=9)
        if isinstance(body, Fields):
            with pdf.table(
                first_row_as_headings=False, col_widths=(30, 70), line_height=5, text_align="LEFT"
            ) as table:
                for label, value in body.lines:
                    cells = table.row()
                    cells.cell(_latin1(label), style=FontFace(emphasis="BOLD"))
                    cells.cell(_latin1(value))
        elif isinstance(body, Table) or (body and not isinstance(body[0], str)):
            widths = tuple(body.widths) if isinstance(body, Table) else None
            rows = [
                [_latin1(str(cell)) for cell in row]
                for row in (body.rows if isinstance(body, Table) else body)
            ]
            width = max(len(row) for row in rows)
            with pdf.table(
                headings_style=FontFace(emphasis="BOLD"),
                line_height=5,
                text_align="LEFT",
                col_widths=widths,
            ) as table:
                for row in rows:
                    cells = table.row()
                    for cell in [*row, *([""] * (width - len(row)))]:
                        cells.cell(cell)
        else:
            for paragraph in body:
                assert isinstance(paragraph, str)
                pdf.multi_cell(0, 5, _latin1(paragraph), new_x="LMARGIN", new_y="NEXT", align="L")
        pdf.ln(3)
    if signatures:
        room_for(6 + _SIGNATURE_MM * len(signatures))
        pdf.set_font("Helvetica", style="B", size=11)
        pdf.multi_cell(0, 6, "Signatures", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=9)
        for role in signatures:
            pdf.ln(6)
            line = f"{role}:  name ____________________  signature ____________________  "
            pdf.multi_cell(0, 5, _latin1(line + "date __________"), new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())
