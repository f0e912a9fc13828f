// The technician page's hit cards, in words: a jackpot holding a table as a loud card with
// its steps (verify, second signature, hand pay, reset) and the time it has waited; a fixed
// pay as a quiet line; the fixed pays nobody waits for as plain rows of a log.
"use strict";

const TechHits = (() => {
  const { el, hitCards, cents } = Api;

  const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);

  // A readable local time: the time of day for today, the date too before.
  function when(us) {
    const d = new Date(Math.floor(us / 1000));
    const today = new Date().toDateString() === d.toDateString();
    return today
      ? d.toLocaleTimeString([], { hour: "numeric", minute: "2-digit", second: "2-digit" })
      : d.toLocaleString([], { dateStyle: "medium", timeStyle: "short" });
  }

  // What was won, in words.
  function what(h) {
    if (h.kind === "mystery") return "Mystery jackpot";
    if (h.kind === "envy") return `Envy bonus for a ${h.hand_label}`;
    return capital(h.hand_label);
  }

  function level(h) {
    if (!h.level) return null;
    return h.level_name ? `${h.level_name} level` : `level ${h.level.replace(/^L/, "")}`;
  }

  const hitPath = (id, action) => `/api/v1/hits/${encodeURIComponent(id)}/${action}`;

  function cardsOf(h) {
    if (!h.cards && !h.problem) {
      return el("span", { class: "muted" }, h.kind === "hand" ? "the table reported no cards" : "");
    }
    return el("span", { class: "cards" }, ...hitCards(h, ""));
  }

  function statusLine(h) {
    const parts = [];
    if (h.status === "refused") parts.push(`refused: ${h.refusal}`);
    if (h.entered_by) parts.push(`entered by ${h.entered_by}`);
    if (h.verified_by) parts.push(`verified by ${h.verified_by} at ${when(h.verified_at_us)}`);
    if (h.signed_off_by) parts.push(`signed off by ${h.signed_off_by} at ${when(h.signed_off_at_us)}`);
    if (h.hand_paid_by) parts.push(`hand pay ${cents(h.hand_paid_cents)} by ${h.hand_paid_by}`);
    if (h.tax_form_reference) parts.push(`tax form ${h.tax_form_reference}`);
    return parts.length ? el("div", { class: "muted hit-status" }, parts.join(" · ")) : "";
  }

  // The steps a jackpot goes through before its table plays again.
  function steps(h) {
    const step = (done, text) => el("li", { class: done ? "done" : "todo" }, done ? `✓ ${text}` : text);
    const list = [step(Boolean(h.verified_by), h.verified_by ? `Verified by ${h.verified_by}` : "Verify the hand")];
    if (h.needs_second_signature) {
      list.push(step(Boolean(h.signed_off_by), h.signed_off_by
        ? `Signed off by ${h.signed_off_by}`
        : "Second signature (someone other than the verifier)"));
    }
    list.push(step(h.hand_paid_cents !== null, h.hand_paid_cents !== null ? "Hand pay recorded" : "Record the hand pay"));
    if (h.needs_tax_form) {
      list.push(step(Boolean(h.tax_form_reference), h.tax_form_reference
        ? `Tax form ${h.tax_form_reference}` : "Tax form (at the cage)"));
    }
    list.push(step(false, `Reset table ${h.table_id}`));
    return el("ol", { class: "steps" }, ...list);
  }

  function actionsOf(h, ctx) {
    const box = el("div", { class: "actions" });
    const { act } = ctx;
    if (h.status === "awarded" && !h.verified_by) {
      if (!h.cards && !h.problem && h.kind === "hand") {
        box.append(el("input", {
          class: "cards-input", size: "28", placeholder: "the cards, e.g. As Ks Qs Js Ts (joker: JK)",
          "aria-label": "cards seen",
        }));
      }
      box.append(el("button", { type: "button", class: "primary verify", onclick: () => act.verify(h) },
        h.cards || h.kind !== "hand" ? "Confirm cards and verify" : "Check cards and verify"));
    }
    if (h.needs_second_signature && h.verified_by && !h.signed_off_by) {
      box.append(el("button", { type: "button", class: "primary sign-off", onclick: () => act.signOff(h) },
        "Sign off as second person"));
    }
    if (h.status === "awarded" && h.verified_by && h.hand_paid_cents === null) {
      box.append(
        el("label", {}, "Hand pay $ ",
          el("input", { class: "pay-input", size: "12", value: cents(h.award_cents).replace("$", ""), "aria-label": "amount paid" })),
        el("button", { type: "button", class: "pay", onclick: () => act.handPay(h) }, "Record hand pay"));
    }
    const ready = h.status === "refused"
      || (h.verified_by && (!h.needs_second_signature || h.signed_off_by));
    if (h.holds_table && ready) {
      box.append(el("button", { type: "button", class: "reset-here", onclick: () => act.reset(h.table_id, `hit:${h.hit_id}`) },
        `Reset table ${h.table_id}`));
    }
    if (h.status === "awarded" && h.paid_from === "meter") {
      box.append(el("button", { type: "button", class: "slip link", onclick: () => act.slip(h) }, "Jackpot slip"));
    }
    return box;
  }

  // A hit that holds a table: the jackpot, loud.
  function holdingCard(h, ctx) {
    const refused = h.status === "refused";
    const sub = [`Table ${h.table_id}, seat ${h.seat}`, `round ${h.round}`, level(h),
      refused ? "refused claim" : "paid from the meter", `hit at ${when(h.at_us)}`].filter(Boolean);
    return el("article", {
      class: `hit holding ${refused ? "refused" : "jackpot"}`, id: `hit-${h.hit_id}`,
      "data-hit": h.hit_id, "data-table": h.table_id, "data-at-us": String(h.at_us),
    },
    el("div", { class: "hit-head" },
      el("span", { class: "badge" }, refused ? `Refused claim holds table ${h.table_id}` : `Jackpot holds table ${h.table_id}`),
      el("span", { class: "overdue-mark", hidden: "" }, "Overdue"),
      el("span", { class: "waiting" }, "")),
    el("div", { class: "hit-title" },
      el("span", { class: "hand" }, what(h)),
      refused ? "" : el("span", { class: "amount" }, cents(h.award_cents))),
    el("div", { class: "hit-sub" }, sub.join(" · ")),
    el("div", {}, cardsOf(h)),
    refused ? "" : steps(h),
    statusLine(h),
    actionsOf(h, ctx),
    ctx.result(`hit:${h.hit_id}`));
  }

  // Other work: a fixed pay waiting for its hand pay, one quiet line.
  function otherCard(h, ctx) {
    return el("article", {
      class: "hit fixed", id: `hit-${h.hit_id}`, "data-hit": h.hit_id, "data-table": h.table_id,
    },
    el("div", { class: "hit-line" },
      el("strong", {}, what(h)), " ",
      el("span", { class: "amount-small" }, cents(h.award_cents)), " ",
      el("span", { class: "muted" }, `Table ${h.table_id}, seat ${h.seat} · fixed pay · ${when(h.at_us)}`),
      " ", cardsOf(h)),
    statusLine(h),
    actionsOf(h, ctx),
    ctx.result(`hit:${h.hit_id}`));
  }

  // The log of fixed pays that waited for no one: plain rows.
  function quietRows(hits) {
    return hits.map((h) => el("tr", { "data-hit": h.hit_id },
      el("td", {}, when(h.at_us)),
      el("td", {}, `Table ${h.table_id}, seat ${h.seat}`),
      el("td", {}, what(h)),
      el("td", { class: "num" }, cents(h.award_cents))));
  }

  return { holdingCard, otherCard, quietRows, hitPath, when, what };
})();
