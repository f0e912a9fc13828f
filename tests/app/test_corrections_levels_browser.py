"""A correction of each meter of the demo's Caribbean link of levels on the supervisor's page,
in Debian's Chromium at a desktop's and a phone's size: the meter chosen from each meter's
name and amount, the change read back as typed, approved by a second supervisor on their
page, the meter moved by exactly that, the history entry naming it, the ledger whole."""

from __future__ import annotations

import re
from pathlib import Path

import httpx
import pytest
from playwright.async_api import Browser, Page, expect

from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.browser import pytestmark, shot, sideways_px, signed_in
from tests.app.floor import settings_in
from tests.app.test_corrections_levels import METERS, ledger_whole, levels_floor, meters

__all__ = ["pytestmark"]


async def ask(page: Page, key: str, delta: str) -> None:
    await page.locator("#correction-link").select_option("caribbean")
    meter = page.get_by_label("Meter to correct")
    await expect(meter).to_be_visible()
    await meter.select_option(key)
    field = page.get_by_label("Change of the meter")
    await field.fill(delta)
    await page.get_by_label("Reason", exact=True).fill(f"count of {key} ran short")
    await page.set_input_files(
        "#correction-document",
        files=[{"name": "count.txt", "mimeType": "text/plain", "buffer": b"count sheet"}],
    )
    await page.get_by_role("button", name="Ask for the correction").click()


@pytest.mark.parametrize(("size", "keys"), [((1920, 1080), list(METERS)), ((390, 844), ["L2"])])
async def test_each_meter_of_a_link_of_levels_is_corrected_on_the_page(
    tmp_path: Path,
    size: tuple[int, int],
    keys: list[str],
    browser: Browser,
) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'progressive.db'}"
    assert settings_in(tmp_path).database_url == url
    async with (
        levels_floor(tmp_path, url) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        sup = await headers_for(wf, Role.SUPERVISOR)
        auditor = await headers_for(wf, Role.AUDITOR)
        asker = await signed_in(browser, wf, Role.SUPERVISOR, "/supervisor", viewport=size)
        approver = await signed_in(
            browser, wf, Role.SUPERVISOR, "/supervisor", viewport=size, username="second-sup"
        )
        await asker.locator("#correction-link").select_option("caribbean")
        options = asker.locator("#correction-meter option")
        amounts = await meters(http, sup)
        await expect(options).to_have_count(len(METERS) + 1)
        await expect(options.nth(2)).to_have_text(
            re.compile(r"^Grand reserve \(L1\.reserve\): \$[\d,]+\.\d\d$")
        )
        await expect(asker.locator("#correction-meter")).to_contain_text(
            f"Major overflow (L2.overflow): ${amounts['L2.overflow'] // 100:,}."
        )
        # A bare number is read back as what it is not: an amount.
        field = asker.get_by_label("Change of the meter")
        await field.fill("10")
        reads = asker.locator("#correction .reads")
        await expect(reads).to_have_text("'10' needs its unit: write an amount like $1,234.56")
        await field.fill("$10")
        await expect(reads).to_have_text("reads as $10.00")
        await shot(asker, f"corrections-levels-meters-{size[0]}")
        assert await sideways_px(asker) == 0

        for key in keys:
            name = METERS[key]
            before = await meters(http, sup)
            await ask(asker, key, "-$5.00" if key == "L2" else "$5.00")
            change = "-$5.00" if key == "L2" else "$5.00"
            await expect(asker.locator("#correction-result")).to_have_text(
                f"Asked: {change} on caribbean, {name} ({key}), waiting for a second person."
            )
            await approver.reload()
            row = approver.locator("#corrections tbody tr").first
            await expect(row).to_contain_text(f"caribbean, {name} ({key})")
            await expect(row).to_contain_text("waiting for a second person")
            if key == keys[0]:
                await shot(approver, f"corrections-levels-to-approve-{size[0]}")
                assert await sideways_px(approver) == 0
            await row.get_by_role("button", name="Approve").click()
            await expect(row).to_contain_text("Approved: the meter was corrected.")
            step = -5_00 if key == "L2" else 5_00
            assert await meters(http, sup) == {**before, key: before[key] + step}
            history = await http.get("/api/v1/links/caribbean/history", headers=auditor)
            entry = history.json()["entries"][-1]
            assert entry["kind"] == "correction"
            assert f"of {name} ({key}) by " in entry["explanation"]
        await approver.reload()
        await expect(approver.locator("#corrections tbody tr").first).to_contain_text(
            "approved by second-sup"
        )
        await shot(approver, f"corrections-levels-approved-{size[0]}")
        assert await sideways_px(approver) == 0
        await no_field_over_another(asker)
        await ledger_whole(wf)


async def no_field_over_another(page: Page) -> None:
    """Every field of the correction form keeps to its cell: the link's select, with a long
    name, ends before the field beside it begins."""
    boxes = []
    for field in await page.locator("#correction select, #correction input").all():
        box = await field.bounding_box()
        if box is not None and box["width"] > 0:
            boxes.append((await field.get_attribute("id"), box))
    assert len(boxes) >= 5
    for i, (a, p) in enumerate(boxes):
        for b, q in boxes[i + 1 :]:
            apart = (
                p["x"] + p["width"] <= q["x"] + 0.5
                or q["x"] + q["width"] <= p["x"] + 0.5
                or p["y"] + p["height"] <= q["y"] + 0.5
                or q["y"] + q["height"] <= p["y"] + 0.5
            )
            assert apart, f"{a} {p} overlaps {b} {q}"
