// The technician's page: every table's state, the hits waiting for work, and that work:
// verify the hand, record the hand pay, reset the table; take a table out of play, record
// what was done to it and its verification, and return it to play (68 IAC 10-1-6.2).
"use strict";

const REFRESH_MS = 2000;
const { el, cardFace, cents, time, call, message } = Api;
let lastHits = "";
let lastRecords = "";
let outOfPlay = "";
let timer = null;

const hitPath = (id, action) => `/api/v1/hits/${encodeURIComponent(id)}/${action}`;

// "$1,234.56" or "1234.56" -> 123456 cents, exactly (no floating point), or null.
function parseCents(text) {
  const m = text.trim().match(/^\$?((?:\d{1,3}(?:,\d{3})+)|\d+)(?:\.(\d{1,2}))?$/);
  if (!m) return null;
  return parseInt(m[1].replace(/,/g, ""), 10) * 100 + parseInt((m[2] || "0").padEnd(2, "0"), 10);
}

function dollars(amount) { return cents(amount).replace("$", ""); }

function stateBadge(state) {
  return el("span", { class: `state ${state}` }, state.replaceAll("_", " "));
}

function renderTables(tables) {
  const body = document.querySelector("#tables tbody");
  body.replaceChildren(...tables.map((t) => el("tr", { "data-table": t.table_id },
    el("td", {}, t.table_id),
    el("td", {}, t.link_id),
    el("td", { class: "table-state" }, stateBadge(t.state)),
    el("td", { class: "num" }, t.rounds ?? "–"),
    el("td", { class: "num" }, t.credits ?? "–"),
    el("td", {}, t.seats_with_bets.length ? t.seats_with_bets.join(", ") : "none"),
    el("td", { class: "muted" }, t.last_answer_us ? time(t.last_answer_us) : "never"),
    el("td", {}, t.hit_pending
      ? el("button", { type: "button", class: "reset", onclick: () => reset(t.table_id) }, "Reset table")
      : "",
    t.state === "out_of_play" || t.state === "awaiting_approval"
      ? ""
      : el("button", { type: "button", class: "remove", onclick: () => openRemoval(t.table_id) }, "Take out of play")),
  )));
  document.getElementById("tables-updated").textContent = `updated ${new Date().toLocaleTimeString()}`;
}

function renderHit(h) {
  const cards = h.cards
    ? el("span", { class: "cards" }, ...h.cards.map(cardFace))
    : el("span", { class: "muted" }, "the table reported no cards");
  const status = [];
  if (h.status === "refused") status.push(`refused: ${h.refusal}`);
  if (h.verified_by) status.push(`verified by ${h.verified_by}`);
  if (h.hand_paid_by) status.push(`hand pay ${cents(h.hand_paid_cents)} by ${h.hand_paid_by}`);
  const actions = el("div", { class: "actions" });
  if (h.status === "awarded" && !h.verified_by) {
    if (!h.cards) {
      actions.append(el("input", {
        class: "cards-input", size: "22", placeholder: "five cards, e.g. As Ks Qs Js Ts",
        "aria-label": "cards seen",
      }));
    }
    actions.append(el("button", { type: "button", class: "primary verify", onclick: () => verify(h) },
      h.cards ? "Confirm cards and verify" : "Check cards and verify"));
  }
  if (h.status === "awarded" && h.verified_by && h.hand_paid_cents === null) {
    actions.append(
      el("label", {}, "Hand pay $ ",
        el("input", { class: "pay-input", size: "12", value: dollars(h.award_cents), "aria-label": "amount paid" })),
      el("button", { type: "button", class: "pay", onclick: () => handPay(h) }, "Record hand pay"));
  }
  return el("div", { class: "hit", "data-hit": h.hit_id },
    el("div", {},
      el("strong", {}, `Table ${h.table_id}, seat ${h.seat}: ${h.hand_label}`), " ",
      el("span", { class: "muted" }, `round ${h.round}, ${time(h.at_us)}, award ${cents(h.award_cents)} (${h.paid_from || "none"})`)),
    el("div", {}, cards),
    status.length ? el("div", { class: "muted hit-status" }, status.join(" · ")) : "",
    actions);
}

// Replace a box's content; what the technician has typed (and where the cursor is) in the
// items marked with `attr` survives.
function keepTyping(box, attr, children) {
  const fields = () => box.querySelectorAll(`[${attr}] input, [${attr}] textarea`);
  const keyOf = (input) => `${input.closest(`[${attr}]`).getAttribute(attr)}|${input.className}`;
  const typed = new Map();
  let focused = null;
  for (const input of fields()) {
    typed.set(keyOf(input), input.value);
    if (input === document.activeElement) focused = keyOf(input);
  }
  box.replaceChildren(...children);
  for (const input of fields()) {
    const key = keyOf(input);
    if (typed.has(key)) input.value = typed.get(key);
    if (key === focused) input.focus();
  }
}

function renderHits(hits) {
  const signature = JSON.stringify(hits);
  if (signature === lastHits) return; // keep what the technician is typing
  lastHits = signature;
  const box = document.getElementById("hits");
  if (!hits.length) {
    box.replaceChildren(el("p", { class: "muted" }, "No hits waiting."));
    return;
  }
  keepTyping(box, "data-hit", hits.map(renderHit));
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

async function refresh() {
  try {
    const [tables, hits] = await Promise.all([
      call("GET", "/api/v1/tables"),
      call("GET", "/api/v1/hits?pending=true"),
    ]);
    renderTables(tables);
    renderHits(hits);
    await refreshRecords(tables);
  } catch (err) {
    if (err.status !== 401) message(`Could not refresh: ${err.message}`, false);
  }
}

async function act(work, done) {
  try {
    await work();
  } catch (err) {
    message(err.message, false); // what was typed stays, to be corrected
    return;
  }
  message(done, true);
  lastHits = "";
  lastRecords = "";
  await refresh();
}

function verify(h) {
  const box = document.querySelector(`[data-hit="${CSS.escape(h.hit_id)}"]`);
  const input = box && box.querySelector(".cards-input");
  let body = {};
  if (input) {
    const cards = input.value.trim().split(/[\s,]+/).filter(Boolean);
    if (cards.length !== 5) {
      message(`Enter the five cards of the hand (${cards.length} entered).`, false);
      return;
    }
    body = { cards };
  }
  return act(() => call("POST", hitPath(h.hit_id, "verify"), body),
    `Hit ${h.hit_id} verified: ${h.hand_label} at table ${h.table_id}, seat ${h.seat}.`);
}

function handPay(h) {
  const box = document.querySelector(`[data-hit="${CSS.escape(h.hit_id)}"]`);
  const amount = parseCents(box.querySelector(".pay-input").value);
  if (amount === null) {
    message("Write the amount like 1,234.56.", false);
    return;
  }
  return act(() => call("POST", hitPath(h.hit_id, "hand-pay"), { amount_cents: amount }),
    `Hand pay of ${cents(amount)} recorded for hit ${h.hit_id}.`);
}

function reset(tableId) {
  return act(() => call("POST", `/api/v1/tables/${encodeURIComponent(tableId)}/reset`),
    `Table ${tableId} reset: it takes progressive bets again.`);
}

document.getElementById("remove-form").addEventListener("submit", removeTable);
document.getElementById("remove-cancel").addEventListener("click", closeRemoval);

Api.start(() => {
  refresh();
  if (timer === null) timer = setInterval(refresh, REFRESH_MS);
});
