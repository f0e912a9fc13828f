// The auditor's page: the meter over a period, its reconciliation, the correction requests
// (approved or rejected here by a second supervisor or an admin), every reduction with its
// reason and documents, the hits, exports, and the ledger's hash-chain verification.
"use strict";

const { el, call, cents, time, message, download } = Api;
const SVG = "http://www.w3.org/2000/svg";
const MAX_REDUCTION_PAGES = 20;
const DAY_MS = 24 * 3600 * 1000;
const MINUTE_MS = 60000;
const SECOND_MS = 1000;
let started = false;
let links = [];
// Which showing of a link is the latest: a slower answer for the link shown before is dropped,
// never drawn under this one's headings.
let showing = 0;
// Why the period shown is the one shown, said under the chart; a period chosen by hand: none.
let windowReason = "";

function svg(tag, attrs) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

function localInput(date) {
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

// The inputs are local times; the API is told them in UTC.
function periodQuery() {
  const since = new Date(document.getElementById("since").value);
  const until = new Date(document.getElementById("until").value);
  return `since=${encodeURIComponent(since.toISOString())}&until=${encodeURIComponent(until.toISOString())}`;
}

function drawChart(series) {
  const chart = document.getElementById("chart");
  const W = 1000, H = 320, L = 90, R = 10, T = 10, B = 30;
  chart.replaceChildren();
  const pts = series.points;
  document.getElementById("chart-note").textContent = pts.length ? `${pts.length} points` : "";
  if (!pts.length) {
    chart.append(Object.assign(svg("text", { x: W / 2, y: H / 2, "text-anchor": "middle" }),
      { textContent: "no meter entries in this period" }));
    return;
  }
  const lo = Math.min(...pts.map((p) => p.low_cents));
  const hi = Math.max(...pts.map((p) => p.high_cents));
  const span = Math.max(hi - lo, 1);
  const x = (us) => L + ((us - series.since_us) / (series.until_us - series.since_us)) * (W - L - R);
  const y = (c) => T + (1 - (c - lo) / span) * (H - T - B);
  chart.append(svg("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }));
  chart.append(svg("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }));
  for (const [c, yy] of [[hi, y(hi)], [lo, y(lo)]]) {
    const label = svg("text", { x: L - 6, y: yy + 4, "text-anchor": "end" });
    label.textContent = cents(c);
    chart.append(label);
  }
  for (const [us, anchor] of [[series.since_us, "start"], [series.until_us, "end"]]) {
    const label = svg("text", { x: x(us), y: H - 8, "text-anchor": anchor });
    label.textContent = time(us);
    chart.append(label);
  }
  // The band shows each bucket's low and high, so a drop never hides between points.
  const band = pts.map((p) => `${x(p.at_us)},${y(p.high_cents)}`)
    .concat(pts.slice().reverse().map((p) => `${x(p.at_us)},${y(p.low_cents)}`));
  chart.append(svg("polygon", { class: "band", points: band.join(" ") }));
  const line = pts.map((p) => `${x(p.at_us)},${y(p.meter_cents)}`).join(" ");
  chart.append(svg("polyline", { class: "line", points: line, "data-points": pts.length }));
}

async function reductions(linkId, query, current) {
  const rows = [];
  let after = 0;
  for (let page = 0; page < MAX_REDUCTION_PAGES; page += 1) {
    const h = await call("GET",
      `/api/v1/links/${encodeURIComponent(linkId)}/history?${query}&reductions_only=true&after_seq=${after}`);
    rows.push(...h.entries);
    if (h.next_after_seq === null) break;
    after = h.next_after_seq;
  }
  if (!current()) return;
  const body = document.querySelector("#reductions tbody");
  if (!rows.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "No reductions in this period.")));
    return;
  }
  body.replaceChildren(...rows.map((e) => el("tr", {},
    el("td", {}, time(e.at_us)),
    el("td", { class: "num" }, e.seq),
    el("td", {}, e.kind),
    el("td", { class: "num" }, cents(e.meter_before_cents)),
    el("td", { class: "num bad-text" }, cents(e.delta_cents)),
    el("td", { class: "num" }, cents(e.meter_after_cents)),
    el("td", {}, e.reduction_reason + (e.approved_by ? ` (approved by ${e.approved_by})` : "")),
    el("td", {}, ...(e.documents.length
      ? e.documents.map((d) => el("button", { type: "button", onclick: () => download(d.url).catch((err) => message(err.message, false)) }, d.filename))
      : [e.hit_id ? `hit ${e.hit_id}` : "–"])),
  )));
}

async function hits(linkId, since, until, current) {
  const all = await call("GET", `/api/v1/links/${encodeURIComponent(linkId)}/hits?limit=1000`);
  if (!current()) return;
  const inPeriod = all.filter((h) => h.at_us >= since && h.at_us < until);
  const body = document.querySelector("#hits tbody");
  if (!inPeriod.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 9, class: "muted" }, "No hits in this period.")));
    return;
  }
  const row = (h) => el("tr", {},
    el("td", {}, time(h.at_us)),
    el("td", {}, h.hit_id),
    el("td", {}, `${h.table_id}, ${h.seat}`),
    el("td", {}, h.hand_label, " ", el("span", { class: "cards" }, ...Api.hitCards(h, ""))),
    el("td", { class: "num" }, cents(h.award_cents)),
    el("td", {}, h.status + (h.refusal ? `: ${h.refusal}` : "")),
    el("td", {}, h.verified_by || "–"),
    el("td", {}, h.hand_paid_cents === null ? "–" : `${cents(h.hand_paid_cents)} by ${h.hand_paid_by}`),
    el("td", {}, h.released_by || "–"));
  body.replaceChildren(...Api.hitRows(inPeriod, row, 9, "No jackpot paid from the meter in this period."));
}

function exportsFor(linkId, query) {
  const box = document.getElementById("exports");
  const buttons = [];
  for (const kind of ["history", "hits", "reductions"]) {
    for (const format of ["csv", "json"]) {
      const path = `/api/v1/exports/${kind}?${query}&link=${encodeURIComponent(linkId)}&format=${format}`;
      buttons.push(el("button", {
        type: "button", class: "export", "data-href": path,
        onclick: () => download(path).catch((err) => message(err.message, false)),
      }, `${kind} (${format.toUpperCase()})`));
    }
  }
  box.replaceChildren(...buttons);
}

// [field, label, is a total]
const RECON_LINES = [
  ["opening", "Opening meter", false],
  ["contributions", "+ Contributions", false],
  ["seeded", "+ Seeded", false],
  ["anomalies_approved", "+ Anomalies approved", false],
  ["awards_paid", "− Awards paid", false],
  ["corrections", "+ Corrections", false],
  ["other", "+ Other", false],
  ["expected_closing", "= Expected closing", true],
  ["closing", "Closing meter", true],
];

async function reconcile(linkId, query, current) {
  const r = await call("GET", `/api/v1/links/${encodeURIComponent(linkId)}/reconciliation?${query}`);
  if (!current()) return;
  const verdict = document.getElementById("recon-verdict");
  if (r.balanced) {
    verdict.replaceChildren(el("div", { class: "balanced", "data-balanced": "yes" },
      `Balanced to the unit: ${r.entries} entries, closing ${cents(r.closing_cents)}.`));
  } else {
    verdict.replaceChildren(el("div", { class: "difference", role: "alert", "data-balanced": "no" },
      `DIFFERENCE: the closing meter is ${r.difference_units} units (1/10,000 ¢) ` +
      `away from what the ledger explains. ` + r.problems.join("; ")));
  }
  document.querySelector("#recon tbody").replaceChildren(...RECON_LINES.map(([k, label, total]) =>
    el("tr", { "data-line": k, class: total ? "total" : "" },
      el("td", {}, label),
      el("td", { class: "num" }, cents(r[`${k}_cents`])),
      el("td", { class: "num muted" }, r[`${k}_units`].toLocaleString("en-US")))));
  document.querySelector("#recon-tables tbody").replaceChildren(...(r.tables.length
    ? r.tables.map((t) => el("tr", { "data-table": t.table_id },
      el("td", {}, t.table_id),
      el("td", { class: "num" }, t.credits),
      el("td", { class: "num" }, cents(t.contributions_cents))))
    : [el("tr", {}, el("td", { colspan: 3, class: "muted" }, "No contributions in this period."))]));
  const base = `/api/v1/links/${encodeURIComponent(linkId)}/reconciliation/export?${query}`;
  document.getElementById("recon-exports").replaceChildren(...["csv", "pdf"].map((format) =>
    el("button", {
      type: "button", class: "recon-export", "data-href": `${base}&format=${format}`,
      onclick: () => download(`${base}&format=${format}`).catch((err) => message(err.message, false)),
    }, `reconciliation (${format.toUpperCase()})`)));
}

const APPROVER_ROLES = ["supervisor", "admin"];

async function correctionRequests(linkId, current) {
  const rows = await call("GET", `/api/v1/corrections?link=${encodeURIComponent(linkId)}`);
  if (!current()) return;
  const body = document.querySelector("#correction-requests tbody");
  if (!rows.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 8, class: "muted" }, "No correction requests for this link.")));
    return;
  }
  const role = sessionStorage.getItem("progressive.role");
  const me = sessionStorage.getItem("progressive.user");
  body.replaceChildren(...rows.map((c) => {
    const work = el("td", {});
    if (c.status === "pending" && APPROVER_ROLES.includes(role)) {
      if (c.requested_by === me) {
        work.append(el("span", { class: "muted" }, "awaiting a second person"));
      } else {
        const reason = el("input", { class: "reject-reason", size: "16", placeholder: "reason to reject", "aria-label": "reason to reject" });
        work.append(
          el("button", { type: "button", class: "primary approve", onclick: () => decide(c, "approve") }, "Approve"), " ",
          reason, " ",
          el("button", { type: "button", class: "reject", onclick: () => decide(c, "reject", reason.value) }, "Reject"));
      }
    }
    return el("tr", { "data-request": c.request_id },
      el("td", {}, time(c.at_us)),
      el("td", {}, c.request_id),
      el("td", { class: `num ${c.delta_cents < 0 ? "bad-text" : ""}` }, cents(c.delta_cents)),
      el("td", {}, c.category),
      el("td", {}, c.reason),
      el("td", {}, c.requested_by),
      el("td", { class: "request-status" }, c.status + (c.decided_by ? ` by ${c.decided_by}` : "")
        + (c.decision_reason ? `: ${c.decision_reason}` : "")),
      work);
  }));
}

async function decide(c, action, reason) {
  if (action === "reject" && !(reason || "").trim()) {
    message("Give the reason for rejecting the correction.", false);
    return;
  }
  try {
    const path = `/api/v1/corrections/${encodeURIComponent(c.request_id)}/${action}`;
    await call("POST", path, action === "reject" ? { reason: reason.trim() } : undefined);
    await show();
    message(`Correction ${c.request_id} ${action === "approve" ? "approved and applied" : "rejected"}.`, true);
  } catch (err) {
    message(err.message, false);
  }
}

// The period a link's chart opens on: the last 24 hours when the link had entries in them;
// otherwise the 24 hours up to its newest entry. Either starts just before the first entry in
// it when the link's history is younger than that, so the chart is never an empty day and a
// short history fills it.
async function activityWindow(linkId) {
  const link = links.find((l) => l.link_id === linkId);
  const now = Date.now();
  const last = link && link.last_entry_us ? Math.floor(link.last_entry_us / 1000) : null;
  const recent = last === null || now - last < DAY_MS;
  const end = recent ? now + MINUTE_MS : last;
  let since = end - DAY_MS;
  let until = end;
  if (last !== null) {
    const iso = (ms) => encodeURIComponent(new Date(ms).toISOString());
    const first = await call("GET",
      `/api/v1/links/${encodeURIComponent(linkId)}/history?since=${iso(since)}&until=${iso(end + 1)}&limit=1`);
    if (first.entries.length) {
      const from = Math.floor(first.entries[0].at_us / 1000);
      const pad = Math.max(SECOND_MS, Math.floor((end - from) / 50));
      if (!recent) until = end + pad;
      since = Math.max(until - DAY_MS, from - pad);
    }
  }
  // The inputs hold whole seconds.
  since = Math.floor(since / SECOND_MS) * SECOND_MS;
  until = Math.ceil(until / SECOND_MS) * SECOND_MS;
  let reason;
  if (last === null) reason = "The link has no meter entries yet.";
  else if (recent) reason = "The link's activity of the last 24 hours.";
  else reason = `No entries in the last 24 hours: the link's most recent activity, up to its newest entry of ${new Date(last).toLocaleString()}.`;
  return { since, until, reason };
}

async function showLatest() {
  const linkId = document.getElementById("link").value;
  const since = document.getElementById("since");
  const asked = [linkId, since.value, document.getElementById("until").value];
  try {
    const w = await activityWindow(linkId);
    // Someone chose another link or period meanwhile: theirs stands.
    const now = [document.getElementById("link").value, since.value, document.getElementById("until").value];
    if (now.some((v, i) => v !== asked[i])) return;
    document.getElementById("since").value = localInput(new Date(w.since));
    document.getElementById("until").value = localInput(new Date(w.until));
    windowReason = w.reason;
  } catch (err) {
    if (err.status !== 401) message(err.message, false);
    return;
  }
  await show();
}

function sayWindow(series) {
  const text = `Showing ${time(series.since_us)} to ${time(series.until_us)}.`;
  document.getElementById("window-note").textContent = windowReason ? `${text} ${windowReason}` : text;
}

async function show(event) {
  if (event) {
    event.preventDefault();
    windowReason = "";
  }
  const linkId = document.getElementById("link").value;
  const query = periodQuery();
  const mine = ++showing;
  const current = () => mine === showing;
  const link = links.find((l) => l.link_id === linkId);
  document.getElementById("hits-link").textContent = link ? `of ${Api.linkName(link)}` : "";
  document.getElementById("message").hidden = true;
  // Each section is loaded on its own: one that fails shows its error in its place, and what
  // it showed before (perhaps another link's) goes; the others are shown anyway.
  const section = async (load, fail) => {
    try {
      await load();
    } catch (err) {
      if (current() && err.status !== 401) fail(err);
    }
  };
  const since = new Date(document.getElementById("since").value).getTime() * 1000;
  const until = new Date(document.getElementById("until").value).getTime() * 1000;
  let period = [since, until];
  await section(async () => {
    const series = await call("GET", `/api/v1/links/${encodeURIComponent(linkId)}/meter?${query}&points=400`);
    if (!current()) return;
    period = [series.since_us, series.until_us];
    drawChart(series);
    sayWindow(series);
  }, (err) => {
    document.getElementById("chart").replaceChildren();
    document.getElementById("chart-note").textContent = "";
    Api.loadFailed(document.getElementById("window-note"), err, "the meter");
  });
  if (!current()) return;
  exportsFor(linkId, query);
  await section(() => reconcile(linkId, query, current), (err) => {
    for (const id of ["#recon tbody", "#recon-tables tbody", "#recon-exports"]) {
      document.querySelector(id).replaceChildren();
    }
    Api.loadFailed(document.getElementById("recon-verdict"), err, "the reconciliation");
  });
  await section(() => correctionRequests(linkId, current), (err) =>
    Api.loadFailed(document.querySelector("#correction-requests tbody"), err, "the correction requests", 8));
  await section(() => reductions(linkId, query, current), (err) =>
    Api.loadFailed(document.querySelector("#reductions tbody"), err, "the reductions", 8));
  await section(() => hits(linkId, period[0], period[1], current), (err) =>
    Api.loadFailed(document.querySelector("#hits tbody"), err, "the hits", 9));
}

async function verifyLedger() {
  const out = document.getElementById("ledger-result");
  out.className = "muted";
  out.textContent = "verifying…";
  try {
    const r = await call("POST", "/api/v1/ledger/verify");
    out.className = r.ok ? "ok-text" : "bad-text";
    out.textContent = r.ok
      ? `Whole: ${r.entries_checked} entries checked on ${Object.keys(r.links).length} links, no problem found.`
      : `${r.problems.length} problem(s): ` + r.problems.map((p) => `link ${p.link_id}${p.seq === null ? "" : `, entry ${p.seq}`}: ${p.problem}`).join("; ");
  } catch (err) {
    out.className = "bad-text";
    out.textContent = err.message;
  }
}

Api.start(async () => {
  if (started) { show(); return; }
  started = true;
  links = await call("GET", "/api/v1/links");
  document.getElementById("link").replaceChildren(...links.map((l) =>
    el("option", { value: l.link_id }, Api.linkName(l))));
  // A fixed-pay link has no meter to chart or reconcile: open on the first link with one.
  const metered = links.find((l) => l.meter_cents !== null);
  if (metered) document.getElementById("link").value = metered.link_id;
  document.getElementById("period").addEventListener("submit", show);
  document.getElementById("latest").addEventListener("click", async () => {
    // The newest entry may have moved on since the page opened.
    links = await call("GET", "/api/v1/links");
    await showLatest();
  });
  document.getElementById("verify-ledger").addEventListener("click", verifyLedger);
  await showLatest();
});
