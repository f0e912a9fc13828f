// The admin's page: people (accounts, and the changes two admins make), the floor displays'
// device tokens, the software self-check, and the audit log. Each action's result is shown
// where it was taken.
"use strict";

const { el, call, time, roleName } = Api;
let links = [];
let started = false;
const results = { user: new Map(), request: new Map(), token: new Map() };

function $(id) { return document.getElementById(id); }

// A result in words beside what was done: ok (green) or refused (red).
function say(box, text, ok) {
  box.replaceChildren(...(Array.isArray(text) ? text : [text]));
  box.className = `result ${ok ? "ok" : "bad"}`;
  box.hidden = false;
}

function codeLine(label, code) {
  return el("div", { class: "code-line" }, `${label}: `, el("code", { class: "code" }, code));
}

// The one-time code an answer shows, once, to this admin.
function codeOf(answer) {
  const parts = [];
  if (answer.code_first_half && answer.code_second_half) {
    parts.push(codeLine("One-time code (shown this once)", `${answer.code_first_half} ${answer.code_second_half}`),
      el("div", { class: "muted" }, `Give it to ${answer.username}: they sign in with it and choose their own password.`));
  } else if (answer.code_first_half) {
    parts.push(codeLine("First half of the one-time code (shown this once)", answer.code_first_half),
      el("div", { class: "muted" }, `Give it to ${answer.username}; the admin who confirms gets the second half.`));
  } else if (answer.code_second_half) {
    parts.push(codeLine("Second half of the one-time code (shown this once)", answer.code_second_half),
      el("div", { class: "muted" }, `Give it to ${answer.username}; they put the first half before it.`));
  }
  return parts;
}

// ------------------------------------------------------------------------------ people

function roleChoices() {
  $("new-role").replaceChildren(...Words.ROLES.map(([role, what]) =>
    el("option", { value: role, title: what }, roleName(role))));
  $("new-role").value = "technician";
  passwordWanted();
}

// A role that checks others gets no password from an admin: its person chooses it.
function passwordWanted() {
  const role = $("new-role").value;
  const guarded = Words.GUARDED.has(role);
  $("new-password-label").hidden = guarded;
  const what = (Words.ROLES.find(([r]) => r === role) || [])[1] || "";
  $("new-role-note").textContent = guarded
    ? `${what}. Two admins make this account: you ask, another confirms; its person chooses the password with a one-time code.`
    : `${what}.`;
}

function clearNotes() {
  for (const id of ["new-username-note", "new-password-note"]) $(id).textContent = "";
  $("create-result").hidden = true;
}

// A refusal goes next to the field it names ("body.password" -> the password field).
function placeRefusal(err) {
  const problems = err.problems || [];
  let placed = false;
  for (const p of problems) {
    const field = p.where.split(".").pop();
    const note = field === "password" ? $("new-password-note")
      : field === "username" ? $("new-username-note") : null;
    if (note) { note.textContent = p.problem; placed = true; }
  }
  if (!placed) say($("create-result"), err.message, false);
}

async function createUser(event) {
  event.preventDefault();
  clearNotes();
  const role = $("new-role").value;
  const body = { username: $("new-username").value.trim(), role };
  if (!Words.GUARDED.has(role)) body.password = $("new-password").value;
  let data;
  try {
    data = await call("POST", "/api/v1/users", body);
  } catch (err) {
    placeRefusal(err);
    return;
  }
  $("new-password").value = "";
  $("new-username").value = "";
  if (data.status === "pending") {
    say($("create-result"), [
      el("div", {}, `Asked for a ${roleName(role)} account ${data.username}: a second admin confirms it under “Account changes”.`),
      ...codeOf(data)], true);
  } else {
    say($("create-result"), `Created ${data.username}, ${roleName(data.role)}: they sign in with the password you gave.`, true);
  }
  await Promise.all([loadUsers(), loadRequests()]);
}

async function userAction(u, what) {
  const path = `/api/v1/users/${encodeURIComponent(u.username)}/${what}`;
  try {
    const data = await call("POST", path);
    let text;
    if (what === "disable") text = ["Disabled: their sign-ins and tokens stop working."];
    else if (data.status === "pending") {
      text = [el("div", {}, `Asked: a second admin confirms it under “Account changes”.`), ...codeOf(data)];
    } else if (what === "enable") text = ["Enabled again."];
    else text = [el("div", {}, "Password reset; their tokens stop working."), ...codeOf(data)];
    results.user.set(u.username, { text, ok: true });
  } catch (err) {
    results.user.set(u.username, { text: [err.message], ok: false });
  }
  await Promise.all([loadUsers(), loadRequests()]);
}

async function loadUsers() {
  const people = await call("GET", "/api/v1/users");
  const me = sessionStorage.getItem("progressive.user");
  $("users").querySelector("tbody").replaceChildren(...people.map((u) => {
    const [state, cls] = Words.userState(u);
    const actions = el("td", { class: "actions" });
    if (u.disabled) {
      actions.append(el("button", { type: "button", class: "enable", onclick: () => userAction(u, "enable") }, "Enable"));
    } else if (u.username !== me) {
      actions.append(el("button", { type: "button", class: "disable", onclick: () => userAction(u, "disable") }, "Disable"));
    }
    if (u.username !== me && u.role !== "display") {
      actions.append(" ", el("button", { type: "button", class: "reset", onclick: () => userAction(u, "reset") }, "Reset password"));
    }
    const found = results.user.get(u.username);
    if (found) {
      const box = el("div", {});
      say(box, found.text, found.ok);
      actions.append(box);
    }
    return el("tr", { "data-user": u.username },
      el("td", {}, u.username),
      el("td", {}, roleName(u.role)),
      el("td", {}, el("span", { class: `state user-${cls}` }, state)),
      el("td", {}, `${time(u.created_at_us)} by ${u.created_by}`),
      actions);
  }));
}

// ------------------------------------------------------------------- account requests

function requestWords(r) {
  const kind = Words.KINDS[r.kind] || Words.words(r.kind);
  return r.role ? `${kind}: ${r.username} as ${roleName(r.role)}` : `${kind}: ${r.username}`;
}

async function decide(r, what, reason) {
  try {
    if (what === "reject") {
      if (!reason.trim()) throw new Error("Say why it is turned down.");
      await call("POST", `/api/v1/account-requests/${encodeURIComponent(r.request_id)}/reject`, { reason: reason.trim() });
      results.request.set(r.request_id, { text: ["Turned down: nothing changed."], ok: true });
    } else {
      const data = await call("POST", `/api/v1/account-requests/${encodeURIComponent(r.request_id)}/confirm`);
      results.request.set(r.request_id, { text: [el("div", {}, "Confirmed: the change is made."), ...codeOf(data)], ok: true });
    }
  } catch (err) {
    results.request.set(r.request_id, { text: [err.message], ok: false });
  }
  await Promise.all([loadRequests(), loadUsers()]);
}

async function loadRequests() {
  const all = await call("GET", "/api/v1/account-requests");
  const me = sessionStorage.getItem("progressive.user");
  // Waiting ones, and those decided here since the page opened (their result stays beside them).
  const rows = all.filter((r) => r.status === "pending" || results.request.has(r.request_id));
  const body = $("requests").querySelector("tbody");
  if (!rows.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 5, class: "muted" }, "Nothing is waiting for a second admin.")));
    return;
  }
  body.replaceChildren(...rows.map((r) => {
    const actions = el("td", { class: "actions" });
    if (r.status === "pending") {
      if (r.requested_by !== me && r.username !== me) {
        actions.append(el("button", { type: "button", class: "primary confirm", onclick: () => decide(r, "confirm") }, "Confirm"), " ");
      } else {
        actions.append(el("span", { class: "muted" }, "another admin confirms "));
      }
      const reason = el("input", { class: "reason", placeholder: "why not", "aria-label": "why it is turned down", size: "14" });
      actions.append(reason, " ", el("button", { type: "button", class: "reject", onclick: () => decide(r, "reject", reason.value) }, "Turn down"));
    }
    const found = results.request.get(r.request_id);
    if (found) {
      const box = el("div", {});
      say(box, found.text, found.ok);
      actions.append(box);
    }
    const state = Words.REQUEST_STATES[r.status] || r.status;
    return el("tr", { "data-request": r.request_id },
      el("td", {}, time(r.requested_at_us)),
      el("td", {}, requestWords(r)),
      el("td", {}, r.requested_by),
      el("td", {}, r.decided_by ? `${state} by ${r.decided_by}` : `${state}, until ${time(r.expires_at_us)}`),
      actions);
  }));
}

// ---------------------------------------------------------------------- device tokens

function displayUrl(linkId, token) {
  return `${location.origin}/display/${encodeURIComponent(linkId)}?token=${encodeURIComponent(token)}`;
}

async function copy(text, note) {
  try {
    await navigator.clipboard.writeText(text);
    note.textContent = "copied";
  } catch {
    note.textContent = "select it and copy by hand";
  }
}

// The new token, this once: with a copy button and the display address that carries it.
function showNewToken(device) {
  const box = $("token-result");
  const copied = el("span", { class: "muted copied" });
  const urlCopied = el("span", { class: "muted copied" });
  const url = el("code", { class: "code", id: "new-token-url" });
  const pick = el("select", { id: "new-token-link", "aria-label": "which link the display shows" },
    ...links.map((l) => el("option", { value: l.link_id }, l.name)));
  const setUrl = () => { url.textContent = displayUrl(pick.value || "", device.token); };
  pick.addEventListener("change", setUrl);
  setUrl();
  say(box, [
    el("div", {}, `Token for “${device.name}”. It is shown this once only: copy it now.`),
    el("div", { class: "code-line" }, el("code", { class: "code", id: "new-token" }, device.token), " ",
      el("button", { type: "button", id: "copy-token", onclick: () => copy(device.token, copied) }, "Copy token"), " ", copied),
    el("div", { class: "code-line" }, "Display address for ", pick, ": ", url, " ",
      el("button", { type: "button", id: "copy-url", onclick: () => copy(url.textContent, urlCopied) }, "Copy address"), " ", urlCopied),
    el("div", {}, el("button", { type: "button", id: "hide-token", onclick: () => { box.hidden = true; box.replaceChildren(); } }, "I have copied it: hide it")),
  ], true);
}

async function createToken(event) {
  event.preventDefault();
  $("token-name-note").textContent = "";
  $("token-result").hidden = true;
  try {
    const device = await call("POST", "/api/v1/device-tokens", { name: $("token-name").value.trim() });
    $("token-name").value = "";
    showNewToken(device);
  } catch (err) {
    $("token-name-note").textContent = err.problems.length ? err.problems.map((p) => p.problem).join("; ") : err.message;
  }
  await loadTokens();
}

function askRevoke(device, cell) {
  cell.replaceChildren(
    el("span", {}, `Revoke “${device.name}”? Its display stops showing amounts at once. `),
    el("button", { type: "button", class: "primary confirm-revoke", onclick: () => revoke(device) }, "Yes, revoke"), " ",
    el("button", { type: "button", class: "keep", onclick: () => loadTokens() }, "Keep it"));
}

async function revoke(device) {
  try {
    await call("POST", `/api/v1/device-tokens/${encodeURIComponent(device.token_id)}/revoke`);
    results.token.set(device.token_id, { text: ["Revoked: the display's token no longer works."], ok: true });
  } catch (err) {
    results.token.set(device.token_id, { text: [err.message], ok: false });
  }
  await loadTokens();
}

async function loadTokens() {
  const devices = await call("GET", "/api/v1/device-tokens");
  const body = $("tokens").querySelector("tbody");
  if (!devices.length) {
    body.replaceChildren(el("tr", {}, el("td", { colspan: 4, class: "muted" }, "No display has a token yet.")));
    return;
  }
  body.replaceChildren(...devices.map((d) => {
    const actions = el("td", { class: "actions" });
    if (d.revoked_at_us === null) {
      actions.append(el("button", { type: "button", class: "revoke", onclick: () => askRevoke(d, actions) }, "Revoke"));
    }
    const found = results.token.get(d.token_id);
    if (found) {
      const box = el("div", {});
      say(box, found.text, found.ok);
      actions.append(box);
    }
    return el("tr", { "data-token": d.token_id },
      el("td", {}, d.name),
      el("td", {}, `${time(d.created_at_us)} by ${d.created_by}`),
      el("td", {}, d.revoked_at_us === null
        ? el("span", { class: "state user-active" }, "in use")
        : el("span", { class: "state user-disabled" }, `revoked ${time(d.revoked_at_us)}`)),
      actions);
  }));
}

// ------------------------------------------------------------------------------ start

async function loadAll() {
  try {
    links = await call("GET", "/api/v1/links");
    await Promise.all([loadUsers(), loadRequests(), loadTokens(), Software.load(), AuditLog.load()]);
    $("message").hidden = true;
  } catch (err) {
    if (err.status !== 401) Api.message(err.message, false);
  }
}

Api.start(async () => {
  if (!started) {
    started = true;
    roleChoices();
    $("new-role").addEventListener("change", passwordWanted);
    $("create-user").addEventListener("submit", (e) => createUser(e).catch((err) => say($("create-result"), err.message, false)));
    $("create-token").addEventListener("submit", createToken);
    Software.start();
    AuditLog.start();
  }
  await loadAll();
});
