// The audit page's reports: a link's gaming-day, shift and weekly reports (PDF or CSV) and
// the day's hits, each award with its jackpot slip. Times are the property's local times as
// the server writes them; the gaming day and shifts are the property's (GET
// /api/v1/reports/calendar).
"use strict";

(() => {
  const { el, call, cents, message, download } = Api;
  const WEEK_MS = 7 * 24 * 3600 * 1000;
  let ready = false;
  let asking = 0; // the latest day's hits asked for

  // The calendar week (Monday 00:00 UTC, as the weekly meter report counts weeks) holding a
  // date written "YYYY-MM-DD": its bounds as ISO times. Dates only: no amount is involved.
  function weekOf(day) {
    const [y, m, d] = day.split("-").map((x) => parseInt(x, 10));
    const at = Date.UTC(y, m - 1, d);
    const monday = at - ((new Date(at).getUTCDay() + 6) % 7) * 24 * 3600 * 1000;
    return [new Date(monday).toISOString(), new Date(monday + WEEK_MS).toISOString()];
  }

  function button(label, path, cls) {
    return el("button", {
      type: "button", class: cls, "data-href": path,
      onclick: () => download(path).catch((err) => message(err.message, false)),
    }, label);
  }

  function downloads(linkId, day, shift) {
    const link = encodeURIComponent(linkId);
    const base = `/api/v1/links/${link}/reports`;
    const q = `date=${encodeURIComponent(day)}`;
    const [since, until] = weekOf(day);
    const week = `/api/v1/links/${link}/reconciliation/export?since=${encodeURIComponent(since)}&until=${encodeURIComponent(until)}`;
    const buttons = [];
    for (const format of ["pdf", "csv"]) {
      const F = format.toUpperCase();
      buttons.push(button(`Gaming day (${F})`, `${base}/gaming-day?${q}&format=${format}`, "report gaming-day"));
      buttons.push(button(`Shift ${shift} (${F})`, `${base}/shift?${q}&shift=${shift}&format=${format}`, "report shift"));
      buttons.push(button(`Week (${F})`, `${week}&format=${format}`, "report week"));
    }
    document.getElementById("report-downloads").replaceChildren(...buttons);
  }

  function when(iso) {
    // "2026-11-23T10:04:05-05:00" -> "2026-11-23 10:04:05": the property's own clock.
    return iso.slice(0, 19).replace("T", " ");
  }

  function slipButton(h) {
    if (h.status !== "awarded") return el("span", { class: "muted" }, "refused: no slip");
    const path = `/api/v1/hits/${encodeURIComponent(h.hit_id)}/slip.pdf`;
    return button("Jackpot slip", path, "slip");
  }

  async function showDay(event) {
    if (event) event.preventDefault();
    const linkId = document.getElementById("report-link").value;
    const day = document.getElementById("report-day").value;
    const shift = document.getElementById("report-shift").value;
    if (!linkId || !day) return;
    downloads(linkId, day, shift);
    const body = document.querySelector("#report-hits tbody");
    const asked = ++asking;
    try {
      const r = await call("GET",
        `/api/v1/links/${encodeURIComponent(linkId)}/reports/gaming-day?date=${encodeURIComponent(day)}&format=json`);
      if (asked !== asking) return; // another link or day was asked for meanwhile
      if (!r.hits.length) {
        body.replaceChildren(el("tr", {}, el("td", { colspan: 9, class: "muted" }, "No hits this gaming day.")));
        return;
      }
      const row = (h) => el("tr", { "data-hit": h.hit_id },
        el("td", {}, when(h.at)),
        el("td", {}, h.hit_id),
        el("td", {}, `${h.table_id}, ${h.seat}`),
        el("td", {}, h.hand_name),
        // A card text each, or (a string) what makes the stored cards unreadable.
        el("td", {}, ...(Array.isArray(h.cards) ? h.cards.map(Api.cardFace)
          : [h.cards ? el("span", { class: "record-problem bad-text" }, h.cards) : "–"])),
        el("td", {}, h.level || "–"),
        el("td", { class: "num" }, cents(h.award_cents)),
        el("td", {}, h.status !== "awarded" ? "refused" : (h.paid_from === "meter" ? "meter" : "at the table")),
        el("td", {}, slipButton(h)));
      body.replaceChildren(...Api.hitRows(r.hits, row, 9, "No jackpot paid from the meter this gaming day."));
    } catch (err) {
      // The rows of the day or link shown before go: they are not this one's.
      if (asked === asking && err.status !== 401) Api.loadFailed(body, err, "the day's hits", 9);
    }
  }

  async function start() {
    if (ready || !Api.token()) return;
    ready = true;
    try {
      const [calendar, links] = await Promise.all([
        call("GET", "/api/v1/reports/calendar"),
        call("GET", "/api/v1/links"),
      ]);
      document.getElementById("report-zone").textContent = `(${calendar.time_zone})`;
      document.getElementById("report-link").replaceChildren(...links.map((l) =>
        el("option", { value: l.link_id }, Api.linkName(l))));
      // Open on a link with a meter, whose jackpots the reports are mostly read for.
      const metered = links.find((l) => l.meter_cents !== null);
      if (metered) document.getElementById("report-link").value = metered.link_id;
      document.getElementById("report-shift").replaceChildren(...calendar.shifts.map((s) =>
        el("option", { value: s.shift }, `${s.shift}: from ${s.starts}`)));
      document.getElementById("report-day").value = calendar.today;
      document.getElementById("report-form").addEventListener("submit", showDay);
      for (const id of ["report-link", "report-shift", "report-day"]) {
        document.getElementById(id).addEventListener("change", () => showDay());
      }
      await showDay();
    } catch (err) {
      ready = false;
      if (err.status !== 401) message(err.message, false);
    }
  }

  // Started once someone is signed in: now if a token is kept, else when the page's sign-in
  // names who is signed in (audit.js owns the sign-in form).
  new MutationObserver(start).observe(document.getElementById("who"), { childList: true, characterData: true, subtree: true });
  start();
})();
