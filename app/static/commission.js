// The commission's page: submissions as documents (current and proposed side by side, the
// notice period, the decision), approval or rejection with a reason. Every word comes from
// the server's document of the packet, the same as its PDF: nothing here formats a figure.
"use strict";

const { el, call, message, download } = Api;
let current = null;

function changeCell(s) {
  const lines = (s.words && s.words.change) || [];
  if (!lines.length) return el("td", { class: "muted" }, "no change");
  return el("td", { class: "change" }, ...lines.map((c) => el("div", { class: "change-line" },
    `${c.label}: `,
    ...(c.current === null ? [] : [el("span", { class: "was" }, c.current), " → "]),
    el("span", { class: "now" }, c.proposed))));
}

function stateCell(s) {
  const td = el("td", { class: `status-${s.status}` },
    s.status === "filed" ? "awaiting review" : s.status);
  if (s.reviewed_by) td.append(el("div", { class: "muted" }, `by ${s.reviewed_by}, ${s.words.reviewed_at}`));
  if (s.review_reason) td.append(el("div", { class: "muted" }, `reason: ${s.review_reason}`));
  return td;
}

function facts(section) {
  return el("table", { class: "facts" }, el("tbody", {}, ...section.facts.map((f) =>
    el("tr", {}, el("th", { scope: "row" }, f.label), el("td", {}, f.value)))));
}

function table(section) {
  const head = [...section.columns];
  if (section.compare) head.push("");
  const rows = section.rows.map((r) => {
    const cells = r.cells.map((c, i) => el("td", { class: section.compare && i === 2 ? "proposed" : "" }, c));
    if (section.compare) cells.push(el("td", {}, r.changed ? el("span", { class: "badge" }, "changed") : ""));
    return el("tr", { class: r.changed ? "changed" : "" }, ...cells);
  });
  return el("table", { class: "grid" },
    el("thead", {}, el("tr", {}, ...head.map((h) => el("th", {}, h)))),
    el("tbody", {}, ...rows));
}

function render(section) {
  let body;
  if (section.kind === "facts") body = facts(section);
  else if (section.kind === "table") body = table(section);
  else body = el("div", {}, ...section.paragraphs.map((p) => el("p", {}, p)));
  return el("div", { class: "doc-section", "data-key": section.key }, el("h3", {}, section.heading), body);
}

async function openPacket(s) {
  current = s;
  const doc = await call("GET", s.document_url);
  document.getElementById("doc-title").textContent = doc.title;
  document.getElementById("doc-letterhead").textContent = `${doc.letterhead}. Times are in ${doc.time_zone}.`;
  // Filed in demonstration mode, or of a link opened in it: the packet says so on every page.
  const demo = document.getElementById("doc-demonstration");
  demo.textContent = doc.demonstration || "";
  demo.hidden = !doc.demonstration;
  const pending = s.status === "filed";
  // While pending, the decision is the form below, not a section saying it waits.
  const main = doc.sections.filter((x) => x.part === "main" && !(pending && x.key === "decision"));
  document.getElementById("doc-main").replaceChildren(...main.map(render));
  document.getElementById("doc-more").replaceChildren(
    ...doc.sections.filter((x) => x.part !== "main").map(render));
  document.getElementById("packet-hashes").textContent =
    `Kept as filed: packet JSON SHA-256 ${s.packet_json_sha256}; PDF SHA-256 ${s.packet_pdf_sha256}`;
  const form = document.getElementById("review");
  form.hidden = !pending;
  for (const id of ["approve", "reject", "reason"]) document.getElementById(id).disabled = !pending;
  document.getElementById("reason").value = "";
  document.getElementById("review-result").textContent = "";
  // An amendment filed with the executive director's waiver of its notice period: approved
  // only once the agent confirms the direction (a rejection needs no confirmation).
  const w = s.waiver;
  document.getElementById("waiver-confirm").hidden = !(pending && w);
  document.getElementById("waiver-text").textContent = w
    ? `Notice period waived by the executive director's written direction ${w.reference} of ${w.given_on}, given by ${w.given_by}; its document's SHA-256 is ${w.document_sha256}.`
    : "";
  const box = document.getElementById("waiver-confirmed");
  box.checked = false;
  box.setCustomValidity("");
  const packet = document.getElementById("packet");
  packet.hidden = false;
  // Opened below a list that may be long: brought into view, its title first.
  packet.scrollIntoView({ block: "start" });
}

async function load() {
  const rows = await call("GET", "/api/v1/submissions");
  const body = document.querySelector("#submissions tbody");
  body.replaceChildren(...rows.map((s) => el("tr", { "data-id": s.submission_id },
    el("td", {}, s.words.filed_at, el("div", { class: "muted" }, `by ${s.filed_by}`)),
    el("td", {}, s.words.kind, el("div", { class: "muted" }, s.submission_id)),
    el("td", {}, s.link_id),
    changeCell(s),
    el("td", {}, s.words.effective_on),
    stateCell(s),
    el("td", {}, el("button", { type: "button", class: "open", onclick: () => openPacket(s).catch((e) => message(e.message, false)) }, "Read")),
  )));
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: "7" }, "no submissions")));
}

async function review(action) {
  if (!current) return;
  const reason = document.getElementById("reason");
  if (!reason.value.trim()) {
    reason.setCustomValidity("A decision states its reason.");
    reason.reportValidity();
    return;
  }
  reason.setCustomValidity("");
  const result = document.getElementById("review-result");
  const path = `/api/v1/submissions/${encodeURIComponent(current.submission_id)}/${action}`;
  const box = document.getElementById("waiver-confirmed");
  const body = { reason: reason.value.trim() };
  if (action === "approve" && current.waiver) {
    if (!box.checked) {
      box.setCustomValidity("This submission carries a waiver of its notice period: confirm the executive director's direction first.");
      box.reportValidity();
      return;
    }
    body.waiver_confirmed = true;
  }
  box.setCustomValidity("");
  try {
    const done = await call("POST", path, body);
    await load();
    await openPacket(done);
    // The decision stays beside the buttons it was made with.
    document.getElementById("review").hidden = false;
    for (const id of ["approve", "reject", "reason"]) document.getElementById(id).disabled = true;
    reason.value = done.review_reason || "";
    result.className = `status-${done.status}`;
    result.textContent = `${done.status === "approved" ? "Approved" : "Rejected"} by ${done.reviewed_by}, ${done.words.reviewed_at}`;
    message(`${done.submission_id} ${done.status}`, true);
  } catch (e) {
    result.className = "status-rejected";
    result.textContent = e.message;
  }
}

document.getElementById("review").addEventListener("submit", (e) => { e.preventDefault(); review("approve"); });
document.getElementById("reject").addEventListener("click", () => review("reject"));
document.getElementById("reason").addEventListener("input", (e) => e.target.setCustomValidity(""));
document.getElementById("waiver-confirmed").addEventListener("change", (e) => e.target.setCustomValidity(""));
document.getElementById("packet-pdf").addEventListener("click", () => {
  if (current) download(current.packet_pdf_url).catch((e) => message(e.message, false));
});
document.getElementById("packet-json").addEventListener("click", () => {
  if (current) download(current.packet_json_url).catch((e) => message(e.message, false));
});

Api.start(() => load().catch((e) => message(e.message, false)));
