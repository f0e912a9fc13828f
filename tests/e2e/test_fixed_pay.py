"""A fixed-pay Let It Ride bonus link made with ``links create``, on the house's amount from
``PROGRESSIVE_FIXED_PAY_TECHNICIAN_FROM``: its side bets registered, a pay under the amount
paid by the dealer (no technician, the table plays on), one at the amount holding its table
until a technician verifies and releases it; the reconciliation shows bets, pays and hold,
and its display feed shows pays and never a jackpot."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
import websockets

from controller.core.hands import parse_cards
from controller.roles import Role
from tests.e2e.pool import QUADS, H, Readings, approve_filed, cli, controller, signed_in

FULL_HOUSE = parse_cards("Kc Kd Kh 2s 2c")


async def test_a_fixed_pay_link_holds_a_table_only_from_the_houses_amount(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = await cli(
        "links", "create", "--location", "pit 1", "--id", "lir", "--name", "Let It Ride bonus", "--game",
        "let_it_ride_bonus", "--table", "L1", "--table", "L2", db_url=db_url,
    )  # fmt: skip
    assert "fixed-pay link: no meter" in out, out
    # The house holds a table for a pay of $100 or more (the rulebook's default: $1,200).
    monkeypatch.setenv("PROGRESSIVE_FIXED_PAY_TECHNICIAN_FROM", "$100.00")
    async with controller(db_url) as c, httpx.AsyncClient(base_url=c.base_url) as http:
        await approve_filed(c, http)
        rt = c.service.runtime
        p = Readings(c.service.clock.now_us)
        await rt.readings.apply([p.of("L1", 0, 0), p.of("L2", 0, 0)])
        await rt.readings.apply([p.of("L1", 6, 2), p.of("L2", 4, 1)])
        # A full house pays $75: the dealer pays it, the table goes on taking bets.
        await rt.readings.apply([p.hit("L1", H.FULL_HOUSE, FULL_HOUSE, seat=2, hit_seq=1)])
        assert not rt.memory.states["lir"].tables["L1"].hit_pending
        # Four of a kind pays $100, the house's amount: the table is held for a technician.
        await rt.readings.apply([p.hit("L2", H.FOUR_OF_A_KIND, QUADS, seat=5, hit_seq=1)])
        assert rt.memory.states["lir"].tables["L2"].hit_pending
        tech = await signed_in(c, Role.TECHNICIAN)
        pending = (await http.get("/api/v1/hits?pending=true", headers=tech)).json()
        # Only the $100 pay is a technician's work; the $75 one is the dealer's.
        assert [(h["table_id"], h["hand"], h["award_cents"]) for h in pending] == [
            ("L2", "FOUR_OF_A_KIND", 100_00)
        ], pending
        await rt.hits.release_table("L2", actor="tech")
        assert not rt.memory.states["lir"].tables["L2"].hit_pending

        auditor = await signed_in(c, Role.AUDITOR)
        recon = (await http.get("/api/v1/links/lir/reconciliation", headers=auditor)).json()
        assert recon["balanced"], recon["problems"]
        # 10 bets of $1; a $75 and a $100 pay.
        assert recon["fixed_pay"] == {
            "bets_credits": 10,
            "bets_cents": 10_00,
            "pays": 2,
            "pays_cents": 175_00,
            "hold_cents": 10_00 - 175_00,
            "clause": recon["fixed_pay"]["clause"],
        }
        assert recon["meters"] == [] and recon["closing_units"] == 0

        link = (await http.get("/api/v1/links/lir")).json()
        assert link["fixed_pay"] is True and link["meter_cents"] is None and link["levels"] == []
        ws = c.base_url.replace("http://", "ws://", 1) + "/ws/links/lir"
        async with websockets.connect(ws) as feed:
            text = str(await feed.recv())
        snapshot = json.loads(text)
        assert snapshot["type"] == "snapshot" and snapshot["fixed_pay"] is True
        assert snapshot["levels"] == [] and snapshot["pays"][0] == {
            "hand": "ROYAL_FLUSH",
            "fixed_cents": 10_000_00,
        }
        assert "jackpot" not in text.lower() and "progressive" not in text.lower(), text
    assert "ledger whole" in await cli("ledger", "verify", db_url=db_url)
