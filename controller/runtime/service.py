"""The controller as one object: database, links in memory, and (for a floor) the poller.

``FloorService`` is what the daemon, the web application and the demo start and stop. It owns
the database engine, the ledger store, the ``LinkRuntime`` and, when a floor configuration is
given, the ``Poller`` of its tables. Everything that shows a table's state asks it here, so a
page, the API and a display agree on what "offline" or "hit pending" means.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, TypeVar

from controller.access.accounts import Accounts
from controller.core.dealers import DealerSpan
from controller.paperwork.checkpoints import load_private_key
from controller.paperwork.corrections import Corrections
from controller.paperwork.filing_desk import FilingDesk
from controller.paperwork.integrity import IntegrityRecords
from controller.paperwork.pdf import Letterhead, letterhead_of
from controller.paperwork.reconciliation import Reconciliations
from controller.paperwork.record_views import Records
from controller.paperwork.retention import RetentionJob, RetentionPurge, check_periods_in_force
from controller.paperwork.submissions import ReviewDesk
from controller.periods import Clock, at_text
from controller.rules.statement import Statement
from controller.runtime import readiness
from controller.runtime.anchoring import Checkpointer, Sinks
from controller.runtime.change_feed import ChangeFeed
from controller.runtime.clock import SystemClock
from controller.runtime.compaction import CompactionJob
from controller.runtime.config_entries import FloorConfig
from controller.runtime.dealers import Dealers
from controller.runtime.floor_approvals import FloorMismatch
from controller.runtime.hit_work import HitWork
from controller.runtime.link_commands import LinkCommands
from controller.runtime.link_locks import LinkLocks, floor_setup
from controller.runtime.link_memory import LinkMemory
from controller.runtime.links import LinkRuntime
from controller.runtime.new_links import open_floor
from controller.runtime.poller import Poller
from controller.runtime.protection import GameProtection
from controller.runtime.self_check import SelfCheck
from controller.runtime.table_polling import TablePoll
from controller.runtime.workers import Workers
from controller.settings import Settings, load_ledger_key, manifest_path
from controller.storage.database import check_schema, make_engine, upgrade
from controller.storage.errors import NotFound
from controller.storage.handles import Database
from controller.storage.link_names import link_names
from controller.storage.protection import ProtectionRecords
from controller.storage.store import LedgerStore
from link_adapters.reading import TableFlags

__all__ = [
    "FloorMismatch",
    "FloorService",
    "TableStateName",
    "TableStatus",
    "open_floor",
]

log = logging.getLogger(__name__)

_Part = TypeVar("_Part")

TableStateName = Literal[
    "online",
    "offline",
    "hit_pending",
    "unpolled",
    "out_of_play",
    "awaiting_approval",
    "standby",
    "inoperable",
    "unrecorded",
]


@dataclass(frozen=True, slots=True)
class TableStatus:
    """What people are shown about one table, from the engine's state and the last poll."""

    table_id: str
    link_id: str
    state: TableStateName
    online: bool
    hit_pending: bool
    credits: int | None
    rounds: int | None
    last_reading_us: int | None  # the last reading applied to the meter
    last_answer_us: int | None  # the last poll the table answered (None: not polled here)
    failures: int  # failed polls in a row
    seats_with_bets: tuple[int, ...]  # this round, in seat order; none when not read
    status_flags: TableFlags | None  # what the table reports of its own state
    progressive_disabled: bool | None
    unrecorded_reason: str | None = None  # why its readings cannot be recorded (held)
    poll_problem: str | None = None  # why its last poll failed; None while it answers


def _started(part: _Part | None) -> _Part:
    """A part the service builds when it starts; asked for before, it is a fault."""
    if part is None:
        raise RuntimeError("the service is not started")
    return part


class FloorService:
    """Start, run and stop the controller: ``await start()`` ... ``await stop()``.

    With ``floor`` the configured links are opened (created when new) and their tables polled;
    without it the links in the database are loaded and nothing is polled (a web process in
    front of a controller running elsewhere, or a test driving readings itself). ``migrate``
    upgrades the schema first (the demo, tests); otherwise a schema that is not current is
    refused with the command that fixes it. The retention purge runs on its schedule
    (settings ``retention_first_run_s``, ``retention_interval_s``) unless
    ``retention_schedule`` is off (a one-off command that purges by itself).

    Before anything, the installed software is checked against its manifest (setting
    ``manifest_file``): a service whose software fails does not start. It is checked again
    every ``self_check_interval_s`` and on demand (``self_check``).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        floor: FloorConfig | None = None,
        clock: Clock | None = None,
        migrate: bool = False,
        create_key: bool = False,
        retention_schedule: bool = True,
        protection: bool = True,
    ) -> None:
        self.settings = settings
        self.floor = floor
        self.clock: Clock = clock or SystemClock()
        self._migrate = migrate
        self._create_key = create_key
        self._retention_schedule = retention_schedule
        self._protection = protection
        self._engine: Database | None = None
        self._accounts: Accounts | None = None
        self._store: LedgerStore | None = None
        self._runtime: LinkRuntime | None = None
        self._workers: Workers | None = None
        self._records: Records | None = None
        self._corrections: Corrections | None = None
        self._integrity: IntegrityRecords | None = None
        self._dealers: Dealers | None = None
        self._hits: HitWork | None = None
        self._commands: LinkCommands | None = None
        self._reconciliations: Reconciliations | None = None
        self._filing_desk: FilingDesk | None = None
        self._review_desk: ReviewDesk | None = None
        self._retention_purge: RetentionPurge | None = None
        self.poller: Poller | None = None
        self.link_locks: LinkLocks | None = None
        self.change_feed: ChangeFeed | None = None
        self.retention: RetentionJob | None = None
        # Closed gaming days moved into blocks, by the process that polls the tables.
        self.compaction: CompactionJob | None = None
        self.checkpoints: Checkpointer | None = None
        self.self_check: SelfCheck | None = None
        # Game protection: every table's luck against the exact odds, off the poll path.
        self.protection: GameProtection | None = None
        # How the floor file differs from the database's approved terms, the database's kept.
        self.floor_notes: list[str] = []
        self.started = False

    @property
    def engine(self) -> Database:
        return _started(self._engine)

    @property
    def accounts(self) -> Accounts:
        """The people who sign in, their account changes and the displays' tokens."""
        return _started(self._accounts)

    @property
    def store(self) -> LedgerStore:
        return _started(self._store)

    @property
    def runtime(self) -> LinkRuntime:
        return _started(self._runtime)

    @property
    def memory(self) -> LinkMemory:
        """The links in memory, as the displays, gauges and boards read them and hear of
        each outcome committed (``listeners``)."""
        return self.runtime.memory

    def now_us(self) -> int:
        """Now, by the service's clock."""
        return self.clock.now_us()

    @property
    def records(self) -> Records:
        """The records as people read them: hits, history, the meter, anomalies, documents."""
        return _started(self._records)

    @property
    def corrections(self) -> Corrections:
        """Corrections of the links' meters: requested by one person, decided by another."""
        return _started(self._corrections)

    @property
    def integrity(self) -> IntegrityRecords:
        """Tables removed from play, their records and their way back into play."""
        return _started(self._integrity)

    @property
    def dealers(self) -> Dealers:
        """Who deals at each table: dealers signing in and out, and who dealt when."""
        return _started(self._dealers)

    @property
    def reconciliations(self) -> Reconciliations:
        """The reconciliation of a link's meter for auditors, over any period."""
        return _started(self._reconciliations)

    @property
    def filing_desk(self) -> FilingDesk:
        """Filing submissions with the commission, under this installation's law, bound on a
        jackpot's odds, letterhead and demonstration mode."""
        return _started(self._filing_desk)

    @property
    def review_desk(self) -> ReviewDesk:
        """The submissions filed at ``filing_desk``: read, and reviewed by the commission."""
        return _started(self._review_desk)

    @property
    def retention_purge(self) -> RetentionPurge:
        """The purge of records past their retention period, run once on demand; the schedule
        (``retention``) runs the same."""
        return _started(self._retention_purge)

    @property
    def hits(self) -> HitWork:
        """The technician's work after a hit: verifying it, the second signature, the hand
        pay and the tax form recorded, the table released."""
        return _started(self._hits)

    @property
    def commands(self) -> LinkCommands:
        """The commands people give a link: anomalies reviewed, rates changed, recovery."""
        return _started(self._commands)

    async def _dealer_spans(self, since_us: int, until_us: int) -> dict[str, list[DealerSpan]]:
        return await self.dealers.spans(since_us=since_us, until_us=until_us)

    @property
    def protection_records(self) -> ProtectionRecords:
        """Game protection's alerts as recorded (by this process or the one driving the
        floor)."""
        return ProtectionRecords(self.engine)

    @property
    def workers(self) -> Workers:
        """Threads for the heavy work asked over the web (reports, exports, verification),
        so that it never holds up the polls and heartbeats of this process's event loop."""
        return _started(self._workers)

    async def start(self) -> None:
        # First of all, before the database is opened or a table polled: software that fails
        # its check against the manifest does not start (controller.rules.software).
        self.self_check = SelfCheck(
            manifest_path(self.settings),
            interval_s=self.settings.self_check_interval_s,
            clock=self.clock,
        )
        await self.self_check.first()
        key = load_ledger_key(self.settings, create=self._create_key)
        engine = make_engine(self.settings.database_url)
        self._engine = engine
        self._accounts = Accounts(engine, self.clock)
        self._workers = Workers()
        try:
            if self._migrate:
                await upgrade(engine)
            else:
                await check_schema(engine)
            self._store = store = LedgerStore(
                engine,
                key,
                technician_from_cents=self.settings.fixed_pay_technician_from,
                law=self.settings.law,
            )
            # A retention period once in force can only lengthen: a shortened setting is
            # refused here, before anything runs (68 IAC 10-6-5(d), 10-1-6.2(c)).
            await check_periods_in_force(
                engine,
                meter_years=self.settings.meter_retention_years,
                integrity_years=self.settings.integrity_retention_years,
            )
            if self.settings.demonstration:
                # Before any link is opened or filed under it: the records say since when.
                await store.check_key()
                await store.note_demonstration(at_us=self.clock.now_us(), actor="configuration")
                log.warning("%s", self.settings.statement().demonstration)
            if self.floor is not None:
                # Before anything is created or polled: a database behind this controller's
                # own signed checkpoints (restored from an earlier copy, its newest history
                # taken away) is refused here.
                self.checkpoints = await self._open_checkpoints(store)
                self.floor_notes = []
                async with floor_setup(engine):
                    self._runtime = await open_floor(
                        store,
                        self.floor,
                        self.clock,
                        notes=self.floor_notes,
                        demonstration=self.settings.demonstration,
                        letterhead=letterhead_of(self.settings),
                    )
                for note in self.floor_notes:
                    log.warning("%s", note)
                self.poller = Poller(self._runtime, self.floor, self.clock)
                self.poller.build()
                if engine.dialect.name == "postgresql":
                    await self._start_as_candidate(engine, self.poller)
                else:
                    await self.poller.start()  # embedded: the only controller of its file
                if self.checkpoints is not None:
                    self.checkpoints.start()
            else:
                await store.check_key()
                self._runtime = LinkRuntime(store, self.clock)
                await self._runtime.memory.load()
            self._runtime.hits.second_signature_from_cents = self.settings.second_signature_from
            self._hits = self._runtime.hits
            self._commands = self._runtime.commands
            self._reconciliations = Reconciliations(engine, self._runtime.memory, self.clock)
            self._filing_desk = FilingDesk(
                self._runtime,
                jackpot_odds_bound=self.settings.jackpot_odds_bound,
                letterhead=letterhead_of(self.settings),
                demonstration=self.settings.demonstration,
            )
            self._review_desk = ReviewDesk(self._filing_desk)
            self._retention_purge = RetentionPurge(self._runtime)
            self._records = Records(engine, self._runtime.memory, self._runtime.hits, self.clock)
            self._corrections = Corrections(engine, self._runtime, self.clock)
            self._integrity = IntegrityRecords(
                engine, self._runtime, self.clock, letterhead=self.letterhead
            )
            self._dealers = Dealers(engine, self._runtime.memory, self.clock)
            if engine.dialect.name == "postgresql":
                # Other processes (a web process, a standby, the controller of another link)
                # commit too: follow them (on SQLite one process owns the file).
                self.change_feed = ChangeFeed(engine, self._runtime, drives=self.drives)
                await self.change_feed.start()
            if self._retention_schedule:
                self.retention = RetentionJob(
                    self._retention_purge,
                    meter_years=self.settings.meter_retention_years,
                    integrity_years=self.settings.integrity_retention_years,
                    first_run_s=self.settings.retention_first_run_s,
                    interval_s=self.settings.retention_interval_s,
                )
                self.retention.start()
            if self._retention_schedule and self.floor is not None:
                memory = self._runtime.memory
                self.compaction = CompactionJob(
                    engine,
                    key=store.key,
                    signer=None if self.checkpoints is None else self.checkpoints.key,
                    link_ids=lambda: list(memory.states),
                    calendar=self.settings.calendar,
                    now_us=self.clock.now_us,
                    first_run_s=self.settings.compaction_first_run_s,
                    interval_s=self.settings.compaction_interval_s,
                )
                self.compaction.start()
            if self._protection:
                memory = self._runtime.memory
                settings = self.settings
                self.protection = GameProtection(
                    runtime_states=lambda: memory.states,
                    records=ProtectionRecords(engine),
                    calendar=settings.calendar,
                    now_us=self.clock.now_us,
                    raises=self.floor is not None,
                    false_alarms_per_month=Fraction(
                        settings.protection_false_alarms_per_month
                    ).limit_denominator(1_000_000),
                    interval_s=settings.protection_interval_s,
                    webhook_url=settings.protection_webhook_url,
                    dealer_spans=self._dealer_spans,
                )
                self.protection.start()
            self.self_check.start(self._runtime, self.checkpoints)
        except BaseException:
            await self.stop()
            raise
        self.started = True

    async def stop(self) -> None:
        """Finish the purge and polls under way, then close the database. Idempotent."""
        check = self.self_check
        if check is not None:
            await check.stop()  # a check under way finishes (its record needs the database)
        protection, self.protection = self.protection, None
        if protection is not None:
            await protection.stop()
        feed, self.change_feed = self.change_feed, None
        if feed is not None:
            await feed.stop()
        retention, self.retention = self.retention, None
        if retention is not None:
            await retention.stop()
        compaction, self.compaction = self.compaction, None
        if compaction is not None:
            await compaction.stop()
        locks, self.link_locks = self.link_locks, None
        if locks is not None:
            await locks.stop()  # no link taken over while stopping
        poller, self.poller = self.poller, None
        if poller is not None:
            await poller.stop()
        checkpoints, self.checkpoints = self.checkpoints, None
        if checkpoints is not None:
            await checkpoints.stop()  # the heads as the polls left them, signed
        if locks is not None:
            await locks.close()  # only now may a standby take the links over
        self._records = None
        self._corrections = None
        self._integrity = None
        self._dealers = None
        self._hits = None
        self._commands = None
        self._reconciliations = None
        self._filing_desk = None
        self._review_desk = None
        self._retention_purge = None
        workers, self._workers = self._workers, None
        if workers is not None:
            workers.close()  # the steps under way are finished, nothing new taken
        self._accounts = None
        engine, self._engine = self._engine, None
        if engine is not None:
            await engine.dispose()
        self.started = False

    def statement(self, *link_ids: str) -> Statement:
        """What a surface of this installation states (``controller.rules.statement``): its
        jurisdiction, and demonstration mode when it runs in it or when links it shows
        (``link_ids``; none named: every link) were opened in it."""
        states = self._runtime.memory.states if self._runtime is not None else {}
        shown = link_ids or tuple(states)
        return self.settings.statement(
            lid for lid in shown if lid in states and states[lid].demonstration
        )

    def letterhead(self, link_id: str) -> Letterhead:
        """The property's letterhead on a document of the link, stating what this
        installation states of it (``statement``)."""
        return letterhead_of(self.settings, self.statement(link_id))

    def last_checkpoint(self, link_id: str) -> tuple[int, str, str] | None:
        """The last checkpoint this controller signed of the link: (entry, seal, when)."""
        cp = None if self.checkpoints is None else self.checkpoints.last.get(link_id)
        return None if cp is None else (cp.seq, cp.hash, at_text(cp.at_us))

    async def _open_checkpoints(self, store: LedgerStore) -> Checkpointer | None:
        s = self.settings
        if s.checkpoint_key_file is None:
            log.warning(
                "NO SIGNED CHECKPOINTS: no checkpoint signing key is configured "
                "(PROGRESSIVE_CHECKPOINT_KEY_FILE), so the meter history is not anchored outside "
                "the database: a database restored from an earlier copy, or one whose newest "
                "entries were deleted, cannot be detected"
            )
            return None
        checkpoints = Checkpointer(
            load_private_key(s.checkpoint_key_file),
            s.checkpoint_file,
            interval_s=s.checkpoint_interval_s,
            sinks=Sinks(syslog=s.checkpoint_syslog, url=s.checkpoint_url),
            clock=self.clock,
        )
        try:
            await checkpoints.open(store)
        except BaseException:
            await checkpoints.stop()
            raise
        return checkpoints

    async def _start_as_candidate(self, engine: Database, poller: Poller) -> None:
        """Poll each link only while holding its lock; a standby for the others (DESIGN.md:
        one active controller per link, its PostgreSQL advisory lock)."""
        runtime = self.runtime

        async def take_over(link_id: str) -> None:
            await poller.stop_link(link_id)  # its tables may have been kept alive meanwhile
            await runtime.memory.take_over(link_id)  # resume from the committed counters
            poller.start_link(link_id)

        async def lost(link_id: str) -> None:
            if locks.problem is None:
                await poller.stop_link(link_id)
                return
            # The lock connection failed: the database is most likely out of reach for every
            # controller. The link is no longer driven here, but its tables keep their
            # heartbeat until the database answers again (see ``Poller.fence_link``).
            poller.fence_link(link_id, until=lambda: locks.problem is None)

        await poller.start(link_ids=())
        assert self.floor is not None
        self.link_locks = locks = LinkLocks(
            engine,
            [link.link_id for link in self.floor.links],
            on_acquired=take_over,
            on_lost=lost,
        )
        await self.link_locks.start()

    def drives(self, link_id: str) -> bool:
        """Whether this process polls the link and commits its readings."""
        locks = self.link_locks
        if locks is not None:
            return link_id in locks.held
        return (
            self.poller is not None
            and self.floor is not None
            and any(link.link_id == link_id for link in self.floor.links)
        )

    def standing_by(self, link_id: str) -> bool:
        """Whether the link is configured here but driven by another controller."""
        locks = self.link_locks
        if self.poller is not None and self.poller.fenced(link_id):
            return False  # kept alive here until the database answers: not a standby
        return locks is not None and link_id in locks.link_ids and link_id not in locks.held

    # ------------------------------------------------------------------------- what is shown

    def table_status(self, table_id: str) -> TableStatus:
        runtime = self.runtime
        link_id = runtime.memory.link_of(table_id)
        ts = runtime.memory.states[link_id].table(table_id)
        tp: TablePoll | None = self.poller.tables.get(table_id) if self.poller else None
        regs = tp.last if tp is not None else None
        # Its polls keep failing here: offline now, whether or not that could be recorded yet
        # (the database away, the link fenced). The record follows once it can be made; until
        # then the table must not be shown playing.
        failing = (
            tp is not None
            and self.poller is not None
            and tp.failures >= self.poller.floor.offline_after_failures
        )
        state: TableStateName
        if runtime.memory.is_inoperable(link_id) is not None:
            state = "inoperable"  # its link's stored state failed its check
        elif self.standing_by(link_id):
            state = "standby"  # polled by the controller holding the link's lock
        elif not runtime.memory.is_live(link_id, self.clock.now_us()):
            state = "awaiting_approval"  # 68 IAC 10-1-3(c)(4): not played until approved
        elif table_id in runtime.memory.unrecorded:
            state = "unrecorded"  # held: its reading could not be recorded
        elif ts.out_of_play:
            state = "out_of_play"  # 68 IAC 10-1-6.2: removed from play
        elif not ts.online or failing:
            state = "offline"
        elif ts.hit_pending:
            state = "hit_pending"
        elif ts.credits is None:
            state = "unpolled"
        else:
            state = "online"
        return TableStatus(
            table_id=table_id,
            link_id=link_id,
            state=state,
            online=ts.online and not failing,
            hit_pending=ts.hit_pending,
            credits=ts.credits,
            rounds=ts.rounds,
            last_reading_us=ts.at_us,
            last_answer_us=tp.last_ok_us if tp is not None else None,
            failures=tp.failures if tp is not None else 0,
            seats_with_bets=regs.bet_seats if regs is not None else (),
            status_flags=regs.flags if regs is not None else None,
            progressive_disabled=regs.progressive_disabled if regs is not None else None,
            unrecorded_reason=runtime.memory.unrecorded.get(table_id),
            poll_problem=tp.problem if tp is not None else None,
        )

    def table_statuses(self, link_id: str | None = None) -> list[TableStatus]:
        states = self.runtime.memory.states
        if link_id is not None and link_id not in states:
            raise NotFound(f"no link {link_id!r}")
        ids = [link_id] if link_id is not None else sorted(states)
        return [self.table_status(tid) for lid in ids for tid in sorted(states[lid].tables)]

    async def readiness(self) -> Mapping[str, str]:
        """Problems that make this controller not ready, by subject; empty when ready
        (``controller.runtime.readiness``)."""
        return await readiness.problems(self)

    def degraded(self, link_id: str) -> bool:
        """Whether what is shown of the link may be behind the floor: its last recorded state
        (``controller.runtime.readiness``)."""
        return readiness.degraded(self, link_id)

    def software(self) -> dict[str, Any]:
        """The last check of the installed software (``controller.runtime.readiness``)."""
        return readiness.software(self)

    def readiness_notes(self) -> Mapping[str, str]:
        """What a ready controller should still say: the links it stands by for."""
        return readiness.notes(self)

    # ------------------------------------------------------------------------- floor displays

    def link_answered_us(self, link_id: str) -> int | None:
        """When a table of the link last answered; None when none has yet.

        Where this process polls, that is the poller's last answer; otherwise (the tables are
        polled elsewhere) the last reading applied to the link.
        """
        state = self.runtime.memory.states.get(link_id)
        if state is None:
            raise NotFound(f"no link {link_id!r}")
        poller = self.poller
        if poller is not None:
            answers = [
                tp.last_ok_us
                for tid in state.tables
                if (tp := poller.tables.get(tid)) is not None and tp.last_ok_us is not None
            ]
        else:
            answers = [ts.at_us for ts in state.tables.values() if ts.at_us is not None]
        return max(answers, default=None)

    def link_poll_interval_us(self, link_id: str) -> int | None:
        """The slowest poll interval of the link's tables here; None when not polled here."""
        poller = self.poller
        if poller is None:
            return None
        intervals = [
            tp.entry.poll_interval_ms * 1000
            for tp in poller.tables.values()
            if tp.link_id == link_id
        ]
        return max(intervals, default=None)

    async def link_names(self, link_id: str) -> tuple[str, dict[str, str]]:
        """The link's name and its tables' names, as people call them."""
        names = await link_names(self.engine, link_id)
        if names is None:
            raise NotFound(f"no link {link_id!r}")
        return names.name, names.tables
