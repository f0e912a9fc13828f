"""The refusal every rule of the rulebook raises."""

from __future__ import annotations


class RuleViolation(ValueError):
    """A request the rules forbid. ``clause`` names the rule, for people and for logs."""

    def __init__(self, clause: str, message: str) -> None:
        super().__init__(f"{message} ({clause})")
        self.clause = clause
        self.message = message
