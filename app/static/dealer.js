// The dealer's view of one table: the round and the seats whose side bets the wagering
// devices accepted. Oneida Let It Ride rules I.2 (also J.2c, K.2b): after "No More Bets" the
// dealer collects the bonus wagers and verifies that the number of chips wagered equals the
// number of wagers acknowledged or accepted by the wagering devices; this page is that count.
// A table held after a hit takes no side bets until a technician resets it: the page says so
// instead of counting.
// Who deals at the table is recorded: the dealer signs in there ("Deal at this table") and
// out again; a dealer who signs in where another deals takes the table over, and a supervisor
// or admin signs out a dealer who left without. The pick screen shows who deals where.
"use strict";

const REFRESH_MS = 1000;
const { el, call, message } = Api;
const tableId = decodeURIComponent(location.pathname.replace(/^\/dealer\/?/, ""));
const dealerUrl = () => `/api/v1/tables/${encodeURIComponent(tableId)}/dealer`;
const role = () => sessionStorage.getItem("progressive.role");
let timer = null;

function dealerLine(t) {
  return t.dealer
    ? el("span", { class: "pick-dealer dealt" }, `Dealing: ${t.dealer}`)
    : el("span", { class: "pick-dealer" }, "No dealer");
}

let picked = null; // what the pick screen shows, drawn again only when it changes

async function pick() {
  document.getElementById("pick").hidden = false;
  try {
    const tables = await call("GET", "/api/v1/tables");
    const shown = JSON.stringify(tables.map((t) => [t.table_id, t.dealer]));
    if (shown === picked) return;
    picked = shown;
    document.getElementById("table-list").replaceChildren(...tables.map((t) =>
      el("a", { href: `/dealer/${encodeURIComponent(t.table_id)}`, "data-table": t.table_id },
        el("button", { type: "button", class: "pick-table" },
          el("span", { class: "pick-id" }, t.table_id), dealerLine(t)))));
  } catch (err) {
    if (err.status !== 401) message(err.message, false);
  }
}

// Who deals here, since when, and what the person signed in may do about it.
function showDealing(t) {
  document.getElementById("dealing").hidden = false;
  const me = Api.user();
  const mine = t.dealer !== null && t.dealer === me;
  document.getElementById("dealing-now").replaceChildren(t.dealer
    ? el("span", {}, "Dealing: ", el("strong", { class: "dealer-name" }, t.dealer),
      ` since ${Api.time(t.dealer_since_us)}`)
    : el("span", { class: "muted" }, "No dealer signed in at this table"));
  document.getElementById("deal-here").hidden = role() !== "dealer" || mine;
  const stop = document.getElementById("stop-dealing");
  const boss = role() === "supervisor" || role() === "admin";
  stop.hidden = !(mine || (boss && t.dealer));
  if (t.dealer) {
    stop.textContent = mine ? "Sign out of this table" : `Sign ${t.dealer} out of this table`;
  }
  stop.dataset.dealer = t.dealer || "";
}

// A sign-in or sign-out: the table as it is after it, or why it was refused. A refresh asked
// before it does not draw who deals over its answer.
let changes = 0;
async function change(button, method, path) {
  const said = document.getElementById("dealing-message");
  said.hidden = true;
  button.disabled = true;
  changes += 1;
  try {
    showDealing(await call(method, path));
  } catch (err) {
    if (err.status !== 401) {
      said.textContent = err.message;
      said.hidden = false;
    }
  } finally {
    button.disabled = false;
  }
}

function dealHere(event) { change(event.currentTarget, "POST", dealerUrl()); }

function stopDealing(event) {
  const button = event.currentTarget;
  // A supervisor signs out the dealer the page showed, not one who took over since.
  const named = button.dataset.dealer && button.dataset.dealer !== Api.user()
    ? `?dealer=${encodeURIComponent(button.dataset.dealer)}` : "";
  change(button, "DELETE", dealerUrl() + named);
}

async function refresh() {
  const asked = changes;
  try {
    const t = await call("GET", `/api/v1/tables/${encodeURIComponent(tableId)}`);
    document.getElementById("board").hidden = false;
    document.getElementById("message").hidden = true;
    document.getElementById("title").textContent = `Dealer: table ${t.table_id}`;
    if (asked === changes) showDealing(t);
    document.getElementById("round").textContent = t.rounds ?? "–";
    document.getElementById("count").textContent = t.seats_with_bets.length;
    const state = document.getElementById("state");
    state.replaceChildren(el("span", { class: `state ${t.state}` }, t.hit_pending ? "progressive closed" : t.state.replaceAll("_", " ")));
    // A table held after a hit takes no side bets: said plainly, in place of a count of none.
    document.getElementById("closed").hidden = !t.hit_pending;
    document.getElementById("open").hidden = t.hit_pending;
    document.getElementById("closed-why").textContent = t.hit_pending
      ? "A progressive hit at this table waits for a technician to verify it and reset the table. Take no progressive side bets until then; this page opens again by itself."
      : "";
    const seats = [];
    for (let s = 1; s <= t.seats; s += 1) {
      const bet = t.seats_with_bets.includes(s);
      seats.push(el("div", { class: bet ? "seat bet" : "seat", "data-seat": s,
        title: bet ? `seat ${s}: side bet accepted` : `seat ${s}: no side bet` }, s));
    }
    document.getElementById("seats").replaceChildren(...seats);
  } catch (err) {
    if (err.status !== 401) message(err.message, false);
  }
}

document.getElementById("deal-here").addEventListener("click", dealHere);
document.getElementById("stop-dealing").addEventListener("click", stopDealing);

Api.start(() => {
  const draw = tableId ? refresh : pick;
  draw();
  if (timer === null) timer = setInterval(draw, REFRESH_MS);
});
