// Words for what the supervisor's page shows: rates, hands, roles, changes, states.
// Nothing a person reads is an enum name, a raw number of basis points or of microseconds.
"use strict";

const Words = (() => {
  const { cents, rate, time } = Api;

  // "ROYAL_FLUSH" -> "Royal flush"
  function hand(name) {
    const words = String(name).toLowerCase().replaceAll("_", " ");
    return words.charAt(0).toUpperCase() + words.slice(1);
  }

  const ROLES = {
    display: "a floor display", dealer: "a dealer", technician: "a table technician",
    supervisor: "a supervisor", auditor: "an auditor", commission_agent: "a commission agent",
    admin: "an administrator",
  };
  function role(name) { return ROLES[name] || name.replaceAll("_", " "); }

  const KINDS = {
    new_link: "New link", rate_change: "Rate change", reset_change: "Reset change",
    paytable_change: "Paytable change", levels_change: "Levels change",
  };
  function kind(name) { return KINDS[name] || name.replaceAll("_", " "); }

  function line(l) {
    const envy = l.envy_cents ? `, ${cents(l.envy_cents)} to each other seat` : "";
    if (l.percent_bp !== undefined && l.percent_bp !== null) {
      const where = l.level ? `level ${l.level}` : "the meter";
      return `${hand(l.hand)}: ${rate(l.percent_bp)} of ${where}${envy}`;
    }
    return `${hand(l.hand)}: ${cents(l.fixed_cents)}${envy}`;
  }

  function level(v) {
    const hidden = v.reserve_bp ? ` + ${rate(v.reserve_bp)} hidden` : "";
    const limit = v.limit_cents ? `, limit ${cents(v.limit_cents)}` : "";
    return `${v.name}: reset ${cents(v.reset_cents)}, ${rate(v.rate_bp)}${hidden}${limit}`;
  }

  // What a submission's terms say about the one thing its kind changes.
  function terms(kindName, t) {
    if (!t) return "";
    if (kindName === "rate_change") return t.rate_bp === undefined ? "" : rate(t.rate_bp);
    if (kindName === "reset_change") return t.reset_cents === undefined ? "" : cents(t.reset_cents);
    if (kindName === "levels_change") return (t.levels || []).map(level).join("; ");
    if (kindName === "paytable_change") {
      const lines = t.paytable || [];
      return lines.map(line).join("; ");
    }
    const parts = [];
    if (t.rate_bp !== undefined) parts.push(`rate ${rate(t.rate_bp)}`);
    if (t.reset_cents !== undefined) parts.push(`reset ${cents(t.reset_cents)}`);
    return parts.join(", ");
  }

  // filed / approved (waiting for its reset) / effective / rejected
  function state(s) {
    if (s.status === "approved" && s.applied_at_us) return ["effective", `effective since ${time(s.applied_at_us)}`];
    if (s.status === "approved") return ["approved", "approved, takes effect at the next jackpot reset on or after its date"];
    if (s.status === "rejected") return ["rejected", `rejected${s.review_reason ? `: ${s.review_reason}` : ""}`];
    return ["filed", "filed, awaiting the commission"];
  }

  function day(us) {
    return new Date(Math.floor(us / 1000)).toLocaleDateString(undefined,
      { year: "numeric", month: "long", day: "numeric" });
  }

  // A link by its name, and its id when the name does not say it.
  const link = Api.linkName;

  return { link, rate, hand, role, kind, line, level, terms, state, day };
})();
