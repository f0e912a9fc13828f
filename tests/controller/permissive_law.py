"""A jurisdiction for tests only that allows every shape a pool can have (level limits with
overflow or the next level, mystery levels, hidden shares counted in the rate of progression,
envy lines, links across properties, fixed-pay side bets paying what was filed), with Indiana's figures and clauses otherwise: the
shapes Indiana forbids (68 IAC 10-1-5(d), 10-1-1.1(b)) still work where a jurisdiction allows
them. Importing this module registers it under its key, so that ``Settings(jurisdiction=
"test-permissive")`` (and ``PROGRESSIVE_JURISDICTION`` in a process that imported it) finds it.
"""

from __future__ import annotations

import dataclasses

from controller.rules.jurisdictions import INDIANA, JURISDICTIONS, Jurisdiction
from controller.rules.terms import Allows
from controller.storage.store import LedgerStore

KEY = "test-permissive"

PERMISSIVE: Jurisdiction = dataclasses.replace(
    INDIANA,
    key=KEY,
    name="Test (everything allowed)",
    allows=Allows(
        level_limits=True,
        mystery_levels=True,
        hidden_shares=True,
        hidden_share_in_rate=True,
        envy_lines=True,
        links_across_properties=True,
    ),
    # No amounts a fixed-pay side bet must pay: a paytable pays what was filed.
    fixed_pays={},
)

JURISDICTIONS.setdefault(KEY.replace("-", "_"), PERMISSIVE)


def permissive(store: LedgerStore) -> LedgerStore:
    """``store`` with its links under the permissive law (a test of a shape Indiana forbids)."""
    store.law = PERMISSIVE
    return store
