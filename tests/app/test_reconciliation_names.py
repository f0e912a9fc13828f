"""A reconciliation's downloads are named for what they hold: the link and the period's first
and last days, never a count of microseconds."""

from __future__ import annotations

from pathlib import Path

import httpx

from controller.core.games import Game
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor


async def test_a_reconciliation_download_names_its_link_and_days(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path, links={"stud": (Game.CARIBBEAN_STUD, 1)}) as wf,
        httpx.AsyncClient(base_url=wf.base_url) as http,
    ):
        auditor = await headers_for(wf, Role.AUDITOR)
        url = "/api/v1/links/stud/reconciliation/export"
        for fmt in ("csv", "pdf"):
            answer = await http.get(
                url,
                params={"since": "2026-01-01", "until": "2026-02-01", "format": fmt},
                headers=auditor,
            )
            assert answer.status_code == 200, answer.text
            assert answer.headers["content-disposition"] == (
                f'attachment; filename="reconciliation-stud-2026-01-01-2026-01-31.{fmt}"'
            )
        # A period of part of a day is named by that day.
        answer = await http.get(
            url, params={"since": "2026-03-02T08:00", "until": "2026-03-02T16:00"}, headers=auditor
        )
        assert answer.headers["content-disposition"] == (
            'attachment; filename="reconciliation-stud-2026-03-02-2026-03-02.csv"'
        )
