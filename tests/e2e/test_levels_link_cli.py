"""A link of levels of two games created with ``progressive links create``, approved by a
commission agent, played until its mystery level hits and a level is won with envy paid; then
read back whole from the database: ``links list`` and ``links show``, the API, the
reconciliation and the history export meter by meter, ``ledger verify``, a restart."""

from __future__ import annotations

from pathlib import Path

import httpx

from controller.core.reducer.levels import meters_of
from controller.roles import Role
from controller.runtime.links import LinkRuntime
from controller.storage.database import make_engine
from controller.storage.store import LedgerStore
from tests.conftest import KEY
from tests.controller.permissive_law import PERMISSIVE
from tests.e2e.pool import (
    KEYS,
    QUADS,
    H,
    Readings,
    approve_filed,
    cli,
    controller,
    meters_of_export,
    signed_in,
    until_mystery,
    write_terms,
)


async def test_a_link_of_levels_made_on_the_command_line_plays_and_reads_back_whole(
    db_url: str, tmp_path: Path
) -> None:
    levels, paytable = write_terms(tmp_path)
    out = await cli(
        "links", "create", "--location", "pit 1", "--id", "pool", "--name", "Stud and Draw pool",
        "--game", "caribbean_stud", "--levels", str(levels), "--paytable", str(paytable),
        "--table", "T1", "--table", "T2:$1", "--table", "D1:$1:caribbean_draw",
        db_url=db_url,
    )  # fmt: skip
    assert "4 levels, rate 80%, 3 table(s)" in out, out
    listed = await cli("links", "list", db_url=db_url)
    assert "AWAITING APPROVAL" in listed

    async with controller(db_url) as c, httpx.AsyncClient(base_url=c.base_url) as http:
        [_] = await approve_filed(c, http)
        rt = c.service.runtime
        assert rt.memory.is_live("pool", c.service.clock.now_us())
        p = Readings(c.service.clock.now_us)
        await rt.readings.apply([p.of(t, 0, 0) for t in ("T1", "T2", "D1")])
        # Past the Major's limit (on to the Minor), past the Minor's (its overflow), until the
        # Mini's secret trigger is reached.
        await until_mystery(rt, p, "pool", ("T1", "D1"))
        # Four of a kind at T2 wins the Minor, with envy to every other seat with a side bet.
        await rt.readings.apply(
            [p.hit("T2", H.FOUR_OF_A_KIND, QUADS, seat=4, hit_seq=1,
                   bet_seats=frozenset({1, 4, 6}))]
        )  # fmt: skip
        state = rt.memory.states["pool"]
        mini, minor = state.levels[3], state.levels[2]
        assert (mini.wins, minor.wins) == (1, 1) and mini.armed is not None
        assert minor.overflow_units > 0 and state.levels[1].reserve_units > 0

        # The API's hits, wins and last hits of each level come from the stored history.
        link = (await http.get("/api/v1/links/pool")).json()
        by_key = {lv["key"]: lv for lv in link["levels"]}
        assert [lv["name"] for lv in link["levels"]] == ["Grand", "Major", "Minor", "Mini"]
        assert (by_key["L1"]["hits"], by_key["L2"]["hits"]) == (0, 0)
        [quads] = by_key["L3"]["recent_hits"]
        assert (quads["hit_id"], quads["seat"], quads["kind"]) == ("T2#1", 4, "hand")
        assert by_key["L3"]["hits"] == 1 and by_key["L3"]["wins_cents"] == quads["award_cents"]
        [mystery] = by_key["L4"]["recent_hits"]
        assert (mystery["kind"], mystery["hand"], mystery["seat"]) == ("mystery", "MYSTERY", 2)
        assert mystery["table_id"] in ("T1", "D1")
        assert by_key["L4"]["wins_cents"] == mystery["award_cents"]
        assert 10_01 <= mystery["award_cents"] <= 20_00
        staff = await signed_in(c, Role.AUDITOR)
        hits = (await http.get("/api/v1/links/pool/hits", headers=staff)).json()
        envy = sorted(h["hit_id"] for h in hits if h["hit_id"].startswith("T2#1/envy"))
        assert envy == ["T2#1/envy1", "T2#1/envy6"], hits

        # The reconciliation and the history export, meter by meter.
        recon = (await http.get("/api/v1/links/pool/reconciliation", headers=staff)).json()
        assert recon["balanced"] and recon["problems"] == [], recon
        lines = {m["meter"]: m for m in recon["meters"]}
        assert set(KEYS) <= set(lines)
        assert all(m["difference_units"] == 0 for m in lines.values()), lines
        meters = meters_of(state.levels)
        for key, units in meters.items():
            assert lines[key]["closing_units"] == units, key
        assert (
            lines["L3"]["awarded_units"],
            lines["L4"]["awarded_units"],
        ) == (quads["award_cents"] * 10_000, mystery["award_cents"] * 10_000)
        export = await http.get("/api/v1/exports/history?link=pool&format=json", headers=staff)
        assert export.status_code == 200, export.text
        assert meters_of_export(export.json()["rows"]) == meters
        memory = dict(rt.memory.states)

    # From the database alone: the command line, verify, a new process.
    listed = await cli("links", "list", db_url=db_url)
    assert "pool\tapproved\tCaribbean Stud Poker, Caribbean Draw Poker\t" in listed
    # No approved change since it opened; lawful where limits and mystery levels are allowed.
    assert listed.rstrip().endswith("\t4 levels\t-\tyes")
    assert "AWAITING APPROVAL" not in listed
    # The same database read under Indiana: the link is reported, with each clause and the way
    # into line, never changed (it still lists as approved and its meters as they were).
    under_indiana = await cli("links", "list", db_url=db_url, law="indiana")
    row = under_indiana.splitlines()[1].split("\t")
    assert row[1] == "approved"
    lawful = row[-1]
    assert lawful.startswith("NO: level 2 (Major) is capped at $1,000.50"), lawful
    assert "level 4 (Mini) is a mystery level that must hit by $20.00" in lawful
    assert "(68 IAC 10-1-5(d))" in lawful and "file a levels change" in lawful
    shown_in = await cli("links", "show", "pool", db_url=db_url, law="indiana")
    assert "NOT LAWFUL under Indiana: level 3 (Minor) is capped at $100.20" in shown_in
    assert "rate of progression 65% (the shown shares;" in shown_in
    shown = await cli("links", "show", "pool", db_url=db_url)
    assert "L2 Major: reset $1,000.00, 15% + 5% hidden limit $1,000.50 then next_level" in shown
    assert "L4 Mini: reset $10.00, 2% must hit between $10.01 and $20.00" in shown
    assert "paytable of Caribbean Draw Poker:" in shown and "D1: Caribbean Draw Poker" in shown
    verified = await cli("ledger", "verify", db_url=db_url)
    assert "ledger whole" in verified, verified
    engine = make_engine(db_url)
    try:
        again = LinkRuntime(LedgerStore(engine, KEY, law=PERMISSIVE))
        await again.memory.load()
        assert again.memory.inoperable == {}
        assert again.memory.states == memory
    finally:
        await engine.dispose()
