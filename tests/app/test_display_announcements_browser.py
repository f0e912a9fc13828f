"""Wins close together on the floor display, in a real browser: each announced for its
whole time, one after the other (68 IAC 10-6-5(g)-(i); the order is
``controller.core.reducer.display.announcements``), while the other levels count on live.

The links are held in the runtime's memory (``floor.hold_in_memory``); the wins are put in
the held state as the reducer leaves them and the hub is told, as after a commit.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from playwright.async_api import Browser, Page

from controller.core.games import Game, default_paytable
from controller.core.hands import HandCategory
from controller.core.reducer import HitClaim, TableReading, apply_readings, open_link
from controller.core.reducer.display import ANNOUNCE_US, HIT_PHASE_US, WON_FIRST_US
from controller.core.reducer.state import LastWin
from controller.rules.jurisdictions import INDIANA
from link_adapters.simulator.clock import VirtualClock
from tests.app.browser import pytestmark, shot
from tests.app.floor import WebFloor, put_in_memory, stepped_floor
from tests.app.levels_floor import hold_fixed_pay, hold_four_levels

__all__ = ["pytestmark"]

WAIT_MS = 30_000
S = 1_000_000
LINKS = {"stud": (Game.CARIBBEAN_STUD, 2), "draw": (Game.CARIBBEAN_DRAW, 1)}

# Every tenth of a second: what the big amount, the headline, the detail and the Mini's tile
# show, kept in the page.
RECORD = """() => {
  window.seen = [];
  const look = () => {
    const mini = document.querySelector("li[data-level='L4']");
    window.seen.push({
      headline: document.getElementById("headline").textContent,
      amount: document.getElementById("amount").textContent,
      detail: document.getElementById("detail").textContent,
      mini: mini ? mini.className : "",
      miniAmount: mini ? mini.querySelector(".level-amount").textContent : "",
    });
  };
  look();
  setInterval(look, 100);
}"""


async def open_display(browser: Browser, url: str) -> Page:
    page = await browser.new_page(viewport={"width": 1920, "height": 1080})
    await page.goto(url)
    await page.wait_for_function("() => document.body.dataset.live === 'live'", timeout=WAIT_MS)
    return page


def grand(at_us: int) -> LastWin:
    return LastWin(
        won_cents=10_618_40,
        table_id="stud-1",
        seats=(3,),
        hand=HandCategory.ROYAL_FLUSH,
        at_us=at_us,
        level="L1",
    )


def mini(at_us: int, cents: int = 55_68, table: str = "stud-2") -> LastWin:
    return LastWin(
        won_cents=cents,
        table_id=table,
        seats=(5,),
        hand=HandCategory.MYSTERY,
        at_us=at_us,
        level="L4",
    )


async def win(wf: WebFloor, last: LastWin) -> None:
    """The link's last win is ``last``, and the hub hears of it as after a commit."""
    await put_in_memory(wf, "stud", lambda now: replace(now, last_win=last))
    await asyncio.sleep(0.3)  # framed before the next win, as two commits are


async def seen(page: Page) -> list[dict[str, str]]:
    return list(await page.evaluate("() => window.seen"))


async def test_the_grands_won_and_reset_amounts_in_turn_while_a_mini_hits(
    tmp_path: Path, browser: Browser
) -> None:
    async with stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf:
        await hold_four_levels(wf)
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        await page.evaluate(RECORD)
        now = wf.service.clock.now_us()
        # The Grand won 6 s ago; a Mini hit at another table 5 s after it.
        await win(wf, grand(now - 6 * S))
        await win(wf, mini(now - S))
        # The Grand's won amount, then its reset amount, then its won amount again: 68 IAC
        # 10-6-5(i) in turn, not cut short by the Mini.
        await page.wait_for_function(
            "() => document.getElementById('headline').textContent === 'Grand now'",
            timeout=WAIT_MS,
        )
        await shot(page, "display-grand-reset-while-a-mini-waits")
        # What the display showed is kept as the condition is first met: on a slow machine
        # it goes on turning while the screenshot is taken.
        await page.wait_for_function(
            """() => {
              const shown = window.seen.map((s) => s.headline);
              const reset = shown.indexOf('Grand now');
              return reset >= 0 && shown.slice(reset).includes('Grand won!')
                && (window.kept = window.seen.slice()).length > 0;
            }""",
            timeout=WAIT_MS,
        )
        await shot(page, "display-grand-won-again")
        kept = list(await page.evaluate("() => window.kept"))
        shown = [s for s in kept if s["headline"] != "Grand"]
        assert shown, "the Grand was never announced"
        runs = [shown[0]["headline"]]
        for s in shown[1:]:
            if s["headline"] != runs[-1]:
                runs.append(s["headline"])
        # In turn from the won amount, whatever was missed while the first screenshot was
        # taken: never anything else between.
        assert runs[:2] == ["Grand won!", "Grand now"] and runs[-1] == "Grand won!", runs
        assert set(runs) == {"Grand won!", "Grand now"}, runs
        for s in shown:
            # The Grand's announcement throughout: its win, its table; the Mini waits.
            assert s["detail"].startswith("Grand: $10,618.40 won at "), s
            assert "seat 3" in s["detail"]
            assert "won" not in s["mini"].split(), s
            if s["headline"] == "Grand won!":
                assert s["amount"] == "$10,618.40"
            else:
                assert s["amount"] == "$10,000.00"  # the Grand's reset amount


async def test_the_mini_is_announced_whole_when_the_grands_time_is_over(
    tmp_path: Path, browser: Browser
) -> None:
    async with stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf:
        await hold_four_levels(wf)
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        now = wf.service.clock.now_us()
        # The Grand's time ends in 5 s; the Mini came 7 s after the Grand and has waited.
        start = now - HIT_PHASE_US + 5 * S
        await win(wf, grand(start))
        await win(wf, mini(start + 7 * S))
        await page.evaluate(RECORD)
        await page.wait_for_function(
            "() => document.querySelector(\"li[data-level='L4']\").classList.contains('won')",
            timeout=WAIT_MS,
        )
        await shot(page, "display-mini-after-the-grand")
        shown = await seen(page)
        assert shown[0]["detail"].startswith("Grand: $10,618.40 won at ")
        last = shown[-1]
        assert last["detail"].startswith("Mini: $55.68 won at ") and "seat 5" in last["detail"]
        assert last["miniAmount"] == "$55.68"
        assert last["headline"] == "Grand"  # back to its live meter
        # Its won amount first, then its reset amount: the Mini's own time.
        await page.wait_for_function(
            "() => document.querySelector(\"li[data-level='L4']\").classList.contains('reset')",
            timeout=WON_FIRST_US // 1000 + WAIT_MS,
        )
        assert (await page.text_content("#detail") or "").startswith("Mini: $55.68 won at ")


async def test_two_minis_in_a_row_each_get_their_whole_time(
    tmp_path: Path, browser: Browser
) -> None:
    async with stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf:
        await hold_four_levels(wf)
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        now = wf.service.clock.now_us()
        # The first Mini's whole time ends in 4 s; the second came 5 s after it.
        first = now - ANNOUNCE_US + 4 * S
        await win(wf, mini(first, 55_68, "stud-1"))
        await win(wf, mini(first + 5 * S, 42_10, "stud-2"))
        await page.evaluate(RECORD)
        await page.wait_for_function(
            "() => document.getElementById('detail').textContent.startsWith('Mini: $42.10')",
            timeout=WAIT_MS,
        )
        await shot(page, "display-second-mini")
        shown = await seen(page)
        firsts = [s for s in shown if s["detail"].startswith("Mini: $55.68 won at ")]
        assert firsts, shown[:1]
        # The first Mini's last turn (its reset amount) was shown to its end; then the second.
        assert firsts and all("reset" in s["mini"].split() for s in firsts)
        assert shown[-1]["mini"].split() == ["level", "won"]
        assert shown[-1]["miniAmount"] == "$42.10"


async def test_a_pay_at_a_fixed_pay_bonus_is_announced(tmp_path: Path, browser: Browser) -> None:
    async with stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf:
        await hold_fixed_pay(wf, "draw")
        page = await open_display(browser, f"{wf.base_url}/display/draw")
        await page.wait_for_function(
            "() => document.body.dataset.kind === 'fixed'", timeout=WAIT_MS
        )
        runtime = wf.service.runtime
        held = runtime.memory.states["draw"]
        lir = Game.LET_IT_RIDE_BONUS
        # A straight flush at draw-1 seat 2, paid by the real reducer on a copy of the link.
        at = wf.service.clock.now_us()
        bonus = open_link(
            law=INDIANA,
            link_id="draw",
            game=lir,
            rate_bp=0,
            reset_cents=0,
            paytable=default_paytable(lir),
            tables=[ts.config for ts in held.tables.values()],
            at_us=at - 2 * S,
            levels=(),
        ).state
        first = TableReading(table_id="draw-1", poll_seq=1, at_us=at - S, credits=0, rounds=0)
        bonus = apply_readings(bonus, [first]).state
        # Four of a kind at draw-1 seat 4 ($100.00, a routine pay the table pays on its own),
        # then a straight flush at seat 2 ($2,000.00, which holds the table for a technician).
        quads = HitClaim(table_seq=1, seat=4, hand=HandCategory.FOUR_OF_A_KIND, round=1)
        small = apply_readings(
            bonus,
            [first._replace(poll_seq=2, at_us=at - S // 2, credits=1, rounds=1, head_hit=quads,
                            pending_hits=1)],
        )  # fmt: skip
        flush = HitClaim(table_seq=2, seat=2, hand=HandCategory.STRAIGHT_FLUSH, round=2)
        paid = apply_readings(
            small.state,
            [first._replace(poll_seq=3, at_us=at, credits=2, rounds=2, head_hit=flush,
                            pending_hits=1)],
        )  # fmt: skip
        assert [h.award_cents for h in small.hits] == [100_00]
        assert [h.award_cents for h in paid.hits] == [2_000_00]
        await page.evaluate(RECORD)
        for outcome in (small, paid):
            for listener in runtime.memory.listeners:
                listener(outcome)
            await asyncio.sleep(0.3)
        await page.wait_for_function(
            "() => document.getElementById('detail').textContent !== ''", timeout=WAIT_MS
        )
        assert {s["detail"] for s in await seen(page)} <= {"", (await page.text_content("#detail"))}
        detail = await page.text_content("#detail") or ""
        assert detail.startswith("$2,000.00 paid at ") and "seat 2" in detail, detail
        assert "Straight flush" in detail
        assert await page.text_content("#headline") == "Bonus pays"
        await shot(page, "display-fixed-pay-paid")


# WCAG 2 contrast of an element's text on what is behind it: its own background or, where
# that is transparent, its ancestors', composed over the page's felt.
CONTRAST = """(el) => {
  const rgba = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    const v = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [v[0], v[1], v[2], v.length > 3 ? v[3] : 1];
  };
  const layers = [];
  for (let e = el; e; e = e.parentElement) {
    const bg = rgba(getComputedStyle(e).backgroundColor);
    if (bg[3] > 0) layers.push(bg);
    if (bg[3] === 1) break;
  }
  let under = [0, 0, 0];
  for (const [r, g, b, a] of layers.reverse()) {
    under = [r * a + under[0] * (1 - a), g * a + under[1] * (1 - a), b * a + under[2] * (1 - a)];
  }
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const text = rgba(getComputedStyle(el).color).slice(0, 3);
  const [hi, lo] = [lum(text), lum(under)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}"""

SCREENS = {"1080p": (1920, 1080), "4k": (3840, 2160), "portrait": (1080, 1920)}


async def test_the_must_hit_by_reads_on_a_tile_and_on_a_won_minis_gold(
    tmp_path: Path, browser: Browser
) -> None:
    async with stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf:
        await hold_four_levels(wf)
        page = await open_display(browser, f"{wf.base_url}/display/stud")
        tile = page.locator("li[data-level='L4']")
        must = tile.locator(".level-must-hit")
        for state in ("live", "won"):
            if state == "won":
                await win(wf, mini(wf.service.clock.now_us()))
                await page.wait_for_function(
                    "() => document.querySelector(\"li[data-level='L4']\")"
                    ".classList.contains('won')",
                    timeout=WAIT_MS,
                )
            for screen, (width, height) in SCREENS.items():
                await page.set_viewport_size({"width": width, "height": height})
                await page.wait_for_timeout(200)
                assert await must.text_content() == "must hit by $50.00"
                ratio = await must.evaluate(CONTRAST)
                assert ratio >= 4.5, (state, screen, ratio)
                # All of it inside its tile and on the screen.
                inner, outer = await must.bounding_box(), await tile.bounding_box()
                assert inner is not None and outer is not None
                assert outer["x"] <= inner["x"] and inner["x"] + inner["width"] <= (
                    outer["x"] + outer["width"]
                )
                assert inner["y"] + inner["height"] <= min(outer["y"] + outer["height"], height)
                await shot(page, f"display-must-hit-{state}-{screen}")
