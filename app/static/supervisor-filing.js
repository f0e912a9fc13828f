// The supervisor's submission form. It checks as one types: every change is sent, as typed,
// to POST /api/v1/submissions/check (the same checks filing makes, on the server: no rule is
// restated here), and each problem is shown next to its field with the clause that refuses it.
"use strict";

const Filing = (() => {
  const { el, call, cents } = Api;
  const DEBOUNCE_MS = 300;
  let terms = null;        // GET /api/v1/submissions/terms/{link}
  let sentRows = [];       // paytable line sent at index i -> row i of the editor
  let timer = null;
  let asked = 0;           // the latest check asked; older answers are dropped
  let ready = false;       // the latest answer said ok and nothing was typed since
  let onFiled = () => {};

  const $ = (id) => document.getElementById(id);
  const kind = () => $("kind").value;

  function fieldRow(label, input, now, key) {
    const field = input.matches("input, select") ? input : input.querySelector("input, select");
    return el("div", { class: "field-row" },
      el("label", { for: field.id }, label), input,
      el("span", { class: "now" }, ...now),
      el("div", { class: "problem", "data-for": key, role: "alert" }));
  }

  // A field for an amount or a rate, and beside it how what is typed reads ("reads as
  // $6,000.00"); its problems are the check's to show. ``kind``: see Api.echo.
  function textInput(id, key, placeholder, value, kind) {
    const input = el("input", { id, "data-field": key, placeholder, autocomplete: "off" });
    if (value) input.value = value;
    input.addEventListener("input", changed);
    return el("span", { class: "typed" }, input, Api.echo(input, kind, true));
  }

  function select(options, value, key) {
    const s = el("select", key ? { "data-field": key } : {},
      ...options.map(([v, text]) => el("option", { value: v }, text)));
    s.value = value;
    s.addEventListener("change", changed);
    return s;
  }

  function rateFields() {
    const lock = terms.jackpot_won_since_rate_set
      ? "a jackpot was won since it was set, so it may change"
      : "no jackpot was won since it was set";
    return [fieldRow("Proposed rate of progression", textInput("rate", "rate", "e.g. 82.5%", "", "rate"),
      ["now ", el("b", {}, Words.rate(terms.rate_bp)), ` (${lock})`], "rate")];
  }

  function resetFields() {
    return [fieldRow("Proposed reset amount", textInput("reset", "reset", "e.g. $10,000.00", "", "amount"),
      ["now ", el("b", {}, cents(terms.reset_cents))], "reset")];
  }

  function currentGame() {
    return terms.games.find((g) => g.game === $("game").value) || terms.games[0];
  }

  function paytableFields() {
    const game = currentGame();
    const levels = terms.levels.length;
    const rows = game.hands.map((h, i) => {
      const now = game.paytable.find((l) => l.hand === h.hand);
      const pays = !now ? "none" : now.percent_bp !== null ? "share" : "fixed";
      const amount = !now ? "" : now.percent_bp !== null ? Words.rate(now.percent_bp) : cents(now.fixed_cents);
      const how = select([["none", "nothing"], ["share", "a share of the meter"], ["fixed", "a fixed amount"]],
        pays, `paytable.${i}.pays`);
      const level = levels > 1
        ? select(terms.levels.map((v, n) => [String(n + 1), `level ${n + 1} (${v.name})`]),
          String(now && now.level ? now.level : 1), `paytable.${i}.level`)
        : "";
      const pay = textInput(`pay-${i}`, `paytable.${i}.amount`, "10% or $500.00", amount,
        () => ({ share: "share", fixed: "paid" })[how.value]);
      how.addEventListener("change", () => pay.lastChild.refresh());
      return el("tr", { "data-hand": h.hand },
        el("td", { class: "hand" }, Words.hand(h.hand)),
        el("td", { class: "now" }, now ? Words.line(now).replace(/^[^:]+: /, "") : "pays nothing"),
        el("td", {}, how),
        el("td", {}, pay),
        ...(levels > 1 ? [el("td", {}, level)] : []),
        el("td", {}, textInput(`envy-${i}`, `paytable.${i}.envy`, "none",
          now && now.envy_cents ? cents(now.envy_cents) : "", "paid")),
        el("td", {}, el("div", { class: "problem", "data-for": `paytable.${i}`, role: "alert" })));
    });
    return [
      el("table", { class: "edit", id: "paytable" },
        el("thead", {}, el("tr", {}, el("th", {}, "Hand"), el("th", {}, "Pays now"),
          el("th", {}, "Proposed: pays"), el("th", {}, "Share or amount"),
          ...(levels > 1 ? [el("th", {}, "From")] : []), el("th", {}, "Envy to each other seat"),
          el("th", {}, ""))),
        el("tbody", {}, ...rows)),
      el("div", { class: "problem", "data-for": "paytable", role: "alert" }),
    ];
  }

  function levelsFields() {
    const rows = terms.levels.map((v, i) => el("tr", { "data-level": String(i) },
      el("td", { class: "hand" }, `${i + 1}. ${v.name}`),
      el("td", { class: "now" }, Words.level(v).replace(/^[^:]+: /, "")),
      el("td", {}, textInput(`level-reset-${i}`, `levels.${i}.reset`, "$10,000.00", cents(v.reset_cents), "amount")),
      el("td", {}, textInput(`level-rate-${i}`, `levels.${i}.rate`, "40%", Words.rate(v.rate_bp), "share")),
      el("td", {}, textInput(`level-reserve-${i}`, `levels.${i}.reserve`, "0%", Words.rate(v.reserve_bp), "hidden")),
      el("td", {}, textInput(`level-limit-${i}`, `levels.${i}.limit`, "no limit",
        v.limit_cents ? cents(v.limit_cents) : "", "paid")),
      el("td", {}, el("div", { class: "problem", "data-for": `levels.${i}`, role: "alert" }))));
    return [
      el("table", { class: "edit", id: "levels" },
        el("thead", {}, el("tr", {}, el("th", {}, "Level"), el("th", {}, "Now"),
          el("th", {}, "Reset amount"), el("th", {}, "Shown share"), el("th", {}, "Hidden share"),
          el("th", {}, "Limit"), el("th", {}, ""))),
        el("tbody", {}, ...rows)),
      el("div", { class: "problem", "data-for": "levels", role: "alert" }),
    ];
  }

  function render() {
    const k = kind();
    $("game-box").hidden = !(k === "paytable_change" && terms.games.length > 1);
    const build = { rate_change: rateFields, reset_change: resetFields,
      paytable_change: paytableFields, levels_change: levelsFields }[k];
    $("fields").replaceChildren(...(build ? build() : []));
    $("effective-now").textContent = "";
    clearProblems();
    $("file-result").textContent = "";
    ready = false;
    $("file").disabled = true;
    $("check-state").textContent = "";
    if (k === "paytable_change" || k === "levels_change") changed();
  }

  function body() {
    const b = { kind: kind(), link_id: terms.link_id };
    const value = (id) => ($(id) ? $(id).value.trim() : "");
    if (b.kind === "rate_change" && value("rate")) b.rate = value("rate");
    if (b.kind === "reset_change" && value("reset")) b.reset = value("reset");
    if (b.kind === "paytable_change") {
      if (terms.games.length > 1) b.game = $("game").value;
      sentRows = [];
      b.paytable = [];
      document.querySelectorAll("#paytable tbody tr").forEach((tr, i) => {
        const how = tr.querySelector(`[data-field="paytable.${i}.pays"]`).value;
        if (how === "none") return;
        const line = { hand: tr.dataset.hand };
        const amount = tr.querySelector(`[data-field="paytable.${i}.amount"]`).value.trim();
        line[how === "share" ? "percent" : "fixed"] = amount;
        const level = tr.querySelector(`[data-field="paytable.${i}.level"]`);
        if (how === "share" && level && level.value !== "1") line.level = Number(level.value);
        const envy = tr.querySelector(`[data-field="paytable.${i}.envy"]`).value.trim();
        if (envy) line.envy = envy;
        sentRows.push(i);
        b.paytable.push(line);
      });
    }
    if (b.kind === "levels_change") {
      b.levels = terms.levels.map((v, i) => {
        const level = { name: v.name, above_limit: v.above_limit,
          reset: value(`level-reset-${i}`), rate: value(`level-rate-${i}`) };
        if (value(`level-reserve-${i}`)) level.reserve = value(`level-reserve-${i}`);
        if (value(`level-limit-${i}`)) level.limit = value(`level-limit-${i}`);
        if (v.mystery) level.mystery = v.mystery;
        return level;
      });
    }
    // The executive director's written direction waiving this amendment's notice period.
    const waiver = ["by", "reference", "date", "sha256"].map((k) => $(`waiver-${k}`).value.trim());
    if (waiver.some(Boolean)) {
      b.waiver = { given_by: waiver[0], reference: waiver[1], given_on: waiver[2] || null, document_sha256: waiver[3].toLowerCase() };
    }
    const day = $("effective").value;
    if (day) {
      const [y, m, d] = day.split("-").map(Number);
      b.effective_at_us = new Date(y, m - 1, d).getTime() * 1000;
    }
    return b;
  }

  // A problem's field (a dotted path of the body) -> the place on the form it is shown.
  function placeOf(field) {
    if (!field) return "";
    const [head, index] = field.split(".");
    if (head === "rate" || head === "rate_bp") return "rate";
    if (head === "reset" || head === "reset_cents") return "reset";
    if (head === "effective_at_us") return "effective_at_us";
    if (head === "waiver") return "waiver";
    if (head === "paytable") return index === undefined ? "paytable" : `paytable.${sentRows[Number(index)]}`;
    if (head === "levels") return index === undefined ? "levels" : `levels.${index}`;
    return "";
  }

  function clearProblems() {
    document.querySelectorAll("#filing .problem").forEach((p) => p.replaceChildren());
    document.querySelectorAll("#filing .bad").forEach((i) => i.classList.remove("bad"));
  }

  function showProblems(problems) {
    clearProblems();
    for (const p of problems) {
      let box = document.querySelector(`#filing .problem[data-for="${placeOf(p.field)}"]`);
      if (!box) box = document.querySelector('#filing .problem[data-for=""]');
      const item = el("div", { class: "problem-item" }, p.message);
      if (p.rule) item.append(el("span", { class: "clause" }, p.rule));
      box.append(item);
      const input = document.querySelector(`#filing [data-field="${p.field}"]`)
        || document.querySelector(`#filing [data-field="${placeOf(p.field)}"]`);
      if (input) input.classList.add("bad");
    }
  }

  function changed() {
    ready = false;
    $("file").disabled = true;
    $("file-result").textContent = "";
    $("check-state").textContent = "checking…";
    clearTimeout(timer);
    timer = setTimeout(check, DEBOUNCE_MS);
  }

  async function check() {
    const mine = ++asked;
    const b = body();
    let answer;
    try {
      answer = await call("POST", "/api/v1/submissions/check", b);
    } catch (e) {
      if (mine !== asked) return;
      $("check-state").textContent = "";
      showProblems([{ field: null, rule: null, message: e.message }]);
      return;
    }
    if (mine !== asked) return;
    showProblems(answer.problems);
    if (answer.effective_at_us) {
      $("effective-now").replaceChildren("takes effect from ", el("b", {}, Words.day(answer.effective_at_us)),
        ", at the link's first jackpot reset on or after that day");
    }
    ready = answer.ok;
    $("file").disabled = !ready;
    $("check-state").textContent = answer.ok ? "no problem found: ready to file" : "";
  }

  async function file() {
    if (!ready) return;
    $("file").disabled = true;
    const result = $("file-result");
    try {
      const s = await call("POST", "/api/v1/submissions", body());
      result.className = "result ok";
      result.textContent = `Filed ${s.submission_id}: ${Words.kind(s.kind).toLowerCase()} of ${s.link_id}, now awaiting the commission.`;
      $("check-state").textContent = "";
      ready = false;
      onFiled();
    } catch (e) {
      result.className = "result bad";
      result.textContent = `Not filed: ${e.message}`;
      $("file").disabled = false;
    }
  }

  async function loadLink() {
    terms = await call("GET", `/api/v1/submissions/terms/${encodeURIComponent($("link").value)}`);
    const keep = kind();
    $("kind").replaceChildren(...terms.kinds.map((k) => el("option", { value: k.kind },
      k.label.charAt(0).toUpperCase() + k.label.slice(1))));
    if (terms.kinds.some((k) => k.kind === keep)) $("kind").value = keep;
    $("game").replaceChildren(...terms.games.map((g) => el("option", { value: g.game }, g.label)));
    const shape = { classic: "one meter", levels: `${terms.levels.length} levels`, fixed_pay: "fixed pays, no meter" }[terms.shape];
    const armed = terms.armed_submission_id
      ? ` An approved change (${terms.armed_submission_id}) waits for the next jackpot reset.` : "";
    $("link-facts").textContent = `${terms.games.map((g) => g.label).join(", ")}; ${shape}.${armed}`;
    render();
  }

  async function start(links, filed) {
    onFiled = filed;
    const keep = $("link").value;
    $("link").replaceChildren(...links.map((l) => el("option", { value: l.link_id }, Words.link(l))));
    if (links.some((l) => l.link_id === keep)) $("link").value = keep;
    await loadLink();
  }

  function wire(report) {
    $("link").addEventListener("change", () => loadLink().catch(report));
    $("kind").addEventListener("change", render);
    $("game").addEventListener("change", render);
    $("effective").addEventListener("change", changed);
    // Checked as typed, like the terms: a "change" event would fire only when the field is
    // left, as the File button is pressed, and so undo the check that enabled it.
    for (const k of ["by", "reference", "date", "sha256"]) $(`waiver-${k}`).addEventListener("input", changed);
    $("file").addEventListener("click", file);
  }

  return { start, wire };
})();
