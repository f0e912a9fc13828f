// The commission agent's page: submissions, their packets as filed, approval or rejection.
"use strict";

const { el, call, cents, time, message, download } = Api;
let current = null;

function proposed(s) {
  const p = s.proposal;
  const parts = [];
  if (p.rate_bp !== undefined) parts.push(`rate ${(p.rate_bp / 100).toFixed(2)}%`);
  if (p.reset_cents !== undefined) parts.push(`reset ${cents(p.reset_cents)}`);
  if (p.paytable !== undefined) parts.push(`paytable of ${p.paytable.length} lines`);
  return parts.join(", ");
}

async function openPacket(s) {
  current = s;
  const packet = await call("GET", s.packet_json_url);
  document.getElementById("packet-id").textContent = `${s.submission_id} (${s.status})`;
  document.getElementById("packet-hashes").textContent =
    `JSON sha256 ${s.packet_json_sha256}, PDF sha256 ${s.packet_pdf_sha256}`;
  document.getElementById("packet-json").textContent = JSON.stringify(packet, null, 2);
  const open = s.status === "filed";
  for (const id of ["approve", "reject", "reason"]) document.getElementById(id).disabled = !open;
  document.getElementById("packet").hidden = false;
}

async function load() {
  const rows = await call("GET", "/api/v1/submissions");
  const body = document.querySelector("#submissions tbody");
  body.replaceChildren(...rows.map((s) => el("tr", { "data-id": s.submission_id },
    el("td", {}, time(s.filed_at_us)),
    el("td", {}, s.submission_id),
    el("td", {}, s.kind.replace("_", " ")),
    el("td", {}, s.link_id),
    el("td", {}, proposed(s)),
    el("td", {}, time(s.effective_at_us)),
    el("td", { class: `status-${s.status}` }, s.status + (s.review_reason ? `: ${s.review_reason}` : "")),
    el("td", {}, el("button", { type: "button", class: "open", onclick: () => openPacket(s).catch((e) => message(e.message, false)) }, "Read the packet")),
  )));
  if (!rows.length) body.append(el("tr", {}, el("td", { colspan: "8" }, "no submissions")));
}

async function review(action) {
  if (!current) return;
  const path = `/api/v1/submissions/${encodeURIComponent(current.submission_id)}/${action}`;
  try {
    const body = action === "reject" ? { reason: document.getElementById("reason").value } : undefined;
    const done = await call("POST", path, body);
    message(`${done.submission_id} ${done.status}`, true);
    await load();
    await openPacket(done);
  } catch (e) {
    message(e.message, false);
  }
}

document.getElementById("approve").addEventListener("click", () => review("approve"));
document.getElementById("reject").addEventListener("click", () => review("reject"));
document.getElementById("packet-pdf").addEventListener("click", () => {
  if (current) download(current.packet_pdf_url).catch((e) => message(e.message, false));
});

Api.start(() => load().catch((e) => message(e.message, false)));
