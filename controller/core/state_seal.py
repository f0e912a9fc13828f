"""Seals over the state a controller resumes a link from.

The meter history is sealed entry by entry (``controller.core.ledger``), but a controller resumes
a link from rows beside it: each table's counters, baseline, round counter, last hit and
flags, and the link's parameters, meter, paytable and chain head. Someone who can write to
the database without the ledger key could lower a table's stored credits and have the next
reading credited as if it had been wagered. So those rows are sealed too, with the same key
under a personalisation of their own (a state seal can never pass for an entry's seal):

* a table's seal covers its link, its configuration (denomination, seats, round limits) and
  every field of its counter row;
* a link's seal covers its parameters, meter, paytable (the lines, not the row id), hit
  policy, flags, last win, armed change, chain head, and the seals of its tables, so an older
  copy of one table row put back (its own seal intact) still breaks the link's; and, where
  the row has them, its levels (with the mystery draws) and its other games' paytables.

A mismatch makes the link inoperable until it is recovered (house policy adopted from NY
5321.18, NJ 13:69E-1.39B: a progressive controller whose configuration is lost or incorrect
stops, and returns to its prior state only through a recorded recovery).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

from controller.core.ledger import keyed
from controller.core.reducer import TableConfig

PERSON = b"progressive-st1"  # the chain's entries use b"progressive-v1"

# ledger_meta row written when the state is first sealed: from then on a row without a seal
# is not an old row waiting for one but a row someone changed.
SEALED_SINCE = "state_sealed_since"


# ``json.dumps(payload, sort_keys=True, separators=(",", ":"))``, the encoder made once (a
# table's row is sealed at every poll).
_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def _mac(key: bytes, payload: Any) -> str:
    return _mac_text(key, _ENCODER.encode(payload))


def _mac_text(key: bytes, text: str) -> str:
    h = keyed(key, PERSON).copy()
    h.update(text.encode())
    return str(h.hexdigest())


@lru_cache(maxsize=4096)
def _table_frame(link_id: str, config: TableConfig) -> tuple[str, str]:
    """The text of a table's sealed list before and after its counters: what ``_mac`` makes of
    ``["table", link_id, ..., counters(, game)]`` is ``head + counters + tail``, the same
    bytes, with the parts that never change between polls made once."""
    fixed: list[Any] = [
        "table",
        link_id,
        config.table_id,
        config.denomination_cents,
        config.seats,
        config.max_credits_per_seat_round,
        config.min_round_us,
    ]
    tail = "]" if config.game is None else "," + _ENCODER.encode(str(config.game)) + "]"
    return _ENCODER.encode(fixed)[:-1] + ",", tail


def table_seal(
    key: bytes, *, link_id: str, config: TableConfig, counters: Mapping[str, Any]
) -> str:
    """The seal of one table's counter row (every field but ``seal``) with its configuration
    (the game dealt at it only when it names one: a table of a mixed-game link; every seal
    made before tables named games still verifies)."""
    fields = (
        counters if "seal" not in counters else {k: v for k, v in counters.items() if k != "seal"}
    )
    # The seal of ["table", link_id, table_id, denomination, seats, the two round limits,
    # fields] (with the game last when the table names one), as _mac makes it.
    head, tail = _table_frame(link_id, config)
    return _mac_text(key, head + _ENCODER.encode(fields) + tail)


def link_seal(
    key: bytes, *, fields: Mapping[str, Any], tables: Sequence[tuple[str, str | None]]
) -> str:
    """The seal of a link row (``fields``: every sealed field) and its tables' seals."""
    return _mac(key, ["link", dict(fields), sorted(tables)])
