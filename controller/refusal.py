"""A request refused: said to whoever asked, and nothing changed.

Every refusal of the controller is one of these, whatever part refuses it (the money, the
rules, the records, the accounts...), so that each boundary answers them in one place: the
web by the refusal's type (``app.web``), a command with its message (``app.cli.common``). The
type says what kind of refusal it is, never the message, which is for a person to read:

* ``NotFound``: what the request names is not there;
* ``Conflict``: the state of things refuses it (done already, changed meanwhile, held);
* ``Invalid``: the input itself is refused, as given (an amount, a time, a password...);
* ``Refused`` itself: anything else refused, such as a rule that forbids the request.

A fault is none of these: a database out of reach, a key that cannot be read, a broken seal
are raised as what they are, and said as faults.

This module stands below every other part of the controller and imports nothing of it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["Conflict", "Invalid", "NotFound", "Refused", "at"]


class Refused(ValueError):
    """A request refused: said to whoever asked, nothing changed. The message says why."""


class NotFound(Refused):
    """What the request names is not there; the message names it."""


class Conflict(Refused):
    """Refused by the state of things: it was done already, it changed meanwhile, or what the
    request would act on does not allow it now."""


class Invalid(Refused):
    """Input refused as it was given. ``where`` names the part of the request to blame, when
    known (``at``)."""

    where: str | None = None


@contextmanager
def at(where: str) -> Iterator[None]:
    """Input refused inside is refused at ``where`` of the request (``body.password``); one
    that names its own part (a period's ``until``) is refused at that part of ``where``
    (``query.until``)."""
    try:
        yield
    except Invalid as exc:
        exc.where = where if exc.where is None else f"{where}.{exc.where}"
        raise
