"""The amounts a fixed-pay side bet must pay where a jurisdiction sets them, and whom it pays.

Indiana (68 IAC 10-7-5, 10-12-3) says what each winning bonus hand "shall receive" or "must be
paid": a paytable for the game must be exactly those lines, each its fixed amount, no more and
no fewer (``Jurisdiction.fixed_pays``). And it says whom: (10-7-5(d)) a Let It Ride bonus hand
of at least two pair, (10-12-3(e)) a Super Sevens patron whose first card is a seven. An envy
line pays the other seats whatever their hand, and a mystery level pays the seat whose wager
reaches its trigger whatever its cards: neither is allowed for a game whose pays the
jurisdiction fixes, unless the jurisdiction allows envy lines (``Allows.envy_lines``) and
mystery levels (``Allows.mystery_levels``). A game the jurisdiction does not name pays what
its filed paytable says (New Jersey names none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from controller.core.money import format_cents
from controller.rules.violation import RuleViolation

if TYPE_CHECKING:
    from controller.core.games import Game, Paytable, PaytableLine
    from controller.core.reducer.levels import LevelConfig
    from controller.rules.terms import Terms

# 68 IAC 10-7-5(e): "Winning bonus hands shall be paid the following amounts", $10,000 for a
# royal flush down to $4 for two pair.
LET_IT_RIDE_AMOUNTS_CLAUSE = "68 IAC 10-7-5(e)"
# 68 IAC 10-7-5(d): "The bonus hand will not be paid unless the player obtains a hand
# containing at least two (2) pairs": no envy line, which pays seats whatever their hand.
LET_IT_RIDE_WINNERS_CLAUSE = "68 IAC 10-7-5(d)"
# 68 IAC 10-12-3(f)(1)-(5): what a patron "must be paid", $3 for a first seven up to $5,000
# for three suited sevens.
SUPER_SEVENS_AMOUNTS_CLAUSE = "68 IAC 10-12-3(f)"
# 68 IAC 10-12-3(e): "The patron must receive a seven (7) as their first card to win any Super
# Sevens payout": no envy line and no mystery level, which pay patrons whatever their cards.
SUPER_SEVENS_WINNERS_CLAUSE = "68 IAC 10-12-3(e)"


def _line_text(line: PaytableLine) -> str:
    if line.fixed_cents is not None:
        return format_cents(line.fixed_cents)
    return line.describe().partition(": ")[2]


def _lines(paytable: Paytable) -> str:
    return ", ".join(
        f"{line.hand.label} {format_cents(line.fixed_cents or 0)}" for line in paytable.lines
    )


def fixed_pay_problems(
    game: Game,
    levels: Sequence[LevelConfig],
    paytable: Paytable,
    *,
    law: Terms,
) -> list[RuleViolation]:
    """What the jurisdiction finds wrong with a paytable (and the pool it pays from) of a
    game whose pays it fixes: an amount other than the text's, a line missing or one the text
    has not, an envy line, a mystery level; each with its clause and how to bring it into
    line. Empty for a game the jurisdiction does not name."""
    required = law.fixed_pays.get(game)
    if required is None:
        return []
    amounts = law.clauses.fixed_amounts.get(game, law.clauses.fixed_pay)
    winners = law.clauses.fixed_winners.get(game, amounts)
    found: list[RuleViolation] = []
    fix = f"file the {game.label} paytable {law.name} sets ({_lines(required)})"
    missing = [want for want in required.lines if paytable.line_for(want.hand) is None]
    if missing:
        found.append(
            RuleViolation(
                amounts,
                f"the {game.label} paytable has no line for "
                + ", ".join(
                    f"{want.hand.label} ({format_cents(want.fixed_cents or 0)})" for want in missing
                )
                + f": under {law.name} each of these hands is paid its amount; {fix}",
            )
        )
    for want in required.lines:
        line = paytable.line_for(want.hand)
        if line is not None and (line.fixed_cents != want.fixed_cents or line.from_meter):
            found.append(
                RuleViolation(
                    amounts,
                    f"the {game.label} paytable pays a {want.hand.label} {_line_text(line)}: "
                    f"under {law.name} it is paid {format_cents(want.fixed_cents or 0)}, no "
                    f"other amount; {fix}",
                )
            )
    for line in paytable.lines:
        if required.line_for(line.hand) is None:
            found.append(
                RuleViolation(
                    amounts,
                    f"the {game.label} paytable pays a {line.hand.label}, a hand {law.name} "
                    f"does not pay; {fix}",
                )
            )
    if not law.allows.envy_lines:
        for line in paytable.lines:
            if line.envy_cents is not None:
                found.append(
                    RuleViolation(
                        winners,
                        f"the {game.label} {line.hand.label} line pays "
                        f"{format_cents(line.envy_cents)} envy to every other seat, whatever "
                        f"its hand: under {law.name} the {game.label} pays only the winning "
                        "hands its amounts are set for; take the envy amount off the line",
                    )
                )
    if not law.allows.mystery_levels:
        for number, cfg in enumerate(levels, start=1):
            if cfg.mystery is not None:
                found.append(
                    RuleViolation(
                        winners,
                        f"level {number} ({cfg.name}) is a mystery level: it pays the seat "
                        "whose wager reaches its trigger, whatever its cards, and under "
                        f"{law.name} the {game.label} pays only the winning hands its amounts "
                        f"are set for; make the link a fixed-pay link of the {game.label} "
                        "paytable, with no level",
                    )
                )
    return found
