"""The shared PDF helper: a readable PDF, the same bytes for the same content."""

from __future__ import annotations

import hashlib

from controller.paperwork.pdf import render_pdf

SECTIONS = [
    ("Link", ["Game: Caribbean Stud Poker", "Rate of progression: 82.5% \u2014 fixed"]),
    ("Tables", [["table", "location"], ["t1", "Pit 1 north"], ["t2"]]),
]


def test_a_pdf_with_paragraphs_and_tables() -> None:
    out = render_pdf("Submission \u00fc", SECTIONS)
    assert out.startswith(b"%PDF-")
    assert out.rstrip().endswith(b"%%EOF")


def test_the_same_content_gives_the_same_bytes() -> None:
    first = hashlib.sha256(render_pdf("Packet", SECTIONS)).hexdigest()
    second = hashlib.sha256(render_pdf("Packet", SECTIONS)).hexdigest()
    assert first == second
    assert first != hashlib.sha256(render_pdf("Packet 2", SECTIONS)).hexdigest()
