"""The page tests' Chromium: one driver and one browser per test process, a test's pages each
in a browser context of their own (tests/app/browser.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from playwright.async_api import Browser

from tests.app.browser import ON_THE_SHARED_LOOP, launched_chromium


@pytest_asyncio.fixture(scope="session", loop_scope="session")
async def shared_chromium() -> AsyncIterator[Browser]:
    async with launched_chromium() as browser:
        yield browser


@pytest_asyncio.fixture(loop_scope="session")
async def browser(
    request: pytest.FixtureRequest, shared_chromium: Browser
) -> AsyncIterator[Browser]:
    """The process's Chromium, no context open: ``browser.new_page()`` opens a page in a
    context of its own, closed with every other at the test's end."""
    marker = request.node.get_closest_marker("asyncio")
    assert marker is not None and marker.kwargs == ON_THE_SHARED_LOOP.kwargs, (
        "a test with the shared Chromium runs on the session's loop (tests.app.browser's pytestmark)"
    )
    assert not shared_chromium.contexts, "a test before this one left a browser context open"
    yield shared_chromium
    for context in shared_chromium.contexts:
        await context.close()
