"""Printable documents for regulators: a title and sections of paragraphs or tables, as PDF.

The output is deterministic (a fixed creation date, no random file id), so the same content
always gives the same bytes and the same SHA-256: a filed document can be regenerated and
checked against what was kept.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

# Fixed, so the bytes depend on the content alone.
_CREATED = dt.datetime(2000, 1, 1, tzinfo=dt.UTC)

Paragraphs = Sequence[str]
Rows = Sequence[Sequence[str]]  # a table: the first row is its header


def _latin1(text: str) -> str:
    """The built-in PDF fonts speak Latin-1; anything else is shown as '?' rather than lost."""
    return text.encode("latin-1", "replace").decode("latin-1")


def render_pdf(title: str, sections: Sequence[tuple[str, Paragraphs | Rows]]) -> bytes:
    """A document with ``title`` and, per section, a heading and its paragraphs or table.

    A section's body is either paragraphs (a sequence of strings) or a table (a sequence of
    rows, each a sequence of strings; the first row is the header).
    """
    # Imported here: fpdf (and what it imports) is a good part of a process's start, and most
    # processes (a controller restarting after a crash among them) print nothing.
    from fpdf import FPDF
    from fpdf.fonts import FontFace

    pdf = FPDF(orientation="portrait", unit="mm", format="A4")
    pdf.set_creation_date(_CREATED)
    pdf.set_title(_latin1(title))
    pdf.set_creator("progressive")
    pdf.set_auto_page_break(auto=True, margin=15)
    pdf.add_page()
    pdf.set_font("Helvetica", style="B", size=15)
    pdf.multi_cell(0, 8, _latin1(title), new_x="LMARGIN", new_y="NEXT")
    pdf.ln(3)
    for heading, body in sections:
        pdf.set_font("Helvetica", style="B", size=11)
        pdf.multi_cell(0, 6, _latin1(heading), new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", size=9)
        if body and not isinstance(body[0], str):
            rows = [[_latin1(str(cell)) for cell in row] for row in body]
            width = max(len(row) for row in rows)
            with pdf.table(
                headings_style=FontFace(emphasis="BOLD"),
                line_height=5,
                text_align="LEFT",
            ) as table:
                for row in rows:
                    cells = table.row()
                    for cell in [*row, *([""] * (width - len(row)))]:
                        cells.cell(cell)
        else:
            for paragraph in body:
                assert isinstance(paragraph, str)
                pdf.multi_cell(0, 5, _latin1(paragraph), new_x="LMARGIN", new_y="NEXT")
        pdf.ln(3)
    return bytes(pdf.output())
