"""Whether a link already in the database keeps the law the installation runs under.

A link made before a rule was enforced, or under another jurisdiction setting, is never
changed by the controller: its history, meters, levels and paytables stay as they are, and it keeps
playing (its levels change only by a submission, applied at its next jackpot reset, so a link
stopped would never reach the reset that brings it into line, and the patrons' money on its
meters would wait for nobody). What the law finds wrong with it is reported instead, with
the clause and how to bring it into line: on ``/readyz`` (as a problem), in ``progressive
links list`` and ``links show``.
"""

from __future__ import annotations

from controller.core.reducer import LinkState
from controller.rules import RuleViolation
from controller.rules.jurisdictions import Jurisdiction

__all__ = ["not_lawful", "standing_problems"]


def standing_problems(state: LinkState) -> list[RuleViolation]:
    """What the link's law finds wrong with its levels and its games' paytables as they
    stand (a fixed-pay side bet paying other amounts than the law's, envy lines); empty when
    lawful."""
    law = state.law
    if not isinstance(law, Jurisdiction):
        return []
    return law.standing_problems(state.level_configs, [state.paytable_for(g) for g in state.games])


def not_lawful(state: LinkState) -> str | None:
    """The link's problems under its law as one line (None: lawful)."""
    found = standing_problems(state)
    if not found:
        return None
    return f"not lawful under {state.law.name}: " + "; ".join(str(p) for p in found)
