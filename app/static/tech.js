// The technician's page: every table's state, the hits waiting for work, and that work:
// verify the hand, record the hand pay, reset the table.
"use strict";

const REFRESH_MS = 2000;
const { el, cardFace, cents, time, call, message } = Api;
let lastHits = "";
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
  return el("span", { class: `state ${state}` }, state.replace("_", " "));
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
      : ""),
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

function renderHits(hits) {
  const signature = JSON.stringify(hits);
  if (signature === lastHits) return; // keep what the technician is typing
  lastHits = signature;
  const box = document.getElementById("hits");
  if (!hits.length) {
    box.replaceChildren(el("p", { class: "muted" }, "No hits waiting."));
    return;
  }
  // What the technician has typed (and where the cursor is) survives a refresh.
  const typed = new Map();
  let focused = null;
  for (const input of box.querySelectorAll("[data-hit] input")) {
    const key = `${input.closest("[data-hit]").dataset.hit}|${input.className}`;
    typed.set(key, input.value);
    if (input === document.activeElement) focused = key;
  }
  box.replaceChildren(...hits.map(renderHit));
  for (const input of box.querySelectorAll("[data-hit] input")) {
    const key = `${input.closest("[data-hit]").dataset.hit}|${input.className}`;
    if (typed.has(key)) input.value = typed.get(key);
    if (key === focused) input.focus();
  }
}

async function refresh() {
  try {
    const [tables, hits] = await Promise.all([
      call("GET", "/api/v1/tables"),
      call("GET", "/api/v1/hits?pending=true"),
    ]);
    renderTables(tables);
    renderHits(hits);
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

Api.start(() => {
  refresh();
  if (timer === null) timer = setInterval(refresh, REFRESH_MS);
});
