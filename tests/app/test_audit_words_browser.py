"""The audit page says what each entry of the history is in words, from one table
(``app/static/entry-words.js``): never an entry kind's or a correction category's code."""

from __future__ import annotations

import re
from pathlib import Path

from playwright.async_api import Browser, expect

from controller.core.reducer.state import EntryKind
from controller.paperwork.corrections import CorrectionCategory
from controller.roles import Role
from tests.app.browser import NEEDS_CHROMIUM, ON_THE_SHARED_LOOP, shot, signed_in
from tests.app.floor import web_floor

# The table's own test is no coroutine: the shared loop is the page's test's alone.
pytestmark = NEEDS_CHROMIUM

WORDS = Path(__file__).resolve().parents[2] / "app" / "static" / "entry-words.js"


def table(name: str) -> dict[str, str]:
    """The words ``entry-words.js`` gives in its table ``name``."""
    text = WORDS.read_text(encoding="utf-8")
    body = text[text.index(f"const {name} = {{") :]
    body = body[: body.index("};")]
    return dict(re.findall(r'^\s*(\w+): "([^"]+)",$', body, re.M))


def test_every_entry_kind_and_correction_category_has_its_words() -> None:
    kinds, categories = table("KINDS"), table("CATEGORIES")
    assert set(kinds) == {str(k) for k in EntryKind}
    assert set(categories) == {str(c) for c in CorrectionCategory}
    for words in (*kinds.values(), *categories.values()):
        assert "_" not in words, words


@ON_THE_SHARED_LOOP
async def test_a_limit_adjustment_reads_in_words_on_the_audit_page(
    tmp_path: Path, browser: Browser
) -> None:
    async with web_floor(tmp_path) as wf:
        await wf.service.runtime.commands.correct(
            "stud",
            delta_cents=-1_00,
            category=str(CorrectionCategory.LIMIT_ADJUSTMENT),
            reason="the Major's limit lowered",
            requested_by="sam",
            approved_by="alex",
            document=b"%PDF-1.4 limit",
            document_name="limit.pdf",
            document_type="application/pdf",
        )
        # And one asked for, waiting for a second person.
        await wf.service.corrections.ask(
            link_id="stud", delta_cents=-2_00,
            category=CorrectionCategory.LIMIT_ADJUSTMENT, reason="the Minor's limit lowered",
            requested_by="sam", document=b"%PDF-1.4 limit", document_name="limit.pdf",
            document_type="application/pdf",
        )  # fmt: skip
        page = await signed_in(browser, wf, Role.AUDITOR, "/audit")
        await page.select_option("#link", "stud")
        row = page.locator("#reductions tbody tr").filter(has_text="the Major's limit lowered")
        await expect(row).to_have_count(1)
        text = await row.inner_text()
        assert "correction: a limit adjustment" in text
        assert "correction (a limit adjustment) by sam" in text
        assert "limit_adjustment" not in text
        asked = page.locator("#correction-requests tbody tr").filter(has_text="Minor's limit")
        await expect(asked).to_have_count(1)
        assert "a limit adjustment" in await asked.inner_text()
        for section in ("#reductions", "#correction-requests"):
            body = await page.locator(section).inner_text()
            assert not re.search(r"\b[a-z]+_[a-z_]+\b", body), body
        await shot(page, "audit-limit-adjustment")
