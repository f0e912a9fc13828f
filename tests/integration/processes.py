"""Controllers as real ``progressive run`` processes for a simulated floor: the floor file, the
environment, starting, asking over HTTP, killing, and waiting until the database holds
everything the simulator dealt. Shared by the hot standby test and the crash harness."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx

from controller.paperwork.checkpoints import make_key_pair
from controller.storage.store import LedgerStore
from tests.app.helpers import table_watcher
from tests.conftest import KEY, process_env
from tests.integration.harness import FloorHarness, LinkPlan
from tests.integration.test_run_command import free_port


def floor_toml(
    plans: Sequence[LinkPlan], ports: dict[str, int], poll_interval_ms: int = 100
) -> str:
    lines = ["[controller]", "offline_after_failures = 3"]
    for p in plans:
        lines += [
            "[[bus]]", f'name = "{p.link_id}"', 'kind = "tcp"', 'host = "127.0.0.1"',
            f"port = {ports[p.gateway]}", "timeout_ms = 300", "retries = 0",
        ]  # fmt: skip
    for p in plans:
        lines += [
            "[[link]]", f'id = "{p.link_id}"', f'game = "{p.game}"',
            f'rate = "{p.rate_bp / 100}%"', 'reset = "$1,000"',
        ]  # fmt: skip
        for u in range(1, p.tables + 1):
            lines += [
                "[[link.table]]", f'id = "{p.link_id}-{u}"', f'bus = "{p.link_id}"',
                f"unit = {u}", f'location = "pit 1, table {u}"',
                f"poll_interval_ms = {poll_interval_ms}", "min_round_ms = 10",
            ]  # fmt: skip
    return "\n".join(lines) + "\n"


def controller_env(db_url: str) -> dict[str, str]:
    """The environment of a controller process: the test's, less every ``PROGRESSIVE_``
    setting but the session's manifest, plus the database, the test ledger key and the
    notice override."""
    env = process_env()
    return env | {
        "PROGRESSIVE_DATABASE_URL": db_url,
        "PROGRESSIVE_LEDGER_KEY": KEY.hex(),
        # A test floor plays at once: demonstration mode.
        "PROGRESSIVE_DEMONSTRATION": "1",
    }


class Controller:
    """One ``progressive run`` process and its web address."""

    def __init__(
        self,
        name: str,
        proc: asyncio.subprocess.Process,
        port: int,
        log: Path,
        plans: Sequence[LinkPlan],
        db_url: str,
    ) -> None:
        self.name = name
        self.proc = proc
        self.http = httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=5)
        self.log = log
        self.plans = tuple(plans)
        self.db_url = db_url
        self._dealer: dict[str, str] | None = None

    @classmethod
    async def start(
        cls,
        name: str,
        *,
        config: Path,
        env: dict[str, str],
        cwd: Path,
        plans: Sequence[LinkPlan],
    ) -> Controller:
        """Start ``progressive run --config CONFIG``; returns once it answers ``/healthz``."""
        port = free_port()
        log = cwd / f"{name}.log"
        # Each controller signs checkpoints with a key and into a file of its own, kept
        # across its restarts (it refuses to start on a database behind them).
        keys = cwd / f"{name}-checkpoints"
        if not (keys / "checkpoint-signing.key").exists():
            make_key_pair(keys)
        env = {
            "PROGRESSIVE_CHECKPOINT_KEY_FILE": str(keys / "checkpoint-signing.key"),
            "PROGRESSIVE_CHECKPOINT_FILE": str(keys / "checkpoints.jsonl"),
            **env,
        }
        with log.open("wb") as out:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "app.cli", "run", "--config", str(config),
                "--port", str(port), env=env, cwd=cwd, stdout=out, stderr=out,
            )  # fmt: skip
        c = cls(name, proc, port, log, plans, env["PROGRESSIVE_DATABASE_URL"])
        try:
            await c.up()
        except BaseException:
            await c.kill()
            raise
        return c

    async def up(self) -> None:
        # Generous: on a busy machine a Python process takes long to import and start.
        async with asyncio.timeout(90):
            while True:
                assert self.proc.returncode is None, self.log.read_text()
                try:
                    if (await self.http.get("/healthz")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.2)

    async def tables(self) -> list[dict[str, Any]]:
        """Each table's state, as a dealer reads it (the public view names none)."""
        if self._dealer is None:
            self._dealer = await table_watcher(self.http, self.db_url)
        got: list[dict[str, Any]] = []
        for p in self.plans:
            link = await self.http.get(f"/api/v1/links/{p.link_id}", headers=self._dealer)
            got += link.json()["tables"]
        return got

    async def drives_all_since(self, since_us: int) -> bool:
        """Every table is driven here and has answered this process since ``since_us``."""
        try:
            tables = await self.tables()
        except httpx.TransportError:
            return False
        return all(
            t["state"] != "standby" and (t["last_answer_us"] or 0) > since_us for t in tables
        )

    async def kill(self) -> None:
        if self.proc.returncode is None:
            os.kill(self.proc.pid, signal.SIGKILL)
        await self.proc.wait()
        await self.http.aclose()

    async def stop(self) -> tuple[int | None, str]:
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGINT)
            await asyncio.wait_for(self.proc.wait(), timeout=20)
        await self.http.aclose()
        return self.proc.returncode, self.log.read_text()


async def drained(h: FloorHarness, store: LedgerStore, within_s: float = 20) -> None:
    """Every table's counters and hits read and committed, as the database says."""
    async with asyncio.timeout(within_s):
        while True:
            done = True
            for p in h.plans:
                state = await store.load_link(p.link_id)
                for u in range(1, p.tables + 1):
                    table = h.sim(p, u)
                    ts = state.table(h.table_id(p, u))
                    if table.hit_fifo or ts.credits != table.credits or ts.open_claims:
                        done = False
            if done:
                return
            await asyncio.sleep(0.1)
