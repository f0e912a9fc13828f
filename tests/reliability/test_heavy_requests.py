"""The heaviest requests an auditor (or an attacker with an auditor's token) can send, all at
once, on a live floor: no table waits for its heartbeat as long as its timeout.

One process, as ``progressive run`` and the demo: the simulated tables on Modbus TCP on
loopback, the poller and the web server on one event loop. Each table's heartbeat timeout is
5 s; the simulator records the longest wait between two heartbeats each table received.
Fired together, several of each: reconciliations of the years 1 to 9999 (JSON and CSV) and
1900 to 2100 (PDF), the history export of the years 1 to 9999, periods whose UTC offset
takes them past the calendar, and the longest periods that are answered (five years: the
reconciliation, its CSV and PDF, the history export as CSV and JSON, the meter chart) with
ledger verifications. A request refused because the heavy work is full (503) is asked again after
its Retry-After, as a client should.

Then: no table's heartbeat gap reached its timeout and none disabled its progressive; every
answer carried the security headers and none was a 500; the periods past what is answered
were refused naming the parameter, the others answered; and ``/metrics`` shows the event
loop's lag, below the heartbeat timeout.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from controller.roles import Role
from link_adapters.simulator.clock import wall_clock_us
from tests.app.auth import headers_for
from tests.app.floor import web_floor
from tests.app.test_security_headers import header_problems

HEARTBEAT_TIMEOUT_US = 5_000_000
RETRIES = 30  # of a request refused as busy
RECONCILIATION = "/api/v1/links/stud/reconciliation"
EXPORT = f"{RECONCILIATION}/export"
HISTORY = "/api/v1/exports/history"
CHART = "/api/v1/links/stud/meter"
VERIFY = "/api/v1/ledger/verify"


@dataclass(frozen=True)
class Ask:
    method: str
    path: str
    params: dict[str, str]
    refused: str | None = None  # the parameter a refusal must name; None: answered

    @property
    def where(self) -> str:
        return f"{self.method} {self.path}?{httpx.QueryParams(self.params)}"


def heavy_requests() -> list[Ask]:
    today = datetime.now(UTC).date()
    five_years = {
        "since": today.replace(year=today.year - 5, day=min(today.day, 28)).isoformat(),
        "until": (today + timedelta(days=1)).isoformat(),
    }
    ever = {"since": "0001-01-01", "until": "9999-12-31"}
    century = {"since": "1900-01-01", "until": "2100-12-31"}
    before_year_1 = {"since": "0001-01-01T00:00:00+14:00", "until": "0001-01-08"}
    after_9999 = {"until": "9999-12-31T23:59:59.999999-14:00"}
    beyond = [
        Ask("GET", RECONCILIATION, ever, "query.since"),
        Ask("GET", EXPORT, {**ever, "format": "csv"}, "query.since"),
        Ask("GET", EXPORT, {**century, "format": "pdf"}, "query.since"),
        Ask("GET", HISTORY, ever, "query.since"),
        Ask("GET", CHART, ever, "query.since"),
        Ask("GET", RECONCILIATION, before_year_1, "query.since"),
        Ask("GET", EXPORT, {**after_9999, "format": "pdf"}, "query.until"),
        Ask("GET", HISTORY, {**before_year_1, "format": "json"}, "query.since"),
    ]
    longest = [
        Ask("GET", RECONCILIATION, five_years),
        Ask("GET", EXPORT, {**five_years, "format": "csv"}),
        Ask("GET", EXPORT, {**five_years, "format": "pdf"}),
        Ask("GET", HISTORY, five_years),
        Ask("GET", HISTORY, {**five_years, "format": "json"}),
        Ask("GET", CHART, {**five_years, "points": "2000"}),
        Ask("POST", VERIFY, {}),
    ]
    return beyond * 2 + longest * 3


async def ask(http: httpx.AsyncClient, a: Ask, auth: dict[str, str]) -> tuple[httpx.Response, int]:
    """The answer, and how many times the request was refused as busy first."""
    busy = 0
    while True:
        answer = await http.request(a.method, a.path, params=a.params, headers=auth)
        if answer.status_code != 503 or busy == RETRIES:
            return answer, busy
        busy += 1
        await asyncio.sleep(float(answer.headers["retry-after"]))


async def test_heavy_requests_leave_every_table_its_heartbeat(tmp_path: Path) -> None:
    async with (
        web_floor(tmp_path) as wf,
        httpx.AsyncClient(base_url=wf.base_url, timeout=600) as http,
    ):
        tables = dict(wf.sim.tables)
        assert all(t.config.heartbeat_timeout_us == HEARTBEAT_TIMEOUT_US for t in tables.values())
        auditor = await headers_for(wf, Role.AUDITOR)
        asks = heavy_requests()
        answers = await asyncio.gather(*(ask(http, a, auditor) for a in asks))

        now = wall_clock_us()
        gaps = {
            f"{game} unit {unit}": max(t.heartbeat_gap_max_us, t.heartbeat_age_us(now) or 0)
            for (game, unit), t in tables.items()
        }
        late = {name: f"{gap / 1e6:.1f} s" for name, gap in gaps.items()}
        assert max(gaps.values()) < HEARTBEAT_TIMEOUT_US, f"heartbeat gaps: {late}"
        assert not any(t.heartbeat_timeouts for t in tables.values()), late
        print(f"longest heartbeat gap {max(gaps.values()) / 1e6:.3f} s")

        problems: list[str] = []
        for a, (answer, _) in zip(asks, answers, strict=True):
            problems += header_problems(a.where, answer)
            if a.refused is None:
                if answer.status_code != 200:
                    problems.append(f"{a.where}: {answer.status_code} {answer.text[:300]}")
                continue
            if answer.status_code != 422:
                problems.append(
                    f"{a.where}: {answer.status_code}, not refused: {answer.text[:300]}"
                )
                continue
            (problem,) = answer.json()["detail"]["problems"]
            if problem["where"] != a.refused:
                problems.append(f"{a.where}: the refusal names {problem}, not {a.refused}")
        assert not problems, "\n".join(problems)
        print(f"refused as busy first: {sum(busy for _, busy in answers)} times")

        answered = [
            (a, answer) for a, (answer, _) in zip(asks, answers, strict=True) if a.refused is None
        ]
        report = next(r for a, r in answered if a.path == RECONCILIATION)
        assert report.json()["balanced"] is True
        assert 250 < len(report.json()["weeks"]) < 300  # five years of weeks
        pdf = next(r for a, r in answered if a.params.get("format") == "pdf")
        assert pdf.content.startswith(b"%PDF")

        scraped = (await http.get("/metrics")).text
        samples = {
            s.name: s.value
            for family in text_string_to_metric_families(scraped)
            for s in family.samples
            if not s.labels
        }
        lag = samples["progressive_event_loop_lag_max_seconds"]
        print(f"largest event loop lag {lag:.3f} s")
        assert samples["progressive_event_loop_wakeup_lag_seconds_count"] > 0
        assert 0 < lag < HEARTBEAT_TIMEOUT_US / 1e6
