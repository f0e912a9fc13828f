// The supervisor's page: file submissions with the commission (Filing), follow one's own
// submissions, review counter jumps held as anomalies, and ask for meter corrections.
"use strict";

const { el, call, cents, time, message, token } = Api;
const $ = (id) => document.getElementById(id);
const report = (e) => message(e.message, false);
const packets = new Map();  // submission id -> its packet as filed (what it replaced)

function allowed() {
  const role = sessionStorage.getItem("progressive.role");
  const user = sessionStorage.getItem("progressive.user");
  if (role === "supervisor") return true;
  $("not-allowed").replaceChildren(
    el("strong", {}, "This page is for supervisors. "),
    `You are signed in as ${user}, ${Words.role(role)}: filing submissions with the commission, `
    + "asking for meter corrections and reviewing held counter jumps are a supervisor's work. "
    + "Sign out and sign in with a supervisor's account, or ask an administrator.");
  $("not-allowed").hidden = false;
  $("work").hidden = true;
  return false;
}

async function packetOf(s) {
  if (!packets.has(s.submission_id)) packets.set(s.submission_id, await call("GET", s.packet_json_url));
  return packets.get(s.submission_id);
}

async function loadSubmissions() {
  const me = sessionStorage.getItem("progressive.user");
  const rows = (await call("GET", "/api/v1/submissions")).filter((s) => s.filed_by === me);
  const before = await Promise.all(rows.map((s) => packetOf(s).then((p) => p.current).catch(() => null)));
  const body = document.querySelector("#submissions tbody");
  body.replaceChildren(...rows.map((s, i) => {
    const [state, words] = Words.state(s);
    return el("tr", { "data-id": s.submission_id },
      // The server's words: the property's own time zone, as the commission reads them.
      el("td", {}, s.words ? s.words.filed_at : time(s.filed_at_us)),
      el("td", {}, s.link_id),
      el("td", {}, Words.kind(s.kind)),
      el("td", { class: "change" }, Words.terms(s.kind, before[i]) || "–"),
      el("td", { class: "change" }, Words.terms(s.kind, s.proposal)),
      el("td", {}, s.words ? s.words.effective_on : Words.day(s.effective_at_us)),
      el("td", { class: `status-${state}`, "data-state": state }, words));
  }));
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: "7", class: "muted" }, "You have filed no submission yet.")));
}

function anomalyCard(a) {
  const reason = el("textarea", { "aria-label": `reason for ${a.anomaly_id}`, placeholder: "the reason (required), e.g. the dealer confirmed the chips" });
  const result = el("span", { class: "result", role: "status" });
  const approve = el("button", { type: "button", class: "primary" }, `Approve: add ${cents(a.amount_cents)}`);
  const reject = el("button", { type: "button" }, "Reject: add nothing");
  async function review(action) {
    if (!reason.value.trim()) {
      result.className = "result bad";
      result.textContent = "Give the reason first.";
      reason.focus();
      return;
    }
    approve.disabled = reject.disabled = true;
    try {
      const done = await call("POST", `/api/v1/anomalies/${encodeURIComponent(a.anomaly_id)}/${action}`,
        { reason: reason.value.trim() });
      result.className = "result ok";
      result.textContent = done.status === "approved"
        ? `Approved: ${cents(done.amount_cents)} added to the ${done.link_id} meter.`
        : "Rejected: nothing was added to the meter.";
      reason.disabled = true;
    } catch (e) {
      result.className = "result bad";
      result.textContent = e.message;
      approve.disabled = reject.disabled = false;
    }
  }
  approve.addEventListener("click", () => review("approve"));
  reject.addEventListener("click", () => review("reject"));
  return el("div", { class: "anomaly", "data-id": a.anomaly_id },
    el("h3", {}, `Table ${a.table_id} (link ${a.link_id}): ${a.credits.toLocaleString("en-US")} credits held, worth ${cents(a.amount_cents)}`),
    el("div", {}, a.reason),
    el("div", { class: "muted" }, `Seen ${time(a.at_us)}; the table's credit counter went from ${a.counter_before.toLocaleString("en-US")} to ${a.counter_after.toLocaleString("en-US")}.`),
    el("div", { class: "step" }, reason, approve, reject, result));
}

async function loadAnomalies() {
  const held = await call("GET", "/api/v1/anomalies?status=held");
  const box = $("anomalies");
  // Cards already shown stay, with their results, until the next full load.
  const shown = new Set([...box.querySelectorAll(".anomaly")].map((c) => c.dataset.id));
  for (const a of held) if (!shown.has(a.anomaly_id)) box.append(anomalyCard(a));
  if (!box.children.length) box.append(el("p", { class: "muted none" }, "No counter jump is held for review."));
}

const CATEGORIES = { malfunction: "a malfunction fixed", transfer: "moved to another link",
  limit_adjustment: "a limit adjustment", other: "other" };

async function decideCorrection(c, action, cell, reason) {
  if (action === "reject" && !reason.value.trim()) {
    cell.querySelector(".result").textContent = "Give the reason to reject it.";
    reason.focus();
    return;
  }
  const body = action === "reject" ? { reason: reason.value.trim() } : undefined;
  try {
    const done = await call("POST", `/api/v1/corrections/${encodeURIComponent(c.request_id)}/${action}`, body);
    cell.replaceChildren(el("span", { class: "result ok" }, done.status === "approved" ? "Approved: the meter was corrected." : "Rejected."));
    await Promise.all([loadCorrections(false), loadMeters()]);
  } catch (e) {
    cell.replaceChildren(el("span", { class: "result bad" }, e.message));
  }
}

async function openDocument(sha) {
  const answer = await fetch(`/api/v1/documents/${encodeURIComponent(sha)}`, { headers: { Authorization: `Bearer ${token()}` } });
  if (!answer.ok) throw new Api.ApiError(`the document could not be read (${answer.status})`, answer.status);
  const url = URL.createObjectURL(await answer.blob());
  window.open(url, "_blank", "noopener");
  setTimeout(() => URL.revokeObjectURL(url), 60000);
}

async function loadCorrections(all = true) {
  const me = sessionStorage.getItem("progressive.user");
  const rows = await call("GET", "/api/v1/corrections");
  const body = document.querySelector("#corrections tbody");
  const kept = all ? new Map() : new Map([...body.querySelectorAll("tr[data-id]")].map((tr) => [tr.dataset.id, tr.lastChild]));
  body.replaceChildren(...rows.map((c) => {
    const action = el("td", {});
    if (kept.has(c.request_id) && kept.get(c.request_id).querySelector(".result")) action.replaceChildren(...kept.get(c.request_id).childNodes);
    else if (c.status === "pending" && c.requested_by !== me) {
      const reason = el("input", { "aria-label": "reason to reject", placeholder: "reason to reject" });
      action.append(
        el("button", { type: "button", onclick: () => decideCorrection(c, "approve", action, reason) }, "Approve"), " ",
        reason, " ",
        el("button", { type: "button", onclick: () => decideCorrection(c, "reject", action, reason) }, "Reject"),
        el("span", { class: "result bad", role: "status" }));
    }
    const doc = c.document_sha256
      ? el("button", { type: "button", onclick: () => openDocument(c.document_sha256).catch(report) }, "Open")
      : el("span", { class: "muted" }, "none");
    const state = c.status === "pending" ? "waiting for a second person"
      : `${c.status} by ${c.decided_by}${c.decision_reason ? `: ${c.decision_reason}` : ""}`;
    return el("tr", { "data-id": c.request_id },
      el("td", {}, time(c.at_us)), el("td", {}, where(c)),
      el("td", { class: "num" }, cents(c.delta_cents)),
      el("td", {}, CATEGORIES[c.category] || c.category), el("td", {}, c.reason), el("td", {}, doc),
      el("td", {}, c.requested_by), el("td", { class: `status-${c.status}` }, state), action);
  }));
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: "9", class: "muted" }, "No correction was asked for.")));
}

// A correction's link, and on a link of levels the meter it corrects: "caribbean, Grand
// reserve (L1.reserve)".
function where(c) {
  return c.meter ? `${c.link_id}, ${c.meter_name || c.meter} (${c.meter})` : c.link_id;
}

// A link of levels has several meters: the correction names one, chosen from each meter's
// name and amount now. A link of one meter needs no choice.
async function loadMeters() {
  const link = $("correction-link").value;
  const meters = link
    ? await call("GET", `/api/v1/links/${encodeURIComponent(link)}/corrections/meters`) : [];
  const select = $("correction-meter");
  const keep = select.value;
  $("correction-meter-box").hidden = !meters.length;
  select.required = meters.length > 0;
  select.replaceChildren(
    el("option", { value: "" }, "choose the meter"),
    ...meters.map((m) => el("option", { value: m.meter }, `${m.name} (${m.meter}): ${cents(m.amount_cents)}`)));
  if (meters.some((m) => m.meter === keep)) select.value = keep;
}

async function askCorrection(event) {
  event.preventDefault();
  const form = new FormData();
  form.set("delta", $("correction-delta").value.trim());
  if ($("correction-meter").value) form.set("meter", $("correction-meter").value);
  form.set("category", $("correction-category").value);
  form.set("reason", $("correction-reason").value);
  const file = $("correction-document").files[0];
  if (file) form.set("document", file);
  const result = $("correction-result");
  const link = $("correction-link").value;
  const answer = await fetch(`/api/v1/links/${encodeURIComponent(link)}/corrections`,
    { method: "POST", body: form, headers: { Authorization: `Bearer ${token()}` } });
  const data = await answer.json().catch(() => null);
  if (!answer.ok) {
    const d = data && data.detail;
    result.className = "result bad";
    result.textContent = typeof d === "string" ? d
      : d && d.problems ? d.problems.map((p) => p.problem).join("; ") : `refused (${answer.status})`;
    return;
  }
  result.className = "result ok";
  result.textContent = `Asked: ${cents(data.delta_cents)} on ${where(data)}, waiting for a second person.`;
  $("correction").reset();
  deltaRead.refresh();
  await Promise.all([loadCorrections(), loadMeters()]);
}

async function ready() {
  $("not-allowed").hidden = true;
  if (!allowed()) return;
  $("work").hidden = false;
  const links = await call("GET", "/api/v1/links");
  // A fixed-pay link has no meter (68 IAC 10-7-5(e)): there is nothing on it to correct.
  const metered = links.filter((l) => l.meter_cents !== null);
  const keep = $("correction-link").value;
  $("correction-link").replaceChildren(...metered.map((l) => el("option", { value: l.link_id }, Words.link(l))));
  if (metered.some((l) => l.link_id === keep)) $("correction-link").value = keep;
  await Promise.all([
    loadMeters(),
    Filing.start(links, () => loadSubmissions().catch(report)),
    loadSubmissions(), loadAnomalies(), loadCorrections(),
  ]);
}

Filing.wire(report);
$("correction").addEventListener("submit", (e) => askCorrection(e).catch(report));
$("correction-link").addEventListener("change", () => loadMeters().catch(report));
const deltaRead = Api.echo($("correction-delta"), "change");
$("correction-delta").after(deltaRead);
$("sign-out").addEventListener("click", () => { $("work").hidden = true; $("not-allowed").hidden = true; });
Api.start(() => ready().catch(report));
