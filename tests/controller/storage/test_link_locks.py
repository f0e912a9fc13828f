"""Link locks on PostgreSQL: one holder per link, taken over when the holder's session ends,
and everything given up at once when the lock connection fails."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncEngine

from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.submissions import ReviewDesk
from controller.runtime.config import parse_floor_config
from controller.runtime.config_entries import FloorConfig
from controller.runtime.link_locks import LinkLocks, lock_key
from controller.runtime.service import FloorService
from controller.settings import Settings
from controller.storage.database import make_engine
from tests.conftest import KEY
from tests.integration.test_run_command import free_port

LINKS = ("stud", "draw")


@pytest.fixture
def db_kind() -> str:
    return "postgres"


@pytest.fixture
async def engines(db_url: str) -> AsyncIterator[tuple[AsyncEngine, AsyncEngine]]:
    # Two engines: two controller processes as far as the server can tell.
    a, b = make_engine(db_url), make_engine(db_url)
    yield a, b
    await a.dispose()
    await b.dispose()


class Driver:
    """Records what a controller would do with each link."""

    def __init__(self) -> None:
        self.driving: set[str] = set()
        self.events: list[tuple[str, str]] = []

    async def acquired(self, link_id: str) -> None:
        self.driving.add(link_id)
        self.events.append(("acquired", link_id))

    async def lost(self, link_id: str) -> None:
        self.driving.discard(link_id)
        self.events.append(("lost", link_id))

    def locks(self, engine: AsyncEngine) -> LinkLocks:
        return LinkLocks(engine, LINKS, on_acquired=self.acquired, on_lost=self.lost, retry_s=0.1)


async def until(condition: object, within_s: float = 10.0) -> None:
    async with asyncio.timeout(within_s):
        while not condition():  # type: ignore[operator]  # noqa: ASYNC110
            await asyncio.sleep(0.02)


async def end_session_holding(engine: AsyncEngine, link_id: str) -> int:
    """The server ends the session holding the link's lock, as it does when the network to
    its process breaks; how many sessions it ended."""
    async with engine.connect() as admin:
        key = lock_key(str(await admin.scalar(text("SELECT current_schema()"))), link_id)
        ended = await admin.scalar(
            text(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_locks "
                "WHERE locktype = 'advisory' AND classid = :hi AND objid = :lo"
            ),
            {"hi": (key >> 32) & 0xFFFFFFFF, "lo": key & 0xFFFFFFFF},
        )
        await admin.commit()
    return int(ended or 0)


def test_keys_differ_between_links_and_schemas() -> None:
    keys = {lock_key(schema, link) for schema in ("a", "b") for link in LINKS}
    assert len(keys) == 4
    assert lock_key("a", "stud") == lock_key("a", "stud")


async def test_one_holder_per_link_and_the_standby_takes_over(
    engines: tuple[AsyncEngine, AsyncEngine],
) -> None:
    first, second = Driver(), Driver()
    a, b = first.locks(engines[0]), second.locks(engines[1])
    await a.start()
    await b.start()
    try:
        assert first.driving == set(LINKS) and a.held == set(LINKS)
        assert second.driving == set() and b.held == set()
        await asyncio.sleep(0.3)  # the standby keeps trying, and keeps failing
        assert second.driving == set()
        await a.close()
        await until(lambda: second.driving == set(LINKS))
        assert first.events == [("acquired", "stud"), ("acquired", "draw")]
    finally:
        await a.close()
        await b.close()


async def test_a_failed_lock_connection_gives_every_link_up_and_takes_them_back(
    engines: tuple[AsyncEngine, AsyncEngine],
) -> None:
    driver = Driver()
    locks = driver.locks(engines[0])
    await locks.start()
    try:
        assert driver.driving == set(LINKS)
        assert await end_session_holding(engines[1], "stud") == 1
        await until(lambda: ("lost", "stud") in driver.events)
        await until(lambda: driver.driving == set(LINKS) and locks.problem is None)
        lost = driver.events.index(("lost", "stud"))
        assert ("acquired", "stud") in driver.events[lost:]
    finally:
        await locks.close()


def two_link_floor(port: int) -> FloorConfig:
    return parse_floor_config({
        "bus": [{"name": "gw", "kind": "tcp", "host": "127.0.0.1", "port": port}],
        "link": [
            {"id": link_id, "game": "caribbean_stud", "rate": "80%", "reset": "$1,000",
             "table": [{"id": f"{link_id}-1", "bus": "gw", "unit": unit,
                        "location": "pit 1"}]}
            for unit, link_id in enumerate(LINKS, start=1)
        ],
    })  # fmt: skip


async def test_controllers_started_together_share_the_links_out(db_url: str) -> None:
    # Not approved, so never polled: nothing listens on the bus's port.
    floor = two_link_floor(free_port())
    settings = Settings(database_url=db_url, ledger_key=KEY.hex(), demonstration=True)
    a = FloorService(settings, floor=floor, retention_schedule=False)
    b = FloorService(settings, floor=floor, retention_schedule=False)
    try:
        # Both find a new database: only one may create the links and file them.
        await asyncio.gather(a.start(), b.start())
        assert a.link_locks is not None and b.link_locks is not None
        assert a.link_locks.held | b.link_locks.held == set(LINKS)
        assert not a.link_locks.held & b.link_locks.held
        filed = [s.link_id for s in await ReviewDesk(FilingDesk(a.runtime)).find()]
        assert sorted(filed) == sorted(LINKS)
        for link_id in LINKS:
            standby = b if link_id in a.link_locks.held else a
            assert standby.standing_by(link_id)
            assert standby.readiness_notes()[f"link {link_id}"].startswith("standby")
            assert {s.state for s in standby.table_statuses(link_id)} == {"standby"}
        await a.stop()
        poller = b.poller
        assert poller is not None
        await until(lambda: all(poller.polling(link_id) for link_id in LINKS))
        assert b.link_locks.held == set(LINKS)
        assert b.readiness_notes() == {}
    finally:
        await a.stop()
        await b.stop()


async def test_a_controller_stops_polling_when_its_lock_connection_fails(db_url: str) -> None:
    settings = Settings(database_url=db_url, ledger_key=KEY.hex(), demonstration=True)
    service = FloorService(settings, floor=two_link_floor(free_port()), retention_schedule=False)
    await service.start()
    try:
        poller, locks = service.poller, service.link_locks
        assert poller is not None and locks is not None
        assert all(poller.polling(link_id) for link_id in LINKS)
        engine = make_engine(db_url)
        try:
            assert await end_session_holding(engine, "stud") == 1
        finally:
            await engine.dispose()
        # Fenced: no link polled without its lock; then the locks are taken back.
        await until(lambda: not any(poller.polling(link_id) for link_id in LINKS))
        await until(lambda: all(poller.polling(link_id) for link_id in LINKS))
        assert locks.problem is None and locks.held == set(LINKS)
    finally:
        await service.stop()
