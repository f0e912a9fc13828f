"""Mystery draws made ready before a step: uniform over floor..ceiling, a 32-byte salt, no
entry until a level is armed with one."""

from __future__ import annotations

import pytest

from controller.core.reducer import EngineError, draws_wanted, with_draws
from controller.core.reducer.levels import MysteryDraw
from controller.runtime.mystery_draws import READY, first_draws, topped_up
from tests.controller.core.test_levels import GRAND, MAJOR, MINI, MINOR, link


def test_every_mystery_level_is_topped_up_to_the_draws_it_keeps_ready() -> None:
    state = link()  # the Mini opened with one draw, armed at once
    assert draws_wanted(state, READY) == {3: READY}
    ready = topped_up(state)
    mini = ready.levels[3]
    assert len(mini.draws) == READY and ready.levels[:3] == state.levels[:3]
    for d in mini.draws:
        assert MINI.mystery is not None
        assert MINI.mystery.floor_cents <= d.trigger_cents <= MINI.mystery.ceiling_cents
        assert len(bytes.fromhex(d.salt)) == 32
    assert topped_up(ready) is ready
    assert ready.meter_units == state.meter_units and ready.tables == state.tables


def test_a_new_link_opens_with_draws_for_its_mystery_levels_only() -> None:
    draws = first_draws((GRAND, MAJOR, MINOR, MINI))
    assert set(draws) == {3} and len(draws[3]) == READY


def test_a_draw_is_attached_only_to_a_mystery_level_and_within_its_range() -> None:
    state = link()
    with pytest.raises(EngineError, match="not a mystery level"):
        with_draws(state, {0: [MysteryDraw(15_00, "ab")]})
    with pytest.raises(EngineError, match="outside"):
        with_draws(state, {3: [MysteryDraw(25_00, "ab")]})
    assert with_draws(state, {}) is state
