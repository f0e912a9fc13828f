// The surveillance room's screen: the floor ranked by how unlikely each table's luck is, the
// open alerts (and, asked for, those closed in the last 7 days) with the hits and history
// behind them, and a chosen table's lines and faults in every window, its seats', and a chart
// of each paytable line drawn by the server (GET /api/v1/surveillance/...). Refreshed every
// 30 s; the table chosen, the panels opened and the scroll stay.
"use strict";

const { el, call, message, download } = Api;
const $ = (id) => document.getElementById(id);
const REFRESH_MS = 30000;
const DAY_MS = 24 * 3600 * 1000;
const CLOSED_DAYS = 7;
// The charts drawn at once: the top lines (the rarest hands, where a rigged table shows
// first) and any line alarming; the others on asking.
const TOP_CHARTS = 4;
// What the history panel lists of a window at most: the audit page has the rest.
const HISTORY_ROWS = 60;
// Who reads game protection (app/api/surveillance.py READERS).
const READERS = ["surveillance", "auditor", "supervisor", "admin"];
const ROLE_WORDS = {
  technician: "a technician", dealer: "a dealer", supervisor: "a supervisor",
  auditor: "an auditor", commission_agent: "a commission agent", admin: "an administrator",
  display: "a floor display", surveillance: "surveillance",
};
const COLUMNS = { shift: "Shift", gaming_day: "Gaming day", "7_days": "7 days", "30_days": "30 days" };
const WINDOW_ORDER = ["shift", "gaming_day", "7_days", "30_days"];
const ARROW = { too_many: "▲", too_few: "▼" };
const DIRECTION = { too_many: "too many", too_few: "too few" };

let started = false;
let timer = null;
let floorNow = null;      // the last floor answer
let chosen = null;        // the table shown below, kept in the address (#table=stud-1)
let showAllCharts = false;
let notUpdating = false;  // the message shown is a refresh's failure
const charts = new Map(); // line -> the SVG text shown, so a refresh redraws only what changed
const behind = new Map(); // "alert id:hits|history" -> its open panel, kept across refreshes

// -- words -------------------------------------------------------------------------------

// A time on this screen: the day and the minute are enough ("Nov 28, 14:00").
function when(us) {
  return new Date(Math.floor(us / 1000)).toLocaleString([], {
    month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
  });
}

function words(name) { return String(name).replace(/_/g, " "); }
function capital(text) { return text ? text[0].toUpperCase() + text.slice(1) : text; }
function game(name) { return capital(words(name)); }
function roleWords(role) { return ROLE_WORDS[role] || words(role); }

// An expected count as people read it: whole hands when many, a few figures when few.
function expectedText(x) {
  if (x >= 100) return Math.round(x).toLocaleString("en-US");
  if (x >= 1) return x.toFixed(1);
  if (x === 0) return "0";
  return String(Number(x.toPrecision(2)));
}

// "1 in 23 million by luck" -> "1 in 23 million".
function oneIn(luck) { return String(luck).replace(/ by luck$/, ""); }

// How unlikely, from 0 (as likely as not) to 1 (at the threshold) and past it: the power of
// the threshold a p-value is. Colour and bars follow it.
function strength(p, threshold) {
  if (!(p > 0)) return 2;
  if (p >= 1) return 0;
  return Math.log(p) / Math.log(threshold);
}

// Past the threshold: an alarm; halfway there (a line seen about once in some thousands of
// honest looks): rare; a fifth of the way: unusual; less: in line.
const LEVELS = [[1, "alarm"], [0.5, "rare"], [0.2, "unusual"]];
function level(p, threshold, direction) {
  if (!direction) return "calm";
  const s = strength(p, threshold);
  for (const [at, name] of LEVELS) if (s >= at) return name;
  return "calm";
}

// As the server says a chance (controller.core.luck.luck_text, less "by luck"): two
// significant figures under 100, whole numbers above, in millions and up past a million.
function figure(v) {
  if (v >= 100) return Math.round(v).toLocaleString("en-US");
  return v.toFixed(Math.max(0, 1 - Math.floor(Math.log10(v))));
}

function oneInText(p) {
  const n = 1 / p;
  const units = [[1e12, "trillion"], [1e9, "billion"], [1e6, "million"]];
  for (const [u, name] of units) if (n >= u) return `1 in ${figure(n / u)} ${name}`;
  return `1 in ${figure(n)}`;
}

// The floor's clock as it last answered (its time, not this screen's), in microseconds.
function serverNowUs() {
  const at = floorNow ? Date.parse(floorNow.at) : NaN;
  return (Number.isNaN(at) ? Date.now() : at) * 1000;
}

// -- who may look ----------------------------------------------------------------------------

function notAllowed(role, said) {
  const user = sessionStorage.getItem("progressive.user");
  $("not-allowed").replaceChildren(
    el("strong", {}, "This page is for surveillance, auditors, supervisors and administrators. "),
    `You are signed in as ${user}, ${roleWords(role)}: every table's luck held against the `
    + "odds and the alerts it raises are theirs to watch. Sign out and sign in with such an "
    + "account, or ask an administrator." + (said ? ` (The server said: ${said}.)` : ""));
  $("not-allowed").hidden = false;
  $("work").hidden = true;
  clearTimeout(timer);
}

// -- the floor -------------------------------------------------------------------------------

function thresholdLine(f) {
  const tests = f.tests_per_month.toLocaleString("en-US");
  const alarms = Number(f.false_alarms_per_month.toPrecision(2));
  $("threshold").replaceChildren(
    "An alert is raised at ", el("strong", {}, oneIn(f.threshold_luck)), " per test: about ",
    el("strong", {}, `${alarms} false alarms a month`), ` over ${tests} tests`,
    el("span", { class: "muted" }, " (every line and fault of every table, seat, dealer and "
      + "game, in every window, at every quarter-hour look)."));
  const note = f.loaded ? "" : " Still reading the kept history: the counts grow as it is read.";
  $("updated").textContent = `Updated ${new Date().toLocaleTimeString()}, again every 30 s.${note}`;
}

// How far a table's luck has gone towards the alarm: a bar whose mark (at ALARM_AT of its
// width) is the threshold; past it, the bar fills on.
const ALARM_AT = 0.8;
function meter(p, threshold, alarming) {
  const bar = el("span", { class: `meter ${alarming ? "alarm" : ""}`, "aria-hidden": "true" });
  const fill = el("span", { class: "fill" });
  // Styled through the CSSOM: the policy admits no style attribute.
  fill.style.width = `${Math.min(1, strength(p, threshold) * ALARM_AT) * 100}%`;
  bar.append(fill, el("span", { class: "mark" }));
  return bar;
}

function rankItem(t, i, threshold) {
  const w = t.worst;
  const lvl = w ? level(w.p_value, threshold, w.direction) : "calm";
  const facts = [game(t.game), t.link_id ? `link ${t.link_id}` : "",
    `${t.hands_today.toLocaleString("en-US")} ${t.hands_today === 1 ? "hand" : "hands"} bet today`]
    .filter(Boolean).join(" · ");
  const button = el("button", {
    type: "button", class: "pick", "aria-pressed": String(t.table_id === chosen),
    onclick: () => choose(t.table_id, true),
  },
  el("span", { class: "place" }, String(i + 1)),
  el("span", { class: "ident" },
    el("span", { class: "table-name" }, t.table_id),
    t.alarming ? el("span", { class: "badge" }, "ALERT") : "",
    el("span", { class: "facts" }, facts)),
  w
    ? el("span", { class: "worst" },
      el("span", { class: "line-seen" },
        `${capital(w.line_label)}: ${w.observed} seen, ${expectedText(w.expected)} expected `,
        el("span", { class: "muted" }, `(${COLUMNS[w.window] || words(w.window)}, ${DIRECTION[w.direction]})`)),
      el("span", { class: `luck ${lvl}` }, w.luck),
      meter(w.p_value, threshold, t.alarming))
    : el("span", { class: "worst" }, el("span", { class: "luck calm" },
      t.hands_today ? "In line with the odds" : "No side bets yet today")));
  return el("li", {
    class: `rank ${t.alarming ? "alarming" : lvl} ${t.table_id === chosen ? "chosen" : ""}`,
    "data-table": t.table_id,
  }, button);
}

function showFloor(f) {
  floorNow = f;
  thresholdLine(f);
  holdLinks(f);
  $("floor").replaceChildren(...(f.tables.length
    ? f.tables.map((t, i) => rankItem(t, i, f.threshold))
    : [el("li", { class: "muted" }, "No table on the floor.")]));
}

// -- alerts ----------------------------------------------------------------------------------

function groupsOf(alerts) {
  const groups = new Map();
  for (const a of alerts) {
    const key = [a.scope, a.subject, a.line, a.direction].join("\u001f");
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(a);
  }
  return [...groups.values()];
}

function behindButton(a, kind, label) {
  const key = `${a.alert_id}:${kind}`;
  return el("button", {
    type: "button", class: `behind-${kind}`, "aria-expanded": String(behind.has(key)),
    onclick: (event) => toggleBehind(a, kind, event.currentTarget),
  }, label);
}

function alertRow(a) {
  const stamp = a.closed_at_us
    ? `since ${when(a.since_us)} · raised ${when(a.raised_at_us)} · closed ${when(a.closed_at_us)}`
    : `since ${when(a.since_us)} · raised ${when(a.raised_at_us)}`;
  const row = el("li", { class: "alert-row", "data-alert": a.alert_id, "data-window": a.window },
    el("span", { class: "window" }, COLUMNS[a.window] || words(a.window)),
    el("span", { class: "said" },
      el("span", { class: "text" }, a.text),
      el("span", { class: "when muted" }, stamp)),
    el("span", { class: "actions" }, ...(a.link_id
      ? [behindButton(a, "hits", "Hits"), behindButton(a, "history", "History")]
      : [])));
  for (const kind of ["hits", "history"]) {
    const panel = behind.get(`${a.alert_id}:${kind}`);
    if (panel) row.append(panel);
  }
  return row;
}

function alertCard(group, closed) {
  const a = group[0]; // the most unlikely (open) or the newest closed
  const head = el("div", { class: "alert-head" },
    closed ? el("span", { class: "badge closed" }, "CLOSED") : el("span", { class: "badge" }, "ALERT"),
    el("strong", { class: "subject" }, a.subject),
    el("span", { class: "what" }, `${a.line_label} · ${DIRECTION[a.direction]}`),
    el("span", { class: "luck" }, a.luck));
  const open = a.table_id
    ? el("button", { type: "button", class: "open-table", onclick: () => choose(a.table_id, true) },
      `Show ${a.table_id}'s lines`)
    : "";
  return el("article", { class: `alert ${closed ? "closed" : ""}`, "data-scope": a.scope, "data-line": a.line },
    head, el("ul", { class: "alert-rows" }, ...group.map(alertRow)),
    open ? el("div", { class: "alert-foot" }, open) : "");
}

function showAlerts(open, closed) {
  $("alert-count").textContent = open.length ? String(open.length) : "";
  $("alert-count").className = open.length ? "count on" : "count";
  $("alerts").replaceChildren(...(open.length
    ? groupsOf(open).map((g) => alertCard(g, false))
    : [el("p", { class: "quiet" }, "No alert open: every table, seat, dealer and game is in line with the odds.")]));
  const box = $("closed");
  box.hidden = closed === null;
  if (closed !== null) {
    $("closed-alerts").replaceChildren(...(closed.length
      ? groupsOf(closed).map((g) => alertCard(g, true))
      : [el("p", { class: "muted" }, "None closed in the last 7 days.")]));
  }
}

async function loadAlerts() {
  const open = await call("GET", "/api/v1/surveillance/alerts");
  let closed = null;
  if ($("show-closed").checked) {
    const since = new Date(serverNowUs() / 1000 - CLOSED_DAYS * DAY_MS).toISOString();
    const all = await call("GET", `/api/v1/surveillance/alerts?since=${encodeURIComponent(since)}`);
    closed = all.filter((a) => a.closed_at_us !== null)
      .sort((x, y) => y.closed_at_us - x.closed_at_us
        || WINDOW_ORDER.indexOf(x.window) - WINDOW_ORDER.indexOf(y.window));
  }
  return [open, closed];
}

// -- what is behind an alert: its hits and its history --------------------------------------

function until(a) { return a.closed_at_us || serverNowUs(); }

function hitsPanel(a, hits) {
  const mine = hits.filter((h) => (!a.table_id || h.table_id === a.table_id)
    && (a.seat === null || h.seat === a.seat)
    && h.at_us >= a.since_us && h.at_us <= until(a));
  const where = a.seat !== null ? `${a.table_id} seat ${a.seat}` : a.table_id || `link ${a.link_id}`;
  if (!mine.length) return [el("p", { class: "muted" }, `No hit at ${where} in the window.`)];
  const rows = mine.map((h) => el("tr", { class: h.hand === a.line ? "this-line" : "", "data-hit": h.hit_id },
    el("td", {}, when(h.at_us)),
    el("td", {}, h.hit_id),
    el("td", { class: "num" }, String(h.seat)),
    el("td", {}, h.hand_label),
    el("td", {}, el("span", { class: "cards" }, ...Api.hitCards(h, "no cards reported"))),
    el("td", {}, h.status + (h.refusal ? `: ${h.refusal}` : ""))));
  return [
    el("p", { class: "muted" }, `${mine.length} ${mine.length === 1 ? "hit" : "hits"} at ${where} in the window, newest first; the alert's line marked.`),
    el("table", { class: "grid small" },
      el("thead", {}, el("tr", {}, ...["When", "Hit", "Seat", "Hand", "Cards", "Status"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...rows)),
  ];
}

function historyPanel(a, history) {
  const mine = history.entries.filter((e) => !a.table_id || e.table_id === a.table_id);
  const where = a.table_id || `link ${a.link_id}`;
  if (!mine.length) return [el("p", { class: "muted" }, `No entry at ${where} in the window.`)];
  const kinds = new Map();
  for (const e of mine) kinds.set(e.kind, (kinds.get(e.kind) || 0) + 1);
  const summary = [...kinds].map(([k, n]) => `${n} ${EntryWords.entryKind({ kind: k })}`).join(", ");
  const shown = mine.slice(-HISTORY_ROWS).reverse();
  const more = history.next_after_seq !== null || mine.length > shown.length;
  return [
    el("p", { class: "muted" }, `At ${where} in the window: ${summary}.`
      + (more ? ` The newest ${shown.length} are listed; the audit page has them all.` : "")),
    el("table", { class: "grid small" },
      el("thead", {}, el("tr", {}, ...["When", "Entry", "Kind", "What"].map((h) => el("th", {}, h)))),
      el("tbody", {}, ...shown.map((e) => el("tr", { class: e.hit_id ? "this-line" : "", "data-seq": String(e.seq) },
        el("td", {}, when(e.at_us)),
        el("td", { class: "num" }, String(e.seq)),
        el("td", {}, EntryWords.entryKind(e)),
        el("td", {}, e.explanation))))),
  ];
}

async function fillBehind(a, kind, panel) {
  try {
    if (kind === "hits") {
      panel.replaceChildren(...hitsPanel(a, await call("GET", `${a.hits_url}?limit=1000`)));
    } else {
      panel.replaceChildren(...historyPanel(a, await call("GET", a.history_url)));
    }
  } catch (err) {
    if (err.status === 403) {
      const role = sessionStorage.getItem("progressive.role");
      panel.replaceChildren(el("p", { class: "load-error bad-text", role: "alert" },
        `The ${kind} of a link are read by auditors, supervisors and administrators; you are `
        + `signed in as ${roleWords(role)}. Ask one of them to open link ${a.link_id} on the audit `
        + `page from ${when(a.since_us)}.`));
    } else {
      Api.loadFailed(panel, err, `the ${kind}`);
    }
  }
}

function toggleBehind(a, kind, button) {
  const key = `${a.alert_id}:${kind}`;
  const open = behind.get(key);
  if (open) {
    open.remove();
    behind.delete(key);
    button.setAttribute("aria-expanded", "false");
    return;
  }
  const panel = el("div", { class: `behind ${kind}`, "data-kind": kind }, el("p", { class: "muted" }, "Loading…"));
  behind.set(key, panel);
  button.setAttribute("aria-expanded", "true");
  button.closest(".alert-row").append(panel);
  fillBehind(a, kind, panel);
}

// -- one table ---------------------------------------------------------------------------------

function cell(v, threshold) {
  if (!v) return el("td", { class: "cell none" }, "–");
  const lvl = v.alarming ? "alarm" : level(v.p_value, threshold, v.direction);
  const title = `${capital(v.line_label)}, ${COLUMNS[v.window] || v.window}: ${v.observed} seen in `
    + `${v.trials.toLocaleString("en-US")}, ${v.expected} expected: ${v.luck}`
    + (v.direction ? ` (${DIRECTION[v.direction]})` : "");
  return el("td", { class: `cell ${lvl}`, title, "data-window": v.window },
    el("span", { class: "seen" }, String(v.observed)),
    el("span", { class: "exp" }, ` / ${expectedText(v.expected)}`),
    v.direction && lvl !== "calm" ? el("span", { class: "odds" }, `${ARROW[v.direction]} ${oneIn(v.luck)}`) : "");
}

function windowHead(w) {
  const since = floorNow && floorNow.windows.find((x) => x.window === w);
  return el("th", { class: "num" }, COLUMNS[w],
    since ? el("span", { class: "since" }, `since ${when(since.since_us)}`) : "");
}

function showLines(t) {
  const byLine = new Map();
  for (const v of t.lines) {
    if (!byLine.has(v.line)) byLine.set(v.line, { label: v.line_label, windows: {} });
    byLine.get(v.line).windows[v.window] = v;
  }
  const hands = new Set(t.chart_lines);
  const row = (line, l) => el("tr", {
    "data-line": line,
    class: Object.values(l.windows).some((v) => v.alarming) ? "alarming" : "",
  },
  el("th", { scope: "row" }, capital(l.label)),
  ...WINDOW_ORDER.map((w) => cell(l.windows[w], t.threshold)));
  const lines = [...byLine].filter(([line]) => hands.has(line));
  const faults = [...byLine].filter(([line]) => !hands.has(line));
  $("lines").querySelector("thead").replaceChildren(el("tr", {},
    el("th", {}, "Line: seen / expected"), ...WINDOW_ORDER.map(windowHead)));
  const body = [];
  if (!byLine.size) {
    body.push(el("tr", {}, el("td", { colspan: "5", class: "muted" }, "No side bet seen at this table in the last 30 gaming days.")));
  }
  body.push(...lines.map(([line, l]) => row(line, l)));
  if (faults.length) {
    body.push(el("tr", { class: "group" }, el("th", { colspan: "5" }, "Faults: what an honest table reports only by the odd glitch")));
    body.push(...faults.map(([line, l]) => row(line, l)));
  }
  $("lines").querySelector("tbody").replaceChildren(...body);
}

function showSeats(t) {
  const hands = t.chart_lines;
  const label = new Map(t.lines.map((v) => [v.line, v.line_label]));
  $("seats").querySelector("thead").replaceChildren(el("tr", {},
    el("th", {}, "Seat"), ...hands.map((h) => el("th", { class: "num" }, capital(label.get(h) || words(h).toLowerCase())))));
  if (!t.seats.length) {
    $("seats").querySelector("tbody").replaceChildren(el("tr", {},
      el("td", { colspan: String(hands.length + 1), class: "muted" }, "No seat has taken a side bet yet.")));
    return;
  }
  $("seats").querySelector("tbody").replaceChildren(...t.seats.map((s) => {
    const cells = hands.map((h) => {
      const mine = s.lines.filter((v) => v.line === h);
      // The seat's most unlikely window of the line; in line everywhere: its gaming day.
      const worst = mine.filter((v) => v.direction).sort((x, y) => x.p_value - y.p_value)[0];
      const odd = worst && (worst.alarming || level(worst.p_value, t.threshold, worst.direction) !== "calm");
      const c = cell(odd ? worst : mine.find((v) => v.window === "gaming_day"), t.threshold);
      if (odd) c.append(el("span", { class: "in" }, COLUMNS[worst.window]));
      return c;
    });
    return el("tr", { "data-seat": String(s.seat), class: s.lines.some((v) => v.alarming) ? "alarming" : "" },
      el("th", { scope: "row" }, `Seat ${s.seat}`), ...cells);
  }));
}

// The server's SVG, put into the page as elements: read by the browser's XML parser (which
// runs nothing) and imported, so the chart scales with its box and reads like the page.
function svgOf(text) {
  const doc = new DOMParser().parseFromString(text, "image/svg+xml");
  if (doc.querySelector("parsererror")) throw new Error("the chart could not be read");
  return document.importNode(doc.documentElement, true);
}

async function showCharts(t) {
  const alarming = new Set(t.lines.filter((v) => v.alarming).map((v) => v.line));
  const wanted = t.chart_lines.filter((line, i) => showAllCharts || i < TOP_CHARTS || alarming.has(line));
  const rest = t.chart_lines.length - wanted.length;
  const more = $("more-charts");
  more.hidden = rest === 0;
  more.textContent = `Show the charts of the other ${rest} ${rest === 1 ? "line" : "lines"}`;
  const box = $("charts");
  const figures = new Map([...box.querySelectorAll("figure")].map((f) => [f.dataset.line, f]));
  const order = [];
  for (const line of wanted) {
    let figure = figures.get(line);
    if (!figure) {
      figure = el("figure", { class: "line-chart", "data-line": line }, el("p", { class: "muted" }, "Loading…"));
    }
    order.push(figure);
  }
  box.replaceChildren(...order);
  await Promise.all(wanted.map(async (line, i) => {
    const figure = order[i];
    const path = `/api/v1/surveillance/tables/${encodeURIComponent(t.table_id)}/chart.svg?line=${encodeURIComponent(line)}`;
    try {
      const text = await Api.text(path);
      if (chosen !== t.table_id) return;
      if (charts.get(line) === text && figure.querySelector("svg")) return;
      charts.set(line, text);
      figure.classList.toggle("alarming", alarming.has(line));
      figure.replaceChildren(svgOf(text));
    } catch (err) {
      if (err.status !== 401) Api.loadFailed(figure, err, "the chart");
    }
  }));
}

// ``shown``: run once the table's lines are on the screen, before its charts come.
async function showTable(shown) {
  if (!chosen) { $("table-box").hidden = true; return; }
  const t = await call("GET", `/api/v1/surveillance/tables/${encodeURIComponent(chosen)}`);
  if (t.table_id !== chosen) return;
  $("table-box").hidden = false;
  $("table-title").textContent = `${t.table_id}: its lines and faults against the odds`;
  $("table-note").textContent = `${game(t.game)}${t.link_id ? `, link ${t.link_id}` : ""}. `
    + "Each cell: the hands of the line (or the faults) seen / what the exact odds and the hands "
    + "bet predict. Point at a cell for its odds.";
  showLegend(t.threshold);
  showLines(t);
  showSeats(t);
  if (shown) shown();
  await showCharts(t);
}

function showLegend(threshold) {
  const swatch = (cls, text) => el("span", { class: `key ${cls}` }, text);
  const at = (s) => oneInText(threshold ** s);
  $("legend").replaceChildren(
    swatch("calm", "in line"),
    swatch("unusual", `unusual: ${at(0.2)} or rarer`),
    swatch("rare", `rare: ${at(0.5)} or rarer`),
    swatch("alarm", `alert: ${floorNow ? oneIn(floorNow.threshold_luck) : oneInText(threshold)} or rarer`),
    el("span", { class: "muted" }, "▲ too many · ▼ too few"));
}

async function choose(tableId, scroll) {
  if (chosen !== tableId) {
    chosen = tableId;
    charts.clear();
    showAllCharts = false;
    $("charts").replaceChildren();
    history.replaceState(null, "", `#table=${encodeURIComponent(tableId)}`);
  }
  for (const li of $("floor").querySelectorAll("li.rank")) {
    const mine = li.dataset.table === chosen;
    li.classList.toggle("chosen", mine);
    li.querySelector("button").setAttribute("aria-pressed", String(mine));
  }
  try {
    await showTable(() => { if (scroll) $("table-box").scrollIntoView({ block: "start" }); });
  } catch (err) {
    if (err.status === 403) notAllowed(sessionStorage.getItem("progressive.role"), err.message);
    else if (err.status !== 401) message(err.message, false);
  }
}

// -- hold reports ------------------------------------------------------------------------------

// The hold report of this gaming day or the last 30, from the window's start as the floor
// last said it (until now: the server's default).
function holdLinks(f) {
  for (const b of document.querySelectorAll("#hold-reports button.hold")) {
    const w = f.windows.find((x) => x.window === b.dataset.period);
    b.dataset.href = `/api/v1/surveillance/hold-report.${b.dataset.format}?since=${encodeURIComponent(w.since)}`;
  }
}

function holdReport(event) {
  const path = event.currentTarget.dataset.href;
  if (!path) { message("The floor has not been read yet: try again in a moment.", false); return; }
  download(path).catch((err) => message(`The hold report could not be downloaded: ${err.message}`, false));
}

// -- the whole screen, and every 30 s ----------------------------------------------------------

async function refresh() {
  clearTimeout(timer);
  try {
    const [f, [open, closed]] = await Promise.all([
      call("GET", "/api/v1/surveillance/floor"), loadAlerts()]);
    // Redrawn in place, never emptied first: the browser keeps what the person was looking
    // at where it was (scroll anchoring), and the chosen table and open panels stay.
    showFloor(f);
    showAlerts(open, closed);
    if (!chosen && f.tables.length) {
      // Opened on the table most out of line, without moving the screen.
      chosen = f.tables[0].table_id;
      await choose(chosen, false);
    } else if (chosen) {
      await showTable();
    }
    // Only what a refresh said goes with the next one: a refused download's message stays.
    if (notUpdating) $("message").hidden = true;
    notUpdating = false;
  } catch (err) {
    if (err.status === 403) { notAllowed(sessionStorage.getItem("progressive.role"), err.message); return; }
    if (err.status === 401) return;
    message(`Not updating: ${err.message}`, false);
    notUpdating = true;
  }
  clearTimeout(timer);
  if (!$("work").hidden) timer = setTimeout(refresh, REFRESH_MS);
}

function fromAddress() {
  const m = location.hash.match(/^#table=(.+)$/);
  return m ? decodeURIComponent(m[1]) : null;
}

async function ready() {
  const role = sessionStorage.getItem("progressive.role");
  $("not-allowed").hidden = true;
  if (!READERS.includes(role)) { notAllowed(role); return; }
  $("work").hidden = false;
  if (!started) {
    started = true;
    chosen = fromAddress();
    $("show-closed").addEventListener("change", () => refresh());
    $("more-charts").addEventListener("click", () => { showAllCharts = true; showTable().catch((err) => message(err.message, false)); });
    for (const b of document.querySelectorAll("#hold-reports button.hold")) b.addEventListener("click", holdReport);
  }
  await refresh();
}

$("sign-out").addEventListener("click", () => {
  clearTimeout(timer);
  $("work").hidden = true;
  $("not-allowed").hidden = true;
});
Api.start(() => ready().catch((err) => message(err.message, false)));
