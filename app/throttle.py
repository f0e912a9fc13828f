"""Sign-in under attack: who is guessing, how long they wait, and a fair share of hashing.

``LoginThrottle`` slows whoever keeps guessing without letting a guesser lock anyone else out.
Each attempt counts against three keys, each with its own allowance of failures that cost no
wait; after the n-th failure beyond it, the next attempt waits ``first_delay_s * 2**(n-1)``
seconds (at most ``max_delay_s``) from that failure:

- the name tried from one address (no free failure, up to 30 s): the guesser's own wait;
- the address, whatever the name (five free, up to 30 s): spraying many names from one place;
- the name, from every address (ten free, up to 15 s): guessing from many places. It never
  applies from an address where that name has signed in successfully before, so a guesser
  elsewhere cannot keep a person out of their own terminal.

An attempt is recorded as a failure *before* the password is checked (``attempt``), in one
step with the check of the wait, so parallel guesses see each other; a success takes it back
(``succeeded``). Memory is bounded: the least recently used keys go first, and a key quiet
for ``forget_after_s`` starts afresh. Pure: the clock is passed in.

``client_address`` names the address: the socket's peer, unless that peer is a configured
proxy, whose forwarding header is then read from the right. ``HashingGate`` lets a few
password checks run at once and serves those waiting one network at a time in turn, so a flood
from some networks delays a sign-in from another by at most one check per flooding network,
and a person at a terminal they signed in from before goes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from ipaddress import IPv4Network, IPv6Network

Network = IPv4Network | IPv6Network
Queues = OrderedDict[str, deque["asyncio.Future[None]"]]


@dataclass(frozen=True, slots=True)
class Limit:
    free: int  # failures allowed before any wait
    first_delay_s: float
    max_delay_s: float

    def __post_init__(self) -> None:
        if self.free < 0 or not 0 < self.first_delay_s <= self.max_delay_s:
            raise ValueError(
                "a limit allows no negative number of failures, and its first delay is "
                "positive and at most its longest"
            )

    def delay_s(self, failures: int) -> float:
        over = failures - self.free
        if over <= 0:
            return 0.0
        # 2**(over-1) grows without bound; the cap is reached long before it matters.
        return float(min(self.max_delay_s, self.first_delay_s * 2 ** min(over - 1, 62)))


PAIR = Limit(free=0, first_delay_s=1.0, max_delay_s=30.0)
ADDRESS = Limit(free=5, first_delay_s=1.0, max_delay_s=30.0)
ACCOUNT = Limit(free=10, first_delay_s=1.0, max_delay_s=15.0)


@dataclass(slots=True)
class _Failures:
    count: int
    last_at: float


class LoginThrottle:
    def __init__(
        self,
        *,
        clock: Callable[[], float] = time.monotonic,
        pair: Limit = PAIR,
        address: Limit = ADDRESS,
        account: Limit = ACCOUNT,
        forget_after_s: float = 900.0,
        remember_success_s: float = 30 * 24 * 3600.0,
        max_keys: int = 10_000,
    ) -> None:
        if max_keys < 1:
            raise ValueError("the throttle must remember at least one key")
        self._clock = clock
        self.limits = {"pair": pair, "address": address, "account": account}
        self.forget_after_s = forget_after_s
        self.remember_success_s = remember_success_s
        self.max_keys = max_keys
        self._keys: OrderedDict[tuple[str, ...], _Failures] = OrderedDict()
        # (name, address) -> when the name last signed in from there
        self._known: OrderedDict[tuple[str, str], float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._keys)

    def _known_pair(self, name: str, address: str, now: float) -> bool:
        seen = self._known.get((name, address))
        return seen is not None and now - seen <= self.remember_success_s

    def known(self, name: str, address: str) -> bool:
        """Has ``name`` signed in from ``address`` lately?"""
        return self._known_pair(name, address, self._clock())

    def _keys_of(self, name: str, address: str, now: float) -> list[tuple[str, ...]]:
        keys: list[tuple[str, ...]] = [("pair", name, address), ("address", address)]
        if not self._known_pair(name, address, now):
            keys.append(("account", name))
        return keys

    def _current(self, key: tuple[str, ...], now: float) -> _Failures | None:
        entry = self._keys.get(key)
        if entry is not None and now - entry.last_at > self.forget_after_s:
            del self._keys[key]
            return None
        return entry

    def _wait(self, keys: Iterable[tuple[str, ...]], now: float) -> float:
        waits = [0.0]
        for key in keys:
            entry = self._current(key, now)
            if entry is not None:
                delay = self.limits[key[0]].delay_s(entry.count)
                waits.append(entry.last_at + delay - now)
        return max(waits)

    def wait_s(self, name: str, address: str) -> float:
        """Seconds before ``name`` may be tried from ``address`` (0: go ahead)."""
        now = self._clock()
        return self._wait(self._keys_of(name, address, now), now)

    def attempt(self, name: str, address: str) -> float:
        """0 when ``name`` may be tried from ``address`` now, the attempt then being counted as
        a failure until ``succeeded`` takes it back; otherwise the seconds to wait (nothing is
        counted: an attempt refused unheard guesses nothing)."""
        now = self._clock()
        keys = self._keys_of(name, address, now)
        wait = self._wait(keys, now)
        if wait > 0:
            return wait
        for key in keys:
            entry = self._current(key, now)
            self._keys[key] = _Failures(1 if entry is None else entry.count + 1, now)
            self._keys.move_to_end(key)
        while len(self._keys) > self.max_keys:
            self._keys.popitem(last=False)
        return 0.0

    def _take_back(self, keys: Iterable[tuple[str, ...]]) -> None:
        for key in keys:
            entry = self._keys.get(key)
            if entry is not None:
                entry.count -= 1
                if entry.count <= 0:
                    del self._keys[key]

    def unheard(self, name: str, address: str) -> None:
        """The attempt was never checked (no room to check it): it counts for nothing."""
        now = self._clock()
        self._take_back(self._keys_of(name, address, now))

    def succeeded(self, name: str, address: str) -> None:
        """The attempt was right: the name's failures from this address are forgotten, the
        failure counted in advance is taken back, and the address is known for the name."""
        now = self._clock()
        counted = self._keys_of(name, address, now)
        self._keys.pop(counted[0], None)
        self._take_back(counted[1:])
        self._known[(name, address)] = now
        self._known.move_to_end((name, address))
        while len(self._known) > self.max_keys:
            self._known.popitem(last=False)

    def failures(self, *key: str) -> int:
        """Failures counted against ``("pair", name, address)``, ``("address", address)`` or
        ``("account", name)``."""
        entry = self._current(key, self._clock())
        return 0 if entry is None else entry.count


# --------------------------------------------------------------------------------- addresses


def _host(value: str) -> str:
    """An address as a forwarding header writes it, without quotes, brackets or port."""
    value = value.strip().strip('"')
    if value.startswith("["):
        return value[1 : value.find("]")] if "]" in value else value[1:]
    if value.count(":") == 1:  # IPv4 with a port; a bare IPv6 address has several colons
        return value.split(":", 1)[0]
    return value


def _forwarded_for(header: str) -> list[str]:
    """The ``for=`` addresses of a ``Forwarded`` header (RFC 7239), in order."""
    hops: list[str] = []
    for element in header.split(","):
        for pair in element.split(";"):
            name, _, value = pair.partition("=")
            if name.strip().lower() == "for" and value:
                hops.append(_host(value))
    return hops


def _trusted(address: str, proxies: Sequence[Network]) -> bool:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    return any(ip in net for net in proxies)


def client_address(
    peer: str | None,
    headers: Sequence[tuple[str, str]],
    *,
    proxies: Sequence[Network],
    header: str = "x-forwarded-for",
) -> str:
    """The address a request comes from. The socket's peer, unless it is one of ``proxies``;
    then the forwarding ``header`` is read from the right (each proxy appends the address it
    heard from) and the first address that is not a proxy is the client's. A header from
    anyone else is ignored: it is whatever the sender chose to write."""
    address = peer or "unknown"
    if not proxies or not _trusted(address, proxies):
        return address
    values = [v for k, v in headers if k.lower() == header]
    hops = (
        _forwarded_for(",".join(values))
        if header == "forwarded"
        else [_host(h) for v in values for h in v.split(",") if h.strip()]
    )
    for hop in reversed(hops):
        if not _trusted(hop, proxies):
            return hop
        address = hop
    return address


# --------------------------------------------------------------------------------- hashing


class GateFull(Exception):
    """Too many password checks wait already: from this address (``mine``) or in all."""

    def __init__(self, *, mine: bool) -> None:
        super().__init__("from your address" if mine else "in all")
        self.mine = mine


def network_of(address: str) -> str:
    """The network an address shares its turn with: its /24 (IPv4) or /64 (IPv6). One machine
    is cheaply given many addresses of one network, rarely of many networks."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return address
    return str(ipaddress.ip_network(f"{ip}/{24 if ip.version == 4 else 64}", strict=False))


class HashingGate:
    """At most ``slots`` password checks at once. The others wait in one queue per network
    (``network_of``), served in turn, at most ``per_address`` in each and ``max_waiting`` in
    all (beyond: GateFull). A check of a name from an address where it signed in before
    (``known``) goes first: a guesser cannot make such a pair, so a flood does not stand
    between people and the terminals they use.

    Bound to the event loop it is first used in (one per running service).
    """

    def __init__(self, *, slots: int = 2, per_address: int = 8, max_waiting: int = 64) -> None:
        if slots < 1 or per_address < 1 or max_waiting < 1:
            raise ValueError("a gate needs at least one slot and room for one waiting")
        self.slots = slots
        self.per_address = per_address
        self.max_waiting = max_waiting
        self._running = 0
        # known first, then everyone else; in each, address -> its waiting turns
        self._tiers: tuple[Queues, Queues] = (OrderedDict(), OrderedDict())

    @property
    def waiting(self) -> int:
        return sum(len(q) for tier in self._tiers for q in tier.values())

    def _release(self) -> None:
        self._running -= 1
        for tier in self._tiers:
            while tier and self._running < self.slots:
                address, queue = next(iter(tier.items()))
                turn = queue.popleft()
                if queue:
                    tier.move_to_end(address)  # the next address's turn
                else:
                    del tier[address]
                if not turn.done():
                    self._running += 1
                    turn.set_result(None)

    @contextlib.asynccontextmanager
    async def turn(self, address: str, *, known: bool = False) -> AsyncIterator[None]:
        address = network_of(address)
        if self._running < self.slots and not self.waiting:
            self._running += 1
        else:
            tier = self._tiers[0 if known else 1]
            queue = tier.get(address)
            if queue is not None and len(queue) >= self.per_address:
                raise GateFull(mine=True)
            if not known and self.waiting >= self.max_waiting:
                raise GateFull(mine=False)
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            tier.setdefault(address, deque()).append(turn)
            try:
                await turn
            except asyncio.CancelledError:
                if turn.done() and not turn.cancelled():
                    self._release()  # granted as the caller went away: pass it on
                else:
                    waiting = tier.get(address)
                    if waiting is not None and turn in waiting:
                        waiting.remove(turn)
                        if not waiting:
                            del tier[address]
                raise
        try:
            yield
        finally:
            self._release()
