// What the history's entries are, in words: one table of every entry kind
// (controller.core.reducer.state.EntryKind) and every correction's category
// (controller.paperwork.corrections.CorrectionCategory), for the pages that list entries.
"use strict";

const EntryWords = (() => {
  const KINDS = {
    link_opened: "link opened",
    contribution: "contribution",
    award: "jackpot award",
    paid_at_table: "paid at the table",
    jackpot_reset: "jackpot reset",
    hit_refused: "hit refused",
    table_baseline: "table's first reading",
    table_counter_reset: "table's counters restarted",
    table_offline: "table offline",
    table_online: "table back online",
    table_released: "table released",
    anomaly_held: "counter jump held for review",
    anomaly_approved: "counter jump approved",
    anomaly_rejected: "counter jump rejected",
    rate_changed: "rate of progression changed",
    reset_amount_changed: "reset amount changed",
    correction: "correction",
    change_armed: "approved change waiting for the next reset",
    paytable_changed: "paytable changed",
    table_out_of_play: "table out of play",
    table_returned_to_play: "table back in play",
    credits_refused: "credits refused",
    retention_purge: "retention purge",
    table_ahead: "table ahead of the history",
    state_recovered: "state recovered from the history",
    state_sealed: "state sealed",
    bets_registered: "side bets registered",
    mystery_armed: "mystery trigger drawn",
    levels_changed: "levels changed",
  };
  const CATEGORIES = {
    malfunction: "a malfunction fixed",
    transfer: "moved to another link",
    limit_adjustment: "a limit adjustment",
    other: "other",
  };

  // A name the table does not hold yet: words all the same, never the code.
  const plain = (name) => String(name || "").replace(/_/g, " ");

  const kind = (name) => KINDS[name] || plain(name);
  const category = (name) => CATEGORIES[name] || plain(name);

  // The entry's kind, a correction's category with it.
  const entryKind = (e) =>
    e.correction_category ? `${kind(e.kind)}: ${category(e.correction_category)}` : kind(e.kind);

  // The recorded reason, with a correction's category in words where the record names it.
  const reason = (e) => {
    const text = e.reduction_reason || "";
    const cat = e.correction_category;
    return cat ? text.replace(`(${cat})`, `(${category(cat)})`) : text;
  };

  return { kind, category, entryKind, reason };
})();
