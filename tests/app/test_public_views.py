"""What is read without signing in carries nothing that needs a sign-in: the link view shows
amounts, paytables and how many tables, never a table's state, counters, bets or switches
(those go to the people who may read the tables), and the display feed names its tables only.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx

from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.floor import web_floor
from tests.app.test_live import next_message, ws_url

TABLE_DATA = {
    "credits",
    "rounds",
    "seats_with_bets",
    "status_flags",
    "door_open",
    "fault",
    "lockout",
    "hit_pending",
    "failures",
    "last_answer_us",
}


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


async def test_the_anonymous_link_view_shows_no_table_state(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf, httpx.AsyncClient(base_url=wf.base_url) as http:
        for path in ("/api/v1/links/stud", "/api/v1/links"):
            public = (await http.get(path)).json()
            links = public if isinstance(public, list) else [public]
            assert [link["table_count"] for link in links] == [2] * len(links), path
            assert [link["tables"] for link in links] == [[]] * len(links), path
            assert not TABLE_DATA & _keys(public), path
            assert {link["state"] for link in links} == {"playing"}

        # Those who may read the tables see them on the link as on GET /api/v1/tables.
        for role in (Role.DEALER, Role.TECHNICIAN, Role.SUPERVISOR, Role.AUDITOR, Role.ADMIN):
            seen = await http.get("/api/v1/links/stud", headers=await headers_for(wf, role))
            tables = seen.json()["tables"]
            assert [t["table_id"] for t in tables] == ["stud-1", "stud-2"], role
            assert {"credits", "rounds", "seats_with_bets", "status_flags"} <= set(tables[0])
        # Anyone else signed in sees what the public does.
        agent = await headers_for(wf, Role.COMMISSION_AGENT)
        assert (await http.get("/api/v1/links/stud", headers=agent)).json()["tables"] == []


async def test_the_display_feed_names_its_tables_only(tmp_path: Path) -> None:
    async with web_floor(tmp_path) as wf:
        from websockets.asyncio.client import connect

        async with connect(ws_url(wf, "/ws/links/stud")) as ws:
            first = await next_message(ws)
            assert first["tables"] == [
                {"table_id": "stud-1", "name": "stud-1"},
                {"table_id": "stud-2", "name": "stud-2"},
            ]
            assert not TABLE_DATA & _keys(first)
            assert "reserve" not in json.dumps(first)
