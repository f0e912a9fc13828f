// The floor display: shows what the server frames, counts up to each new amount, and says
// so plainly when what it shows is not live. Amounts are integer cents throughout.
"use strict";

(() => {
  const STALE_AFTER_MS = 5000; // no message for this long (heartbeats come every 2 s): not live
  const SILENT_RECONNECT_MS = 10000; // a connection silent this long is dead: start again
  const COUNT_MS = 900; // a count-up to a new amount lasts this long
  const BACKOFF_FIRST_MS = 500;
  const BACKOFF_MAX_MS = 15000;

  const COLOUR = /^#[0-9a-fA-F]{6}$/;
  // Only what a patron needs: the amounts, the pays, a win. Each table's own state (offline,
  // held for a technician, out of play) is in the feed for other pages and never shown here.

  const parts = location.pathname.split("/").filter(Boolean);
  const linkId = decodeURIComponent(parts[parts.length - 1] || "");
  const token = new URLSearchParams(location.search).get("token");
  const $ = (id) => document.getElementById(id);
  const body = document.body;
  const amountEl = $("amount");

  let socket = null;
  let connected = false;
  let backoff = BACKOFF_FIRST_MS;
  let lastMessageAt = 0;
  let lastSeq = -1;
  let state = null;
  let refusal = null; // the server said no (unknown link, token needed): why

  // ----------------------------------------------------------------------------- the amount

  function formatCents(cents) {
    const sign = cents < 0 ? "-" : "";
    const abs = Math.abs(cents);
    const dollars = Math.floor(abs / 100);
    const rest = abs % 100;
    return `${sign}$${dollars.toLocaleString("en-US")}.${String(rest).padStart(2, "0")}`;
  }

  let shown = null; // integer cents on screen
  let from = 0;
  let target = 0;
  let startedAt = 0;
  let animating = false;
  let shownLength = 0;

  function render() {
    const text = formatCents(shown);
    amountEl.textContent = text;
    amountEl.dataset.cents = String(shown);
    if (text.length !== shownLength) {
      shownLength = text.length;
      fit(amountEl);
    }
  }

  function fit(el) {
    // The largest size (up to the style's own) that keeps the element inside its box: an
    // amount on one line, a paytable on the screen, whatever the font the screen has.
    el.style.fontSize = "";
    for (let tries = 0; tries < 3; tries += 1) {
      const over = Math.max(
        el.scrollWidth / Math.max(1, el.clientWidth),
        el.scrollHeight / Math.max(1, el.clientHeight),
      );
      if (!(over > 1.001)) return;
      const size = parseFloat(getComputedStyle(el).fontSize);
      el.style.fontSize = `${Math.floor(size / over)}px`;
    }
  }

  function setText(el, text) {
    if (el.textContent === text) return;
    el.textContent = text;
    if (el.classList.contains("fit")) fit(el);
  }

  function fitAll() {
    document.querySelectorAll(".fit").forEach(fit);
    fit($("pays"));
  }

  function showAmount(cents, countUp) {
    amountEl.dataset.target = String(cents);
    if (shown === null || !countUp || cents <= shown) {
      animating = false;
      shown = cents;
      render();
      return;
    }
    from = shown;
    target = cents;
    startedAt = performance.now();
    if (!animating) {
      animating = true;
      requestAnimationFrame(step);
    }
  }

  function step(now) {
    if (!animating) return;
    const elapsed = Math.min(COUNT_MS, Math.max(0, Math.floor(now - startedAt)));
    shown = from + Math.floor(((target - from) * elapsed) / COUNT_MS);
    render();
    if (elapsed < COUNT_MS) {
      requestAnimationFrame(step);
    } else {
      animating = false;
    }
  }

  window.addEventListener("resize", fitAll);

  // ----------------------------------------------------------------------------- words

  function handWords(name) {
    // A hand the server named without a label: words, never the code.
    const words = String(name || "").toLowerCase().replace(/_/g, " ");
    return words.charAt(0).toUpperCase() + words.slice(1);
  }

  function handOf(d) {
    return d.hand_label || handWords(d.hand);
  }

  function percentText(bp) {
    // Basis points as a percentage, by string work: 10000 -> "100%", 1050 -> "10.5%".
    const rest = String(bp % 100).padStart(2, "0").replace(/0+$/, "");
    return rest === "" ? `${Math.floor(bp / 100)}%` : `${Math.floor(bp / 100)}.${rest}%`;
  }

  function payText(line) {
    if (line.percent_bp !== null && line.percent_bp !== undefined) {
      return `${percentText(line.percent_bp)} of the ${line.level_name || "jackpot"}`;
    }
    return formatCents(line.fixed_cents);
  }

  function tableName(id, name) {
    return name || id || "";
  }

  // ----------------------------------------------------------------------------- the property

  function applyProperty(msg) {
    const p = msg.property || {};
    const root = document.documentElement.style;
    if (COLOUR.test(p.colour || "")) root.setProperty("--felt", p.colour);
    if (COLOUR.test(p.accent || "")) root.setProperty("--accent", p.accent);
    setText($("property"), p.name || "");
    setText($("name"), msg.name);
    // The games once: not again under a name that already says them.
    const game = msg.game_label || "";
    setText($("game"), msg.name.toLowerCase().includes(game.toLowerCase()) ? "" : game);
    document.title = [p.name, msg.name].filter(Boolean).join(" — ");
    applyLaw(msg);
  }

  // The law the display runs under, as the feed says it now (the page came with it too):
  // demonstration mode across the foot of the screen, the jurisdiction under it.
  function applyLaw(msg) {
    const said = (msg.demonstration && msg.demonstration.statement) || "";
    const banner = $("demonstration");
    if (banner) {
      setText(banner, said);
      banner.hidden = !said;
    }
    if (msg.jurisdiction && $("jurisdiction")) setText($("jurisdiction"), `Jurisdiction: ${msg.jurisdiction}`);
    body.dataset.demonstration = said ? "yes" : "no";
  }

  // ----------------------------------------------------------------------------- the pays

  let paysKey = null;

  function payRow(line, index) {
    const tr = document.createElement("tr");
    tr.dataset.hand = line.hand;
    tr.style.setProperty("--i", String(index));
    const hand = document.createElement("th");
    hand.scope = "row";
    hand.textContent = line.hand_label || handWords(line.hand);
    const pay = document.createElement("td");
    const amount = document.createElement("span");
    amount.className = "pay-amount";
    amount.textContent = payText(line);
    pay.append(amount);
    if (line.envy_cents) {
      const envy = document.createElement("span");
      envy.className = "envy";
      envy.textContent = `+${formatCents(line.envy_cents)} to every other player`;
      pay.append(envy);
    }
    tr.append(hand, pay);
    return tr;
  }

  function paytablesOf(msg) {
    if (msg.paytables) return msg.paytables;
    // A server that frames no paytables still sends a fixed-pay link's pays.
    const lines = (msg.pays || []).map((p) => ({ hand: p.hand, fixed_cents: p.fixed_cents }));
    return lines.length ? [{ game: msg.game, game_label: msg.game_label, lines }] : [];
  }

  function renderPays(tables) {
    // Drawn again only when they change: redrawing would restart the rows' highlight.
    const key = JSON.stringify(tables);
    if (key === paysKey) return false;
    paysKey = key;
    const mixed = tables.length > 1;
    let rows = 0; // in lines of text, for the size that fits them all (display.css --rows)
    const built = tables.map((t) => {
      const table = document.createElement("table");
      table.className = "paytable";
      table.dataset.game = t.game;
      table.style.setProperty("--n", String(t.lines.length));
      if (mixed) {
        table.createCaption().textContent = t.game_label;
        rows += 1.3;
      }
      const tbody = table.createTBody();
      t.lines.forEach((line, i) => {
        tbody.append(payRow(line, i));
        rows += line.envy_cents ? 1.7 : 1;
      });
      return table;
    });
    const pays = $("pays");
    pays.replaceChildren(...built);
    pays.style.setProperty("--rows", String(Math.max(rows, 6)));
    return true;
  }

  // ----------------------------------------------------------------------------- the levels

  function levelTile(level) {
    const li = document.createElement("li");
    li.dataset.level = level.key;
    const name = document.createElement("span");
    name.className = "level-name";
    const amount = document.createElement("span");
    amount.className = "level-amount fit";
    li.append(name, amount);
    return updateTile(li, level);
  }

  function updateTile(li, level) {
    // One level below the top one: its name, its amount, a mystery level's ceiling.
    li.className = `level ${level.mode}`;
    li.querySelector(".level-name").textContent =
      level.mode === "won" ? `${level.name} won!` : level.name;
    const amount = li.querySelector(".level-amount");
    const text = formatCents(level.amount_cents);
    amount.dataset.cents = String(level.amount_cents);
    if (amount.textContent !== text) {
      const longer = amount.textContent.length !== text.length;
      amount.textContent = text;
      if (longer && amount.isConnected) fit(amount);
    }
    let must = li.querySelector(".level-must-hit");
    if (level.must_hit_by_cents !== null) {
      if (!must) {
        must = document.createElement("span");
        must.className = "level-must-hit";
        li.append(must);
      }
      must.textContent = `must hit by ${formatCents(level.must_hit_by_cents)}`;
    } else if (must) {
      must.remove();
    }
    return li;
  }

  function renderLevels(levels) {
    const list = $("levels");
    const keys = levels.map((l) => l.key).join(" ");
    if (list.dataset.keys === keys) {
      levels.forEach((l, i) => updateTile(list.children[i], l));
      return false;
    }
    list.dataset.keys = keys;
    list.replaceChildren(...levels.map(levelTile));
    // Level 2 across the whole width, the rest side by side below it, at most four a row.
    list.style.setProperty("--rest", String(Math.max(1, Math.min(levels.length - 1, 4))));
    return true;
  }

  // ----------------------------------------------------------------------------- a state

  function apply(msg) {
    const previous = state;
    state = msg;
    const d = msg.display;
    const levels = msg.levels || [];
    const fixed = msg.fixed_pay === true;
    const pool = !fixed && levels.length > 1;
    // On a link of levels the big amount is level 1's, in its own hit phase; every other
    // level has its tile below.
    const top = pool ? levels[0] : null;
    const mode = top ? top.mode : d.mode;
    const sameMode = previous !== null && previous.display.mode === d.mode;
    const kind = fixed ? "fixed" : pool ? "levels" : "classic";
    const newKind = body.dataset.kind !== kind;
    body.dataset.kind = kind;
    body.dataset.mode = mode;
    body.dataset.seq = String(msg.seq);
    applyProperty(msg);
    let moved = renderPays(paytablesOf(msg));

    // 68 IAC 10-6-5(g)-(i): the won amount at once, then the reset amount the link plays on
    // from, the two in turn; the server frames each mode (controller.core.reducer.display),
    // this page shows it as framed and counts up only within a live or reset run.
    const where = tableName(d.winning_table, d.winning_table_name);
    const seats = d.seats.length === 1 ? `seat ${d.seats[0]}` : `seats ${d.seats.join(", ")}`;
    const hand = d.hand ? handOf(d) : "";
    const how = [seats, hand].filter(Boolean).join(" · ");
    const mustHit = (level) =>
      level && level.must_hit_by_cents !== null ? `must hit by ${formatCents(level.must_hit_by_cents)}` : "";
    if (fixed) {
      // A bonus paying fixed amounts: no meter, nothing that grows, only its pays.
      setText($("headline"), "Bonus pays");
      amountEl.textContent = "";
      amountEl.dataset.cents = "";
      setText($("must-hit"), "");
      const paid = d.mode === "won" || d.mode === "reset";
      setText($("detail"), paid ? `${formatCents(d.won_cents)} paid at ${where} · ${how}` : "");
      moved = renderLevels([]) || moved;
    } else if (pool) {
      const won = levels.find((l) => l.mode !== "live");
      if (top.mode === "won") {
        setText($("headline"), `${top.name} won!`);
        showAmount(top.amount_cents, false);
      } else if (top.mode === "reset") {
        setText($("headline"), `${top.name} now`);
        showAmount(top.amount_cents, previous !== null && previous.levels[0].mode === "reset");
      } else {
        setText($("headline"), top.name);
        showAmount(top.amount_cents, previous !== null && (previous.levels || [])[0]?.mode === "live");
      }
      setText($("must-hit"), mustHit(top));
      setText($("detail"), won ? `${won.name}: ${formatCents(won.won_cents)} won at ${where} · ${how}` : "");
      moved = renderLevels(levels.slice(1)) || moved;
    } else if (d.mode === "won") {
      setText($("headline"), "Jackpot won!");
      showAmount(d.won_cents, false);
      setText($("detail"), [where, how].filter(Boolean).join(" · "));
    } else if (d.mode === "reset") {
      setText($("headline"), "Jackpot now");
      showAmount(d.amount_cents, sameMode);
      setText($("detail"), `${formatCents(d.won_cents)} won at ${[where, how].filter(Boolean).join(" · ")}`);
    } else {
      setText($("headline"), "Progressive jackpot");
      showAmount(d.amount_cents, sameMode);
      setText($("detail"), "");
    }
    if (!fixed && !pool) {
      setText($("must-hit"), mustHit(levels[0]));
      moved = renderLevels([]) || moved;
    }
    // What changes the room the amounts have: everything is sized again.
    if (moved || newKind) fitAll();
    liveness();
  }

  function handle(msg) {
    if (!msg || typeof msg.seq !== "number" || !msg.display) return;
    lastMessageAt = Date.now();
    backoff = BACKOFF_FIRST_MS;
    refusal = null;
    // A snapshot is a new baseline (a reconnect, or a restarted server counting again);
    // otherwise never go back to an older state.
    if (msg.type !== "snapshot" && msg.seq < lastSeq) return;
    lastSeq = msg.seq;
    apply(msg);
  }

  // ----------------------------------------------------------------------------- live or not

  function liveness() {
    const silentFor = Date.now() - lastMessageAt;
    // A bonus paying fixed amounts is no jackpot: its display never says so.
    const controller = state !== null && state.fixed_pay ? "the controller" : "the jackpot controller";
    let reason = null;
    if (refusal) {
      reason = refusal;
    } else if (state === null) {
      reason = connected ? `Waiting for ${controller}…` : `Connecting to ${controller}…`;
    } else if (!connected) {
      reason = "NOT LIVE — connection lost, reconnecting";
    } else if (silentFor > STALE_AFTER_MS) {
      reason = `NOT LIVE — no word from ${controller}`;
    } else if (!state.fresh) {
      reason = "NOT LIVE — the tables are not reporting";
    }
    let live = reason === null ? "live" : state === null && !refusal ? "connecting" : "stale";
    if (reason === null && state !== null && state.degraded) {
      // Play goes on but is not being recorded: the amount is the last one recorded.
      reason = "DELAYED — showing the last recorded amount; it catches up shortly";
      live = "degraded";
    }
    body.dataset.live = live;
    $("banner").textContent = reason || "";
    if (connected && socket && state !== null && silentFor > SILENT_RECONNECT_MS) {
      socket.close(); // a half-open connection: start again
    }
  }

  setInterval(liveness, 500);

  // ----------------------------------------------------------------------------- the feed

  function connect() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const query = token ? `?token=${encodeURIComponent(token)}` : "";
    const ws = new WebSocket(`${scheme}//${location.host}/ws/links/${encodeURIComponent(linkId)}${query}`);
    socket = ws;
    ws.onopen = () => {
      connected = true;
      lastMessageAt = Date.now();
      liveness();
    };
    ws.onmessage = (event) => {
      let msg;
      try {
        msg = JSON.parse(event.data);
      } catch {
        return;
      }
      handle(msg);
    };
    ws.onclose = (event) => {
      if (socket !== ws) return;
      socket = null;
      connected = false;
      let delay = backoff * (0.5 + Math.random() / 2);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
      if (event.code === 4404) {
        refusal = "This jackpot does not exist on the controller";
        delay = BACKOFF_MAX_MS;
      } else if (event.code === 4401) {
        // Signed out (the token revoked, expired, its person disabled or given another
        // role): the token in this page's address will not be let in again, so say why and
        // stop; a new token means opening the page again.
        const why = event.reason ? event.reason.charAt(0).toUpperCase() + event.reason.slice(1) : "";
        refusal = why
          ? `${why} — open this display again with a valid display token`
          : "This display needs a valid display token";
        liveness();
        return;
      }
      liveness();
      setTimeout(connect, delay);
    };
  }

  connect();
})();
