"""Hits dealt with the joker through the live server, on SQLite and PostgreSQL: every list of
hits, one hit, the verification, the jackpot slip, the gaming-day report and the exports show
the joker (``"JK"`` in lists and files, ``"Joker"`` where people read it), and a hit whose
stored record cannot be read is shown with what is wrong, never failing its list."""

from __future__ import annotations

import csv
import io
import logging
from datetime import timedelta
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest
from sqlalchemy import update

from controller.periods import gaming_day_of
from controller.roles import Role
from controller.storage.models import HitRow
from tests.app.auth import headers_for
from tests.app.helpers import progressive
from tests.app.joker_floor import joker_floor
from tests.pdf_text import pdf_text_or_skip

FIVE_ACES_TEXT = ["As", "Ah", "Ad", "Ac", "JK", "2c", "3d"]
FOUR_ACES_TEXT = ["As", "Ah", "Ad", "JK", "2c", "5d", "9h"]


def hit_url(hit_id: str, action: str | None = None) -> str:
    path = f"/api/v1/hits/{quote(hit_id, safe='')}"
    return path if action is None else f"{path}/{action}"


def _ok(answer: httpx.Response) -> object:
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_every_list_shows_the_joker_and_a_bad_record(
    tmp_path: Path, db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    async with (
        joker_floor(tmp_path, database_url=db_url) as jf,
        httpx.AsyncClient(base_url=jf.base_url) as http,
    ):
        tech = await headers_for(jf.wf, Role.TECHNICIAN)
        five, four, royal = jf.five_aces.hit_id, jf.four_aces.hit_id, jf.royal.hit_id

        work = _ok(await http.get("/api/v1/hits/work", headers=tech))
        assert isinstance(work, dict)
        (held,) = [h for h in work["holding"] if h["hit_id"] == five]
        assert held["cards"] == FIVE_ACES_TEXT and held["hand_label"] == "five aces"
        assert held["holds_table"] and held["paid_from"] == "meter" and held["problem"] is None
        quiet = _ok(await http.get("/api/v1/hits/paid-without-technician", headers=tech))
        assert isinstance(quiet, dict)
        (fixed,) = [h for h in quiet["hits"] if h["hit_id"] == four]
        assert fixed["cards"] == FOUR_ACES_TEXT and fixed["award_cents"] == 50_00
        for path in ("/api/v1/hits", "/api/v1/hits?link_id=paigow", "/api/v1/links/paigow/hits"):
            listed = _ok(await http.get(path, headers=tech))
            assert isinstance(listed, list)
            shown = {h["hit_id"]: h["cards"] for h in listed}
            assert shown[five] == FIVE_ACES_TEXT and shown[four] == FOUR_ACES_TEXT, path
        one = _ok(await http.get(hit_url(five), headers=tech))
        assert isinstance(one, dict) and one["cards"] == FIVE_ACES_TEXT

        # The joker is a card only of a game whose deck has one.
        stud = await http.post(
            hit_url(royal, "verify"), json={"cards": ["As", "Ks", "Qs", "Js", "JK"]}, headers=tech
        )
        assert stud.status_code == 409, stud.text
        assert "the joker is not a card of Caribbean Stud" in stud.json()["detail"]
        # The verification of five aces answers what it recorded, once.
        typed = ["as", "ah", "ad", "ac", "Joker", "2c", "3d"]  # as a technician may type them
        verified = await http.post(hit_url(five, "verify"), json={"cards": typed}, headers=tech)
        assert verified.status_code == 200, verified.text
        body = verified.json()
        assert (
            body["verified_by"].startswith("technician")
            and body["verified_cards"] == FIVE_ACES_TEXT
        )
        again = await http.post(hit_url(five, "verify"), headers=tech)
        assert again.status_code == 409, again.text

        # The printed slip and the day's report say "Joker" where people read it; the files
        # carry "JK".
        auditor = await headers_for(jf.wf, Role.AUDITOR)
        slip = await http.get(hit_url(five, "slip.pdf"), headers=auditor)
        assert slip.status_code == 200, slip.text
        slip_text = " ".join(pdf_text_or_skip(slip.content).split())
        assert "As Ah Ad Ac Joker 2c 3d" in slip_text, slip_text
        assert "Jk" not in slip_text
        s = jf.wf.service.settings
        day = gaming_day_of(jf.five_aces.at_us, starts=s.gaming_day_starts, zone=s.zone)
        base = f"/api/v1/links/paigow/reports/gaming-day?date={day}"
        report = await http.get(base, headers=auditor)
        assert report.status_code == 200, report.text
        report_text = " ".join(pdf_text_or_skip(report.content, layout=False).split())
        assert "Joker" in report_text and "Jk" not in report_text, report_text
        data = _ok(await http.get(f"{base}&format=json", headers=auditor))
        assert isinstance(data, dict)
        by_id = {h["hit_id"]: h for h in data["hits"]}
        assert by_id[five]["cards"] == FIVE_ACES_TEXT
        assert by_id[five]["verified_cards"] == FIVE_ACES_TEXT
        day_csv = await http.get(f"{base}&format=csv", headers=auditor)
        assert "As Ah Ad Ac JK 2c 3d" in day_csv.text
        exported = await http.get("/api/v1/exports/hits?format=csv&link=paigow", headers=auditor)
        assert exported.status_code == 200, exported.text
        rows = {r["hit_id"]: r for r in csv.DictReader(io.StringIO(exported.text))}
        assert rows[five]["cards"] == "As Ah Ad Ac JK 2c 3d"
        assert rows[four]["cards"] == "As Ah Ad JK 2c 5d 9h"
        as_json = _ok(
            await http.get("/api/v1/exports/hits?format=json&link=paigow", headers=auditor)
        )
        assert isinstance(as_json, dict)
        assert {h["hit_id"]: h["cards"] for h in as_json["rows"]}[five] == "As Ah Ad Ac JK 2c 3d"
        # The command line's export is the same file.
        key = {"PROGRESSIVE_LEDGER_KEY_FILE": str(s.ledger_key_file)}
        period = ["--since", str(day - timedelta(days=1)), "--until", str(day + timedelta(days=2))]
        code, out, err = await progressive(
            "export", "hits", *period, "--link", "paigow", db_url=db_url, key=False, env=key
        )
        assert code == 0, err
        printed = {r["hit_id"]: r["cards"] for r in csv.DictReader(io.StringIO(out))}
        assert printed[five] == "As Ah Ad Ac JK 2c 3d"

        # A record whose verified cards are no cards (written behind the controller's back):
        # every list still answers, the record with what is wrong and the stored text, and it
        # is logged once however often the lists are read.
        async with jf.wf.service.engine.begin() as conn:
            await conn.execute(
                update(HitRow)
                .where(HitRow.hit_id == royal)
                .values(verified_by="someone", verified_at_us=jf.royal.at_us, verified_cards="51,x")
            )
        caplog.set_level(logging.WARNING, logger="app.api.hit_models")
        for _ in range(3):
            work = _ok(await http.get("/api/v1/hits/work", headers=tech))
            assert isinstance(work, dict)
            (bad,) = [h for h in work["holding"] if h["hit_id"] == royal]
            assert bad["raw"] == {"verified_cards": "51,x"}
            assert "'x', not a card code" in bad["problem"]
            assert bad["verified_cards"] is None and len(bad["cards"]) == 5
            assert {h["hit_id"] for h in work["holding"]} >= {royal}
            for path in ("/api/v1/hits", "/api/v1/links/caribbean/hits", hit_url(royal)):
                _ok(await http.get(path, headers=tech))
        logged = [r for r in caplog.records if royal in r.getMessage()]
        assert len(logged) == 1, [r.getMessage() for r in logged]
        assert "not a card code" in logged[0].getMessage()
        # Its verification is refused with the reason, not failed.
        stuck = await http.post(hit_url(royal, "verify"), headers=tech)
        assert stuck.status_code == 409, stuck.text
        exported = await http.get("/api/v1/exports/hits?format=csv&link=caribbean", headers=auditor)
        assert exported.status_code == 200, exported.text
        (row,) = [r for r in csv.DictReader(io.StringIO(exported.text)) if r["hit_id"] == royal]
        assert row["cards"].count(" ") == 4  # the table's five cards, still readable
        # The day's report prints it, saying what cannot be read.
        caribbean = f"/api/v1/links/caribbean/reports/gaming-day?date={day}"
        data = _ok(await http.get(f"{caribbean}&format=json", headers=auditor))
        assert isinstance(data, dict)
        (printed_royal,) = [h for h in data["hits"] if h["hit_id"] == royal]
        assert printed_royal["verified_cards"].startswith("unreadable: the stored cards '51,x'")
        for fmt in ("csv", "pdf"):
            answer = await http.get(f"{caribbean}&format={fmt}", headers=auditor)
            assert answer.status_code == 200, answer.text
