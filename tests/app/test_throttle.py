"""Failed sign-ins: counted before the check, per name and address, per address and per name;
a guesser elsewhere never keeps a person out of a terminal they signed in from; proxies' headers
believed only from proxies; password checks shared fairly between addresses."""

from __future__ import annotations

import asyncio
from ipaddress import ip_network

import pytest

from app.throttle import GateFull, HashingGate, Limit, LoginThrottle, client_address, network_of


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_wait_doubles_up_to_the_cap_and_a_success_resets_it() -> None:
    clock = Clock()
    plenty = Limit(100, 1.0, 8.0)
    t = LoginThrottle(clock=clock, pair=Limit(0, 1.0, 8.0), address=plenty, account=plenty)
    assert t.wait_s("pat", "10.0.0.1") == 0
    waits = []
    for _ in range(6):
        assert t.attempt("pat", "10.0.0.1") == 0  # counted as failed until told otherwise
        waits.append(t.wait_s("pat", "10.0.0.1"))
        clock.now += waits[-1]  # the caller waits exactly as long as told
        assert t.wait_s("pat", "10.0.0.1") == 0
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert t.failures("pair", "pat", "10.0.0.1") == 6
    assert t.attempt("pat", "10.0.0.1") == 0
    t.succeeded("pat", "10.0.0.1")
    assert t.failures("pair", "pat", "10.0.0.1") == 0
    assert t.failures("address", "10.0.0.1") == 6  # the right one taken back, not the others
    assert t.attempt("pat", "10.0.0.1") == 0
    assert t.wait_s("pat", "10.0.0.1") == 1.0


def test_an_attempt_is_counted_before_its_password_is_checked() -> None:
    """Parallel guesses: the second sees the first before either has been checked."""
    t = LoginThrottle(clock=Clock())
    assert t.attempt("pat", "10.0.0.1") == 0
    refused = [t.attempt("pat", "10.0.0.1") for _ in range(39)]
    assert all(w == 1.0 for w in refused)
    assert t.failures("pair", "pat", "10.0.0.1") == 1  # a refused attempt guesses nothing
    t.unheard("pat", "10.0.0.1")  # never checked after all: it counts for nothing
    assert t.failures("pair", "pat", "10.0.0.1") == 0
    assert t.attempt("pat", "10.0.0.1") == 0


def test_a_guesser_elsewhere_does_not_keep_the_person_out() -> None:
    clock = Clock()
    t = LoginThrottle(clock=clock, address=Limit(2, 1.0, 30.0), account=Limit(3, 1.0, 15.0))
    # The person signed in from their terminal once.
    assert t.attempt("pat", "10.0.0.1") == 0
    t.succeeded("pat", "10.0.0.1")
    # One wrong attempt elsewhere: the name is not slowed anywhere else.
    assert t.attempt("pat", "10.6.6.6") == 0
    assert t.wait_s("pat", "10.6.6.6") == 1.0
    assert t.wait_s("pat", "10.0.0.2") == 0
    # Guesses from many places: past the name's allowance every new place waits...
    for n in range(3):
        assert t.attempt("pat", f"10.6.6.{n + 10}") == 0
    assert t.wait_s("pat", "10.0.0.2") == 1.0
    # ...but not the person's own terminal, nor someone else's name from the guessers' places.
    assert t.wait_s("pat", "10.0.0.1") == 0
    assert t.wait_s("sam", "10.6.6.10") == 0
    # A place that tries many names waits past its own allowance, whatever the name.
    for name in ("a", "b"):
        assert t.attempt(name, "10.7.7.7") == 0
    assert t.attempt("c", "10.7.7.7") == 0
    assert t.wait_s("d", "10.7.7.7") == 1.0


def test_a_quiet_key_is_forgotten_and_memory_is_bounded() -> None:
    clock = Clock()
    t = LoginThrottle(clock=clock, pair=Limit(0, 1.0, 30.0), forget_after_s=60.0, max_keys=100)
    t.attempt("pat", "10.0.0.1")
    clock.now += 2
    t.attempt("pat", "10.0.0.1")
    clock.now += 2 + 61
    assert t.failures("pair", "pat", "10.0.0.1") == 0
    t.attempt("pat", "10.0.0.1")
    assert t.wait_s("pat", "10.0.0.1") == 1.0
    for i in range(1000):
        assert t.attempt(f"n{i}", f"10.0.{i // 256}.{i % 256}") == 0
    assert len(t) == 100
    assert t.failures("pair", "n999", "10.0.3.231") == 1  # the most recent are kept
    assert t.failures("address", "10.0.0.1") == 0  # the oldest went first


def test_refuses_nonsense_limits() -> None:
    with pytest.raises(ValueError):
        Limit(0, 0, 1)
    with pytest.raises(ValueError):
        Limit(0, 10, 1)
    with pytest.raises(ValueError):
        Limit(-1, 1, 1)
    with pytest.raises(ValueError):
        LoginThrottle(max_keys=0)


def test_a_forwarding_header_is_believed_only_from_a_proxy() -> None:
    proxies = (ip_network("10.0.0.5/32"), ip_network("fd00::/8"))
    spoof = [("X-Forwarded-For", "1.2.3.4")]
    # No proxies configured, or a sender that is not one: the socket's peer, whatever it says.
    assert client_address("127.0.0.1", spoof, proxies=()) == "127.0.0.1"
    assert client_address("10.0.0.6", spoof, proxies=proxies) == "10.0.0.6"
    # From a proxy: read from the right, the first address that is not a proxy.
    chain = [("x-forwarded-for", "6.6.6.6, 192.0.2.7"), ("X-Forwarded-For", "fd00::9")]
    assert client_address("10.0.0.5", chain, proxies=proxies) == "192.0.2.7"
    assert client_address("10.0.0.5", [], proxies=proxies) == "10.0.0.5"
    # Only the header the proxies write: the other one is the client's own words.
    forwarded = [("Forwarded", 'for="[2001:db8::1]:4711";proto=https, for=192.0.2.8:80')]
    assert client_address("10.0.0.5", forwarded, proxies=proxies) == "10.0.0.5"
    assert (
        client_address("10.0.0.5", forwarded + spoof, proxies=proxies, header="forwarded")
        == "192.0.2.8"
    )
    bracketed = [("forwarded", 'for="[2001:db8::1]:4711"')]
    assert client_address("10.0.0.5", bracketed, proxies=proxies, header="forwarded") == (
        "2001:db8::1"
    )


async def test_password_checks_are_shared_between_addresses_in_turn() -> None:
    gate = HashingGate(slots=1, per_address=3, max_waiting=5)
    order: list[str] = []
    release = asyncio.Event()

    async def check(address: str, tag: str) -> None:
        async with gate.turn(address):
            order.append(tag)
            await release.wait()

    first = asyncio.create_task(check("flood", "flood-0"))
    await asyncio.sleep(0)
    flood = [asyncio.create_task(check("flood", f"flood-{n}")) for n in range(1, 4)]
    await asyncio.sleep(0)
    with pytest.raises(GateFull) as mine:
        await check("flood", "flood-4")  # this address has as many waiting as it may
    assert mine.value.mine
    person = asyncio.create_task(check("person", "person"))
    await asyncio.sleep(0)
    other = asyncio.create_task(check("other", "other"))
    await asyncio.sleep(0)
    with pytest.raises(GateFull) as everyone:
        await check("another", "late")
    assert not everyone.value.mine
    release.set()
    await asyncio.gather(first, *flood, person, other)
    # The person waited for the flood's next check only, not for all of them.
    assert order == ["flood-0", "flood-1", "person", "other", "flood-2", "flood-3"]
    assert gate.waiting == 0


async def test_a_caller_that_goes_away_gives_its_turn_on() -> None:
    gate = HashingGate(slots=1)
    release = asyncio.Event()
    done: list[str] = []

    async def check(address: str) -> None:
        async with gate.turn(address):
            await release.wait()
            done.append(address)

    holder = asyncio.create_task(check("a"))
    await asyncio.sleep(0)
    gone = asyncio.create_task(check("b"))
    after = asyncio.create_task(check("c"))
    await asyncio.sleep(0)
    gone.cancel()
    release.set()
    await asyncio.gather(holder, after)
    assert done == ["a", "c"] and gate.waiting == 0
    with pytest.raises(asyncio.CancelledError):
        await gone


async def test_a_known_terminal_goes_first_and_a_network_waits_as_one() -> None:
    assert network_of("10.1.2.3") == network_of("10.1.2.200") == "10.1.2.0/24"
    assert network_of("2001:db8::1") == network_of("2001:db8::ffff") == "2001:db8::/64"
    assert network_of("unknown") == "unknown"
    gate = HashingGate(slots=1, per_address=2, max_waiting=2)
    order: list[str] = []
    release = asyncio.Event()

    async def check(address: str, tag: str, *, known: bool = False) -> None:
        async with gate.turn(address, known=known):
            order.append(tag)
            await release.wait()

    running = asyncio.create_task(check("10.6.6.1", "flood-1"))
    await asyncio.sleep(0)
    flood = [asyncio.create_task(check(f"10.6.6.{n}", f"flood-{n}")) for n in (2, 3)]
    await asyncio.sleep(0)
    with pytest.raises(GateFull) as same_network:
        await check("10.6.6.4", "flood-4")  # another address, the same network
    assert same_network.value.mine
    with pytest.raises(GateFull):
        await check("192.0.2.7", "new place")  # the waiting room is full
    # Someone at a terminal where they signed in before: not refused, and next.
    person = asyncio.create_task(check("192.0.2.8", "terminal", known=True))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(running, *flood, person)
    assert order == ["flood-1", "terminal", "flood-2", "flood-3"]
