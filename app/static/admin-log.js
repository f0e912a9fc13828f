// The admin's audit log: privileged actions of a period, newest first, filtered by who and
// by action here, a page at a time. The API bounds what one period returns (LIMIT); a
// period that reaches the bound says so, and a shorter one shows the rest.
"use strict";

const AuditLog = (() => {
  const { el, call, time } = Api;
  const LIMIT = 10000;
  const PAGE = 25;
  const DAY_MS = 24 * 3600 * 1000;
  let entries = [];
  let shown = [];
  let page = 0;

  function localInput(date) {
    const pad = (n) => String(n).padStart(2, "0");
    return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
  }

  function $(id) { return document.getElementById(id); }

  // The inputs are local times; the API is told them in UTC.
  function query() {
    const parts = [`limit=${LIMIT}`];
    for (const [id, name] of [["log-since", "since"], ["log-until", "until"]]) {
      const text = $(id).value;
      if (text) parts.push(`${name}=${encodeURIComponent(new Date(text).toISOString())}`);
    }
    return parts.join("&");
  }

  function filtered() {
    const who = $("log-who").value.trim().toLowerCase();
    const action = $("log-action").value;
    return entries.filter((e) => (!who || e.actor.toLowerCase().includes(who))
      && (!action || e.action === action));
  }

  function render() {
    shown = filtered();
    const pages = Math.max(1, Math.ceil(shown.length / PAGE));
    page = Math.min(page, pages - 1);
    const rows = shown.slice(page * PAGE, (page + 1) * PAGE);
    const body = document.querySelector("#audit-log tbody");
    body.replaceChildren(...(rows.length ? rows.map((e) => el("tr", { "data-action": e.action },
      el("td", { class: "when" }, time(e.at_us)),
      el("td", { class: "actor" }, e.actor),
      el("td", {}, Words.action(e.action)),
      el("td", {}, e.target),
      el("td", { class: "change" }, Words.change(e)),
    )) : [el("tr", {}, el("td", { colspan: 5, class: "muted" }, "No privileged action matches in this period."))]));
    const first = shown.length ? page * PAGE + 1 : 0;
    $("log-page").textContent = `${first.toLocaleString("en-US")}–${(page * PAGE + rows.length).toLocaleString("en-US")} of ${shown.length.toLocaleString("en-US")}`;
    $("log-newer").disabled = page === 0;
    $("log-older").disabled = page >= pages - 1;
  }

  function offerChoices() {
    const seen = new Set(entries.map((e) => e.action));
    const select = $("log-action");
    const keep = select.value;
    const names = [...new Set([...Object.keys(Words.ACTIONS), ...seen])]
      .sort((a, b) => Words.action(a).localeCompare(Words.action(b)));
    select.replaceChildren(el("option", { value: "" }, "any action"),
      ...names.map((n) => el("option", { value: n }, Words.action(n) + (seen.has(n) ? "" : " (none in this period)"))));
    select.value = keep;
    $("log-people").replaceChildren(...[...new Set(entries.map((e) => e.actor))].sort()
      .map((name) => el("option", { value: name })));
  }

  async function load(event) {
    if (event) event.preventDefault();
    const note = $("log-note");
    try {
      entries = await call("GET", `/api/v1/audit-log?${query()}`);
      page = 0;
      offerChoices();
      render();
      const since = $("log-since").value ? new Date($("log-since").value).toLocaleString() : "the beginning";
      const until = $("log-until").value ? new Date($("log-until").value).toLocaleString() : "now";
      note.className = "muted";
      note.textContent = `From ${since} to ${until}: ${entries.length.toLocaleString("en-US")} actions.`
        + (entries.length >= LIMIT ? ` Only the newest ${LIMIT.toLocaleString("en-US")} are here: choose a shorter period for older ones.` : "");
    } catch (err) {
      note.className = "bad-text";
      note.textContent = err.message;
    }
  }

  function start() {
    const now = Date.now();
    $("log-since").value = localInput(new Date(now - 7 * DAY_MS));
    $("log-until").value = "";
    $("log-filter").addEventListener("submit", load);
    $("log-who").addEventListener("input", () => { page = 0; render(); });
    $("log-action").addEventListener("change", () => { page = 0; render(); });
    $("log-newer").addEventListener("click", () => { page -= 1; render(); });
    $("log-older").addEventListener("click", () => { page += 1; render(); });
  }

  return { start, load };
})();
