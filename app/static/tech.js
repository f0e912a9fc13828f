// The technician's page: the hits that hold tables first and loud (never cut off by a page
// of other work), then the rest of the work, every table's state with the hits it waits on,
// and that work: verify the hand, sign off as a second person, record the hand pay and the tax
// form's reference, reset the table; take a table out of play, record what was done to it and its verification, and
// return it to play (68 IAC 10-1-6.2). The result of an action is shown where it was taken.
"use strict";

const REFRESH_MS = 2000;
const OTHER_PAGE = 50;
const QUIET_PAGE = 20;
const { el, cents, time, call, message, download } = Api;
const { hitPath } = TechHits;
let lastHits = "";
let lastRecords = "";
let outOfPlay = "";
let timer = null;
let ticker = null;
let escalateS = 600;
let otherLimit = OTHER_PAGE;
let quietOffset = 0;
let holdingAll = []; // every hit holding a table, whatever the filters
let taxFrom = 0; // the operator's tax-reporting amount, in cents
let lastTax = "";
// "hit:<id>", "table:<id>" or "tax:<id>" -> {text, ok, progress}: a refusal keeps the
// progress of the hits it concerned, and goes once they move on (a signature given
// meanwhile on another screen answers "not signed off").
const results = new Map();

// "$1,234.56" or "1234.56" -> 123456 cents, exactly (no floating point), or null.
function parseCents(text) {
  const m = text.trim().match(/^\$?((?:\d{1,3}(?:,\d{3})+)|\d+)(?:\.(\d{1,2}))?$/);
  if (!m) return null;
  return parseInt(m[1].replace(/,/g, ""), 10) * 100 + parseInt((m[2] || "0").padEnd(2, "0"), 10);
}

const STATES = {
  online: "online", offline: "offline", hit_pending: "hit pending", unpolled: "not polled yet",
  out_of_play: "out of play", awaiting_approval: "awaiting approval", inoperable: "inoperable",
  standby: "standby", unrecorded: "not recorded",
};

function stateBadge(state) {
  return el("span", { class: `state ${state}` }, STATES[state] || state.replaceAll("_", " "));
}

// ----------------------------------------------------------------------- finding a hit

// A hit id ("stud-1#7", "stud-1#2.7", "stud-1#manual-…"); a full stop ending a sentence is not
// part of it.
const HIT_ID = /[A-Za-z0-9_.-]+#[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*/g;

// Bring a hit's card into view and make it flash; if a filter hides it, clear the filters.
async function showHit(hitId) {
  let card = document.getElementById(`hit-${hitId}`);
  if (!card) {
    for (const id of ["filter-link", "filter-table", "filter-kind"]) document.getElementById(id).value = "";
    lastHits = "";
    await refresh();
    card = document.getElementById(`hit-${hitId}`);
  }
  if (!card) {
    message(`Hit ${hitId} is no longer waiting: its table was reset.`, true);
    return;
  }
  card.scrollIntoView({ block: "center" });
  card.classList.remove("flash");
  void card.offsetWidth; // restart the animation
  card.classList.add("flash");
}

const hitLink = (id) => el("a", {
  href: `#hit-${id}`, class: "hit-link",
  onclick: (event) => { event.preventDefault(); showHit(id); },
}, id);

// A message with every hit id in it made a link to that hit's card.
function linked(text) {
  const parts = [];
  let at = 0;
  for (const m of text.matchAll(HIT_ID)) {
    parts.push(text.slice(at, m.index), hitLink(m[0]));
    at = m.index + m[0].length;
  }
  parts.push(text.slice(at));
  return parts.filter((p) => p !== "");
}

function result(key) {
  const r = results.get(key);
  return r
    ? el("div", { class: `result ${r.ok ? "ok" : "bad"}`, role: "status" }, ...linked(r.text))
    : el("div", { class: "result", role: "status", hidden: "" });
}

// ------------------------------------------------------------------------------ tables

function renderTables(tables) {
  const body = document.querySelector("#tables tbody");
  const waits = new Map();
  for (const h of holdingAll) waits.set(h.table_id, [...(waits.get(h.table_id) || []), h]);
  // Tables held for a jackpot first, then by link and number ("stud-2" before "stud-10").
  const order = new Intl.Collator(undefined, { numeric: true });
  const sorted = [...tables].sort((a, b) => (waits.has(b.table_id) - waits.has(a.table_id))
    || order.compare(a.link_id, b.link_id) || order.compare(a.table_id, b.table_id));
  body.replaceChildren(...sorted.map((t) => {
    const held = waits.get(t.table_id) || [];
    return el("tr", { "data-table": t.table_id, class: held.length ? "held" : "" },
      el("td", {}, t.table_id),
      el("td", {}, t.link_id),
      el("td", { class: "table-state" }, stateBadge(t.state),
        // Why its polls fail (a table that does not answer, a port that refuses its settings,
        // a fault): an offline table says why.
        t.poll_problem ? el("div", { class: "poll-problem muted" }, t.poll_problem) : ""),
      el("td", { class: "waits-on" }, ...(held.length
        ? held.flatMap((h, i) => [i ? ", " : "", hitLink(h.hit_id), ` ${TechHits.what(h).toLowerCase()}`])
        : [t.hit_pending ? el("span", { class: "muted" }, "fixed pays only") : ""])),
      el("td", { class: "num" }, t.rounds ?? "–"),
      el("td", { class: "num" }, t.credits ?? "–"),
      el("td", {}, t.seats_with_bets.length ? t.seats_with_bets.join(", ") : "none"),
      el("td", { class: "muted" }, t.last_answer_us ? TechHits.when(t.last_answer_us) : "never"),
      el("td", { class: "table-actions" },
        t.hit_pending
          ? el("button", { type: "button", class: "reset", onclick: () => reset(t.table_id, `table:${t.table_id}`) }, "Reset table")
          : "",
        t.state === "out_of_play" || t.state === "awaiting_approval"
          ? ""
          : el("button", { type: "button", class: "remove", onclick: () => openRemoval(t.table_id) }, "Take out of play"),
        result(`table:${t.table_id}`)));
  }));
  document.getElementById("tables-updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
}

function renderFilters(tables) {
  const fill = (id, values) => {
    const select = document.getElementById(id);
    const keep = select.value;
    const have = [...select.options].slice(1).map((o) => o.value).join(",");
    if (have === values.join(",")) return;
    select.replaceChildren(select.options[0], ...values.map((v) => el("option", { value: v }, v)));
    select.value = values.includes(keep) ? keep : "";
  };
  fill("filter-link", [...new Set(tables.map((t) => t.link_id))].sort());
  const link = document.getElementById("filter-link").value;
  fill("filter-table", tables.filter((t) => !link || t.link_id === link).map((t) => t.table_id));
}

function filterQuery() {
  const q = new URLSearchParams();
  for (const [name, id] of [["link", "filter-link"], ["table", "filter-table"], ["kind", "filter-kind"]]) {
    const v = document.getElementById(id).value;
    if (v) q.set(name, v);
  }
  return q;
}

// ------------------------------------------------------------------------------- hits

// Replace a box's content; what the technician has typed in the items marked with `attr`
// survives, and so do the cursor and the selection of the field being typed in (a refresh
// in the middle of typing neither moves the cursor nor turns a replacement into an append).
function keepTyping(box, attr, children) {
  const fields = () => box.querySelectorAll(`[${attr}] input, [${attr}] textarea`);
  const keyOf = (input) => `${input.closest(`[${attr}]`).getAttribute(attr)}|${input.className}`;
  const typed = new Map();
  let focused = null;
  let selection = null;
  for (const input of fields()) {
    typed.set(keyOf(input), input.value);
    if (input === document.activeElement) {
      focused = keyOf(input);
      selection = [input.selectionStart, input.selectionEnd, input.selectionDirection];
    }
  }
  box.replaceChildren(...children);
  for (const input of fields()) {
    const key = keyOf(input);
    if (typed.has(key)) input.value = typed.get(key);
    if (key === focused) {
      input.focus();
      if (selection && selection[0] !== null) input.setSelectionRange(...selection);
    }
  }
}

const ctx = () => ({
  act: { verify, signOff, handPay, taxForm, reset, slip }, result, taxFrom, me: Api.user(),
});

// Where the hits a result concerns stand: the hit's, or every hit holding the table's.
function progressOf(key) {
  const [kind, id] = (key || "").split(/:(.*)/s);
  const hits = holdingAll.filter((h) => (kind === "table" ? h.table_id === id : h.hit_id === id));
  return JSON.stringify(hits.map((h) => [h.hit_id, h.verified_by, h.signed_off_by, h.hand_paid_cents, h.tax_form_reference]));
}

// A refusal whose hits have moved on since is answered: it goes.
function dropAnswered() {
  const top = document.getElementById("message");
  for (const [key, r] of results) {
    if (r.ok || key.startsWith("tax:") || r.progress === progressOf(key)) continue;
    results.delete(key);
    if (!top.hidden && top.textContent === r.text) top.hidden = true;
  }
}

function renderWork(work) {
  const signature = JSON.stringify([work, [...results]]);
  if (signature === lastHits) return; // keep what the technician is typing
  lastHits = signature;
  escalateS = work.escalate_after_s;
  taxFrom = work.tax_reporting_from_cents;
  const c = ctx();
  document.getElementById("holding-count").textContent = String(work.holding.length);
  const shown = work.other.length;
  document.getElementById("other-count").textContent = shown < work.other_total
    ? `${work.other_total} (the newest ${shown} shown)` : String(work.other_total);
  const holding = document.getElementById("holding");
  keepTyping(holding, "data-hit", work.holding.length
    ? work.holding.map((h) => TechHits.holdingCard(h, c))
    : [el("p", { class: "muted" }, "No table is held for a jackpot.")]);
  const other = document.getElementById("other");
  keepTyping(other, "data-hit", shown
    ? work.other.map((h) => TechHits.otherCard(h, c))
    : [el("p", { class: "muted" }, "No other hits waiting.")]);
  document.getElementById("other-more").hidden = shown >= work.other_total;
  TechAlert.tick(escalateS);
}

// Awards of the tax-reporting amount or more whose tax form's reference is still to record,
// their tables reset already (one still held shows it on its card).
async function refreshTaxDue() {
  const page = await call("GET", `/api/v1/hits/tax-forms-due?${filterQuery()}`);
  const held = new Set(holdingAll.map((h) => h.hit_id));
  const due = page.hits.filter((h) => !held.has(h.hit_id));
  const signature = JSON.stringify([due, [...results].filter(([k]) => k.startsWith("tax:"))]);
  if (signature === lastTax) return; // keep what is being typed
  lastTax = signature;
  taxFrom = page.tax_reporting_from_cents;
  document.getElementById("tax-from").textContent = cents(taxFrom);
  document.getElementById("tax-count").textContent = String(due.length);
  const body = document.querySelector("#tax-due tbody");
  keepTyping(body, "data-tax-hit", due.length
    ? due.map((h) => TechHits.taxDueRow(h, ctx()))
    : [el("tr", {}, el("td", { colspan: "5", class: "muted" }, "None."))]);
}

async function refreshQuiet() {
  const details = document.getElementById("quiet");
  const q = filterQuery();
  q.set("limit", String(QUIET_PAGE));
  q.set("offset", String(quietOffset));
  const page = await call("GET", `/api/v1/hits/paid-without-technician?${q}`);
  document.getElementById("quiet-count").textContent = String(page.total);
  if (!details.open) return;
  const body = document.querySelector("#quiet-log tbody");
  body.replaceChildren(...(page.hits.length
    ? TechHits.quietRows(page.hits)
    : [el("tr", {}, el("td", { colspan: "4", class: "muted" }, "None."))]));
  const last = Math.min(page.total, quietOffset + page.hits.length);
  document.getElementById("quiet-range").textContent = page.total
    ? `${quietOffset + 1}–${last} of ${page.total}, newest first` : "";
  document.getElementById("quiet-newer").disabled = quietOffset === 0;
  document.getElementById("quiet-older").disabled = last >= page.total;
}

// ------------------------------------------------------------------ out of play (10-1-6.2)

const recordPath = (r, action) =>
  `/api/v1/tables/${encodeURIComponent(r.table_id)}/integrity-records/${encodeURIComponent(r.record_id)}` +
  (action ? `/${action}` : "");

function localInput(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

function openRemoval(tableId) {
  const form = document.getElementById("remove-form");
  form.reset();
  form.table_id.value = tableId;
  form.questioned_at.value = localInput(new Date());
  document.getElementById("remove-table").textContent = tableId;
  const section = document.getElementById("remove");
  section.hidden = false;
  section.scrollIntoView();
  form.device_type.focus();
}

function closeRemoval() {
  document.getElementById("remove").hidden = true;
}

function removeTable(event) {
  event.preventDefault();
  const form = event.target;
  const optional = (name) => form[name].value.trim() || null;
  const tableId = form.table_id.value;
  const body = {
    questioned_at_us: new Date(form.questioned_at.value).getTime() * 1000,
    device_type: form.device_type.value.trim(),
    manufacturer_serial_number: optional("manufacturer_serial_number"),
    commission_registration_number: form.commission_registration_number.value.trim(),
    malfunction_reason: form.malfunction_reason.value.trim(),
    complainant_name: optional("complainant_name"),
    complainant_address: optional("complainant_address"),
    complainant_telephone: optional("complainant_telephone"),
    complaint_nature: optional("complaint_nature"),
  };
  return act(async () => {
    await call("POST", `/api/v1/tables/${encodeURIComponent(tableId)}/integrity-records`, body);
    closeRemoval();
  }, `Table ${tableId} is out of play: it credits nothing and its hits are refused until it returns.`);
}

function renderRecord(r) {
  const actions = r.remedial_actions.map((a) => el("li", {},
    `${a.description} — `,
    el("span", { class: "muted" }, [
      ...a.employees.map((e) => `${e.printed_name} (licence ${e.occupational_license_number})`),
      ...(a.outside_company_name ? [a.outside_company_name] : []),
      `recorded by ${a.recorded_by}, ${time(a.at_us)}`,
    ].join(", "))));
  const field = (cls, label, attrs) => el("label", {}, label, el("input", { class: cls, ...attrs }));
  return el("div", { class: "record", "data-record": r.record_id, "data-table": r.table_id },
    el("div", {},
      el("strong", {}, `Table ${r.table_id}: out of play since ${time(r.removed_at_us)}`), " ",
      el("span", { class: "muted" }, `${r.device_type}, registration ${r.commission_registration_number}, record ${r.record_id}`)),
    el("div", {}, `Reason: ${r.malfunction_reason}`),
    el("div", { class: "muted" }, `Notice to the enforcement agent filed (PDF sha256 ${r.notice_sha256.slice(0, 16)}…)`),
    el("div", {}, el("strong", {}, "Remedial actions: "),
      actions.length ? el("ul", { class: "actions-done" }, ...actions) : el("span", { class: "muted" }, "none yet")),
    el("div", { class: "step" },
      el("label", {}, "Remedial action", el("textarea", { class: "action-description", rows: "2", cols: "40" })),
      field("employee-name", "Employee (printed name)", { size: "18" }),
      field("employee-signature", "Signature", { size: "10" }),
      field("employee-licence", "Occupational licence no.", { size: "12" }),
      el("button", { type: "button", class: "record-action", onclick: () => recordAction(r) }, "Record remedial action")),
    r.verified_by
      ? el("div", { class: "verified" }, `Verified by ${r.verified_by}: ${r.verification}`)
      : el("div", { class: "step" },
        el("label", {}, "How it was verified to meet the requirements",
          el("textarea", { class: "verification", rows: "2", cols: "50" })),
        el("button", { type: "button", class: "verify-record", onclick: () => verifyRecord(r) }, "Record verification")),
    el("div", { class: "step" },
      el("button", { type: "button", class: "primary return", onclick: () => returnToPlay(r) }, "Return to play")));
}

function recordBox(r) {
  return document.querySelector(`[data-record="${CSS.escape(r.record_id)}"]`);
}

function recordAction(r) {
  const box = recordBox(r);
  const value = (cls) => box.querySelector(`.${cls}`).value.trim();
  const description = value("action-description");
  if (!description) {
    message("Describe the remedial action.", false);
    return;
  }
  const employee = {
    printed_name: value("employee-name"),
    signature: value("employee-signature"),
    occupational_license_number: value("employee-licence"),
  };
  const employees = employee.printed_name ? [employee] : [];
  return act(() => call("POST", recordPath(r, "remedial-actions"), { description, employees }),
    `Remedial action recorded for table ${r.table_id}.`);
}

function verifyRecord(r) {
  const verification = recordBox(r).querySelector(".verification").value.trim();
  if (!verification) {
    message("Say how the table was found to meet the requirements.", false);
    return;
  }
  return act(() => call("POST", recordPath(r, "verification"), { verification }),
    `Table ${r.table_id} verified.`);
}

function returnToPlay(r) {
  return act(() => call("POST", recordPath(r, "return-to-play")),
    `Table ${r.table_id} returned to play.`);
}

async function refreshRecords(tables) {
  const out = tables.filter((t) => t.state === "out_of_play").map((t) => t.table_id);
  const key = out.join(",");
  if (key === outOfPlay && lastRecords) return; // nothing moved: keep what is being typed
  const lists = await Promise.all(out.map((id) =>
    call("GET", `/api/v1/tables/${encodeURIComponent(id)}/integrity-records`)));
  const open = lists.flat().filter((r) => r.returned_at_us === null);
  const signature = JSON.stringify(open);
  outOfPlay = key;
  if (signature === lastRecords) return;
  lastRecords = signature;
  const box = document.getElementById("out-of-play");
  if (!open.length) {
    box.replaceChildren(el("p", { class: "muted" }, "None."));
    return;
  }
  keepTyping(box, "data-record", open.map(renderRecord));
}

// A part of the page whose load failed: its error where it stands, the rest shown anyway.
function failed(err, box, what, colspan) {
  if (err.status === 401) return; // the sign-in form is back
  Api.loadFailed(box, err, what, colspan);
}

// The work list's failure: what it showed goes (it may be another filter's), the counts too.
function workFailed(err) {
  lastHits = "";
  document.getElementById("holding-count").textContent = "?";
  document.getElementById("other-count").textContent = "?";
  document.getElementById("other").replaceChildren();
  document.getElementById("other-more").hidden = true;
  failed(err, document.getElementById("holding"), "the hits waiting for a technician");
}

// One load at a time: a load asked for while one runs starts when it ends, so an answer
// fetched before an action never lands on the page after the action's own.
let loading = null;
let reloading = null;
function refresh() {
  if (loading) {
    reloading ??= loading.then(() => { reloading = null; return refresh(); });
    return reloading;
  }
  loading = load().finally(() => { loading = null; });
  return loading;
}

async function load() {
  const q = filterQuery();
  q.set("limit", String(otherLimit));
  const filtered = [...q.keys()].some((k) => k !== "limit");
  // Each list is loaded and shown on its own: one that fails says so where it stands and
  // never keeps the others (the tables, the filters) from showing.
  const [tables, work, all] = await Promise.allSettled([
    call("GET", "/api/v1/tables"),
    call("GET", `/api/v1/hits/work?${q}`),
    // The tables list names the hits each held table waits on, whatever the filters.
    filtered ? call("GET", "/api/v1/hits/work?limit=1") : Promise.resolve(null),
  ]);
  const whole = filtered ? all : work;
  if (whole.status === "fulfilled") {
    holdingAll = whole.value.holding;
    dropAnswered();
    TechAlert.notice(holdingAll);
  }
  if (tables.status === "fulfilled") renderFilters(tables.value);
  if (work.status === "fulfilled") renderWork(work.value);
  else workFailed(work.reason);
  if (tables.status === "fulfilled") renderTables(tables.value);
  else failed(tables.reason, document.querySelector("#tables tbody"), "the tables", 9);
  try {
    await refreshTaxDue();
  } catch (err) {
    lastTax = "";
    document.getElementById("tax-count").textContent = "?";
    failed(err, document.querySelector("#tax-due tbody"), "the tax forms to record", 5);
  }
  try {
    await refreshQuiet();
  } catch (err) {
    document.getElementById("quiet-count").textContent = "?";
    failed(err, document.querySelector("#quiet-log tbody"), "the fixed pays paid with no technician", 4);
  }
  if (tables.status === "fulfilled") {
    try {
      await refreshRecords(tables.value);
    } catch (err) {
      lastRecords = "";
      failed(err, document.getElementById("out-of-play"), "the tables out of play");
    }
  }
}

// Run an action; its result is shown at `key` (the hit card or table row where it was
// taken) and at the top of the page.
async function act(work, done, key) {
  try {
    await work();
  } catch (err) {
    if (key) results.set(key, { text: err.message, ok: false, progress: progressOf(key) });
    message(err.message, false); // what was typed stays, to be corrected
    lastHits = "";
    lastTax = "";
    await refresh();
    return false;
  }
  if (key) results.set(key, { text: done, ok: true });
  const [kind, id] = (key || "").split(/:(.*)/s);
  if (kind === "hit") {
    // A refusal at the hit's table row is answered by this: it is not left standing there.
    const table = `table:${document.querySelector(`[data-hit="${CSS.escape(id)}"]`)?.getAttribute("data-table")}`;
    if (results.get(table) && !results.get(table).ok) results.delete(table);
  }
  message(done, true);
  lastHits = "";
  lastTax = "";
  lastRecords = "";
  await refresh();
  return true;
}

function cardOf(h) {
  return document.querySelector(`[data-hit="${CSS.escape(h.hit_id)}"]`);
}

function refuseHere(h, text) {
  results.set(`hit:${h.hit_id}`, { text, ok: false, progress: progressOf(`hit:${h.hit_id}`) });
  message(text, false);
  lastHits = "";
  return refresh();
}

function verify(h) {
  const input = cardOf(h) && cardOf(h).querySelector(".cards-input");
  let body = {};
  if (input) {
    // How many cards a hand is (five; one to three for Super Sevens, seven for Pai Gow
    // Poker) and whether the joker is one of them is the game's: the server says.
    const cards = input.value.trim().split(/[\s,]+/).filter(Boolean);
    if (!cards.length) return refuseHere(h, "Enter the cards of the hand.");
    body = { cards };
  }
  return act(() => call("POST", hitPath(h.hit_id, "verify"), body),
    `Hit ${h.hit_id} verified: ${h.hand_label} at table ${h.table_id}, seat ${h.seat}.`, `hit:${h.hit_id}`);
}

function signOff(h) {
  return act(() => call("POST", hitPath(h.hit_id, "sign-off")),
    `Hit ${h.hit_id} signed off: ${cents(h.award_cents)} at table ${h.table_id}.`, `hit:${h.hit_id}`);
}

function handPay(h) {
  const amount = parseCents(cardOf(h).querySelector(".pay-input").value);
  if (amount === null) return refuseHere(h, "Write the amount like 1,234.56.");
  return act(() => call("POST", hitPath(h.hit_id, "hand-pay"), { amount_cents: amount }),
    `Hand pay of ${cents(amount)} recorded for hit ${h.hit_id}.`, `hit:${h.hit_id}`);
}

function taxForm(h, typed, key) {
  const reference = typed.trim();
  if (!reference) {
    results.set(key, { text: "Write the tax form's reference (e.g. its W-2G number).", ok: false, progress: progressOf(key) });
    message(results.get(key).text, false);
    lastHits = "";
    lastTax = "";
    return refresh();
  }
  return act(() => call("POST", hitPath(h.hit_id, "tax-form"), { reference }),
    `Tax form ${reference} recorded for hit ${h.hit_id}: the jackpot slip prints it.`, key);
}

async function reset(tableId, key) {
  const done = `Table ${tableId} reset: it takes progressive bets again.`;
  if (await act(() => call("POST", `/api/v1/tables/${encodeURIComponent(tableId)}/reset`), done, key)) {
    results.set(`table:${tableId}`, { text: done, ok: true });
    lastHits = "";
    await refresh();
  }
}

// The jackpot slip, fetched with the sign-in's token like every download of these pages.
function slip(h) {
  return download(hitPath(h.hit_id, "slip.pdf")).catch((err) => refuseHere(h, `Jackpot slip: ${err.message}`));
}

function refilter() {
  otherLimit = OTHER_PAGE;
  quietOffset = 0;
  lastHits = "";
  refresh();
}

document.getElementById("remove-form").addEventListener("submit", removeTable);
document.getElementById("remove-cancel").addEventListener("click", closeRemoval);
for (const id of ["filter-link", "filter-table", "filter-kind"]) {
  document.getElementById(id).addEventListener("change", refilter);
}
document.getElementById("filter-clear").addEventListener("click", () => {
  for (const id of ["filter-link", "filter-table", "filter-kind"]) document.getElementById(id).value = "";
  refilter();
});
document.getElementById("other-more").addEventListener("click", () => {
  otherLimit += 100;
  lastHits = "";
  refresh();
});
document.getElementById("quiet").addEventListener("toggle", () => refreshQuiet().catch(() => {}));
document.getElementById("quiet-newer").addEventListener("click", () => {
  quietOffset = Math.max(0, quietOffset - QUIET_PAGE);
  refreshQuiet();
});
document.getElementById("quiet-older").addEventListener("click", () => {
  quietOffset += QUIET_PAGE;
  refreshQuiet();
});
TechAlert.start();

Api.start(() => {
  refresh();
  if (timer === null) timer = setInterval(refresh, REFRESH_MS);
  if (ticker === null) ticker = setInterval(() => TechAlert.tick(escalateS), 1000);
});
