"""A PostgreSQL server of a test's own, which the test may stop and start at will.

The shared server on 5432 is never stopped (others use it). A test that takes the database
away runs its own: ``initdb`` into a temporary folder, a free port on 127.0.0.1, trust
authentication, its socket in that folder. PostgreSQL refuses to run as root, so as root the
server runs as the ``postgres`` user (``runuser``), which owns the folder.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

BIN = Path(os.environ.get("PROGRESSIVE_PG_BIN", "/usr/lib/postgresql/15/bin"))
RUN_AS = "postgres"


def available() -> str | None:
    """None when a private server can be made here, else why not."""
    if not (BIN / "initdb").exists():
        return f"no initdb in {BIN} (set PROGRESSIVE_PG_BIN)"
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root without runuser"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PrivatePostgres:
    folder: Path
    port: int

    @property
    def data(self) -> Path:
        return self.folder / "data"

    @property
    def url(self) -> str:
        """The SQLAlchemy URL of its ``postgres`` database."""
        return f"postgresql+asyncpg://postgres@127.0.0.1:{self.port}/postgres"

    def _command(self, *args: str) -> list[str]:
        command = [str(BIN / args[0]), *args[1:]]
        if os.geteuid() == 0:
            command = ["runuser", "-u", RUN_AS, "--", *command]
        return command

    async def _run(self, *args: str) -> int:
        # A subprocess of the loop, not a blocking call: the controller under test shares the
        # loop and must go on polling while the server stops and starts.
        proc = await asyncio.create_subprocess_exec(
            *self._command(*args),
            cwd=self.folder,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        async with asyncio.timeout(90):
            _, err = await proc.communicate()
        if proc.returncode and args[-1] != "status":
            raise RuntimeError(f"{' '.join(args)} failed ({proc.returncode}): {err.decode()}")
        return proc.returncode or 0

    def init(self) -> None:
        subprocess.run(
            self._command(
                "initdb", "-D", str(self.data), "-U", "postgres", "-A", "trust", "-E", "UTF8"
            ),
            capture_output=True, text=True, timeout=120, check=True, cwd=self.folder,
        )  # fmt: skip

    async def start(self) -> None:
        """Start it and return once it accepts connections (``pg_ctl -w``)."""
        options = f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c fsync=off"
        await self._run(
            "pg_ctl", "-D", str(self.data), "-o", options, "-l", str(self.folder / "log"),
            "-w", "-t", "60", "start",
        )  # fmt: skip

    async def stop(self, mode: str = "fast") -> None:
        """Stop it: ``fast`` ends every session at once; ``immediate`` as if the power failed."""
        await self._run("pg_ctl", "-D", str(self.data), "-m", mode, "-w", "-t", "60", "stop")

    async def running(self) -> bool:
        return await self._run("pg_ctl", "-D", str(self.data), "status") == 0


@contextlib.asynccontextmanager
async def private_postgres() -> AsyncIterator[PrivatePostgres]:
    """A fresh server, started; stopped and removed afterwards, whatever happened."""
    problem = available()
    if problem is not None:
        raise RuntimeError(f"cannot run a private PostgreSQL server: {problem}")
    folder = Path(tempfile.mkdtemp(prefix="progressive-pg-"))
    try:
        if os.geteuid() == 0:
            shutil.chown(folder, RUN_AS, RUN_AS)
        pg = PrivatePostgres(folder, _free_port())
        pg.init()
        await pg.start()
        try:
            yield pg
        finally:
            if await pg.running():
                await pg.stop("immediate")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
