"""What a printed document says, read back by poppler's ``pdftotext`` (Debian's
poppler-utils, which CI installs), and the PDFs the page tests download and keep."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


def pdf_text(pdf: bytes, *, layout: bool = True) -> str | None:
    """The PDF's text (``layout``: columns kept where they stand), None without pdftotext."""
    if shutil.which("pdftotext") is None:
        return None
    args = ["pdftotext", *(["-layout"] if layout else []), "-", "-"]
    return subprocess.run(args, input=pdf, capture_output=True, check=True).stdout.decode()


def pdf_text_or_skip(pdf: bytes, *, layout: bool = True) -> str:
    """The PDF's text; the test is skipped where pdftotext is not installed."""
    text = pdf_text(pdf, layout=layout)
    if text is None:
        pytest.skip("poppler's pdftotext is not installed")
    return text


def keep_pdf(name: str, pdf: bytes) -> None:
    """A PDF kept beside the screenshots, to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / name).write_bytes(pdf)
