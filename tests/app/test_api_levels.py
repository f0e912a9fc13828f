"""A link of levels and a fixed-pay bonus through the API and the metrics: each level's
meters, the hidden reserve to staff only, the mystery's ceiling and never its trigger; a
fixed-pay link with no meter, its rate "fixed pays" and its pays.

The links are opened by the real reducer and held in the runtime's memory (the database
cannot hold them until the levels' columns exist): their hits, which the API reads from the
history, stay at none here.
"""

from __future__ import annotations

from pathlib import Path

import httpx

from controller.roles import Role
from link_adapters.simulator.clock import VirtualClock
from tests.app.auth import headers_for
from tests.app.floor import stepped_floor
from tests.app.levels_floor import TRIGGER, hold_fixed_pay, hold_four_levels
from tests.app.test_display_levels_browser import LINKS
from tests.app.test_metrics import scrape, value


async def test_each_level_shows_its_meters_and_the_reserve_only_to_staff(tmp_path: Path) -> None:
    async with (
        stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        await hold_four_levels(wf)
        public = await http.get("/api/v1/links/stud")
        assert public.status_code == 200, public.text
        link = public.json()
        assert link["meter_cents"] == 10_000_00 and link["fixed_pay"] is False
        assert link["rate"] == "80%"
        grand, major, minor, mini = link["levels"]
        assert [lv["name"] for lv in link["levels"]] == ["Grand", "Major", "Minor", "Mini"]
        assert grand == {
            "key": "L1",
            "name": "Grand",
            "current_cents": 10_000_00,
            "overflow_cents": None,
            "hits": 0,
            "wins_cents": 0,
            "base_cents": 10_000_00,
            "limit_cents": None,
            "above_limit": None,
            "rate_bp": 4_000,
            "rate": "40%",
            "must_hit_by_cents": None,
            "reserve_cents": None,  # hidden from a patron's screen
            "reserve_bp": None,
            "recent_hits": [],
        }
        assert (major["limit_cents"], major["above_limit"]) == (5_000_00, "next_level")
        assert minor["overflow_cents"] == 0 and minor["limit_cents"] == 500_00
        assert mini["must_hit_by_cents"] == 50_00
        # The trigger and the draws are nowhere in what the API says.
        assert str(TRIGGER.trigger_cents) not in public.text
        assert TRIGGER.salt not in public.text and "trigger" not in public.text

        staff = await http.get("/api/v1/links/stud", headers=await headers_for(wf, Role.AUDITOR))
        levels = staff.json()["levels"]
        assert (levels[0]["reserve_cents"], levels[0]["reserve_bp"]) == (0, 1_000)
        assert (levels[1]["reserve_cents"], levels[1]["reserve_bp"]) == (0, 500)
        assert levels[2]["reserve_cents"] is None  # the Minor has no hidden share
        assert str(TRIGGER.trigger_cents) not in staff.text
        dealer = await http.get("/api/v1/links/stud", headers=await headers_for(wf, Role.DEALER))
        assert dealer.json()["levels"][0]["reserve_cents"] is None  # faces the table

        samples = await scrape(http)
        # Metrics are read without signing in: the meters as displayed, no hidden one.
        pots = {dict(k[1])["pot"] for k in samples if k[0] == "progressive_level_meter_cents"}
        assert pots == {"meter"}
        for level, name, pot, cents in (
            ("L1", "Grand", "meter", 10_000_00),
            ("L4", "Mini", "meter", 10_00),
        ):
            got = value(
                samples,
                "progressive_level_meter_cents",
                link_id="stud",
                level=level,
                level_name=name,
                pot=pot,
            )
            assert got == cents


async def test_a_fixed_pay_link_shows_no_meter_and_its_pays(tmp_path: Path) -> None:
    async with (
        stepped_floor(tmp_path, VirtualClock(), links=LINKS) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        await hold_fixed_pay(wf, "draw")
        link = (await http.get("/api/v1/links/draw")).json()
        assert link["fixed_pay"] is True and link["meter_cents"] is None
        assert link["rate"] == "fixed pays" and link["levels"] == []
        assert link["fixed_pays"][0] == {
            "hand": "ROYAL_FLUSH",
            "hand_label": "royal flush",
            "fixed_cents": 10_000_00,
        }
        samples = await scrape(http)
        assert not [k for k in samples if k[0] == "progressive_level_meter_cents" and
                    ("link_id", "draw") in k[1]]  # fmt: skip
