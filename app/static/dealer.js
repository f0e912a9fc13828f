// The dealer's view of one table: the round and the seats whose side bets the wagering
// devices accepted. Oneida Let It Ride rules I.2 (also J.2c, K.2b): after "No More Bets" the
// dealer collects the bonus wagers and verifies that the number of chips wagered equals the
// number of wagers acknowledged or accepted by the wagering devices; this page is that count.
// A table held after a hit takes no side bets until a technician resets it: the page says so
// instead of counting.
"use strict";

const REFRESH_MS = 1000;
const { el, call, message } = Api;
const tableId = decodeURIComponent(location.pathname.replace(/^\/dealer\/?/, ""));
let timer = null;

async function pick() {
  document.getElementById("pick").hidden = false;
  try {
    const tables = await call("GET", "/api/v1/tables");
    document.getElementById("table-list").replaceChildren(...tables.map((t) =>
      el("a", { href: `/dealer/${encodeURIComponent(t.table_id)}` },
        el("button", { type: "button" }, `${t.table_id}`))));
  } catch (err) {
    if (err.status !== 401) message(err.message, false);
  }
}

async function refresh() {
  try {
    const t = await call("GET", `/api/v1/tables/${encodeURIComponent(tableId)}`);
    document.getElementById("board").hidden = false;
    document.getElementById("message").hidden = true;
    document.getElementById("title").textContent = `Dealer: table ${t.table_id}`;
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

Api.start(() => {
  if (!tableId) { pick(); return; }
  refresh();
  if (timer === null) timer = setInterval(refresh, REFRESH_MS);
});
