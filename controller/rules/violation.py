"""The refusal every rule of the rulebook raises."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from controller.refusal import Refused


class RuleViolation(Refused):
    """A request the rules forbid. ``clause`` names the rule, for people and for logs.

    ``subject`` names what of the request the refusal is about (a proposal's field, such as
    ``rate_bp``), when the caller that checked it knows; ``None``: the request as a whole.
    The rules themselves do not know how a request is laid out, so callers name it with
    ``about``.
    """

    def __init__(self, clause: str, message: str, *, subject: str | None = None) -> None:
        super().__init__(f"{message} ({clause})")
        self.clause = clause
        self.message = message
        self.subject = subject


@contextmanager
def about(subject: str | None) -> Iterator[None]:
    """A refusal raised inside is about ``subject``, unless one nearer the rule named it."""
    try:
        yield
    except RuleViolation as exc:
        if exc.subject is None:
            exc.subject = subject
        raise
