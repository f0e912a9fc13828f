// Sign-in and API calls shared by the technician, dealer and audit pages.
// The token lives in sessionStorage: it goes when the browser tab does.
"use strict";

const Api = (() => {
  const KEY = "progressive.token";
  const ROLE = "progressive.role";
  const USER = "progressive.user";
  let onSignedIn = () => {};

  function token() { return sessionStorage.getItem(KEY); }

  // Who is signed in on this tab (their user name), or null.
  function user() { return sessionStorage.getItem(USER); }

  // A role as people say it: "commission_agent" -> "commission agent".
  function roleName(role) { return String(role || "").replace(/_/g, " "); }

  function show(el, visible) { el.hidden = !visible; }

  function signOut() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(ROLE);
    sessionStorage.removeItem(USER);
    renderWho();
    showLogin("Signed out.");
  }

  function renderWho() {
    const who = document.getElementById("who");
    if (!who) return;
    const user = sessionStorage.getItem(USER);
    who.textContent = user ? `${user} (${roleName(sessionStorage.getItem(ROLE))})` : "not signed in";
    const out = document.getElementById("sign-out");
    if (out) show(out, Boolean(user));
  }

  function showLogin(message) {
    const dialog = document.getElementById("login");
    document.getElementById("login-message").textContent = message || "";
    show(dialog, true);
    document.getElementById("login-username").focus();
  }

  // An account with a one-time code chooses its own password before anything else: the
  // sign-in form grows a field for it, and the next submit sets it (and signs in).
  function newPasswordField(form) {
    let field = document.getElementById("login-new-password");
    if (!field) {
      field = el("input", {
        id: "login-new-password", name: "new_password", type: "password",
        placeholder: "your new password", autocomplete: "new-password",
        "aria-label": "your new password",
      });
      form.password.after(field);
    }
    return field;
  }

  // The form's words while a one-time code waits for its new password, and after.
  const CHOOSE = "Welcome: this one-time code lets you choose a password of your own. Keep the "
    + "code where it is, type your new password in the field below it, and press "
    + "\u201cSet password and sign in\u201d.";
  function choosing(form, on) {
    const button = form.querySelector("button[type=submit]");
    if (button) button.textContent = on ? "Set password and sign in" : "Sign in";
    form.password.placeholder = on ? "one-time code" : "password";
  }

  async function signIn(event) {
    event.preventDefault();
    const form = event.target;
    const body = new URLSearchParams({
      username: form.username.value,
      password: form.password.value,
    });
    const newField = document.getElementById("login-new-password");
    let url = "/api/v1/auth/token";
    if (newField && !newField.hidden) {
      url = "/api/v1/auth/password";
      body.set("new_password", newField.value);
    }
    const answer = await fetch(url, { method: "POST", body });
    const data = await answer.json().catch(() => ({}));
    if (!answer.ok) {
      const said = document.getElementById("login-message");
      said.textContent = describe(data, answer.status);
      said.classList.remove("guide");
      if (answer.headers.get("X-Password-Required")) {
        // The API's answer speaks to programs; a person is told what to do here.
        said.textContent = CHOOSE;
        said.classList.add("guide");
        const field = newPasswordField(form);
        field.hidden = false;
        field.required = true;
        choosing(form, true);
        field.focus();
      }
      return;
    }
    if (newField) {
      newField.value = "";
      newField.hidden = true;
      newField.required = false;
      choosing(form, false);
    }
    sessionStorage.setItem(KEY, data.access_token);
    sessionStorage.setItem(ROLE, data.role);
    sessionStorage.setItem(USER, form.username.value);
    form.password.value = "";
    show(document.getElementById("login"), false);
    renderWho();
    onSignedIn();
  }

  // A person-readable message from an error body ({"detail": ...}).
  function describe(data, status) {
    const d = data && data.detail;
    if (typeof d === "string") return d;
    if (d && d.problems) {
      return d.problems.map((p) => `${p.where}: ${p.problem}`).join("; ");
    }
    return `the server answered ${status}`;
  }

  class ApiError extends Error {
    // problems: [{where, problem}] of a refused input, so a page can show each at its field.
    constructor(message, status, problems) {
      super(message);
      this.status = status;
      this.problems = problems || [];
    }
  }

  // JSON call with the bearer token; on 401 the sign-in form comes back.
  async function call(method, path, body) {
    const headers = { Accept: "application/json" };
    const t = token();
    if (t) headers.Authorization = `Bearer ${t}`;
    const init = { method, headers };
    if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const answer = await fetch(path, init);
    const data = await answer.json().catch(() => null);
    if (answer.status === 401) {
      sessionStorage.removeItem(KEY);
      renderWho();
      showLogin(describe(data, 401));
    }
    if (!answer.ok) {
      const problems = data && data.detail && data.detail.problems;
      throw new ApiError(describe(data, answer.status), answer.status, problems);
    }
    return data;
  }

  // A text the API answers (an SVG chart), fetched with the token; on 401 the sign-in form
  // comes back.
  async function text(path) {
    const answer = await fetch(path, { headers: { Authorization: `Bearer ${token()}` } });
    if (!answer.ok) {
      const data = await answer.json().catch(() => null);
      if (answer.status === 401) showLogin(describe(data, 401));
      throw new ApiError(describe(data, answer.status), answer.status);
    }
    return answer.text();
  }

  // A download that needs the token: fetched, then handed to the browser as a file.
  async function download(path) {
    const answer = await fetch(path, { headers: { Authorization: `Bearer ${token()}` } });
    if (!answer.ok) {
      const data = await answer.json().catch(() => null);
      if (answer.status === 401) showLogin(describe(data, 401));
      throw new ApiError(describe(data, answer.status), answer.status);
    }
    const disposition = answer.headers.get("Content-Disposition") || "";
    const name = (disposition.match(/filename="([^"]+)"/) || [])[1] || "export";
    const url = URL.createObjectURL(await answer.blob());
    const a = document.createElement("a");
    a.href = url;
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  // Start a page: sign in if needed, then run `ready` (again after each sign-in).
  // The staff pages' sign-in form, made here once; a page with a form of its own (the
  // landing page) keeps it.
  function loginForm() {
    const existing = document.getElementById("login-form");
    if (existing) return existing;
    const form = el("form", { id: "login-form", autocomplete: "on" },
      el("strong", {}, "Sign in"),
      el("input", { id: "login-username", name: "username", placeholder: "user name", autocomplete: "username", required: "" }),
      el("input", { id: "login-password", name: "password", type: "password", placeholder: "password", autocomplete: "current-password", required: "" }),
      el("button", { class: "primary", type: "submit" }, "Sign in"),
      el("div", { id: "login-message", role: "alert" }));
    document.getElementById("login").append(form);
    return form;
  }

  function start(ready) {
    onSignedIn = ready;
    loginForm().addEventListener("submit", signIn);
    const out = document.getElementById("sign-out");
    if (out) out.addEventListener("click", signOut);
    renderWho();
    if (token()) ready(); else showLogin("");
  }

  const SUITS = { c: "♣", d: "♦", h: "♥", s: "♠" };
  const RANKS = new Set(["2", "3", "4", "5", "6", "7", "8", "9", "T", "10", "J", "Q", "K", "A"]);
  // The joker as the API writes it ("JK") and as people read it (controller.core.hands).
  const JOKER_TEXT = "JK";
  const JOKER_WORD = "Joker";

  // "As" -> a card face "A♠" (red for hearts and diamonds); "JK" -> "Joker". A text that is
  // no card is shown as it is, marked, never half-read.
  function cardFace(text) {
    const span = document.createElement("span");
    span.title = text;
    if (String(text).toUpperCase() === JOKER_TEXT || String(text).toLowerCase() === JOKER_WORD.toLowerCase()) {
      span.className = "card joker";
      span.textContent = JOKER_WORD;
      span.title = "the joker";
      return span;
    }
    const rank = String(text).slice(0, -1).toUpperCase();
    const suit = String(text).slice(-1).toLowerCase();
    if (!RANKS.has(rank) || !SUITS[suit]) {
      span.className = "card unknown";
      span.textContent = String(text);
      return span;
    }
    span.className = `card ${suit === "h" || suit === "d" ? "red" : "black"}`;
    span.textContent = (rank === "T" ? "10" : rank) + SUITS[suit];
    return span;
  }

  // A hit's cards as faces; what is wrong with its record instead when a part of it could
  // not be read (the API says so in `problem`, and keeps the stored text in `raw`); `none`
  // when no cards were reported.
  function hitCards(h, none) {
    if (h.problem) {
      const raw = h.raw ? Object.entries(h.raw).map(([k, v]) => `${k} "${v}"`).join(", ") : "";
      return [el("span", { class: "record-problem bad-text", title: raw },
        `Record partly unreadable: ${h.problem}`)];
    }
    return h.cards ? h.cards.map(cardFace) : [none];
  }

  // A list that could not be loaded says so where it stands (and what it showed before goes:
  // nothing stays under a heading it no longer belongs to). `box` is an element whose
  // children are replaced; in a table body, a row of `colspan` cells.
  function loadFailed(box, err, what, colspan) {
    const text = `Could not load ${what}: ${err.message}`;
    const note = el(colspan ? "td" : "div", { class: "load-error bad-text", role: "alert",
      ...(colspan ? { colspan: String(colspan) } : {}) }, text);
    box.replaceChildren(colspan ? el("tr", {}, note) : note);
  }

  function cents(amount) {
    const sign = amount < 0 ? "-" : "";
    const abs = Math.abs(amount);
    const whole = Math.floor(abs / 100).toLocaleString("en-US");
    return `${sign}$${whole}.${String(abs % 100).padStart(2, "0")}`;
  }

  // 8250 basis points -> "82.50 %", by integer arithmetic only.
  function rate(bp) {
    const sign = bp < 0 ? "-" : "";
    const abs = Math.abs(bp);
    return `${sign}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")} %`;
  }

  function time(us) {
    return new Date(Math.floor(us / 1000)).toLocaleString();
  }

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "class") node.className = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : String(c));
    return node;
  }

  // A table's long tail folded under one row: a busy floor's hundreds of fixed pays paid at
  // the table would bury its jackpots and push everything after them off the page. The rows
  // stay in the table, hidden, until the button shows them.
  function fold(rows, colspan, words) {
    if (!rows.length) return [];
    for (const row of rows) row.hidden = true;
    const button = el("button", { type: "button", class: "fold", "aria-expanded": "false" });
    const say = (open) => {
      button.textContent = `${open ? "Hide" : "Show"} ${words}`;
      button.setAttribute("aria-expanded", String(open));
    };
    say(false);
    button.addEventListener("click", () => {
      const open = rows[0].hidden;
      for (const row of rows) row.hidden = !open;
      say(open);
    });
    return [el("tr", { class: "fold" }, el("td", { colspan: String(colspan) }, button)), ...rows];
  }

  // A list of hits as table rows (``row`` makes one): the jackpots and refusals in full, then
  // the fixed pays paid at the table folded, counted and totalled (integer cents).
  function hitRows(hits, row, colspan, none) {
    const atTable = (h) => h.status === "awarded" && h.paid_from !== "meter";
    const fixed = hits.filter(atTable);
    const total = fixed.reduce((sum, h) => sum + h.award_cents, 0);
    const main = hits.filter((h) => !atTable(h)).map(row);
    if (!main.length) {
      main.push(el("tr", {}, el("td", { colspan: String(colspan), class: "muted" }, none)));
    }
    const n = fixed.length;
    return [...main, ...fold(fixed.map(row), colspan,
      `the ${n} fixed ${n === 1 ? "pay" : "pays"} paid at the table (${cents(total)} in all)`)];
  }

  // A link as people name it: its name, and its id only when that says something more.
  function linkName(l) { return !l.name || l.name === l.link_id ? l.link_id : `${l.name} (${l.link_id})`; }

  // How an amount or a rate as typed is read, said as one types by the server's one parser
  // (POST /api/v1/readings), so that what is sent is what the person meant: "reads as
  // $6,000.00", or what is wrong ("'6000' needs its unit: write an amount like $1,234.56";
  // with ``quiet``, only a reading: a form that checks as one types shows its problems).
  // ``kind``: amount, paid, change, share, hidden, rate, or a function that says which.
  // Returns the element that says it, for the caller to place by the field.
  function echo(input, kind, quiet) {
    const out = el("span", { class: "reads", "aria-live": "polite" });
    let timer = null;
    let asked = 0;
    async function read() {
      const mine = ++asked;
      const text = input.value.trim();
      const k = typeof kind === "function" ? kind() : kind;
      if (!text || !k) { out.className = "reads"; out.textContent = ""; return; }
      try {
        const r = await call("POST", "/api/v1/readings", { kind: k, text });
        if (mine !== asked) return;
        out.className = "reads ok";
        out.textContent = `reads as ${r.reads_as}`;
      } catch (e) {
        if (mine !== asked) return;
        out.className = "reads bad";
        out.textContent = quiet ? "" : (e.problems.length ? e.problems[0].problem : e.message);
      }
    }
    const later = () => { clearTimeout(timer); timer = setTimeout(read, 250); };
    input.addEventListener("input", later);
    input.addEventListener("change", later);
    out.refresh = later;
    return out;
  }

  function message(text, ok) {
    const box = document.getElementById("message");
    box.textContent = text;
    box.className = ok ? "message ok" : "message bad";
    box.hidden = false;
  }

  return {
    call, text, download, start, cardFace, hitCards, loadFailed, cents, rate, time, el, echo, fold,
    hitRows, linkName, message, ApiError, token, user, roleName,
  };
})();
