"""The levels of a link's pool: their configuration, their meters, and how one wager's
contribution is shared among them.

A link is a pool of one or more levels (Mini, Minor, Major, Grand on most signs). Each level
has its own meter, reset amount and share of the rate; optionally a hidden (reserve) share
that funds its next reset, a limit with what happens above it (the excess goes to the
level's overflow meter, or on to the next level in the list), and a mystery trigger it must
hit by. A link with no level at all is a fixed-pay bonus link: it has no meter.

Every meter of a pool has a key: ``L1`` for the first level's meter, ``L1.reserve`` and
``L1.overflow`` for its reserve and overflow meters, ``L2`` for the second level, and so on.
The link's ``meter_units`` is the pool's total, the sum of all its meters; an entry of the
history moves that total by ``delta_units`` and, on a link with more than the one meter
``L1``, says in its sealed details how each meter moved (``"meters": {key: [before, delta]}``).

Pure: no I/O, no randomness. A mystery level's triggers are drawn by the caller from a
cryptographic source and handed in as ``MysteryDraw`` (see ``controller.runtime``).
"""

from __future__ import annotations

import enum
import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from controller.core.money import UNITS_PER_CENT, format_bp, format_cents
from controller.refusal import Invalid

FIRST = "L1"
RESERVE = ".reserve"
OVERFLOW = ".overflow"
_KEY = re.compile(r"^L([1-9][0-9]?)(\.reserve|\.overflow)?$")
MAX_LEVELS = 10


class LevelError(Invalid):
    """A level configuration the controller refuses; the message names the level."""


class AboveLimit(enum.StrEnum):
    """Where a level's share goes once its meter stands at its limit (NJ 13:69E-1.39A)."""

    OVERFLOW = "overflow"  # to the level's overflow meter, moved in at its next reset
    NEXT_LEVEL = "next_level"  # on to the next level of the list (the last: its overflow)


@dataclass(frozen=True, slots=True, kw_only=True)
class Mystery:
    """A must-hit-by level: at each reset a trigger is drawn uniformly from ``floor_cents``
    to ``ceiling_cents`` (both included); the wager whose contribution takes the meter to it
    wins the level."""

    floor_cents: int
    ceiling_cents: int

    def to_dict(self) -> dict[str, int]:
        return {"floor_cents": self.floor_cents, "ceiling_cents": self.ceiling_cents}


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelConfig:
    name: str
    reset_cents: int
    rate_bp: int  # the shown share: basis points of every wager added to the level's meter
    reserve_bp: int = 0  # the hidden share, to the reserve that funds the next reset
    limit_cents: int | None = None
    above_limit: AboveLimit = AboveLimit.OVERFLOW
    mystery: Mystery | None = None

    @property
    def total_bp(self) -> int:
        return self.rate_bp + self.reserve_bp

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "reset_cents": self.reset_cents,
            "rate_bp": self.rate_bp,
        }
        if self.reserve_bp:
            out["reserve_bp"] = self.reserve_bp
        if self.limit_cents is not None:
            out["limit_cents"] = self.limit_cents
            out["above_limit"] = str(self.above_limit)
        if self.mystery is not None:
            out["mystery"] = self.mystery.to_dict()
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LevelConfig:
        known = {"name", "reset_cents", "rate_bp", "reserve_bp", "limit_cents", "above_limit"}
        unknown = set(d) - known - {"mystery"}
        name = d.get("name")
        if unknown:
            raise LevelError(f"level {name!r}: unknown field(s) {sorted(unknown)}")
        mystery = d.get("mystery")
        try:
            return cls(
                name=str(d["name"]),
                reset_cents=_whole(d["reset_cents"], name, "reset_cents"),
                rate_bp=_whole(d["rate_bp"], name, "rate_bp"),
                reserve_bp=_whole(d.get("reserve_bp", 0), name, "reserve_bp"),
                limit_cents=(
                    None
                    if d.get("limit_cents") is None
                    else _whole(d["limit_cents"], name, "limit_cents")
                ),
                above_limit=AboveLimit(d.get("above_limit", AboveLimit.OVERFLOW)),
                mystery=(
                    None
                    if mystery is None
                    else Mystery(
                        floor_cents=_whole(mystery["floor_cents"], name, "floor_cents"),
                        ceiling_cents=_whole(mystery["ceiling_cents"], name, "ceiling_cents"),
                    )
                ),
            )
        except KeyError as exc:
            raise LevelError(f"level {name!r}: {exc.args[0]!r} is required") from None
        except ValueError as exc:
            if isinstance(exc, LevelError):
                raise
            raise LevelError(f"level {name!r}: {exc}") from None


def _whole(value: object, name: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise LevelError(f"level {name!r}: {field} must be a whole number, got {value!r}")
    return value


@dataclass(frozen=True, slots=True)
class MysteryDraw:
    """A mystery trigger and the secret salt its commitment is made with."""

    trigger_cents: int
    salt: str  # hex

    def commitment(self, link_id: str, key: str) -> str:
        return mystery_commitment(link_id, key, self.trigger_cents, self.salt)


def mystery_commitment(link_id: str, key: str, trigger_cents: int, salt: str) -> str:
    """SHA-256 over the link, the level, the trigger and the salt, as hex.

    Sealed into the history when the trigger is drawn and revealed with the salt when the
    level hits, so an auditor can check the trigger was fixed before play. Any tool can
    recompute it: SHA-256 of ``progressive-mystery-v1``, the link id, the level's key, the
    trigger in cents and the salt, joined by U+001F, as UTF-8.
    """
    text = f"progressive-mystery-v1\x1f{link_id}\x1f{key}\x1f{trigger_cents}\x1f{salt}"
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True, kw_only=True)
class LevelState:
    config: LevelConfig
    meter_units: int = 0
    reserve_units: int = 0
    overflow_units: int = 0
    wins: int = 0
    # 68 IAC 10-1-1.1(d), level by level: has this level's jackpot been won since its share
    # (shown and hidden) was set? Only then may its share change (a classic link's one level
    # goes by the link's ``jackpot_won_since_rate_set`` instead).
    won_since_share_set: bool = False
    # A mystery level's trigger for this accumulation (committed in the history) and the
    # draws made ready for its next resets (never shown, never in the history until used).
    armed: MysteryDraw | None = None
    draws: tuple[MysteryDraw, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "config": self.config.to_dict(),
            "meter_units": self.meter_units,
            "reserve_units": self.reserve_units,
            "overflow_units": self.overflow_units,
            "wins": self.wins,
        }
        if self.won_since_share_set:  # absent when false: levels stored before read the same
            out["won_since_share_set"] = True
        if self.armed is not None:
            out["armed"] = [self.armed.trigger_cents, self.armed.salt]
        if self.draws:
            out["draws"] = [[d.trigger_cents, d.salt] for d in self.draws]
        return out

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> LevelState:
        armed = d.get("armed")
        return cls(
            config=LevelConfig.from_dict(d["config"]),
            meter_units=int(d["meter_units"]),
            reserve_units=int(d.get("reserve_units", 0)),
            overflow_units=int(d.get("overflow_units", 0)),
            wins=int(d.get("wins", 0)),
            won_since_share_set=bool(d.get("won_since_share_set", False)),
            armed=None if armed is None else MysteryDraw(int(armed[0]), str(armed[1])),
            draws=tuple(MysteryDraw(int(t), str(s)) for t, s in d.get("draws", ())),
        )


def pool_rate_bp(levels: Iterable[LevelConfig]) -> int:
    """What a pool takes of every wager: every level's shown and hidden share together (the
    link's ``rate_bp``). Whether that is the rate of progression, or only the shown shares
    are, is the law's reading (``Law.rate_of_progression_bp``)."""
    return sum(cfg.total_bp for cfg in levels)


def shares_of(levels: Iterable[LevelConfig]) -> list[tuple[int, int]]:
    """Each level's shown and hidden share."""
    return [(cfg.rate_bp, cfg.reserve_bp) for cfg in levels]


def level_key(index: int) -> str:
    """The key of the meter of the level at ``index`` (0-based): ``L1``, ``L2``, ..."""
    return f"L{index + 1}"


def parse_key(key: str) -> tuple[int, str]:
    """``"L2.reserve"`` -> ``(1, "reserve")``; ``"L1"`` -> ``(0, "meter")``."""
    m = _KEY.match(key)
    if m is None:
        raise LevelError(f"{key!r} is not a meter of a pool (L1, L1.reserve, L1.overflow, ...)")
    return int(m.group(1)) - 1, (m.group(2) or ".meter")[1:]


def meter_label(levels: Sequence[LevelConfig], key: str) -> str:
    """A meter as people call it: ``L1`` -> ``Grand``, ``L1.reserve`` -> ``Grand reserve``,
    ``L2.overflow`` -> ``Major overflow`` (the level's number when it has no such level)."""
    index, pot = parse_key(key)
    name = levels[index].name if index < len(levels) else f"level {index + 1}"
    return name if pot == "meter" else f"{name} {pot}"


def has_overflow_meter(levels: Sequence[LevelConfig], index: int) -> bool:
    cfg = levels[index]
    if cfg.limit_cents is None:
        return False
    return cfg.above_limit is AboveLimit.OVERFLOW or index == len(levels) - 1


def meter_keys(levels: Sequence[LevelConfig]) -> tuple[str, ...]:
    """Every meter of a pool, in order."""
    keys: list[str] = []
    for i, cfg in enumerate(levels):
        k = level_key(i)
        keys.append(k)
        if cfg.reserve_bp:
            keys.append(k + RESERVE)
        if has_overflow_meter(levels, i):
            keys.append(k + OVERFLOW)
    return tuple(keys)


def is_single_meter(levels: Sequence[LevelConfig]) -> bool:
    """One level with no reserve and no overflow: the link's one meter is ``L1`` and its
    entries need not say how the meters moved (every link from before levels is one)."""
    return meter_keys(levels) == (FIRST,)


def meters_of(levels: Sequence[LevelState]) -> dict[str, int]:
    """Every meter's units, by key."""
    out: dict[str, int] = {}
    configs = [lv.config for lv in levels]
    for i, lv in enumerate(levels):
        k = level_key(i)
        out[k] = lv.meter_units
        if lv.config.reserve_bp or lv.reserve_units:
            out[k + RESERVE] = lv.reserve_units
        if has_overflow_meter(configs, i) or lv.overflow_units:
            out[k + OVERFLOW] = lv.overflow_units
    return out


def check_levels(levels: Sequence[LevelConfig]) -> None:
    """Refuse a pool that cannot work, naming the level and what is wrong.

    The rate of progression over all levels is checked by ``rules.progression`` (it is a rule
    of the regulations); here only what makes a pool consistent.
    """
    if len(levels) > MAX_LEVELS:
        raise LevelError(f"a link has at most {MAX_LEVELS} levels, got {len(levels)}")
    names: set[str] = set()
    for i, cfg in enumerate(levels):
        where = f"level {i + 1} ({cfg.name})"
        if not cfg.name.strip() or not cfg.name.isprintable() or len(cfg.name) > 40:
            raise LevelError(f"level {i + 1}: a name of 1 to 40 printable characters is needed")
        if cfg.name.casefold() in names:
            raise LevelError(f"{where}: two levels have that name")
        names.add(cfg.name.casefold())
        if cfg.reset_cents < 0:
            raise LevelError(f"{where}: the reset amount cannot be negative")
        if cfg.rate_bp <= 0:
            raise LevelError(f"{where}: its share of the rate must be above 0%")
        if cfg.reserve_bp < 0:
            raise LevelError(f"{where}: its hidden share cannot be negative")
        if cfg.limit_cents is not None and cfg.limit_cents <= cfg.reset_cents:
            raise LevelError(
                f"{where}: the limit {format_cents(cfg.limit_cents)} must be above the reset "
                f"amount {format_cents(cfg.reset_cents)}"
            )
        if (
            cfg.limit_cents is not None
            and cfg.above_limit is AboveLimit.NEXT_LEVEL
            and i + 1 < len(levels)
            and levels[i + 1].mystery is not None
        ):
            raise LevelError(
                f"{where}: its excess cannot pass to level {i + 2}, a mystery level (it would "
                "carry that level past its ceiling); give it an overflow meter"
            )
        m = cfg.mystery
        if m is not None:
            if cfg.limit_cents is not None:
                raise LevelError(f"{where}: a mystery level's ceiling is its limit; give no limit")
            if not cfg.reset_cents < m.floor_cents <= m.ceiling_cents:
                raise LevelError(
                    f"{where}: a mystery trigger is drawn between a floor above the reset "
                    f"amount and the ceiling ({format_cents(cfg.reset_cents)} < floor "
                    f"{format_cents(m.floor_cents)} <= ceiling {format_cents(m.ceiling_cents)})"
                )


def describe(cfg: LevelConfig) -> str:
    parts = [f"{cfg.name}: reset {format_cents(cfg.reset_cents)}, {format_bp(cfg.rate_bp)}"]
    if cfg.reserve_bp:
        parts.append(f"+ {format_bp(cfg.reserve_bp)} hidden")
    if cfg.limit_cents is not None:
        parts.append(f"limit {format_cents(cfg.limit_cents)} then {cfg.above_limit}")
    if cfg.mystery is not None:
        parts.append(
            f"must hit between {format_cents(cfg.mystery.floor_cents)} and "
            f"{format_cents(cfg.mystery.ceiling_cents)}"
        )
    return " ".join(parts)


def levels_to_dicts(levels: Iterable[LevelConfig]) -> list[dict[str, Any]]:
    return [cfg.to_dict() for cfg in levels]


def levels_from_dicts(raw: Iterable[Mapping[str, Any]]) -> tuple[LevelConfig, ...]:
    return tuple(LevelConfig.from_dict(d) for d in raw)


def limit_units(cfg: LevelConfig) -> int | None:
    return None if cfg.limit_cents is None else cfg.limit_cents * UNITS_PER_CENT


def classic_levels(*, rate_bp: int, reset_cents: int, meter_units: int) -> tuple[LevelState, ...]:
    """The one level of a classic link (every link from before levels): its meter is the
    link's meter, its share the link's rate, its reset the link's reset amount."""
    config = LevelConfig(name="Jackpot", reset_cents=reset_cents, rate_bp=rate_bp)
    return (LevelState(config=config, meter_units=meter_units),)
