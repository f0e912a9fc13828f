"""The jurisdictions the controller knows, by key. The installation names its own
(``PROGRESSIVE_JURISDICTION``, default ``indiana``); every link plays under it."""

from __future__ import annotations

from controller.rules.jurisdictions.base import Jurisdiction
from controller.rules.jurisdictions.indiana import INDIANA
from controller.rules.jurisdictions.new_jersey import NEW_JERSEY

JURISDICTIONS: dict[str, Jurisdiction] = {j.key: j for j in (INDIANA, NEW_JERSEY)}
DEFAULT_JURISDICTION = INDIANA.key


def jurisdiction(key: str) -> Jurisdiction:
    """The jurisdiction named ``key`` (``indiana``, ``new-jersey`` or ``new_jersey``)."""
    found = JURISDICTIONS.get(key.strip().lower().replace("-", "_"))
    if found is None:
        raise KeyError(
            f"unknown jurisdiction {key!r}; the controller knows "
            + ", ".join(sorted(JURISDICTIONS))
        )
    return found


__all__ = [
    "DEFAULT_JURISDICTION",
    "INDIANA",
    "JURISDICTIONS",
    "NEW_JERSEY",
    "Jurisdiction",
    "jurisdiction",
]
