// The admin's view of the software self-check: the last check of every installed file against
// the manifest made when the release was installed, the files that do not match, the links that
// do not play, and a check now (audited, with who asked).
"use strict";

const Software = (() => {
  const { el, call, time } = Api;
  const STATES = { passed: "passed", failed: "FAILED", unchecked: "not checked yet" };
  const PROBLEMS = {
    differs: "differs from the manifest",
    missing: "listed in the manifest, missing",
    extra: "not in the manifest",
  };

  function $(id) { return document.getElementById(id); }

  function asked(s) {
    if (s.asked_by === "demand") return `asked by ${s.by}`;
    if (s.asked_by === "start") return "at start";
    return "on its schedule";
  }

  function say(text, ok) {
    const box = $("software-result");
    box.replaceChildren(...text.map((t) => el("div", {}, t)));
    box.className = `result ${ok ? "ok" : "bad"}`;
    box.hidden = false;
  }

  function show(s, checkedNow) {
    const state = $("software-state");
    state.textContent = STATES[s.state] || s.state;
    state.className = `state software-${s.state}`;
    $("software-when").textContent = s.checked_at_us === null ? ""
      : `${time(s.checked_at_us)}, ${asked(s)}: ${s.files.toLocaleString("en-US")} files in ${s.seconds.toFixed(3)} s`;
    $("software-manifest").textContent = s.manifest
      ? `Manifest ${s.manifest}${s.manifest_sha256 ? ` (its SHA-256: ${s.manifest_sha256})` : ""}` : "";
    if (s.state === "failed") {
      say([s.fault,
        "Every link is held: its tables take no side bets and nothing is recorded. Put back the release's files and check again; then two people recover each link (progressive links recover)."],
      false);
    } else if (checkedNow) {
      say([`Checked now: all ${s.files.toLocaleString("en-US")} files match the manifest.`], true);
    } else {
      $("software-result").hidden = true;
    }
    const files = $("software-mismatches");
    files.hidden = !s.mismatches.length;
    files.querySelector("tbody").replaceChildren(...s.mismatches.map((m) => el("tr", { "data-file": m.path },
      el("td", {}, el("code", { class: "code" }, m.path)),
      el("td", {}, PROBLEMS[m.problem] || m.problem))));
    if (s.mismatched > s.mismatches.length) {
      files.querySelector("tbody").append(el("tr", {}, el("td", { colspan: 2, class: "muted" },
        `and ${(s.mismatched - s.mismatches.length).toLocaleString("en-US")} more: progressive self-check on the host lists them all`)));
    }
    const held = Object.entries(s.inoperable_links);
    const links = $("software-links");
    links.hidden = !held.length;
    links.querySelector("tbody").replaceChildren(...held.map(([link, why]) => el("tr", { "data-link": link },
      el("td", {}, link), el("td", {}, why))));
  }

  async function load() {
    show(await call("GET", "/api/v1/self-check"), false);
  }

  async function checkNow() {
    const button = $("software-check");
    button.disabled = true;
    try {
      show(await call("POST", "/api/v1/self-check"), true);
    } catch (err) {
      say([err.message], false);
    } finally {
      button.disabled = false;
    }
    await AuditLog.load();
  }

  function start() {
    $("software-check").addEventListener("click", () => checkNow());
  }

  return { start, load };
})();
