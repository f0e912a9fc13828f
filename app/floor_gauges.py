"""The metrics read from the service's memory when Prometheus scrapes: each table's poll
counts and state, each link's tables, meter, approval and display clients, the display feed's
refusals, the check of the installed software and the change feed (the names are listed in
``app.metrics``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from app.live import LiveHub
from controller.core.money import displayed_cents
from controller.core.reducer.levels import meters_of, parse_key
from controller.rules.integrity import INTEGRITY_CLAUSE
from controller.runtime.service import FloorService
from controller.runtime.table_polling import UNKNOWN_CAUSE as UNKNOWN

__all__ = ["FloorState", "GaugeSources"]


class GaugeSources(Protocol):
    """What the gauges read besides the service's memory: the application's metrics
    (``app.metrics.FloorMetrics``) hold it."""

    @property
    def service(self) -> FloorService: ...

    @property
    def hub(self) -> LiveHub | None: ...

    @property
    def ws_refused(self) -> Mapping[str, int] | None:
        """The display feed's refusals by reason; None: no display feed."""
        ...

    @property
    def held_since_us(self) -> Mapping[str, int]:
        """Since when each link's held tables wait: its oldest hit not released."""
        ...


class FloorState(Collector):
    """What is read from the service's memory at each scrape."""

    def __init__(self, metrics: GaugeSources) -> None:
        self.metrics = metrics

    def collect(self) -> Iterable[Any]:
        m = self.metrics
        service = m.service
        table_labels = ["link_id", "table_id"]
        polls = CounterMetricFamily(
            "progressive_table_polls", "Polls of each table", labels=table_labels
        )
        errors = CounterMetricFamily(
            "progressive_table_errors",
            "Failed polls, writes and recordings of each table",
            labels=table_labels,
        )
        timeouts = CounterMetricFamily(
            "progressive_table_timeouts",
            "Polls a table did not answer in time",
            labels=table_labels,
        )
        poll_failures = CounterMetricFamily(
            "progressive_table_poll_failures",
            "Failed polls of each table by cause: timeout, link_down, device, profile, adapter, "
            "unknown (a fault the adapter does not know)",
            labels=[*table_labels, "cause"],
        )
        online = GaugeMetricFamily(
            "progressive_table_online", "1 when the table is online", labels=table_labels
        )
        out_of_play = GaugeMetricFamily(
            "progressive_table_out_of_play",
            f"1 when the table is removed from play ({INTEGRITY_CLAUSE})",
            labels=table_labels,
        )
        unrecorded = GaugeMetricFamily(
            "progressive_table_unrecorded",
            "1 when the table is held because its reading could not be recorded",
            labels=table_labels,
        )
        link_labels = ["link_id"]
        tables_online = GaugeMetricFamily(
            "progressive_tables_online", "Tables of the link online", labels=link_labels
        )
        held = GaugeMetricFamily(
            "progressive_tables_hit_pending",
            "Tables of the link held for a technician after a hit",
            labels=link_labels,
        )
        held_age = GaugeMetricFamily(
            "progressive_hit_pending_oldest_age_seconds",
            "How long the longest-held table of the link has waited (0: none held)",
            labels=link_labels,
        )
        live = GaugeMetricFamily(
            "progressive_link_live",
            "1 once the link plays (approved by the commission)",
            labels=link_labels,
        )
        polling = GaugeMetricFamily(
            "progressive_link_polling",
            "1 when this process polls the link's tables (0: another controller drives it)",
            labels=link_labels,
        )
        answered = GaugeMetricFamily(
            "progressive_link_last_answer_timestamp_seconds",
            "When a table of the link last answered a poll of this process",
            labels=link_labels,
        )
        meter = GaugeMetricFamily(
            "progressive_meter_cents", "The link's meter as displayed, in cents", labels=link_labels
        )
        # Each level's meter as displayed, and nothing a patron's display does not show:
        # /metrics is read without signing in, so never a hidden (reserve) or overflow meter
        # (staff read those on the link) nor a mystery level's trigger.
        level_meter = GaugeMetricFamily(
            "progressive_level_meter_cents",
            "Each level's meter of the link's pool as displayed, in cents",
            labels=["link_id", "level", "level_name", "pot"],
        )
        clients = GaugeMetricFamily(
            "progressive_websocket_clients", "Floor displays connected", labels=link_labels
        )
        if not service.started:
            return
        now_us = service.now_us()
        poller = service.poller
        hub = m.hub
        for link_id, state in sorted(service.memory.states.items()):
            n_online = n_held = 0
            for table_id, ts in sorted(state.tables.items()):
                labels = [link_id, table_id]
                tp = poller.tables.get(table_id) if poller is not None else None
                if tp is not None:
                    polls.add_metric(labels, tp.polls)
                    errors.add_metric(labels, tp.errors)
                    timeouts.add_metric(labels, tp.timeouts)
                    # "unknown" is always there (from 0), so an alert sees its first increase.
                    failed_by = tp.failed_by
                    poll_failures.add_metric([*labels, UNKNOWN], failed_by.get(UNKNOWN, 0))
                    for cause, n in failed_by.items():
                        if cause != UNKNOWN:
                            poll_failures.add_metric([*labels, cause], n)
                online.add_metric(labels, 1 if ts.online else 0)
                out_of_play.add_metric(labels, 1 if ts.out_of_play else 0)
                unrecorded.add_metric(labels, 1 if table_id in service.memory.unrecorded else 0)
                n_online += ts.online and not ts.out_of_play
                n_held += ts.hit_pending
            tables_online.add_metric([link_id], n_online)
            held.add_metric([link_id], n_held)
            since = m.held_since_us.get(link_id)
            age = max(0, now_us - since) / 1e6 if n_held and since is not None else 0.0
            held_age.add_metric([link_id], age)
            live.add_metric([link_id], 1 if service.memory.is_live(link_id, now_us) else 0)
            if poller is not None:
                polling.add_metric([link_id], 1 if poller.polling(link_id) else 0)
                last = service.link_answered_us(link_id)
                if last is not None:
                    answered.add_metric([link_id], last / 1e6)
            meter.add_metric([link_id], state.meter_cents)
            for key, units in meters_of(state.levels).items():
                index, pot = parse_key(key)
                if pot != "meter":
                    continue
                name = state.levels[index].config.name
                level_meter.add_metric(
                    [link_id, f"L{index + 1}", name, pot], displayed_cents(units)
                )
            channel_clients = (
                hub.clients(link_id) if hub is not None and link_id in hub.channels else 0
            )
            clients.add_metric([link_id], channel_clients)
        yield from (polls, errors, timeouts, poll_failures)
        yield from (online, out_of_play, unrecorded, tables_online)
        yield from (held, held_age)
        yield from (live, polling, answered, meter, level_meter, clients)
        if m.ws_refused is not None:
            refused = CounterMetricFamily(
                "progressive_websocket_refused",
                "Display feeds refused before they were served, by reason",
                labels=["reason"],
            )
            for reason, n in sorted(m.ws_refused.items()):
                refused.add_metric([reason], n)
            yield refused
        check = service.self_check
        if check is not None and check.last is not None:
            # The check of the installed software against its manifest (the
            # ProgressiveSoftwareMismatch alert): a failure holds every link.
            record = check.last
            yield GaugeMetricFamily(
                "progressive_software_check_failed",
                "1 when the last check of the installed software against its manifest failed",
                value=0 if record.result.passed else 1,
            )
            yield GaugeMetricFamily(
                "progressive_software_check_timestamp_seconds",
                "When the installed software was last checked against its manifest",
                value=record.at_us / 1e6,
            )
            yield GaugeMetricFamily(
                "progressive_software_check_mismatched_files",
                "Installed files that did not match the manifest at the last check",
                value=len(record.result.mismatches),
            )
            yield CounterMetricFamily(
                "progressive_software_checks_failed",
                "Checks of the installed software that failed since the process started",
                value=check.failures,
            )
        protection = service.protection
        if protection is not None and protection.raises:
            # Game protection (the ProgressiveProtectionAlert alert): the alerts open now by
            # what they are for, and those raised and closed since the process started.
            opened = GaugeMetricFamily(
                "progressive_protection_alerts_open",
                "Game protection's open alerts: a table, seat, dealer or game out of line "
                "with the exact odds (or a table's faults), by scope, line and window",
                labels=["scope", "line", "window"],
            )
            counts: dict[tuple[str, str, str], int] = {}
            for a in list(protection.open.values()):
                what = (a.scope, a.line, a.window)
                counts[what] = counts.get(what, 0) + 1
            for what, n in sorted(counts.items()):
                opened.add_metric(list(what), n)
            yield opened
            yield GaugeMetricFamily(
                "progressive_protection_open_alerts",
                "Game protection's open alerts, all together",
                value=sum(counts.values()),
            )
            yield CounterMetricFamily(
                "progressive_protection_alerts_raised",
                "Game protection's alerts raised by this process since it started",
                value=protection.raised_total,
            )
            yield GaugeMetricFamily(
                "progressive_protection_loaded",
                "1 once game protection has read the kept history at start",
                value=1 if protection.loaded else 0,
            )
            yield CounterMetricFamily(
                "progressive_protection_webhook_failures",
                "Alerts the configured webhook did not take",
                value=protection.webhook_failures,
            )
        feed = service.change_feed
        if feed is not None:  # PostgreSQL: following the other processes' commits
            yield GaugeMetricFamily(
                "progressive_change_feed_listening",
                "1 while this process hears of the other processes' commits",
                value=1 if feed.listening else 0,
            )
            yield CounterMetricFamily(
                "progressive_change_feed_links_read",
                "Links read again after another process committed to them",
                value=feed.links_read,
            )
