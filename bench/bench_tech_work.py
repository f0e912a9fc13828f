"""The technician's list of work on a busy floor: every held jackpot, whatever the backlog.

A floor (``tests.app.busy_floor``: simulated tables on loopback Modbus, the real poller, the
SQLite ledger and the web server) with a royal flush holding ``stud-1`` and ``--fixed-pays``
fixed pays waiting for a technician on other tables, the royal flush the oldest of them all.
Two requests are timed, each ``--requests`` times, as a signed-in technician:

* baseline: ``GET /api/v1/hits?pending=true``, the newest 200 pending hits (what ``/tech``
  asked for before it had a list of work): the held jackpot is not on it once more than 199
  younger hits wait;
* ``GET /api/v1/hits/work?limit=50``, what ``/tech`` asks for now: every hit holding a table
  (never cut to a page) and the newest 50 of the other work.

Printed: the median and p95 of each, the answer's size, whether the held jackpot is on it,
and the ratio of the medians. Target: the jackpot is always on the list of work, and the list
costs no more than the page it replaces (ratio at most 1.0 plus noise: 1.2).

    python -m bench.bench_tech_work [--fixed-pays 300] [--requests 60]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench._floor import median, ms, p95, verdict
from controller.roles import Role
from tests.app.auth import headers_for
from tests.app.busy_floor import busy_floor

TARGET_RATIO = 1.2


async def _timed(
    http: httpx.AsyncClient, path: str, headers: dict[str, str], n: int
) -> tuple[list[float], Any, int]:
    times: list[float] = []
    body: Any = None
    size = 0
    for _ in range(n):
        start = time.perf_counter()
        answer = await http.get(path, headers=headers)
        times.append(time.perf_counter() - start)
        answer.raise_for_status()
        body, size = answer.json(), len(answer.content)
    return times, body, size


async def run(fixed_pays: int, requests: int) -> bool:
    with tempfile.TemporaryDirectory() as folder:
        built = time.perf_counter()
        async with busy_floor(Path(folder), fixed_pays=fixed_pays) as bf:
            print(
                f"floor: {bf.fixed_pays} fixed pays waiting, {bf.quiet_pays} paid without a "
                f"technician, the royal flush {bf.held_hit_id} holding {bf.held_table} "
                f"(built in {time.perf_counter() - built:.1f} s)"
            )
            tech = await headers_for(bf.wf, Role.TECHNICIAN)
            async with httpx.AsyncClient(base_url=bf.base_url, timeout=30) as http:
                old, old_body, old_size = await _timed(
                    http, "/api/v1/hits?pending=true", tech, requests
                )
                new, new_body, new_size = await _timed(
                    http, "/api/v1/hits/work?limit=50", tech, requests
                )
    old_has = any(h["hit_id"] == bf.held_hit_id for h in old_body)
    new_has = any(h["hit_id"] == bf.held_hit_id for h in new_body["holding"])
    ratio = median(new) / median(old)
    print(
        f"baseline  /hits?pending=true  median {ms(median(old))}  p95 {ms(p95(old))}  "
        f"{old_size:>8} bytes  {len(old_body)} hits, jackpot on it: {old_has}"
    )
    print(
        f"list      /hits/work?limit=50 median {ms(median(new))}  p95 {ms(p95(new))}  "
        f"{new_size:>8} bytes  {len(new_body['holding'])} holding + "
        f"{len(new_body['other'])} of {new_body['other_total']} other, jackpot on it: {new_has}"
    )
    ok = new_has and ratio <= TARGET_RATIO
    print(
        f"{verdict(ok)}  ratio of medians {ratio:.2f}x (target <= {TARGET_RATIO}x), "
        f"the held jackpot listed: {new_has}"
    )
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fixed-pays", type=int, default=300)
    parser.add_argument("--requests", type=int, default=60)
    args = parser.parse_args()
    ok = asyncio.run(run(args.fixed_pays, args.requests))
    raise SystemExit(0 if ok else 1)


if __name__ == "__main__":
    main()
