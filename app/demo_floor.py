"""The demo's floor: every jackpot shape a floor runs, on simulated tables.

- ``caribbean``: a mixed Caribbean Stud and Caribbean Draw link whose pool has four levels:
  Grand (a hidden share funds its $10,000 reset), Major and Minor (each with a limit and an
  overflow meter), and a mystery Mini that must hit by its ceiling. A royal flush wins the
  Grand and a straight flush the Major at both games, four of a kind the Minor at Stud ($500
  at Draw); a royal flush pays $500 envy to every other seat with a side bet in the round, a
  straight flush $50.
- ``paigow``: a Pai Gow Poker progressive of one meter (the classic shape), five aces 100 %.
- ``lir``: the Let It Ride bonus, a fixed-pay link (68 IAC 10-7-5(e): no meter).
- ``sevens``: Super Sevens, a fixed-pay link of its default paytable (68 IAC 10-12-3(f)).

Each game's tables sit behind one Modbus TCP gateway on loopback; the Super Sevens and Pai
Gow Poker tables speak register map v2 (their hands and cards need it), the others v1. The
floor is written with the settings a floor file takes (``[[link.level]]``,
``[[link.paytable]]``, ``game`` on a table, ``fixed_pay``) and read by the same parser.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.reducer import LinkState
from controller.runtime.config import FloorConfig, parse_floor_config
from link_adapters.simulator.server import GatewaySpec, SimFloor
from link_adapters.simulator.table import SimTableConfig
from link_adapters.simulator.table_types import most_seats

__all__ = [
    "FORCED",
    "GATEWAYS",
    "LINKS",
    "POLL_INTERVAL_MS",
    "TABLES_PER_GATEWAY",
    "TABLES_PER_LINK",
    "DemoGateway",
    "DemoLink",
    "build_simulator",
    "demo_floor",
    "stale_links",
]

US = 1_000_000
TABLES_PER_GATEWAY = 3
TABLES_PER_LINK = TABLES_PER_GATEWAY  # the name the demo used when each link had one game
POLL_INTERVAL_MS = 250


@dataclass(frozen=True, slots=True)
class DemoLink:
    link_id: str
    name: str
    game: Game
    # What the floor file says of the link besides its id, name, game and tables.
    terms: dict[str, Any]

    @property
    def fixed_pay(self) -> bool:
        return self.terms.get("fixed_pay", False) or self.game is Game.LET_IT_RIDE_BONUS


@dataclass(frozen=True, slots=True)
class DemoGateway:
    """One simulated gateway: the tables of one game, all on one link."""

    name: str
    game: Game
    link_id: str

    @property
    def profile(self) -> str:
        return "reference-v1" if self.game.rules.register.map_version == 1 else "reference-v2"


def _lines(game: Game, four_of_a_kind: dict[str, Any]) -> list[dict[str, Any]]:
    """A Caribbean game's lines on the four-level pool."""
    return [
        {"game": game.value, "hand": "ROYAL_FLUSH", "pays": "100%", "level": 1, "envy": "$500"},
        {"game": game.value, "hand": "STRAIGHT_FLUSH", "pays": "100%", "level": 2,
         "envy": "$50"},
        {"game": game.value, "hand": "FOUR_OF_A_KIND", **four_of_a_kind},
        {"game": game.value, "hand": "FULL_HOUSE", "pays": "$100"},
        {"game": game.value, "hand": "FLUSH", "pays": "$50"},
    ]  # fmt: skip


# Four of a kind wins the Minor at Stud. Judged after the draw it comes about once in a
# hundred Caribbean Draw hands, so at Draw it keeps its fixed $500: a table held for a
# technician every minute or so is no floor anyone runs.
PAYTABLE = _lines(Game.CARIBBEAN_STUD, {"pays": "100%", "level": 3}) + _lines(
    Game.CARIBBEAN_DRAW, {"pays": "$500"}
)

# The rate of progression is every share together: 40 + 10 hidden + 12 + 6 + 10 = 78 %, within
# 60 % to 100 % (68 IAC 10-1-1.1(c)). At the demo's pace (six tables, a round every 2 s, one
# or two side bets a round) about $5 is wagered a second, so the Mini's 10 % share takes it
# from its $20 reset to a trigger drawn between $50 and $80 in one to two minutes.
CARIBBEAN_LEVELS: list[dict[str, str]] = [
    {"name": "Grand", "reset": "$10,000", "share": "40%", "hidden": "10%"},
    {"name": "Major", "reset": "$1,000", "share": "12%", "limit": "$2,500",
     "above_limit": "overflow"},
    # Its excess cannot pass on to the Mini: a mystery level would be carried past its ceiling.
    {"name": "Minor", "reset": "$100", "share": "6%", "limit": "$500",
     "above_limit": "overflow"},
    {"name": "Mini", "reset": "$20", "share": "10%", "mystery_floor": "$50",
     "mystery_ceiling": "$80"},
]  # fmt: skip

LINKS = (
    DemoLink(
        "caribbean",
        "Caribbean Stud and Draw progressive",
        Game.CARIBBEAN_STUD,
        {
            "level": CARIBBEAN_LEVELS,
            "paytable": PAYTABLE,
        },
    ),
    DemoLink(
        "paigow",
        "Pai Gow Poker progressive",
        Game.PAI_GOW_POKER,
        {"rate": "70%", "reset": "$5,000"},
    ),
    DemoLink("lir", "Let It Ride bonus", Game.LET_IT_RIDE_BONUS, {}),
    DemoLink("sevens", "Super Sevens", Game.SUPER_SEVENS, {"fixed_pay": True}),
)
GATEWAYS = (
    DemoGateway("stud", Game.CARIBBEAN_STUD, "caribbean"),
    DemoGateway("draw", Game.CARIBBEAN_DRAW, "caribbean"),
    DemoGateway("paigow", Game.PAI_GOW_POKER, "paigow"),
    DemoGateway("lir", Game.LET_IT_RIDE_BONUS, "lir"),
    DemoGateway("sevens", Game.SUPER_SEVENS, "sevens"),
)

# What the demo forces, in turn: (gateway, hand). Only at tables of links with a meter; each
# Caribbean level won in turn (with its envy), and the Pai Gow meter.
FORCED: tuple[tuple[str, HandCategory], ...] = (
    ("stud", HandCategory.ROYAL_FLUSH),
    ("paigow", HandCategory.FIVE_ACES),
    ("draw", HandCategory.STRAIGHT_FLUSH),
    ("draw", HandCategory.ROYAL_FLUSH),
    ("stud", HandCategory.FOUR_OF_A_KIND),
    ("stud", HandCategory.STRAIGHT_FLUSH),
)


def _table(gw: DemoGateway, link: DemoLink, n: int) -> dict[str, Any]:
    table: dict[str, Any] = {
        "id": f"{gw.name}-{n}",
        "bus": gw.name,
        "unit": n,
        "name": f"{gw.game.label} table {n}",
        "location": f"pit 1, {gw.game.label} {n}",
        "profile": gw.profile,
        "seats": most_seats(gw.game),
        "poll_interval_ms": POLL_INTERVAL_MS,
        # The demo deals far faster than a real dealer.
        "min_round_ms": 50,
        "max_credits_per_seat": 1,
    }
    if gw.game is not link.game:
        table["game"] = gw.game.value
    return table


def demo_floor(ports: dict[str, int]) -> FloorConfig:
    """The demo's floor: one Modbus TCP gateway per game, its tables as units 1-3."""
    links = []
    for link in LINKS:
        tables = [
            _table(gw, link, n)
            for gw in GATEWAYS
            if gw.link_id == link.link_id
            for n in range(1, TABLES_PER_GATEWAY + 1)
        ]
        links.append(
            {"id": link.link_id, "name": link.name, "game": link.game.value, **link.terms,
             "table": tables}
        )  # fmt: skip
    return parse_floor_config({
        "controller": {"offline_after_failures": 3},
        "bus": [
            {"name": gw.name, "kind": "tcp", "host": "127.0.0.1", "port": ports[gw.name],
             "timeout_ms": 500, "retries": 1}
            for gw in GATEWAYS
        ],
        "link": links,
    })  # fmt: skip


def stale_links(states: dict[str, LinkState], known: list[str]) -> str | None:
    """Why the database cannot be this demo's (an earlier demo's links), or None."""
    ours = {link.link_id for link in LINKS}
    others = sorted(set(known) - ours)
    lir = states.get("lir")
    if lir is not None and not lir.fixed_pay:
        others.append("lir (a Let It Ride link with a meter)")
    if not others:
        return None
    return (
        f"this folder holds the database of an earlier demo (links {', '.join(others)}); run "
        "the demo in a new folder (--folder), or move progressive-demo.db and its keys away"
    )


def build_simulator(
    round_seconds: float, seed: int | None, states: dict[str, LinkState]
) -> SimFloor:
    """The simulated tables, each starting from the counters the database last committed."""
    sim = SimFloor(
        [
            GatewaySpec(
                game=gw.game,
                tables=TABLES_PER_GATEWAY,
                port=0,
                name=gw.name,
                # A table whose controller falls silent refuses side bets after 10 s.
                table=SimTableConfig(game=gw.game, heartbeat_timeout_us=10 * US),
            )
            for gw in GATEWAYS
        ],
        rounds_per_second=1 / round_seconds,
        seed=seed,
    )
    for gw in GATEWAYS:
        state = states.get(gw.link_id)
        if state is None:
            continue
        for n in range(1, TABLES_PER_GATEWAY + 1):
            ts = state.tables.get(f"{gw.name}-{n}")
            if ts is not None and ts.credits is not None:
                last = ts.last_hit_seq
                sim.tables[(gw.name, n)].resume(
                    credits=ts.credits,
                    rounds=ts.rounds or 0,
                    next_hit_seq=1 if last is None else last + 1,
                )
    return sim
