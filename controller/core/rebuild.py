"""A link's pool rebuilt from its sealed history alone, for a recovery (house policy adopted
from NY 5321.18, NJ 13:69E-1.39B: an inoperable controller returns to its prior state through
a recorded recovery).

From the entries, in order: the levels' configuration (the ``LINK_OPENED`` details'
``levels``, then each ``LEVELS_CHANGED``'s ``to``), each meter's running value (the splits,
``controller.core.meter_trail``), each level's wins (its ``JACKPOT_RESET`` entries), the
link's own paytable and the other games' (``LINK_OPENED`` ``paytables``, each
``PAYTABLE_CHANGED``, naming its ``game`` when it is another game's), and which game each
table deals (``LINK_OPENED`` ``games``). A mystery level's trigger is secret, never in the
history: it comes back unarmed, with no draw; the recovery arms it with a fresh one.

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.core.games import Game, Paytable, make_paytable
from controller.core.meter_trail import MeterTrail, TrailState
from controller.core.reducer.conservation import entry_details
from controller.core.reducer.levels import (
    FIRST,
    OVERFLOW,
    RESERVE,
    LevelConfig,
    LevelState,
    is_single_meter,
    level_key,
    levels_from_dicts,
    meters_of,
    shares_of,
)
from controller.core.reducer.state import EntryKind

_OPENED = str(EntryKind.LINK_OPENED)
_LEVELS = str(EntryKind.LEVELS_CHANGED)
_PAYTABLE = str(EntryKind.PAYTABLE_CHANGED)
_RESET = str(EntryKind.JACKPOT_RESET)
_READ = frozenset({_OPENED, _LEVELS, _PAYTABLE, _RESET})


class RebuildError(ValueError):
    """The history does not say consistently how its meters moved."""


@dataclass(slots=True)
class RebuiltPool:
    """What the history says of a link's pool; None where it no longer says (a retention
    purge removed the entry that did)."""

    configs: tuple[LevelConfig, ...] | None = None
    meters: dict[str, int] | None = None  # None: one meter, the chain's own
    wins: dict[str, int] = field(default_factory=dict)
    # 68 IAC 10-1-1.1(d), by level: won since its share was last set (a level the history no
    # longer says of keeps ``fallback``'s).
    won_since_share_set: dict[str, bool] = field(default_factory=dict)
    paytable: list[dict[str, Any]] | None = None  # the link's own game's lines
    paytables: dict[Game, Paytable] = field(default_factory=dict)  # the other games'
    games: dict[str, Game] = field(default_factory=dict)  # table -> game, when mixed
    # The meters are known only in part: a purge from before meters were kept left the
    # history without where they stood; a meter it never moved since is not in ``meters``.
    partial: bool = False

    def levels(self, fallback: Sequence[LevelState]) -> tuple[LevelState, ...] | None:
        """The levels rebuilt (mystery levels unarmed, no draws) on ``configs`` or, when the
        history no longer has them, ``fallback``'s; None for a link of one meter (its level
        mirrors the link's meter, rate and reset amount). A meter the history no longer
        says (``partial``) and wins a purge removed the resets of are ``fallback``'s."""
        configs = self.configs if self.configs is not None else tuple(lv.config for lv in fallback)
        if not configs:
            return ()
        if is_single_meter(configs) and not any(
            v for k, v in (self.meters or {}).items() if k != FIRST
        ):
            return None
        meters = dict(self.meters or {})
        if self.partial:
            for k, v in meters_of(fallback).items():
                meters.setdefault(k, v)
        old = {level_key(i): lv.wins for i, lv in enumerate(fallback)}
        unlocked = {level_key(i): lv.won_since_share_set for i, lv in enumerate(fallback)}
        unlocked.update(self.won_since_share_set)
        return tuple(
            LevelState(
                config=cfg,
                meter_units=meters.get(level_key(i), 0),
                reserve_units=meters.get(level_key(i) + RESERVE, 0),
                overflow_units=meters.get(level_key(i) + OVERFLOW, 0),
                wins=max(self.wins.get(level_key(i), 0), old.get(level_key(i), 0)),
                won_since_share_set=unlocked.get(level_key(i), False),
            )
            for i, cfg in enumerate(configs)
        )


class PoolRebuilder:
    """Fed a link's entries in order (rows in ``ledger.ENTRY_COLUMNS`` order), from its
    first or, ``purged``, from where a purge's manifest (``start``) left its meters (None:
    a purge that kept none)."""

    def __init__(
        self,
        link_id: str,
        *,
        start: TrailState | None = None,
        total: int = 0,
        purged: bool = False,
    ) -> None:
        known = start if start is not None or purged else TrailState()
        self.trail = MeterTrail(link_id, known, total=total)
        self.pool = RebuiltPool(partial=known is None)
        self.total = total
        # The levels whose shares the previous entry changed: the reset right after it is the
        # one that applied the change, a win of the shares before it, which unlocks nothing.
        self._just_changed: set[str] = set()

    def feed(self, row: Sequence[Any]) -> None:
        seq, kind, before, delta, details = row[1], row[3], row[4], row[5], row[12]
        self.total = before + delta
        broken = self.trail.feed(seq, kind, before, delta, details)
        if broken is not None:
            raise RebuildError(f"entry {seq}: {broken}")
        just_changed, self._just_changed = self._just_changed, set()
        if kind not in _READ:
            return
        d = entry_details(details)
        pool = self.pool
        if kind == _OPENED:
            if "levels" in d:
                pool.configs = levels_from_dicts(d["levels"])
            pool.paytable = list(d.get("paytable") or []) or None
            pool.paytables = {
                Game(g): make_paytable(Game(g), lines)
                for g, lines in d.get("paytables", {}).items()
            }
            pool.games = {t: Game(g) for t, g in d.get("games", {}).items()}
        elif kind == _LEVELS:
            pool.configs = levels_from_dicts(d["to"])
            before = shares_of(levels_from_dicts(d.get("from", [])))
            changed = {
                level_key(i)
                for i, share in enumerate(shares_of(pool.configs))
                if i >= len(before) or before[i] != share
            }
            for key in changed:
                pool.won_since_share_set[key] = False
            self._just_changed = changed
        elif kind == _PAYTABLE:
            if "game" in d:
                game = Game(d["game"])
                pool.paytables[game] = make_paytable(game, d["paytable"])
            else:
                pool.paytable = list(d["paytable"])
        elif kind == _RESET:
            key = str(d.get("level", FIRST))
            pool.wins[key] = pool.wins.get(key, 0) + 1
            if key not in just_changed:
                pool.won_since_share_set[key] = True

    def result(self) -> RebuiltPool:
        meters = self.trail.meters
        self.pool.meters = None if meters is None else dict(meters)
        return self.pool


def rebuild_pool(
    link_id: str,
    rows: Iterable[Sequence[Any]],
    *,
    start: TrailState | None = None,
    total: int = 0,
    purged: bool = False,
) -> RebuiltPool:
    """``PoolRebuilder`` over ``rows`` at once."""
    r = PoolRebuilder(link_id, start=start, total=total, purged=purged)
    for row in rows:
        r.feed(row)
    return r.result()
