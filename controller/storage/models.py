"""The database schema. The same on SQLite and PostgreSQL; times are integer microseconds UTC.

History tables (``meter_entries``, ``corrections``, ``documents``, ``audit_log``,
``dealer_events``) are append-only; the database itself refuses UPDATE and DELETE on them (see
the migrations), the only exception being the retention purge of entries older than five years.
"""

from __future__ import annotations

from typing import cast

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Table,
    Text,
    true,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

NAMING = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# SQLite only auto-numbers an INTEGER PRIMARY KEY, PostgreSQL wants BIGINT for long logs.
AutoId = BigInteger().with_variant(Integer(), "sqlite")
Id = String(64)
Hash = String(64)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING)


def table_of(model: type[Base]) -> Table:
    """The Core table of a model, for statements that skip the ORM's per-row work."""
    return cast(Table, model.__table__)


class LinkRow(Base):
    __tablename__ = "links"

    link_id: Mapped[str] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    game: Mapped[str] = mapped_column(String(32))
    rate_bp: Mapped[int] = mapped_column(Integer)
    reset_cents: Mapped[int] = mapped_column(BigInteger)
    meter_units: Mapped[int] = mapped_column(BigInteger)
    hit_policy: Mapped[str] = mapped_column(String(16))
    jackpot_won_since_rate_set: Mapped[bool] = mapped_column(Boolean)
    paytable_id: Mapped[int] = mapped_column(ForeignKey("paytables.paytable_id"))
    last_win: Mapped[str | None] = mapped_column(Text)
    last_seq: Mapped[int] = mapped_column(BigInteger)
    last_hash: Mapped[str] = mapped_column(Hash)
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    # An approved change waiting for the link's next jackpot reset (JSON), if any.
    armed_change: Mapped[str | None] = mapped_column(Text, default=None)
    # Keyed seal over what a controller resumes the link from (parameters, meter, chain head).
    state_seal: Mapped[str | None] = mapped_column(Hash, default=None)
    # The pool's levels (JSON list of LevelState dicts, the mystery draws with them): NULL
    # for a classic link (its one level mirrors rate, reset and meter) and a legacy fixed-pay
    # link; [] for a fixed-pay link made since levels.
    levels: Mapped[str | None] = mapped_column(Text, default=None)
    # A mixed-game link's other games' paytables (JSON {game: lines}); NULL: one game.
    paytables: Mapped[str | None] = mapped_column(Text, default=None)

    __table_args__ = (
        # 68 IAC 10-1-1.1(c): 60% to 100%; 0 for a fixed-pay link, which has no meter (10-7-5(e)).
        CheckConstraint("rate_bp = 0 OR rate_bp BETWEEN 6000 AND 10000", name="rate_bp"),
        CheckConstraint("meter_units >= 0", name="meter_units"),
        CheckConstraint("reset_cents >= 0", name="reset_cents"),
    )


class PaytableRow(Base):
    """Every paytable a link has had; never edited (a change is a new row)."""

    __tablename__ = "paytables"

    paytable_id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    link_id: Mapped[str] = mapped_column(Id, index=True)
    game: Mapped[str] = mapped_column(String(32))
    lines: Mapped[str] = mapped_column(Text)  # canonical JSON
    created_at_us: Mapped[int] = mapped_column(BigInteger)


class TableRow(Base):
    __tablename__ = "tables"

    table_id: Mapped[str] = mapped_column(Id, primary_key=True)
    link_id: Mapped[str] = mapped_column(ForeignKey("links.link_id"), index=True)
    name: Mapped[str] = mapped_column(String(200))
    location: Mapped[str] = mapped_column(String(200))
    denomination_cents: Mapped[int] = mapped_column(Integer)
    seats: Mapped[int] = mapped_column(Integer)
    max_credits_per_seat_round: Mapped[int] = mapped_column(Integer)
    min_round_us: Mapped[int] = mapped_column(BigInteger)
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    # The game dealt at the table on a mixed-game link; NULL: the link's game.
    game: Mapped[str | None] = mapped_column(String(32), default=None)

    __table_args__ = (
        CheckConstraint("denomination_cents > 0", name="denomination"),
        CheckConstraint("seats BETWEEN 1 AND 7", name="seats"),
    )


class TableCounterRow(Base):
    """The last reading applied per table, committed with the meter entries it produced."""

    __tablename__ = "table_counters"

    table_id: Mapped[str] = mapped_column(ForeignKey("tables.table_id"), primary_key=True)
    poll_seq: Mapped[int] = mapped_column(BigInteger)
    credits: Mapped[int | None] = mapped_column(BigInteger)
    rounds: Mapped[int | None] = mapped_column(BigInteger)
    at_us: Mapped[int | None] = mapped_column(BigInteger)
    last_hit_seq: Mapped[int | None] = mapped_column(BigInteger)  # None: no hit taken yet
    last_hit_round: Mapped[int | None] = mapped_column(BigInteger)
    last_hit_claim: Mapped[str | None] = mapped_column(Text, default=None)  # the whole claim
    last_hit_gone: Mapped[bool] = mapped_column(Boolean, default=False)  # popped since taken
    hit_epoch: Mapped[int] = mapped_column(Integer)
    open_claims: Mapped[str] = mapped_column(Text)  # JSON list of claims being collected
    hit_pending: Mapped[bool] = mapped_column(Boolean)
    online: Mapped[bool] = mapped_column(Boolean)
    # 68 IAC 10-1-6.2: removed from play (see integrity_records)
    out_of_play: Mapped[bool] = mapped_column(Boolean, default=False)
    # Keyed seal over this row's state, bound to its link's chain head (see the store).
    seal: Mapped[str | None] = mapped_column(Hash, default=None)


class MeterEntryRow(Base):
    __tablename__ = "meter_entries"

    link_id: Mapped[str] = mapped_column(Id, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    at_us: Mapped[int] = mapped_column(BigInteger)
    kind: Mapped[str] = mapped_column(String(32))
    meter_before_units: Mapped[int] = mapped_column(BigInteger)
    delta_units: Mapped[int] = mapped_column(BigInteger)
    meter_after_units: Mapped[int] = mapped_column(BigInteger)
    table_id: Mapped[str | None] = mapped_column(Id)
    hit_id: Mapped[str | None] = mapped_column(Id)
    anomaly_id: Mapped[str | None] = mapped_column(Id)
    correction_id: Mapped[str | None] = mapped_column(Id)
    explanation: Mapped[str] = mapped_column(Text)
    details: Mapped[str] = mapped_column(Text)
    prev_hash: Mapped[str] = mapped_column(Hash)
    hash: Mapped[str] = mapped_column(Hash)

    __table_args__ = (
        CheckConstraint("meter_after_units = meter_before_units + delta_units", name="adds_up"),
        CheckConstraint("meter_after_units >= 0", name="not_negative"),
        # 68 IAC 10-6-5(c): a reduction names its reason: a hit or a documented correction.
        CheckConstraint(
            "delta_units >= 0 OR (length(explanation) > 0 AND ("
            "(kind = 'award' AND hit_id IS NOT NULL) OR "
            "(kind = 'correction' AND correction_id IS NOT NULL)))",
            name="reduction_has_reason",
        ),
        Index("ix_meter_entries_link_at", "link_id", "at_us"),
        # Clustered by (link, sequence) on SQLite: verify and exports read in that order.
        {"sqlite_with_rowid": False},
    )


class MeterBlockRow(Base):
    """A link's ordinary entries of one gaming day, packed (``controller.storage.blocks``):
    the history of closed days at a fraction of a row an entry. Append-only, as the entries
    (0014)."""

    __tablename__ = "meter_blocks"

    link_id: Mapped[str] = mapped_column(Id, primary_key=True)
    first_seq: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    last_seq: Mapped[int] = mapped_column(BigInteger)
    first_at_us: Mapped[int] = mapped_column(BigInteger)
    last_at_us: Mapped[int] = mapped_column(BigInteger)
    entries: Mapped[int] = mapped_column(Integer)
    form: Mapped[int] = mapped_column(Integer)
    body: Mapped[bytes] = mapped_column(LargeBinary)
    # A sealed block's stretches of entries and its seal (0015); NULL: checked entry by entry.
    runs: Mapped[bytes | None] = mapped_column(LargeBinary)
    seal: Mapped[bytes | None] = mapped_column(LargeBinary)
    signature: Mapped[bytes | None] = mapped_column(LargeBinary)

    __table_args__ = (
        CheckConstraint("first_seq <= last_seq AND entries >= 1", name="holds_entries"),
        Index("ix_meter_blocks_link_at", "link_id", "first_at_us"),
    )


class HitRow(Base):
    __tablename__ = "hits"

    hit_id: Mapped[str] = mapped_column(Id, primary_key=True)
    link_id: Mapped[str] = mapped_column(Id, index=True)
    table_id: Mapped[str] = mapped_column(Id)
    table_seq: Mapped[int | None] = mapped_column(BigInteger)
    seat: Mapped[int] = mapped_column(Integer)
    hand: Mapped[str] = mapped_column(String(32))
    round: Mapped[int] = mapped_column(BigInteger)
    cards: Mapped[str | None] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    award_cents: Mapped[int] = mapped_column(BigInteger)
    paid_from: Mapped[str | None] = mapped_column(String(8))
    settlement_group: Mapped[str] = mapped_column(String(100))
    settlement_order: Mapped[int] = mapped_column(Integer)
    policy: Mapped[str] = mapped_column(String(16))
    refusal: Mapped[str | None] = mapped_column(Text)
    entered_by: Mapped[str | None] = mapped_column(String(100))
    at_us: Mapped[int] = mapped_column(BigInteger)
    # Filled in by the technician afterwards; the columns above never change.
    verified_by: Mapped[str | None] = mapped_column(String(100))
    verified_at_us: Mapped[int | None] = mapped_column(BigInteger)
    verified_cards: Mapped[str | None] = mapped_column(String(64))
    released_by: Mapped[str | None] = mapped_column(String(100))
    released_at_us: Mapped[int | None] = mapped_column(BigInteger)
    # A hand paid at the table (a fixed paytable line), recorded by the technician.
    hand_paid_by: Mapped[str | None] = mapped_column(String(100))
    hand_paid_at_us: Mapped[int | None] = mapped_column(BigInteger)
    hand_paid_cents: Mapped[int | None] = mapped_column(BigInteger)
    # Facts like the columns above: the level an award from a meter was paid from ("L1", ...),
    # what made the hit (hand, mystery, envy), and whether it waits for a technician.
    level: Mapped[str | None] = mapped_column(Text, default=None)
    kind: Mapped[str] = mapped_column(Text, default="hand", server_default="hand")
    needs_technician: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # Marks like the technician's: the second person who signed an award at or above the
    # house's amount before its table was reset, and the reference of the tax form an award
    # at or above the reporting amount was reported on (never the patron's identity).
    signed_off_by: Mapped[str | None] = mapped_column(String(100))
    signed_off_at_us: Mapped[int | None] = mapped_column(BigInteger)
    tax_form_reference: Mapped[str | None] = mapped_column(String(100))
    tax_form_by: Mapped[str | None] = mapped_column(String(100))
    tax_form_at_us: Mapped[int | None] = mapped_column(BigInteger)

    __table_args__ = (Index("ix_hits_link_at", "link_id", "at_us"),)


class AnomalyRow(Base):
    __tablename__ = "anomalies"

    anomaly_id: Mapped[str] = mapped_column(Id, primary_key=True)
    link_id: Mapped[str] = mapped_column(Id, index=True)
    table_id: Mapped[str] = mapped_column(Id)
    at_us: Mapped[int] = mapped_column(BigInteger)
    credits: Mapped[int] = mapped_column(BigInteger)
    units: Mapped[int] = mapped_column(BigInteger)
    counter_before: Mapped[int] = mapped_column(BigInteger)
    counter_after: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(16))  # held, approved, rejected
    reviewer: Mapped[str | None] = mapped_column(String(100))
    review_reason: Mapped[str | None] = mapped_column(Text)
    reviewed_at_us: Mapped[int | None] = mapped_column(BigInteger)


class DocumentRow(Base):
    """A supporting document, stored whole, named by its SHA-256."""

    __tablename__ = "documents"

    sha256: Mapped[str] = mapped_column(Hash, primary_key=True)
    filename: Mapped[str] = mapped_column(String(255))
    content_type: Mapped[str] = mapped_column(String(100))
    size: Mapped[int] = mapped_column(BigInteger)
    content: Mapped[bytes] = mapped_column(LargeBinary)
    uploaded_by: Mapped[str] = mapped_column(String(100))
    at_us: Mapped[int] = mapped_column(BigInteger)


class CorrectionRow(Base):
    __tablename__ = "corrections"

    correction_id: Mapped[str] = mapped_column(Id, primary_key=True)
    link_id: Mapped[str] = mapped_column(Id, index=True)
    delta_units: Mapped[int] = mapped_column(BigInteger)
    category: Mapped[str] = mapped_column(String(32))
    reason: Mapped[str] = mapped_column(Text)
    document_sha256: Mapped[str | None] = mapped_column(ForeignKey("documents.sha256"))
    requested_by: Mapped[str] = mapped_column(String(100))
    approved_by: Mapped[str | None] = mapped_column(String(100))
    at_us: Mapped[int] = mapped_column(BigInteger)
    # The meter of a link of levels it moved (L2, L1.reserve...); null: the link's one meter.
    meter: Mapped[str | None] = mapped_column(String(32))

    __table_args__ = (
        CheckConstraint(
            "delta_units >= 0 OR document_sha256 IS NOT NULL", name="reduction_documented"
        ),
    )


class SubmissionRow(Base):
    """A change filed with the commission and its review; the filed facts never change."""

    __tablename__ = "submissions"

    submission_id: Mapped[str] = mapped_column(Id, primary_key=True)
    kind: Mapped[str] = mapped_column(String(32))
    link_id: Mapped[str] = mapped_column(Id, index=True)
    proposal: Mapped[str] = mapped_column(Text)  # canonical JSON
    effective_at_us: Mapped[int] = mapped_column(BigInteger)
    notice_days: Mapped[int] = mapped_column(Integer)
    notice_override: Mapped[str | None] = mapped_column(Text)
    packet_json_sha256: Mapped[str] = mapped_column(ForeignKey("documents.sha256"))
    packet_pdf_sha256: Mapped[str] = mapped_column(ForeignKey("documents.sha256"))
    filed_by: Mapped[str] = mapped_column(String(100))
    filed_at_us: Mapped[int] = mapped_column(BigInteger)
    # The commission's review, added once; then the moment the change took effect.
    status: Mapped[str] = mapped_column(String(16))  # filed, approved, rejected
    reviewed_by: Mapped[str | None] = mapped_column(String(100))
    reviewed_at_us: Mapped[int | None] = mapped_column(BigInteger)
    review_reason: Mapped[str | None] = mapped_column(Text)
    applied_at_us: Mapped[int | None] = mapped_column(BigInteger)
    # 68 IAC 10-1-4(1): the executive director's written direction providing otherwise for
    # this amendment (who gave it, its reference, its date, its document's SHA-256); filed
    # with the submission, a fact like the others. None: filed with its notice period.
    waiver_given_by: Mapped[str | None] = mapped_column(Text)
    waiver_reference: Mapped[str | None] = mapped_column(Text)
    waiver_given_on: Mapped[str | None] = mapped_column(String(10))  # YYYY-MM-DD
    waiver_document_sha256: Mapped[str | None] = mapped_column(String(64))

    __table_args__ = (
        CheckConstraint(
            "kind IN ('new_link', 'rate_change', 'reset_change', 'paytable_change', "
            "'levels_change')",
            name="kind",
        ),
        CheckConstraint("status IN ('filed', 'approved', 'rejected')", name="status"),
        CheckConstraint(
            "status = 'filed' OR (reviewed_by IS NOT NULL AND reviewed_at_us IS NOT NULL)",
            name="reviewed_by_someone",
        ),
        CheckConstraint(
            "status <> 'rejected' OR length(review_reason) > 0", name="rejection_has_reason"
        ),
        CheckConstraint(
            "applied_at_us IS NULL OR status = 'approved'", name="applied_when_approved"
        ),
    )


class AuditRow(Base):
    """Privileged actions: who, when, what, before and after."""

    __tablename__ = "audit_log"

    audit_id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    at_us: Mapped[int] = mapped_column(BigInteger, index=True)
    actor: Mapped[str] = mapped_column(String(100))
    action: Mapped[str] = mapped_column(String(64))
    target: Mapped[str] = mapped_column(String(200))
    before: Mapped[str | None] = mapped_column(Text)
    after: Mapped[str | None] = mapped_column(Text)


class DealerEventRow(Base):
    """A dealer signed in at a table or out of it (``controller.core.dealers``): who, where,
    when, and who recorded it. Never edited: the database refuses it (migration 0012)."""

    __tablename__ = "dealer_events"

    event_id: Mapped[int] = mapped_column(AutoId, primary_key=True, autoincrement=True)
    table_id: Mapped[str] = mapped_column(ForeignKey("tables.table_id"))
    dealer: Mapped[str] = mapped_column(String(100))
    kind: Mapped[str] = mapped_column(String(16))
    at_us: Mapped[int] = mapped_column(BigInteger)
    recorded_by: Mapped[str] = mapped_column(String(100))

    __table_args__ = (
        CheckConstraint("kind IN ('sign_in', 'sign_out')", name="kind"),
        # A table's newest event (who deals there now) and its events of a period.
        Index("ix_dealer_events_table_event", "table_id", "event_id"),
        Index("ix_dealer_events_table_at", "table_id", "at_us"),
    )


class UserRow(Base):
    """A person who logs in. Passwords are kept only as argon2 hashes."""

    __tablename__ = "users"

    username: Mapped[str] = mapped_column(String(100), primary_key=True)
    role: Mapped[str] = mapped_column(String(32))
    password_hash: Mapped[str] = mapped_column(Text)
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(100))
    disabled: Mapped[bool] = mapped_column(Boolean, default=False)
    # Raised with every change of password, role or state: a token names the generation it
    # was issued in and stops working when the user's moves on.
    token_generation: Mapped[int] = mapped_column(Integer, default=0)
    # A reset (or a new account of a role that checks others) leaves only a one-time code:
    # until its person sets a password with it, the account does nothing else.
    must_set_password: Mapped[bool] = mapped_column(Boolean, default=False)
    reset_code_sha256: Mapped[str | None] = mapped_column(String(64))
    reset_code_expires_at_us: Mapped[int | None] = mapped_column(BigInteger)


class AccountRequestRow(Base):
    """A change to an account that one admin asks for and a different admin confirms."""

    __tablename__ = "account_requests"

    request_id: Mapped[str] = mapped_column(Id, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))
    username: Mapped[str] = mapped_column(String(100), index=True)
    role: Mapped[str | None] = mapped_column(String(32))
    requested_by: Mapped[str] = mapped_column(String(100))
    requested_at_us: Mapped[int] = mapped_column(BigInteger)
    expires_at_us: Mapped[int] = mapped_column(BigInteger)
    # The digest of the code's first half, shown to the requester only.
    first_half_sha256: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(16))
    decided_by: Mapped[str | None] = mapped_column(String(100))
    decided_at_us: Mapped[int | None] = mapped_column(BigInteger)
    decision_reason: Mapped[str | None] = mapped_column(Text)


class DeviceTokenRow(Base):
    """A read-only token of one floor display; only its SHA-256 is kept."""

    __tablename__ = "device_tokens"

    token_id: Mapped[str] = mapped_column(Id, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    role: Mapped[str] = mapped_column(String(32))
    token_sha256: Mapped[str] = mapped_column(Hash, unique=True)
    created_at_us: Mapped[int] = mapped_column(BigInteger)
    created_by: Mapped[str] = mapped_column(String(100))
    revoked_at_us: Mapped[int | None] = mapped_column(BigInteger)


class LedgerAnchorRow(Base):
    """Where a link's chain resumes after the retention purge removed its oldest entries."""

    __tablename__ = "ledger_anchors"

    link_id: Mapped[str] = mapped_column(Id, primary_key=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    hash: Mapped[str] = mapped_column(Hash)
    meter_units: Mapped[int] = mapped_column(BigInteger)
    purged_at_us: Mapped[int] = mapped_column(BigInteger)


class LedgerMetaRow(Base):
    __tablename__ = "ledger_meta"

    name: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(Text)


__all__ = [
    "AnomalyRow",
    "AuditRow",
    "Base",
    "CorrectionRow",
    "DealerEventRow",
    "DeviceTokenRow",
    "DocumentRow",
    "HitRow",
    "LedgerAnchorRow",
    "LedgerMetaRow",
    "LinkRow",
    "MeterEntryRow",
    "PaytableRow",
    "SubmissionRow",
    "TableCounterRow",
    "TableRow",
    "UserRow",
    "table_of",
]


class ProtectionAlertRow(Base):
    """An alert of game protection, as raised: a subject's line out of line with its odds in
    one window, with what was seen and how unlikely it is. Never edited; closed by a row of
    ``protection_alert_closings``."""

    __tablename__ = "protection_alerts"

    alert_id: Mapped[str] = mapped_column(Id, primary_key=True)
    at_us: Mapped[int] = mapped_column(BigInteger)  # raised at this look
    scope: Mapped[str] = mapped_column(String(16))
    subject: Mapped[str] = mapped_column(Text)
    link_id: Mapped[str | None] = mapped_column(Id)
    table_id: Mapped[str | None] = mapped_column(Id)
    seat: Mapped[int | None] = mapped_column(Integer)
    dealer: Mapped[str | None] = mapped_column(String(100))
    game: Mapped[str] = mapped_column(String(32))
    line: Mapped[str] = mapped_column(String(32))
    line_label: Mapped[str] = mapped_column(Text)
    window: Mapped[str] = mapped_column(String(16))
    since_us: Mapped[int] = mapped_column(BigInteger)
    observed: Mapped[int] = mapped_column(BigInteger)
    trials: Mapped[int] = mapped_column(BigInteger)
    expected: Mapped[str] = mapped_column(Text)  # exact, "numerator/denominator"
    direction: Mapped[str] = mapped_column(String(16))
    p_value: Mapped[float] = mapped_column(Float(precision=53))
    threshold: Mapped[float] = mapped_column(Float(precision=53))

    __table_args__ = (Index("ix_protection_alerts_at", "at_us"),)


class ProtectionAlertClosingRow(Base):
    """An alert closed: at a look its line was back within the threshold (or its window
    ended), with what was seen then."""

    __tablename__ = "protection_alert_closings"

    alert_id: Mapped[str] = mapped_column(
        ForeignKey("protection_alerts.alert_id"), primary_key=True
    )
    at_us: Mapped[int] = mapped_column(BigInteger)
    observed: Mapped[int] = mapped_column(BigInteger)
    trials: Mapped[int] = mapped_column(BigInteger)
    expected: Mapped[str] = mapped_column(Text)
    p_value: Mapped[float] = mapped_column(Float(precision=53))
