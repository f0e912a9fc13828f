"""Failed sign-ins: the wait doubles per failure up to a cap, resets on success, memory bounded."""

from __future__ import annotations

import pytest

from app.throttle import LoginThrottle


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_wait_doubles_up_to_the_cap_and_a_success_resets_it() -> None:
    clock = Clock()
    t = LoginThrottle(clock=clock, first_delay_s=1.0, max_delay_s=8.0)
    assert t.wait_s("user:pat") == 0
    waits = []
    for _ in range(6):
        t.failed("user:pat")
        waits.append(t.wait_s("user:pat"))
        clock.now += waits[-1]  # the caller waits exactly as long as told
        assert t.wait_s("user:pat") == 0
    assert waits == [1.0, 2.0, 4.0, 8.0, 8.0, 8.0]
    assert t.failures("user:pat") == 6
    t.succeeded("user:pat")
    assert t.failures("user:pat") == 0
    t.failed("user:pat")
    assert t.wait_s("user:pat") == 1.0


def test_keys_are_separate_and_the_longest_wait_counts() -> None:
    clock = Clock()
    t = LoginThrottle(clock=clock, first_delay_s=1.0, max_delay_s=60.0)
    for _ in range(3):
        t.failed("user:pat", "address:10.0.0.9")
        clock.now += 10
    t.failed("address:10.0.0.9")  # a fourth guess, at another name, from the same place
    assert t.wait_s("user:pat") == 0  # the last of pat's waits (4 s) is long over
    assert t.wait_s("user:sam", "address:10.0.0.9") == 8.0
    assert t.wait_s("user:sam", "address:10.0.0.7") == 0
    clock.now += 3
    assert t.wait_s("user:sam", "address:10.0.0.9") == 5.0


def test_a_quiet_key_is_forgotten_and_memory_is_bounded() -> None:
    clock = Clock()
    t = LoginThrottle(clock=clock, first_delay_s=1.0, max_delay_s=30.0, forget_after_s=60.0,
                      max_keys=100)  # fmt: skip
    t.failed("user:pat")
    t.failed("user:pat")
    clock.now += 2 + 61
    assert t.failures("user:pat") == 0
    t.failed("user:pat")
    assert t.wait_s("user:pat") == 1.0
    for i in range(1000):
        t.failed(f"address:10.0.{i // 256}.{i % 256}")
    assert len(t) == 100
    assert t.failures("address:10.0.3.231") == 1  # the most recent are kept
    assert t.failures("user:pat") == 0  # the oldest went first


def test_refuses_nonsense_limits() -> None:
    with pytest.raises(ValueError):
        LoginThrottle(first_delay_s=0)
    with pytest.raises(ValueError):
        LoginThrottle(first_delay_s=10, max_delay_s=1)
    with pytest.raises(ValueError):
        LoginThrottle(max_keys=0)
