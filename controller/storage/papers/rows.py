"""Records read by more than one report: a meter history entry and a hit, whole."""

from __future__ import annotations

from typing import NamedTuple

from controller.storage.models import HitRow, MeterEntryRow
from controller.storage.papers.columns import columns


class MeterEntry(NamedTuple):
    link_id: str
    seq: int
    at_us: int
    kind: str
    meter_before_units: int
    delta_units: int
    meter_after_units: int
    table_id: str | None
    hit_id: str | None
    anomaly_id: str | None
    correction_id: str | None
    explanation: str
    details: str
    prev_hash: str
    hash: str


class HitRecord(NamedTuple):
    hit_id: str
    link_id: str
    table_id: str
    table_seq: int | None
    seat: int
    hand: str
    round: int
    cards: str | None
    source: str
    status: str
    award_cents: int
    paid_from: str | None
    settlement_group: str
    settlement_order: int
    policy: str
    refusal: str | None
    entered_by: str | None
    at_us: int
    verified_by: str | None
    verified_at_us: int | None
    verified_cards: str | None
    released_by: str | None
    released_at_us: int | None
    hand_paid_by: str | None
    hand_paid_at_us: int | None
    hand_paid_cents: int | None


_m = MeterEntryRow
METER_ENTRY = columns(
    MeterEntry._fields,
    _m.link_id, _m.seq, _m.at_us, _m.kind, _m.meter_before_units, _m.delta_units,
    _m.meter_after_units, _m.table_id, _m.hit_id, _m.anomaly_id, _m.correction_id,
    _m.explanation, _m.details, _m.prev_hash, _m.hash,
)  # fmt: skip
_h = HitRow
HIT = columns(
    HitRecord._fields,
    _h.hit_id, _h.link_id, _h.table_id, _h.table_seq, _h.seat, _h.hand, _h.round, _h.cards,
    _h.source, _h.status, _h.award_cents, _h.paid_from, _h.settlement_group,
    _h.settlement_order, _h.policy, _h.refusal, _h.entered_by, _h.at_us, _h.verified_by,
    _h.verified_at_us, _h.verified_cards, _h.released_by, _h.released_at_us, _h.hand_paid_by,
    _h.hand_paid_at_us, _h.hand_paid_cents,
)  # fmt: skip
