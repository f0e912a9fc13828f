"""``progressive simulate`` and ``progressive run`` as real processes, stopped with Ctrl-C."""

from __future__ import annotations

import asyncio
import signal
import socket
import sys
from pathlib import Path

import httpx

from tests.app.helpers import commission_agent, progressive, table_watcher
from tests.conftest import KEY, process_env


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start(*args: str, env: dict[str, str], cwd: Path) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        *args,
        env=env,
        cwd=cwd,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def stop(proc: asyncio.subprocess.Process) -> tuple[int, str]:
    if proc.returncode is None:
        proc.send_signal(signal.SIGINT)
    out, err = await asyncio.wait_for(proc.communicate(), timeout=20)
    assert proc.returncode is not None
    return proc.returncode, out.decode() + err.decode()


PASSWORD = "a long enough password"


async def _until_up(http: httpx.AsyncClient) -> None:
    async with asyncio.timeout(30):
        while True:
            try:
                if (await http.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.2)


async def test_run_polls_the_simulated_floor_and_stops_cleanly(tmp_path: Path) -> None:
    port = free_port()
    (tmp_path / "sim.toml").write_text(
        f'seed = 3\nrounds_per_second = 10\n[[gateway]]\ngame = "caribbean_stud"\nport = {port}\ntables = 2\n'
    )
    (tmp_path / "floor.toml").write_text(f"""
[[bus]]
name = "gw"
kind = "tcp"
host = "127.0.0.1"
port = {port}

[[link]]
id = "stud"
game = "caribbean_stud"
rate = "80%"
reset = "$500"
  [[link.table]]
  id = "CS-1"
  bus = "gw"
  unit = 1
  location = "pit 1"
  poll_interval_ms = 100
  min_round_ms = 50
  [[link.table]]
  id = "CS-2"
  bus = "gw"
  unit = 2
  location = "pit 1"
  poll_interval_ms = 100
  min_round_ms = 50
""")
    db_url = f"sqlite+aiosqlite:///{tmp_path / 'floor.db'}"
    env = process_env()
    # A test floor plays at once: demonstration mode.
    notice = {"PROGRESSIVE_DEMONSTRATION": "1"}
    env |= {"PROGRESSIVE_DATABASE_URL": db_url, "PROGRESSIVE_LEDGER_KEY": KEY.hex(), **notice}

    code, _, err = await progressive(
        "run", "--config", str(tmp_path / "floor.toml"), db_url=db_url, cwd=tmp_path
    )
    assert code == 1 and "no checkpoint signing key" in err
    code, out, err = await progressive("ledger", "keygen", "--out", str(tmp_path), cwd=tmp_path)
    assert code == 0, err
    signing = {
        "PROGRESSIVE_CHECKPOINT_KEY_FILE": str(tmp_path / "checkpoint-signing.key"),
        "PROGRESSIVE_CHECKPOINT_FILE": str(tmp_path / "checkpoints.jsonl"),
    }
    env |= signing
    code, _, err = await progressive(
        "run", "--config", str(tmp_path / "floor.toml"), db_url=db_url, cwd=tmp_path, env=signing
    )
    # No database yet: refused in one line naming the setting, and no empty file is made.
    assert code == 2 and "no database at" in err and "PROGRESSIVE_DATABASE_URL" in err, err
    assert "Traceback" not in err and not (tmp_path / "floor.db").exists()
    code, _, err = await progressive("db", "upgrade", db_url=db_url, cwd=tmp_path)
    assert code == 0, err
    # The command line refuses to make a commission agent: two admins make one over the API.
    agent = ("users", "add", "agent", "--role", "commission_agent", "--password-stdin")
    code, _, err = await progressive(*agent, db_url=db_url, cwd=tmp_path, stdin=PASSWORD)
    assert code != 0 and "made by two admins" in err
    await commission_agent(db_url, "agent", PASSWORD)

    sim = await start("simulate", "--config", str(tmp_path / "sim.toml"), env=env, cwd=tmp_path)
    run = None
    try:
        await asyncio.sleep(1.5)
        web = free_port()
        run = await start(
            "run", "--config", str(tmp_path / "floor.toml"), "--port", str(web),
            env=env, cwd=tmp_path,
        )  # fmt: skip
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{web}") as http:
            await _until_up(http)
            # The new link was filed with the commission and waits; the agent approves it.
            dealer = await table_watcher(http, db_url)
            tables = (await http.get("/api/v1/links/stud", headers=dealer)).json()["tables"]
            assert {t["state"] for t in tables} == {"awaiting_approval"}
            login = await http.post(
                "/api/v1/auth/token", data={"username": "agent", "password": PASSWORD}
            )
            agent_auth = {"Authorization": f"Bearer {login.json()['access_token']}"}
            filed = (await http.get("/api/v1/submissions", headers=agent_auth)).json()
            assert [(s["link_id"], s["kind"]) for s in filed] == [("stud", "new_link")]
            approved = await http.post(
                f"/api/v1/submissions/{filed[0]['submission_id']}/approve", headers=agent_auth
            )
            assert approved.status_code == 200, approved.text
            await asyncio.sleep(4)
            ready = await http.get("/readyz")
            assert ready.status_code == 200, ready.text
            links = (await http.get("/api/v1/links")).json()
        assert [link["link_id"] for link in links] == ["stud"]
    finally:
        run_result = await stop(run) if run is not None else (None, "")
        sim_result = await stop(sim)
    assert run_result[0] == 0, run_result[1]
    assert "polling 2 tables on 1 buses for 1 links" in run_result[1]
    assert "stopped; every committed entry is in the database" in run_result[1]
    assert sim_result[0] == 0, sim_result[1]

    code, out, err = await progressive("links", "list", db_url=db_url, cwd=tmp_path)
    assert code == 0, err
    header, line = out.splitlines()
    row = dict(zip(header.split("\t"), line.split("\t"), strict=True))
    assert row["LINK"] == "stud" and row["STATE"] == "approved", out
    assert row["METER"].startswith("$") and row["METER"] != "$500.00"  # bets were credited
    code, out, err = await progressive("ledger", "verify", db_url=db_url, cwd=tmp_path, env=signing)
    assert code == 0 and "ledger whole" in out, err
    # Signed at start and at the clean stop, at least; the database reaches every one.
    assert "checked against 0 signed" not in out and "signed checkpoints" in out, out
