"""A new link of levels, created and filed: the link as opened (its levels, its mystery
trigger drawn and committed) and the packet the commission reads, kept by SHA-256."""

from __future__ import annotations

import json

from controller.core.games import Game
from controller.core.reducer import EntryKind, HitPolicy, TableConfig
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.runtime.clock import FixedClock
from controller.runtime.link_specs import parse_levels, parse_paytables, plan_link
from controller.runtime.links import LinkRuntime
from controller.runtime.new_links import create_and_file_link
from controller.storage.links import TableSpec
from controller.storage.store import LedgerStore
from tests.conftest import T0
from tests.controller.permissive_law import permissive
from tests.controller.runtime.test_config import POOL_LEVELS

STUD, DRAW = Game.CARIBBEAN_STUD, Game.CARIBBEAN_DRAW


async def test_a_link_of_levels_is_created_with_its_mystery_drawn_and_filed_with_its_levels(
    store: LedgerStore,
) -> None:
    permissive(store)  # its levels have limits and a mystery Mini, which Indiana refuses
    tables = [
        TableSpec(config=TableConfig(table_id="t1", denomination_cents=100), location="pit 1"),
        TableSpec(
            config=TableConfig(table_id="d1", denomination_cents=500, game=DRAW), location="pit 1"
        ),
    ]
    plan = plan_link(
        game=STUD,
        rate_bp=None,
        reset_cents=None,
        levels=parse_levels(POOL_LEVELS),
        paytables=parse_paytables(
            [
                {"hand": "ROYAL_FLUSH", "pays": "100%", "level": 1},
                {"hand": "STRAIGHT_FLUSH", "pays": "100%", "level": 2, "envy": "$20"},
                {"hand": "FOUR_OF_A_KIND", "pays": "100%", "level": 3},
                {"hand": "FLUSH", "pays": "$50"},
            ],
            STUD,
        ),
        fixed_pay=False,
        table_games=[STUD, DRAW],
    )
    runtime = LinkRuntime(store, FixedClock(T0))
    await runtime.memory.load()
    filing = FilingDesk(runtime)
    review = ReviewDesk(filing)
    row = await create_and_file_link(
        runtime,
        filing,
        link_id="pool",
        name="The pool",
        game=STUD,
        rate_bp=plan.rate_bp,
        reset_cents=plan.reset_cents,
        hit_policy=HitPolicy.SPLIT,
        tables=tables,
        at_us=T0,
        actor="operator",
        levels=plan.levels,
        paytable=plan.paytable,
        paytables=plan.paytables,
    )
    assert row.kind == "new_link" and row.status == "filed"
    proposal = json.loads(row.proposal)
    assert [lv["name"] for lv in proposal["levels"]] == ["Grand", "Major", "Minor", "Mini"]
    assert set(proposal["paytables"]) == {"caribbean_draw"}
    content, _, _ = await review.packet(row.submission_id, "json")
    packet = json.loads(content)
    assert packet["pool"]["rate_of_progression"]["rate"] == "80%"
    assert packet["pool"]["levels"][3]["mystery"]["range"] == "$10.01 to $20.00"
    assert set(packet["par_sheet"]["by_game"]["proposed"]) == {"caribbean_stud", "caribbean_draw"}
    assert packet["par_sheet"]["proposed"]["lines"][1]["envy_cents"] == 20_00
    pdf, _, _ = await review.packet(row.submission_id, "pdf")
    assert pdf.startswith(b"%PDF")
    # The Mini's first trigger was drawn at creation and committed to in the history.
    entries = [e async for e in store.entries_after("pool", 0)]
    [armed] = [e for e in entries if e.kind == EntryKind.MYSTERY_ARMED]
    details = json.loads(armed.details)
    assert details["floor_cents"] == 10_01 and details["ceiling_cents"] == 20_00
    assert len(details["commitment"]) == 64


async def test_pai_gow_and_super_sevens_links_are_filed_with_their_rules_and_par_sheets(
    store: LedgerStore,
) -> None:
    """A Pai Gow Poker progressive and a Super Sevens link of fixed pays: each packet names
    its game's rules-of-the-game clause and counts its own deals (seven cards and the joker,
    the first three cards of a six-deck shoe), as JSON and as PDF."""
    runtime = LinkRuntime(store, FixedClock(T0))
    await runtime.memory.load()
    filing = FilingDesk(runtime)
    review = ReviewDesk(filing)
    for link_id, game, fixed, clause in (
        ("paigow", Game.PAI_GOW_POKER, False, "68 IAC 10-9-2(b)(2), (5)"),
        ("sevens", Game.SUPER_SEVENS, True, "68 IAC 10-12-2(b)(1)-(2)"),
    ):
        plan = plan_link(
            game=game,
            rate_bp=None if fixed else 7_000,
            reset_cents=None if fixed else 5_000_00,
            levels=None,
            paytables=None,
            fixed_pay=fixed,
            table_games=[game],
        )
        row = await create_and_file_link(
            runtime,
            filing,
            link_id=link_id,
            name=game.label,
            game=game,
            rate_bp=plan.rate_bp,
            reset_cents=plan.reset_cents,
            hit_policy=HitPolicy.SPLIT,
            tables=[
                TableSpec(
                    config=TableConfig(table_id=f"{link_id}-1", denomination_cents=100),
                    location="pit 1",
                )
            ],
            at_us=T0,
            actor="operator",
            levels=plan.levels,
            paytable=plan.paytable,
        )
        content, _, _ = await review.packet(row.submission_id, "json")
        packet = json.loads(content)
        assert packet["rules_of_the_game"]["clause"] == clause
        pdf, _, _ = await review.packet(row.submission_id, "pdf")
        assert pdf.startswith(b"%PDF")
