"""What a link's pool may be: its levels under the rate of progression, the Let It Ride
bonus as a fixed-pay link, and paytables that the pool can pay."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from controller.core.money import format_bp, format_cents
from controller.core.reducer.levels import AboveLimit
from controller.rules import fixed_pays
from controller.rules.progression import (
    RATE_CLAUSE,
    RATE_LOCK_CLAUSE,
    check_rate_of_progression,
    share_text,
)
from controller.rules.violation import RuleViolation

if TYPE_CHECKING:
    from controller.core.games import Game, Paytable
    from controller.core.reducer.levels import LevelConfig
    from controller.rules.terms import Terms

# 68 IAC 10-7-5(e): the Let It Ride bonus pays the fixed amounts it lists; no hand wins a
# meter, so its link has none (and no rate of progression to set or change).
FIXED_PAY_CLAUSE = "68 IAC 10-7-5(e)"


def fixed_pay_only(game: Game) -> bool:
    """A game whose side bet pays only fixed amounts, by its rules (``FIXED_PAY_CLAUSE``)."""
    return str(game) == "let_it_ride_bonus"


def rate_of_progression_bp(levels: Sequence[LevelConfig], *, counts_hidden: bool) -> int:
    """The rate of progression of a pool as a jurisdiction reads it: what every wager adds to
    the jackpots a patron can win (the levels' shown shares), with the hidden shares too where
    the jurisdiction counts them (``Allows.hidden_share_in_rate``)."""
    return sum(cfg.rate_bp + (cfg.reserve_bp if counts_hidden else 0) for cfg in levels)


def _shares(levels: Sequence[LevelConfig]) -> str:
    return ", ".join(f"{cfg.name} {share_text(cfg)}" for cfg in levels)


def shape_problems(levels: Sequence[LevelConfig], *, law: Terms) -> list[RuleViolation]:
    """Every level of a shape the jurisdiction does not allow, each refusal citing the
    jurisdiction's clause for it (``Clauses.shapes``) and saying how to bring it into line.

    Indiana, 68 IAC 10-1-5(d): a jackpot is limited only by limiting the wager, so no level
    has a limit (an overflow meter or the next level above it) and none is a mystery level
    (its ceiling is the most it can ever pay)."""
    allows, shapes = law.allows, law.clauses.shapes
    found: list[RuleViolation] = []
    for number, cfg in enumerate(levels, start=1):
        where = f"level {number} ({cfg.name})"
        if cfg.limit_cents is not None and not allows.level_limits:
            above = (
                "an overflow meter"
                if cfg.above_limit is AboveLimit.OVERFLOW or number == len(levels)
                else "the next level"
            )
            found.append(
                RuleViolation(
                    shapes["level_limits"],
                    f"{where} is capped at {format_cents(cfg.limit_cents)} (its share then "
                    f"going to {above}): under {law.name} a jackpot may be limited only by "
                    "limiting the wager; give the level no limit, so that its meter grows "
                    "until a patron wins it",
                )
            )
        if cfg.mystery is not None and not allows.mystery_levels:
            found.append(
                RuleViolation(
                    shapes["mystery_levels"],
                    f"{where} is a mystery level that must hit by "
                    f"{format_cents(cfg.mystery.ceiling_cents)}: its ceiling limits the "
                    f"jackpot, and under {law.name} a jackpot may be limited only by limiting "
                    "the wager; make it a level a hand wins (no mystery floor or ceiling) "
                    "with a paytable line paying 100% of it",
                )
            )
        if cfg.reserve_bp and not allows.hidden_shares:
            found.append(
                RuleViolation(
                    shapes.get("hidden_shares", law.clauses.rate_definition),
                    f"{where} has a hidden share of {format_bp(cfg.reserve_bp)}: {law.name} "
                    "does not allow one; give the level no hidden share",
                )
            )
    return found


def rate_problem(levels: Sequence[LevelConfig], *, law: Terms) -> RuleViolation | None:
    """The pool's rate of progression against the jurisdiction's bounds, as it reads the rate.

    Where hidden shares count (``Allows.hidden_share_in_rate``) the rate is every level's
    shown and hidden share together. Where they do not (Indiana, 68 IAC 10-1-1.1(b): the rate
    is what the jackpot increases by for each credit wagered), the bounds of (c) apply to the
    shown shares alone; a hidden share funds the next reset, and with the shown shares it may
    not take more than the whole wager (money beyond the wager is not the patrons')."""
    low, high = law.numbers.min_rate_bp, law.numbers.max_rate_bp
    counts_hidden = law.allows.hidden_share_in_rate
    rate = rate_of_progression_bp(levels, counts_hidden=counts_hidden)
    hidden = sum(cfg.reserve_bp for cfg in levels)
    try:
        check_rate_of_progression(rate, low=low, high=high, clause=law.clauses.rate)
    except RuleViolation as exc:
        if len(levels) == 1 and not hidden:
            return exc
        if counts_hidden:
            return RuleViolation(
                law.clauses.rate,
                f"{exc.message}: the rate of progression is every level's shown and hidden "
                f"share together ({_shares(levels)})",
            )
        fix = (
            f"raise the shown shares to at least {format_bp(low)} together"
            if rate < low
            else f"lower the shown shares to at most {format_bp(high)} together"
        )
        return RuleViolation(
            law.clauses.shapes.get("hidden_share_in_rate", law.clauses.rate),
            f"{exc.message}: under {law.name} the rate of progression is what the jackpots a "
            f"patron can win grow by, the levels' shown shares ({_shares(levels)}); a hidden "
            f"share funds the next reset and does not count; {fix}",
        )
    if not counts_hidden and rate + hidden > high:
        return RuleViolation(
            law.clauses.shapes.get("hidden_share_in_rate", law.clauses.rate),
            f"the levels take {format_bp(rate + hidden)} of every wager ({_shares(levels)}), "
            f"more than {format_bp(high)}: what the hidden shares take beyond the wager is not "
            f"the patrons' money; lower the hidden shares to at most {format_bp(high - rate)} "
            "together",
        )
    return None


def check_take(levels: Sequence[LevelConfig]) -> int:
    """What a pool takes of every wager (every share, shown and hidden) within the bounds of
    68 IAC 10-1-1.1(c): true of every pool any jurisdiction here allows (under Indiana the
    shown shares reach the minimum and all of them stay within the wager), so a floor file is
    held to it when it is read, before the database says which of its links are new and the
    law in force judges those (``check_pool``)."""
    from controller.core.reducer.levels import pool_rate_bp

    take = pool_rate_bp(levels)
    try:
        return check_rate_of_progression(take)
    except RuleViolation as exc:
        if len(levels) == 1 and not levels[0].reserve_bp:
            raise
        raise RuleViolation(
            RATE_CLAUSE,
            f"{exc.message}: the levels take every shown and hidden share together "
            f"({_shares(levels)})",
        ) from None


def check_levels_rate(levels: Sequence[LevelConfig], *, law: Terms) -> int:
    """The pool's rate of progression within the jurisdiction's bounds (``rate_problem``);
    returns it."""
    problem = rate_problem(levels, law=law)
    if problem is not None:
        raise problem
    return rate_of_progression_bp(levels, counts_hidden=law.allows.hidden_share_in_rate)


def pool_problems(levels: Sequence[LevelConfig], *, law: Terms) -> list[RuleViolation]:
    """What the jurisdiction finds wrong with a pool's levels: every shape it does not allow,
    then its rate of progression; empty for a lawful pool (and for a fixed-pay link)."""
    if not levels:
        return []
    found = shape_problems(levels, law=law)
    rate = rate_problem(levels, law=law)
    return found + ([] if rate is None else [rate])


def standing_problems(
    levels: Sequence[LevelConfig],
    *,
    law: Terms,
    paytables: Sequence[Paytable] = (),
) -> list[RuleViolation]:
    """A link already in the database, made before or under another jurisdiction, against
    the law in force: each problem with its clause and how to bring the link into line (a
    levels change: a submission of all its levels, applied at its next jackpot reset; a
    paytable change for a paytable of a game whose pays the law fixes). The link is never
    changed by the controller itself."""
    found = [
        RuleViolation(
            p.clause,
            f"{p.message}; to bring the link into line, file a levels change (a submission of "
            "all its levels) that does so: once approved it applies at the link's next jackpot "
            "reset",
        )
        for p in pool_problems(levels, law=law)
    ]
    for paytable in paytables:
        for p in fixed_pays.fixed_pay_problems(paytable.game, levels, paytable, law=law):
            how = (
                "open a fixed-pay link of the paytable in its place (a levels change keeps the "
                "number of levels)"
                if "mystery level" in p.message
                else "file a paytable change that does so: once approved it takes the paytable's "
                "place from its effective date"
            )
            found.append(
                RuleViolation(p.clause, f"{p.message}; to bring the link into line, {how}")
            )
    return found


def check_pool_lines(game: Game, levels: Sequence[LevelConfig], paytable: Paytable) -> None:
    """What a pool must be for its game and paytable, whatever the jurisdiction: a fixed-pay
    link for a game of fixed pays only, no line paying a share of a meter a fixed-pay link
    has not, no line paying from a level the pool has not."""
    if not levels:
        from_meter = [line for line in paytable.lines if line.from_meter]
        if from_meter:
            raise RuleViolation(
                FIXED_PAY_CLAUSE,
                f"a fixed-pay link has no meter: the {from_meter[0].hand.label} line cannot "
                "pay a percentage of one",
            )
        return
    if fixed_pay_only(game):
        raise RuleViolation(
            FIXED_PAY_CLAUSE,
            f"the {game.label} pays fixed amounts only: its link is a fixed-pay link, "
            "with no meter and no levels",
        )
    for line in paytable.lines:
        if line.from_meter and line.level_number > len(levels):
            from controller.core.reducer.levels import LevelError

            raise LevelError(
                f"the {line.hand.label} line pays from level {line.level_number}, "
                f"the link has {len(levels)}"
            )


def check_pool(game: Game, levels: Sequence[LevelConfig], paytable: Paytable, *, law: Terms) -> int:
    """Refuse a pool its game, its paytable or the jurisdiction cannot have (its shapes, its
    rate of progression); return its rate of progression as the jurisdiction reads it (0 for a
    fixed-pay link). A game whose pays the jurisdiction fixes pays them exactly, to the hands
    they are set for (``fixed_pays``)."""
    fixed = fixed_pays.fixed_pay_problems(game, levels, paytable, law=law)
    if fixed:
        raise fixed[0]
    if levels and not fixed_pay_only(game):
        shapes = shape_problems(levels, law=law)
        if shapes:
            raise shapes[0]
        rate = check_levels_rate(levels, law=law)
    else:
        rate = 0
    check_pool_lines(game, levels, paytable)
    return rate


def check_levels_won(levels: Sequence[LevelConfig], paytables: Sequence[Paytable]) -> None:
    """Every level can be won: a mystery level by its trigger, any other by a paytable line
    paying 100 % of it. A meter no hand can win grows money no patron can ever receive (the
    Let It Ride bonus link of 10-7-5 once did), and its rate could never change (10-1-1.1(d))."""
    from controller.core.reducer.levels import LevelError

    for number, cfg in enumerate(levels, start=1):
        if cfg.mystery is not None:
            continue
        if not any(
            line.resets_meter and line.level_number == number
            for pt in paytables
            for line in pt.lines
        ):
            raise LevelError(
                f"level {number} ({cfg.name}) can never be won: no paytable line pays 100% of it "
                f"(a meter no hand can win is money no patron can receive; {RATE_CLAUSE})"
            )


def check_one_meter_change(
    *, link_id: str, fixed_pay: bool, one_meter: bool, levels: int, what: str
) -> None:
    """A rate or reset-amount change on its own is for a link of one meter. A fixed-pay link
    has neither (``FIXED_PAY_CLAUSE``); a link of levels changes them all together, by one
    submission of its levels, at the link's next jackpot (10-1-1.1(d) locks the link's rate)."""
    if fixed_pay:
        raise RuleViolation(
            FIXED_PAY_CLAUSE,
            f"link {link_id} is a fixed-pay link: it has no {what}, and it can never change",
        )
    if not one_meter:
        shape = f"{levels} levels" if levels > 1 else "a hidden share or an overflow meter"
        raise RuleViolation(
            RATE_LOCK_CLAUSE,
            f"link {link_id} has {shape}: its {what} changes with a submission of all its "
            "levels, applied at the link's next jackpot reset",
        )


# How a packet says what the rate of progression of a pool is, under each reading.
HIDDEN_SHARES_COUNTED = (
    "the hidden shares (each level's reserve, which funds its next reset) are part of the "
    "rate of progression: the rate is every level's shown and hidden share together"
)
HIDDEN_SHARES_NOT_COUNTED = (
    "the rate of progression is what the jackpots a patron can win grow by for each credit "
    "wagered: the levels' shown shares; a hidden share (a level's reserve) funds its next "
    "reset and is not part of it"
)


def rate_reading(law: Terms | None) -> tuple[str, str]:
    """What a packet says the rate of progression of a pool is under ``law``, and the clause
    it cites (None: the reading of packets made before jurisdictions, hidden shares counted)."""
    if law is None:
        return HIDDEN_SHARES_COUNTED, RATE_CLAUSE
    if law.allows.hidden_share_in_rate:
        return HIDDEN_SHARES_COUNTED, law.clauses.rate
    return HIDDEN_SHARES_NOT_COUNTED, f"{law.clauses.rate_definition}, {law.clauses.rate}"
