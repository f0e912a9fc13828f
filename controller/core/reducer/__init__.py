"""The link reducer: from a link's state and one input to the new state and what happened.

Pure and deterministic: no I/O, no clock reads, no randomness. Every input carries the time
it happened (``at_us``, microseconds since the epoch, read by the caller). Every output is an
``Outcome``: the new ``LinkState``, the ``MeterEvent`` entries to append to the link's history
in order, and the hit and anomaly records to store, all in one transaction.

Conservation of the meter is stated once, in ``conservation``: each entry's ``kind`` names its
term and its ``delta_units`` the amount, so the meter follows from the history alone. Every
step's outcome is checked against it before it is handed back.

The modules, one subject each: ``state`` (the types), ``conservation`` (the meter's law),
``builder`` (how a step is built), ``configuration`` (opening a link, its rate, reset amount
and armed changes), ``readings`` (contributions and anomalies), ``hits``, ``tables`` (a table's
life on the link), ``records`` (entries about the history itself), ``corrections`` (anomaly
reviews, correcting entries) and ``display`` (what the floor display shows).
"""

from controller.core.reducer.adjustments import (
    apply_correction,
    approve_anomaly,
    correction_meter,
    correction_meter_label,
    reject_anomaly,
)
from controller.core.reducer.configuration import (
    arm_change,
    change_rate,
    change_reset_amount,
    open_link,
)
from controller.core.reducer.conservation import (
    ConservationBroken,
    MeterTerms,
    check_conservation,
    check_outcome,
)
from controller.core.reducer.display import DisplayFrame, LevelFrame, display_frame, level_frames
from controller.core.reducer.history_events import (
    record_purge,
    record_recovery,
    record_state_sealed,
)
from controller.core.reducer.hits import awaiting_acknowledgement, enter_hit
from controller.core.reducer.pool import draws_wanted, with_draws
from controller.core.reducer.readings import apply_reading, apply_readings, seen_order
from controller.core.reducer.state import (
    REDUCING_KINDS,
    Anomaly,
    ArmedChange,
    EngineError,
    EntryKind,
    Hit,
    HitClaim,
    HitPolicy,
    LastWin,
    LinkState,
    MeterEvent,
    Outcome,
    TableConfig,
    TableReading,
    TableState,
)
from controller.core.reducer.tables import (
    release_table,
    remove_from_play,
    return_to_play,
    table_offline,
)

__all__ = [
    "REDUCING_KINDS",
    "Anomaly",
    "ArmedChange",
    "ConservationBroken",
    "DisplayFrame",
    "EngineError",
    "EntryKind",
    "Hit",
    "HitClaim",
    "HitPolicy",
    "LastWin",
    "LevelFrame",
    "LinkState",
    "MeterEvent",
    "MeterTerms",
    "Outcome",
    "TableConfig",
    "TableReading",
    "TableState",
    "apply_correction",
    "apply_reading",
    "apply_readings",
    "approve_anomaly",
    "arm_change",
    "awaiting_acknowledgement",
    "change_rate",
    "change_reset_amount",
    "check_conservation",
    "check_outcome",
    "correction_meter",
    "correction_meter_label",
    "display_frame",
    "draws_wanted",
    "enter_hit",
    "level_frames",
    "open_link",
    "record_purge",
    "record_recovery",
    "record_state_sealed",
    "reject_anomaly",
    "release_table",
    "remove_from_play",
    "return_to_play",
    "seen_order",
    "table_offline",
    "with_draws",
]
