"""Rules broken on purpose, for the clause map's mutation check (``test_rulebook.py``).

A check that refuses is broken generically (``tests.mutation_plugin.accept``: it accepts
everything). What does not refuse is broken here, each as the subsection it serves would
see it stop working: a contribution that adds nothing, a display that never shows the won
amount, a judge that finds no hand. Each factory takes the original and returns what
replaces it.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable
from typing import Any

from controller.core.hands import JOKER, HandCategory, evaluate

Fn = Callable[..., Any]


def zero(original: int) -> int:
    """A number of years (or any bound) lowered to nothing."""
    return 0


def gives_zero(original: Fn) -> Fn:
    """A computed amount that is always nothing (a contribution that adds nothing)."""

    def mutant(*args: Any, **kwargs: Any) -> int:
        return 0

    return mutant


def never(original: Fn) -> Fn:
    """A predicate that never holds (nothing needs a signature, nothing is fixed-pay)."""

    def mutant(*args: Any, **kwargs: Any) -> bool:
        return False

    return mutant


def finds_nothing(original: Fn) -> Fn:
    """A judge that finds no hand, a verifier that finds no problem: always None."""

    def mutant(*args: Any, **kwargs: Any) -> None:
        return None

    return mutant


def does_nothing(original: Fn) -> Fn:
    """A step of the engine that is skipped (the meter not reset after a jackpot)."""
    return finds_nothing(original)


def records_nothing(original: Fn) -> Fn:
    """Sealing that keeps no entry of the meter's history."""

    def mutant(*args: Any, **kwargs: Any) -> list[Any]:
        return []

    return mutant


def counts_hidden(original: Fn) -> Fn:
    """A rate of progression that counts the hidden shares, whatever the jurisdiction says."""

    @functools.wraps(original)
    def mutant(levels: Any, *, counts_hidden: bool) -> Any:
        return original(levels, counts_hidden=True)

    return mutant  # type: ignore[return-value]


def no_limit(original: Fn) -> Fn:
    """A bound that lets any count through (the most credits a table can take)."""

    def mutant(*args: Any, **kwargs: Any) -> int:
        return 2**62

    return mutant


def any_hand_pays(original: Fn) -> Fn:
    """A game whose paytable may pay any hand, below its ranking's lowest too."""

    def mutant(self: Any, hand: HandCategory) -> bool:
        return True

    return mutant


def pays_a_cent_more(original: Fn) -> Fn:
    """A default paytable whose every fixed amount is off by a cent."""

    @functools.wraps(original)
    def mutant(game: Any) -> Any:
        paytable = original(game)
        lines = tuple(
            line
            if line.fixed_cents is None
            else dataclasses.replace(line, fixed_cents=line.fixed_cents + 1)
            for line in paytable.lines
        )
        return dataclasses.replace(paytable, lines=lines)

    return mutant


def joker_wild(original: Fn) -> Fn:
    """The Pai Gow joker standing for any card, not only an ace or a card completing a
    straight or a flush."""

    @functools.wraps(original)
    def mutant(codes: Any) -> HandCategory:
        if JOKER not in codes:
            return HandCategory(original(codes))
        naturals = [code for code in codes if code != JOKER]
        return max(
            HandCategory(evaluate((*naturals, stand_in)).category)
            for stand_in in range(52)
            if stand_in not in naturals
        )

    return mutant


def without_progressive_games(original: Fn) -> Fn:
    """A packet without 10-1-1.1(e)'s games, locations, rates and reset amounts."""

    @functools.wraps(original)
    def mutant(facts: Any) -> dict[str, Any]:
        packet = dict(original(facts))
        packet.pop("progressive_games", None)
        return packet

    return mutant


def ignores_the_bound(original: Fn) -> Fn:
    """A paytable check that holds the jackpot against the default bound, whatever bound the
    installation set."""

    @functools.wraps(original)
    def mutant(game: Any, lines: Any, **_: Any) -> Any:
        return original(game, lines)

    return mutant


# --- the floor display (68 IAC 10-6-5(e)-(i)) -------------------------------------------------


def _frames(original: Fn, change: Callable[[Any, Any], Any]) -> Fn:
    @functools.wraps(original)
    def mutant(state: Any, **kwargs: Any) -> Any:
        return change(state, original(state, **kwargs))

    return mutant


def shows_the_reset_amount(original: Fn) -> Fn:
    """A display that shows the reset amount, not the meter: never the current payoff."""
    return _frames(
        original,
        lambda state, f: f._replace(amount_cents=state.reset_cents) if f.mode == "live" else f,
    )


def shows_nothing(original: Fn) -> Fn:
    """A display that shows no amount while no win is announced."""
    return _frames(original, lambda state, f: f._replace(amount_cents=0) if f.mode == "live" else f)


def won_amount_not_shown(original: Fn) -> Fn:
    """A display that goes on showing the meter when a jackpot is won."""
    return _frames(
        original,
        lambda state, f: (
            f._replace(amount_cents=state.meter_cents, mode="live", win=None)
            if f.mode == "won"
            else f
        ),
    )


def reset_amount_not_shown(original: Fn) -> Fn:
    """A display that keeps showing the won amount and never the reset amount."""
    return _frames(
        original,
        lambda state, f: (
            f._replace(amount_cents=f.win.won_cents, mode="won") if f.mode == "reset" else f
        ),
    )


def announces_nothing(original: Fn) -> Fn:
    """No win is ever announced."""

    def mutant(*args: Any, **kwargs: Any) -> tuple[Any, ...]:
        return ()

    return mutant


def announces_the_last_only(original: Fn) -> Fn:
    """Wins close together: only the last one is announced, the others dropped."""

    @functools.wraps(original)
    def mutant(wins: Any, **kwargs: Any) -> tuple[Any, ...]:
        last = max(wins, key=lambda w: w[0].at_us, default=None)
        return original([] if last is None else [last], **kwargs)

    return mutant
