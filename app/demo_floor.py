"""The demo's floors: every jackpot shape a floor runs, on simulated tables, as far as the
jurisdiction the demo runs under allows (``plan_for``).

``EVERY_SHAPE`` (New Jersey, ``progressive demo --jurisdiction new-jersey``):

- ``caribbean``: a mixed Caribbean Stud and Caribbean Draw link whose pool has four levels:
  Grand (a hidden share funds its $10,000 reset), Major and Minor (each with a limit and an
  overflow meter), and a mystery Mini that must hit by its ceiling. A royal flush wins the
  Grand and a straight flush the Major at both games, four of a kind the Minor at Stud ($500
  at Draw); a royal flush pays $500 envy to every other seat with a side bet in the round, a
  straight flush $50.

``NO_LIMITS`` (Indiana, the default): the same four levels with no limit, no overflow and no
mystery (68 IAC 10-1-5(d): a jackpot is limited only by limiting the wager), each won by a
hand, and no envy:

- ``caribbean``: Grand (a hidden share funds its reset), Major, Minor and Mini. A royal flush
  wins the Grand and a straight flush the Major at both games; four of a kind the Minor and a
  full house the Mini at Stud ($500 and $100 at Draw, where the draw makes them far more
  common). The shown shares alone make 75 %, 80 % with the hidden one: whichever the rate of
  progression counts, it is within 60 % to 100 % (68 IAC 10-1-1.1(b)-(c)); the Grand's and the
  Major's, the levels a Draw player can win, make 60 % on their own. No envy line on the
  Caribbean games either: 68 IAC 10-6 and 10-8 never name one, so one would be a variation
  of the rules of the game to file and have approved first (10-1-4), which a demo has not.

On both floors:

- ``paigow``: a Pai Gow Poker progressive of one meter (the classic shape), five aces 100 %.
- ``lir``: the Let It Ride bonus, a fixed-pay link of its default paytable, the amounts of
  68 IAC 10-7-5(e) (no meter, no envy).
- ``sevens``: Super Sevens, a fixed-pay link of its default paytable, the amounts of
  68 IAC 10-12-3(f).

Each game's tables sit behind one Modbus TCP gateway on loopback, every table with its
location; the Super Sevens and Pai Gow Poker tables speak register map v2 (their hands and
cards need it), the others v1. A floor is written with the settings a floor file takes
(``[[link.level]]``, ``[[link.paytable]]``, ``game`` on a table, ``fixed_pay``) and read by
the same parser.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from controller.core.games import Game
from controller.core.hands import HandCategory
from controller.core.reducer import LinkState
from controller.rules.jurisdictions import Jurisdiction
from controller.runtime.config import parse_floor_config
from controller.runtime.config_entries import FloorConfig
from link_adapters.simulator.gateway import GatewaySpec
from link_adapters.simulator.server import SimFloor
from link_adapters.simulator.table_types import SimTableConfig, most_seats

__all__ = [
    "CARIBBEAN_LEVELS",
    "EVERY_SHAPE",
    "FORCED",
    "GATEWAYS",
    "LINKS",
    "NO_LIMITS",
    "NO_LIMITS_LEVELS",
    "NO_LIMITS_PAYTABLE",
    "PAYTABLE",
    "PLANS",
    "POLL_INTERVAL_MS",
    "SHAPES",
    "TABLES_PER_GATEWAY",
    "TABLES_PER_LINK",
    "DemoGateway",
    "DemoLink",
    "DemoPlan",
    "build_simulator",
    "demo_floor",
    "plan_for",
    "shapes_of",
    "stale_links",
]

US = 1_000_000
TABLES_PER_GATEWAY = 3
TABLES_PER_LINK = TABLES_PER_GATEWAY  # the name the demo used when each link had one game
POLL_INTERVAL_MS = 250
# The shapes a jurisdiction may forbid, by their names in ``Allows``.
SHAPES = ("level_limits", "mystery_levels", "hidden_shares", "envy_lines")
# Ports for reading a floor without serving it (its shapes, its links).
_NO_PORTS: Mapping[str, int] = {}


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


@dataclass(frozen=True, slots=True)
class DemoPlan:
    """One demo floor: its links, the gateways of their tables, and the hands the demo forces
    in turn, (gateway, hand), only at tables of links with a meter."""

    key: str
    # What the floor shows, as the demo says at its start.
    summary: str
    links: tuple[DemoLink, ...]
    gateways: tuple[DemoGateway, ...]
    forced: tuple[tuple[str, HandCategory], ...]

    def link_of(self, gateway: str) -> str:
        return next(g.link_id for g in self.gateways if g.name == gateway)

    def floor(self, ports: Mapping[str, int]) -> FloorConfig:
        return demo_floor(ports, self)


def _lines(
    game: Game, four_of_a_kind: dict[str, Any], full_house: dict[str, Any], *, envy: bool
) -> list[dict[str, Any]]:
    """A Caribbean game's lines on a four-level pool."""
    royal = {"envy": "$500"} if envy else {}
    straight = {"envy": "$50"} if envy else {}
    return [
        {"game": game.value, "hand": "ROYAL_FLUSH", "pays": "100%", "level": 1, **royal},
        {"game": game.value, "hand": "STRAIGHT_FLUSH", "pays": "100%", "level": 2, **straight},
        {"game": game.value, "hand": "FOUR_OF_A_KIND", **four_of_a_kind},
        {"game": game.value, "hand": "FULL_HOUSE", **full_house},
        {"game": game.value, "hand": "FLUSH", "pays": "$50"},
    ]


# Every shape: four of a kind wins the Minor at Stud. Judged after the draw it comes about once
# in a hundred Caribbean Draw hands, so at Draw it keeps its fixed $500: a table held for a
# technician every minute or so is no floor anyone runs.
PAYTABLE = _lines(
    Game.CARIBBEAN_STUD, {"pays": "100%", "level": 3}, {"pays": "$100"}, envy=True
) + _lines(Game.CARIBBEAN_DRAW, {"pays": "$500"}, {"pays": "$100"}, envy=True)

# The rate of progression is every share together: 40 + 10 hidden + 12 + 6 + 10 = 78 %, within
# 60 % to 100 % (68 % with the shown shares alone). At the demo's pace (six tables, a round
# every 2 s, one or two side bets a round) about $5 is wagered a second, so the Mini's 10 %
# share takes it from its $20 reset to a trigger drawn between $50 and $80 in one to two
# minutes.
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

# No limits: the Mini is won by a hand, a full house at Stud (1 in 694 hands: at the demo's
# pace one every few minutes, the Mini then at about $100). At Draw, after the draw, four of
# a kind and a full house are far more common: they keep fixed pays there.
NO_LIMITS_PAYTABLE = _lines(
    Game.CARIBBEAN_STUD, {"pays": "100%", "level": 3}, {"pays": "100%", "level": 4}, envy=False
) + _lines(Game.CARIBBEAN_DRAW, {"pays": "$500"}, {"pays": "$100"}, envy=False)
# Shown: 45 + 15 + 8 + 7 = 75 %; with the Grand's hidden 5 %, 80 %.
NO_LIMITS_LEVELS: list[dict[str, str]] = [
    {"name": "Grand", "reset": "$10,000", "share": "45%", "hidden": "5%"},
    {"name": "Major", "reset": "$1,000", "share": "15%"},
    {"name": "Minor", "reset": "$100", "share": "8%"},
    {"name": "Mini", "reset": "$20", "share": "7%"},
]

_CARIBBEAN = ("caribbean", "Caribbean Stud and Draw progressive", Game.CARIBBEAN_STUD)
_OTHERS = (
    DemoLink(
        "paigow",
        "Pai Gow Poker progressive",
        Game.PAI_GOW_POKER,
        {"rate": "70%", "reset": "$5,000"},
    ),
    # Their games' default paytables: the amounts 68 IAC 10-7-5(e) and 10-12-3(f) list.
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

EVERY_SHAPE = DemoPlan(
    key="every_shape",
    summary=(
        "every jackpot shape: levels with limits and overflow meters, a hidden share, a "
        "mystery Mini, envy pays, fixed-pay links"
    ),
    links=(
        DemoLink(*_CARIBBEAN, {"level": CARIBBEAN_LEVELS, "paytable": PAYTABLE}),
        *_OTHERS,
    ),
    gateways=GATEWAYS,
    # Each Caribbean level won by a hand in turn (with its envy), and the Pai Gow meter; the
    # mystery Mini hits by its trigger.
    forced=(
        ("stud", HandCategory.ROYAL_FLUSH),
        ("paigow", HandCategory.FIVE_ACES),
        ("draw", HandCategory.STRAIGHT_FLUSH),
        ("draw", HandCategory.ROYAL_FLUSH),
        ("stud", HandCategory.FOUR_OF_A_KIND),
        ("stud", HandCategory.STRAIGHT_FLUSH),
    ),
)
NO_LIMITS = DemoPlan(
    key="no_limits",
    summary=(
        "levels with no limit, each won by a hand, a hidden share, no mystery and no envy; "
        "fixed-pay links of the listed amounts"
    ),
    links=(
        DemoLink(*_CARIBBEAN, {"level": NO_LIMITS_LEVELS, "paytable": NO_LIMITS_PAYTABLE}),
        *_OTHERS,
    ),
    gateways=GATEWAYS,
    # Every level won by its hand in turn: Grand, Major, Mini, Minor; and the Pai Gow meter.
    forced=(
        ("stud", HandCategory.ROYAL_FLUSH),
        ("paigow", HandCategory.FIVE_ACES),
        ("draw", HandCategory.STRAIGHT_FLUSH),
        ("stud", HandCategory.FULL_HOUSE),
        ("stud", HandCategory.FOUR_OF_A_KIND),
        ("draw", HandCategory.ROYAL_FLUSH),
        ("stud", HandCategory.STRAIGHT_FLUSH),
    ),
)
# The floors a demo may run, the one with the most shapes first.
PLANS = (EVERY_SHAPE, NO_LIMITS)

# The floor with every shape, by the names the tests that carry every shape through every
# surface use.
LINKS = EVERY_SHAPE.links
FORCED = EVERY_SHAPE.forced


def shapes_of(plan: DemoPlan) -> frozenset[str]:
    """The shapes (``SHAPES``) the floor's links have, read from its floor file's settings."""
    found: set[str] = set()
    for link in demo_floor(_NO_PORTS, plan).links:
        for cfg in link.levels or ():
            if cfg.limit_cents is not None:
                found.add("level_limits")
            if cfg.mystery is not None:
                found.add("mystery_levels")
            if cfg.reserve_bp:
                found.add("hidden_shares")
        paytables = [link.paytable, *link.paytables.values()]
        if any(line.envy_cents for pt in paytables if pt is not None for line in pt.lines):
            found.add("envy_lines")
    return frozenset(found)


def plan_for(law: Jurisdiction) -> DemoPlan:
    """The floor with the most shapes ``law`` allows: every shape where it allows them all,
    the floor with no level limit, no mystery and no envy otherwise."""
    for plan in PLANS:
        if all(getattr(law.allows, shape) for shape in shapes_of(plan)):
            return plan
    raise ValueError(f"no demo floor has only the jackpot shapes {law.name} allows")


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


def demo_floor(ports: Mapping[str, int], plan: DemoPlan) -> FloorConfig:
    """A demo's floor: one Modbus TCP gateway per game, its tables as units 1-3 (a gateway
    missing from ``ports`` is given port 1: the floor read, not served)."""
    links = []
    for link in plan.links:
        tables = [
            _table(gw, link, n)
            for gw in plan.gateways
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
            {"name": gw.name, "kind": "tcp", "host": "127.0.0.1", "port": ports.get(gw.name, 1),
             "timeout_ms": 500, "retries": 1}
            for gw in plan.gateways
        ],
        "link": links,
    })  # fmt: skip


def _shape(levels: Any) -> list[tuple[str, bool, bool]]:
    return [(cfg.name, cfg.limit_cents is not None, cfg.mystery is not None) for cfg in levels]


def stale_links(states: dict[str, LinkState], known: list[str], plan: DemoPlan) -> str | None:
    """Why the database cannot be this demo's (an earlier demo's links, or the links of the
    other floor, run under another jurisdiction), or None."""
    ours = {link.link_id for link in plan.links}
    others = sorted(set(known) - ours)
    lir = states.get("lir")
    if lir is not None and not lir.fixed_pay:
        others.append("lir (a Let It Ride link with a meter)")
    for link in demo_floor(_NO_PORTS, plan).links:
        state = states.get(link.link_id)
        if state is None or link.levels is None or not link.levels:
            continue
        if _shape(state.level_configs) != _shape(link.levels):
            others.append(f"{link.link_id} (levels of another floor)")
    if not others:
        return None
    return (
        f"this folder holds the database of an earlier demo (links {', '.join(others)}); run "
        "the demo in a new folder (--folder), or under the jurisdiction that demo ran under "
        "(--jurisdiction), or move progressive-demo.db and its keys away"
    )


def build_simulator(
    round_seconds: float, seed: int | None, states: dict[str, LinkState], plan: DemoPlan
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
            for gw in plan.gateways
        ],
        rounds_per_second=1 / round_seconds,
        seed=seed,
    )
    for gw in plan.gateways:
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
