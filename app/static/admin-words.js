// What the admin's page says of roles, states and audited actions: words, never the API's
// names or its JSON.
"use strict";

const Words = (() => {
  const { cents, time, roleName } = Api;

  // The roles an admin gives, in the order a floor thinks of them, with what each does.
  const ROLES = [
    ["dealer", "counts the side bets at a table"],
    ["technician", "verifies hits, resets tables, takes tables out of play"],
    ["supervisor", "asks for corrections, reviews anomalies, files submissions"],
    ["auditor", "reads the meter history, reconciles, exports"],
    ["commission_agent", "approves or rejects submissions"],
    ["admin", "makes accounts and display tokens"],
    ["display", "a screen on the floor that shows the amounts"],
  ];
  // Roles whose accounts two admins make (controller/access/duties.py GUARDED_ROLES): their
  // person chooses the password with a one-time code.
  const GUARDED = new Set(["admin", "technician", "supervisor", "commission_agent"]);

  const ACTIONS = {
    "user.create": "created an account",
    "user.disable": "disabled an account",
    "user.enable": "enabled an account",
    "user.set_password": "set a password",
    "user.change_password": "changed their own password",
    "user.reset_password": "reset a password to a one-time code",
    "user.set_role": "changed a role",
    "account.request": "asked for an account change",
    "account.reject": "turned down an account change",
    "access.bootstrap_closed": "recorded the first two admins: the command line makes no more",
    "device_token.create": "made a display token",
    "device_token.revoke": "revoked a display token",
    "link.create": "created a link",
    "link.rate": "changed a rate of progression",
    "link.reset_amount": "changed a reset amount",
    "link.recover": "recovered a link",
    "anomaly.approve": "approved an anomaly",
    "anomaly.reject": "rejected an anomaly",
    "meter.correct": "corrected a meter",
    "correction.request": "asked for a meter correction",
    "correction.reject": "rejected a meter correction",
    "hit.enter": "entered a hit",
    "hit.verify": "verified a hit",
    "hit.hand_pay": "recorded a hand pay",
    "table.release": "reset a table after a hit",
    "table.remove_from_play": "took a table out of play",
    "table.return_to_play": "returned a table to play",
    "integrity.remedial_action": "recorded a remedial action",
    "submission.file": "filed a submission",
    "submission.approve": "approved a submission",
    "submission.reject": "rejected a submission",
    "software.check": "checked the installed software against its manifest",
    "retention.purge": "purged records past their retention",
    "retention.purge_integrity_records": "purged integrity records past their retention",
  };

  const KINDS = {
    create: "new account",
    enable: "enable again",
    role: "role change",
    reset: "password reset",
    recover: "new admin asked for on the host",
  };

  const REQUEST_STATES = {
    pending: "waiting for a second admin",
    confirmed: "confirmed",
    rejected: "turned down",
    expired: "lapsed (not confirmed within a day)",
  };

  function words(name) { return String(name).replace(/[._]/g, " "); }

  // Keys whose values are microsecond times though their names do not end in "_us".
  const TIME_KEYS = new Set(["plays_from"]);
  // Keys whose values are names of kinds ("caribbean_stud", "new_link"): said as words.
  const NAME_KEYS = new Set(["game", "kind", "status", "hand", "category", "hit_policy", "policy", "role"]);

  function action(name) { return ACTIONS[name] || words(name); }

  function userState(u) {
    if (u.disabled) return ["disabled", "disabled"];
    if (u.must_set_password) return ["waiting for its person to choose a password", "waiting"];
    return ["active", "active"];
  }

  // One value of an audit record in words: times, amounts, rates and yes/no read as such.
  function value(key, v) {
    if (v === null || v === undefined) return "none";
    if (typeof v === "boolean") return v ? "yes" : "no";
    if (typeof v === "number" && (key.endsWith("_us") || TIME_KEYS.has(key))) return time(v);
    if (typeof v === "number" && key.endsWith("_cents")) return cents(v);
    if (typeof v === "number" && key.endsWith("_bp")) return Api.rate(v);
    if (typeof v === "string" && /^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$/.test(v)) return words(v.toLowerCase());
    if (typeof v === "string" && NAME_KEYS.has(key)) return key === "role" ? roleName(v) : words(v.toLowerCase());
    if (Array.isArray(v)) return v.map((x) => value(key, x)).join(", ");
    if (typeof v === "object") return Object.entries(v).map(([k, x]) => `${label(k)} ${value(k, x)}`).join(", ");
    return String(v);
  }

  function label(key) {
    return words(key.replace(/_(us|cents|bp|id)$/, ""));
  }

  function parse(text) {
    if (text === null || text === undefined) return null;
    try { return JSON.parse(text); } catch { return { note: text }; }
  }

  // "disabled: no → yes; role: technician" from an entry's before and after.
  function change(entry) {
    const before = parse(entry.before);
    const after = parse(entry.after);
    const plain = (o) => (o !== null && typeof o === "object" && !Array.isArray(o) ? o : { value: o });
    const b = before === null ? {} : plain(before);
    const a = after === null ? {} : plain(after);
    const keys = [...new Set([...Object.keys(b), ...Object.keys(a)])];
    const parts = [];
    for (const k of keys) {
      const was = k in b ? value(k, b[k]) : null;
      const now = k in a ? value(k, a[k]) : null;
      if (was !== null && now !== null && was === now) continue;
      if (was !== null && now !== null) parts.push(`${label(k)}: ${was} → ${now}`);
      else if (now !== null) parts.push(`${label(k)}: ${now}`);
      else parts.push(`${label(k)}: was ${was}`);
    }
    return parts.join("; ") || "no change recorded";
  }

  return { ROLES, GUARDED, ACTIONS, KINDS, REQUEST_STATES, action, userState, change, words };
})();
