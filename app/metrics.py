"""Prometheus metrics: ``GET /metrics`` in the text exposition format.

Each application has its own ``CollectorRegistry`` (several applications may run in one
process). What already has a counter in memory (the poller's per-table counts, the meters,
the table states, the display clients) is read when Prometheus scrapes, so the poll path pays
nothing for it. What happens once per poll or per commit and needs a distribution (poll
latency, ledger append latency) is one histogram ``observe`` on a child whose labels were
fixed when the metrics were built. Contributions, awards and hits are counted from the
runtime's committed outcomes.

The names, for alert rules and dashboards (``deploy/prometheus/alerts.yml``):

* ``progressive_poll_latency_seconds{link_id}`` histogram: one table read (or read-write)
* ``progressive_table_polls_total``, ``progressive_table_errors_total``,
  ``progressive_table_timeouts_total`` ``{link_id, table_id}``
* ``progressive_table_poll_failures_total{link_id, table_id, cause}``: failed polls by cause,
  ``timeout``, ``link_down`` (the bus cannot be opened or was lost, a serial port refusing its
  settings among them), ``device``, ``profile``, ``adapter``, and ``unknown``: a fault the
  adapter does not know (always there, from 0)
* ``progressive_table_online{link_id, table_id}`` 1 online, 0 offline;
  ``progressive_table_out_of_play{link_id, table_id}`` 1 removed from play
* ``progressive_tables_online{link_id}``, ``progressive_tables_hit_pending{link_id}``
* ``progressive_hit_pending_oldest_age_seconds{link_id}``: how long the longest-held table of
  the link has waited for a technician (0 when none is held)
* ``progressive_link_live{link_id}`` 1 once the commission approved the link
* ``progressive_link_polling{link_id}`` 1 when this process drives the link (a hot standby
  shows 0 until it takes the link over)
* ``progressive_link_last_answer_timestamp_seconds{link_id}``: the last poll a table of the
  link answered, where this process polls it
* ``progressive_meter_cents{link_id}``: the meter as displayed, whole cents (level 1's)
* ``progressive_level_meter_cents{link_id, level, level_name, pot}``: each level's meter as
  displayed, whole cents (``pot="meter"``). ``/metrics`` is read without signing in: never a
  hidden (reserve) or overflow meter, nor a mystery level's trigger. A fixed-pay link has
  none.
* ``progressive_contribution_units_total{link_id}`` (1 cent = 10,000 units),
  ``progressive_award_cents_total{link_id}``, ``progressive_hits_total{link_id, status}``
* ``progressive_ledger_append_seconds`` histogram: one group commit of readings
* ``progressive_websocket_clients{link_id}``
* ``progressive_websocket_refused_total{reason}``: display feeds refused before they were
  served: ``origin`` (a page of another site), ``too_many`` (its address held as many as it
  may)
* ``progressive_event_loop_lag_seconds``: how late the last timed sleep woke up;
  ``progressive_event_loop_lag_max_seconds`` the latest it woke since the process started;
  ``progressive_event_loop_wakeup_lag_seconds`` histogram: every such wake-up. A table
  disables its progressive after its heartbeat timeout (5 s by default) without one, and
  every heartbeat leaves from this loop: a lag near that timeout is a floor about to stop.
* ``progressive_ledger_verification_failed`` 1 when the last verification found a broken
  chain; ``progressive_ledger_verification_timestamp_seconds`` when it ran (0: not yet)
* ``progressive_software_check_failed`` 1 when the last check of the installed software
  against its manifest failed (every link is then inoperable);
  ``progressive_software_check_timestamp_seconds`` when it ran (at start, then at least every
  24 hours); ``progressive_software_check_mismatched_files`` how many files did not match;
  ``progressive_software_checks_failed_total`` failed checks since the process started
* ``progressive_protection_alerts_open{scope, line, window}``: game protection's open alerts
  (``scope`` table, seat, dealer or game; ``line`` the paytable hand or the fault's name),
  ``progressive_protection_open_alerts`` all of them (always there, from 0);
  ``progressive_protection_alerts_raised_total``; ``progressive_protection_loaded`` 1 once the
  kept history is read at start; ``progressive_protection_webhook_failures_total``
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any

from fastapi import APIRouter, FastAPI, Request, Response
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from app.floor_gauges import FloorState
from app.live import LiveHub
from controller.core.reducer import EntryKind, Outcome
from controller.runtime.service import FloorService

log = logging.getLogger(__name__)

# A poll is one Modbus round trip plus the wait for its bus: milliseconds on TCP, tens of
# milliseconds on a serial line, seconds only when a table times out.
POLL_BUCKETS = (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0)
COMMIT_BUCKETS = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 5.0)
LOOP_LAG_INTERVAL_S = 0.5
LOOP_LAG_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
# The process that polls verifies the whole ledger a few minutes after it starts and then
# daily, so a broken chain raises an alert without anyone asking (68 IAC 10-6-5).
VERIFY_FIRST_S = 300.0
VERIFY_INTERVAL_S = 24 * 60 * 60.0
HIT_STATUSES = ("awarded", "refused")


class FloorMetrics:
    """The metrics of one application and the service it runs."""

    def __init__(
        self,
        service: FloorService,
        hub: LiveHub | None = None,
        *,
        verify_first_s: float = VERIFY_FIRST_S,
        verify_interval_s: float = VERIFY_INTERVAL_S,
    ) -> None:
        self.service = service
        self.hub = hub
        # The display feed's refusals by reason (``app.api.display.DisplayDoor``).
        self.ws_refused: Mapping[str, int] | None = None
        self.verify_first_s = verify_first_s
        self.verify_interval_s = verify_interval_s
        self.registry = registry = CollectorRegistry(auto_describe=True)
        self.poll_latency = Histogram(
            "progressive_poll_latency_seconds",
            "One poll of a table: the read (or read-write) and the wait for its bus",
            ["link_id"],
            buckets=POLL_BUCKETS,
            registry=registry,
        )
        self.ledger_append = Histogram(
            "progressive_ledger_append_seconds",
            "One group commit of readings to the ledger",
            buckets=COMMIT_BUCKETS,
            registry=registry,
        )
        self.contribution_units = Counter(
            "progressive_contribution_units",
            "Contributions to the meter, in units of 1/10,000 cent",
            ["link_id"],
            registry=registry,
        )
        self.award_cents = Counter(
            "progressive_award_cents",
            "Awards paid from the meter, in cents",
            ["link_id"],
            registry=registry,
        )
        self.hits = Counter(
            "progressive_hits", "Hits taken, by outcome", ["link_id", "status"], registry=registry
        )
        self.loop_lag = Gauge(
            "progressive_event_loop_lag_seconds",
            "How late the event loop woke the last timed sleep",
            registry=registry,
        )
        self.loop_lag_max = Gauge(
            "progressive_event_loop_lag_max_seconds",
            "The latest the event loop woke a timed sleep since the process started",
            registry=registry,
        )
        self.loop_lags = Histogram(
            "progressive_event_loop_wakeup_lag_seconds",
            f"How late the event loop woke each timed sleep (one every {LOOP_LAG_INTERVAL_S} s)",
            buckets=LOOP_LAG_BUCKETS,
            registry=registry,
        )
        self.verification_failed = Gauge(
            "progressive_ledger_verification_failed",
            "1 when the last ledger verification found a broken chain",
            registry=registry,
        )
        self.verification_at = Gauge(
            "progressive_ledger_verification_timestamp_seconds",
            "When the ledger was last verified (0: not since this process started)",
            registry=registry,
        )
        # Label values are fixed here, so the poll and commit paths only observe.
        self._latency: dict[str, Any] = {}
        self._contribution: dict[str, Any] = {}
        self._award: dict[str, Any] = {}
        self._hits: dict[tuple[str, str], Any] = {}
        for link_id in service.memory.states:
            self._add_link(link_id)
        self.held_since_us: dict[str, int] = {}
        self._tasks: list[asyncio.Task[None]] = []
        registry.register(FloorState(self))

    def _add_link(self, link_id: str) -> None:
        self._latency[link_id] = self.poll_latency.labels(link_id)
        self._contribution[link_id] = self.contribution_units.labels(link_id)
        self._award[link_id] = self.award_cents.labels(link_id)
        for status in HIT_STATUSES:
            self._hits[link_id, status] = self.hits.labels(link_id, status)

    # ------------------------------------------------------------------------- observers

    def polled(self, link_id: str, seconds: float) -> None:
        child = self._latency.get(link_id)
        if child is not None:
            child.observe(seconds)

    def committed(self, seconds: float) -> None:
        self.ledger_append.observe(seconds)

    def on_outcome(self, outcome: Outcome) -> None:
        link_id = outcome.state.link_id
        if link_id not in self._latency:
            self._add_link(link_id)
        units = 0
        for event in outcome.events:
            if event.kind is EntryKind.CONTRIBUTION:
                units += event.delta_units
        if units:
            self._contribution[link_id].inc(units)
        for hit in outcome.hits:
            if hit.status == "awarded" and hit.award_cents:
                self._award[link_id].inc(hit.award_cents)
            child = self._hits.get((link_id, hit.status))
            if child is not None:
                child.inc()

    def verified(self, *, ok: bool) -> None:
        self.verification_failed.set(0 if ok else 1)
        self.verification_at.set(self.service.now_us() / 1e6)

    # ------------------------------------------------------------------------- life

    async def start(self) -> None:
        self.service.memory.listeners.append(self.on_outcome)
        if self.service.poller is not None:
            self.service.poller.per_table.observer = self
        self._tasks.append(asyncio.create_task(self._measure_lag(), name="loop lag"))
        if self.service.poller is not None:
            self._tasks.append(asyncio.create_task(self._verify_daily(), name="ledger verify"))

    async def stop(self) -> None:
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        poller = self.service.poller
        if poller is not None and poller.per_table.observer is self:
            poller.per_table.observer = None
        with contextlib.suppress(ValueError):
            self.service.memory.listeners.remove(self.on_outcome)

    async def _measure_lag(self) -> None:
        loop = asyncio.get_running_loop()
        worst = 0.0
        while True:
            asked = loop.time() + LOOP_LAG_INTERVAL_S
            await asyncio.sleep(LOOP_LAG_INTERVAL_S)
            lag = max(0.0, loop.time() - asked)
            self.loop_lag.set(lag)
            self.loop_lags.observe(lag)
            if lag > worst:
                worst = lag
                self.loop_lag_max.set(lag)

    async def verify_now(self) -> bool:
        """Walk every link's chain; the result is what the verification gauges show."""
        report = await self.service.records.verify_ledger()
        for p in report.problems:
            log.error("ledger verification: link %s entry %s: %s", p.link_id, p.seq, p.what)
        self.verified(ok=report.ok)
        return report.ok

    async def _verify_daily(self) -> None:
        await asyncio.sleep(self.verify_first_s)
        while True:
            try:
                await self.verify_now()
            except Exception as exc:  # the database may be away: the next run tries again
                log.warning("ledger verification could not run: %s", exc)
            await asyncio.sleep(self.verify_interval_s)

    async def refresh(self) -> None:
        """Read what only the database knows: since when the held tables wait."""
        self.held_since_us = await self.service.records.held_since()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)


def metrics_of(app: FastAPI) -> FloorMetrics | None:
    metrics: FloorMetrics | None = getattr(app.state, "metrics", None)
    return metrics


@asynccontextmanager
async def floor_metrics(app: FastAPI) -> AsyncIterator[None]:
    """Built once the service has started (the links are known), stopped before it."""
    metrics = FloorMetrics(app.state.service)
    await metrics.start()
    app.state.metrics = metrics
    try:
        yield
    finally:
        await metrics.stop()


router = APIRouter(tags=["health"], lifespan=floor_metrics)


@router.get(
    "/metrics",
    summary="Prometheus metrics, in the text exposition format",
    response_class=Response,
    responses={200: {"content": {CONTENT_TYPE_LATEST: {}}, "description": "the metrics"}},
)
async def metrics_endpoint(request: Request) -> Response:
    metrics = metrics_of(request.app)
    if metrics is None:
        return Response("metrics are not running\n", status_code=503, media_type="text/plain")
    # The hub starts with the application, after these metrics may have been built.
    metrics.hub = getattr(request.app.state, "live_hub", None)
    door = getattr(request.app.state, "display_door", None)
    metrics.ws_refused = door.refused if door is not None else None
    if metrics.service.started:
        await metrics.refresh()
    return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
