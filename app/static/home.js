// The landing page: the floor's displays with their amounts live, a sign-in, and once signed
// in the pages of the person's role first, the other pages they may use after.
"use strict";

const { el, cents, roleName } = Api;
const POLL_MS = 3000;

const PAGES = {
  tech: { href: "/tech", title: "Technician", line: "Hits to verify, hand pays to record, tables to reset or take out of play." },
  supervisor: { href: "/supervisor", title: "Supervisor", line: "Submissions to file, meter corrections to ask for, anomalies to review." },
  audit: { href: "/audit", title: "Audit", line: "Meter history, reconciliation, every reduction with its reason, exports and ledger proof." },
  surveillance: { href: "/surveillance", title: "Surveillance", line: "Every table's luck held against the odds: the floor ranked, alerts, each line's chart." },
  commission: { href: "/commission", title: "Commission", line: "Rate changes and new links to approve or reject, with their packets." },
  admin: { href: "/admin", title: "Admin", line: "People and their roles, display device tokens, the audit log." },
  dealer: { href: "/dealer", title: "Dealer", line: "The side bets a table accepted this round, seat by seat, to count against the chips." },
};
// What each role does first, and the other pages its role may use (controller/access/roles.py
// and the routes' role checks: a supervisor works hits and tables, approves corrections on the
// audit page and files submissions; an admin approves corrections and files submissions;
// surveillance, auditors, supervisors and admins watch game protection).
const ROLE_PAGES = {
  technician: { main: ["tech"], also: [] },
  supervisor: { main: ["supervisor"], also: ["tech", "audit", "surveillance", "commission"] },
  auditor: { main: ["audit"], also: ["surveillance", "commission"] },
  surveillance: { main: ["surveillance"], also: [] },
  commission_agent: { main: ["commission"], also: [] },
  admin: { main: ["admin"], also: ["audit", "surveillance", "commission"] },
  dealer: { main: ["dealer"], also: [] },
  display: { main: [], also: [] },
};
const STATES = {
  playing: "playing",
  hit_pending: "jackpot hit: a technician is on the way",
  offline: "no table answering",
  inoperable: "stopped: needs recovery",
};

let timer = null;
const shownCents = new Map();

function $(id) { return document.getElementById(id); }

function words(name) { return String(name).toLowerCase().replace(/_/g, " "); }

function greeting() {
  const hour = new Date().getHours();
  return hour < 12 ? "Good morning" : hour < 18 ? "Good afternoon" : "Good evening";
}

function pageCard(key, big) {
  const p = PAGES[key];
  return el("a", { class: `card page ${big ? "big" : ""}`, href: p.href, "data-page": key },
    el("span", { class: "title" }, p.title),
    el("span", { class: "line" }, p.line),
    el("span", { class: "go" }, big ? "Open →" : "Open"));
}

function renderWork() {
  const role = sessionStorage.getItem("progressive.role");
  const user = sessionStorage.getItem("progressive.user");
  const signed = Boolean(Api.token() && role);
  document.body.dataset.signed = signed ? "yes" : "no";
  // A display's account has no work here: the floor's amounts are all it reads.
  $("work").hidden = !signed || role === "display";
  if (!signed) {
    $("greeting").textContent = "The floor's jackpots, live";
    $("lead").textContent = "Every linked table game's progressive amount as the floor displays show it. Staff sign in for their work.";
    return;
  }
  const mine = ROLE_PAGES[role] || { main: [], also: [] };
  $("greeting").textContent = `${greeting()}, ${user}`;
  $("lead").textContent = mine.main.length
    ? `Signed in as ${roleName(role)}. Your work is one click away.`
    : `Signed in as ${roleName(role)}: the floor displays are below.`;
  $("main-pages").replaceChildren(...mine.main.map((k) => pageCard(k, true)));
  $("also-title").hidden = !mine.also.length;
  $("also-pages").replaceChildren(...mine.also.map((k) => pageCard(k, false)));
  const rest = Object.keys(PAGES).filter((k) => !mine.main.includes(k) && !mine.also.includes(k));
  $("other-pages").replaceChildren("Other pages, for other roles: ",
    ...rest.flatMap((k, i) => [i ? " · " : "", el("a", { href: PAGES[k].href, "data-page": k }, PAGES[k].title)]));
}

function amountOf(link) {
  if (link.meter_cents !== null) return cents(link.meter_cents);
  return "Fixed pays";
}

function detailOf(link) {
  if (link.fixed_pay) {
    const top = (link.fixed_pays || [])[0];
    return top ? `${top.hand_label} pays ${cents(top.fixed_cents)}` : "bonus pays";
  }
  const levels = (link.levels || []).slice(1);
  if (levels.length) return levels.map((lv) => `${lv.name} ${cents(lv.current_cents)}`).join(" · ");
  return `resets to ${cents(link.reset_cents)} · ${link.rate} to the meter`;
}

function linkCard(link) {
  const amount = el("span", { class: "amount" }, amountOf(link));
  const before = shownCents.get(link.link_id);
  if (before !== undefined && link.meter_cents !== null && link.meter_cents > before) amount.classList.add("up");
  shownCents.set(link.link_id, link.meter_cents);
  const win = link.last_win;
  const tables = link.table_count;
  return el("a", { class: `card link state-${link.state}`, href: `/display/${encodeURIComponent(link.link_id)}`, "data-link": link.link_id },
    el("span", { class: "game" }, link.game_label),
    el("span", { class: "title" }, link.name),
    amount,
    el("span", { class: "detail" }, detailOf(link)),
    el("span", { class: "foot" },
      el("span", { class: `chip ${link.state}` }, STATES[link.state] || words(link.state)),
      el("span", { class: "muted" }, `${tables} ${tables === 1 ? "table" : "tables"}`)),
    // Opened in demonstration mode: said on its card as on its display, for good.
    link.demonstration ? el("span", { class: "demonstration" }, "Opened in demonstration mode") : "",
    win ? el("span", { class: "win" }, `Last won ${cents(win.won_cents)}: ${words(win.hand)} at ${win.table_id}`) : "",
    el("span", { class: "go" }, "Open the display →"));
}

async function poll() {
  const headers = { Accept: "application/json" };
  const token = Api.token();
  if (token) headers.Authorization = `Bearer ${token}`;
  const note = $("live-note");
  try {
    const answer = await fetch("/api/v1/links", { headers });
    const data = await answer.json().catch(() => null);
    if (answer.status === 401) {
      $("links").replaceChildren(el("p", { class: "muted" },
        "This installation shows its amounts to its displays and to signed-in staff only: sign in to see them."));
      note.textContent = "";
      return;
    }
    if (!answer.ok) throw new Error((data && data.detail) || `the server answered ${answer.status}`);
    $("links").replaceChildren(...(data.length ? data.map(linkCard)
      : [el("p", { class: "muted" }, "No link is configured yet.")]));
    note.className = "live";
    note.textContent = `live · ${new Date().toLocaleTimeString()}`;
  } catch (err) {
    note.className = "live stale";
    note.textContent = `not updating: ${err.message}`;
  } finally {
    clearTimeout(timer);
    timer = setTimeout(poll, POLL_MS);
  }
}

Api.start(() => { renderWork(); poll(); });
// Api.start shows the sign-in without a token and runs the callback only once signed in.
if (!Api.token()) { renderWork(); poll(); }
$("sign-out").addEventListener("click", () => { renderWork(); poll(); });
