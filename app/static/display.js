// The floor display: shows what the server frames, counts up to each new amount, and says
// so plainly when what it shows is not live. Amounts are integer cents throughout.
"use strict";

(() => {
  const STALE_AFTER_MS = 5000; // no message for this long (heartbeats come every 2 s): not live
  const SILENT_RECONNECT_MS = 10000; // a connection silent this long is dead: start again
  const COUNT_MS = 900; // a count-up to a new amount lasts this long
  const BACKOFF_FIRST_MS = 500;
  const BACKOFF_MAX_MS = 15000;

  const HANDS = {
    ROYAL_FLUSH: "Royal flush",
    STRAIGHT_FLUSH: "Straight flush",
    FOUR_OF_A_KIND: "Four of a kind",
    FULL_HOUSE: "Full house",
    FLUSH: "Flush",
    STRAIGHT: "Straight",
    THREE_OF_A_KIND: "Three of a kind",
    TWO_PAIR: "Two pair",
    ONE_PAIR: "One pair",
    FIVE_ACES: "Five aces",
    THREE_SUITED_SEVENS: "Three suited sevens",
    THREE_SEVENS: "Three sevens",
    TWO_SUITED_SEVENS: "Two suited sevens",
    TWO_SEVENS: "Two sevens",
    SEVEN: "Seven",
    MYSTERY: "Mystery",
  };
  const TABLE_STATES = {
    online: "",
    offline: "offline",
    hit_pending: "hit — awaiting technician",
    unpolled: "starting",
  };

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
      fit();
    }
  }

  function fit() {
    // The largest size that keeps the amount on one line of the screen.
    amountEl.style.fontSize = "";
    const room = window.innerWidth * 0.96;
    if (amountEl.scrollWidth > room) {
      const size = parseFloat(getComputedStyle(amountEl).fontSize);
      amountEl.style.fontSize = `${Math.floor((size * room) / amountEl.scrollWidth)}px`;
    }
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

  window.addEventListener("resize", fit);

  // ----------------------------------------------------------------------------- a state

  function tableName(id, name) {
    return name || id || "";
  }

  function levelTile(level) {
    // One level below the top one: its name, its amount, a mystery level's ceiling.
    const li = document.createElement("li");
    li.className = `level ${level.mode}`;
    li.dataset.level = level.key;
    const name = document.createElement("span");
    name.className = "level-name";
    name.textContent = level.mode === "won" ? `${level.name} won!` : level.name;
    const amount = document.createElement("span");
    amount.className = "level-amount";
    amount.dataset.cents = String(level.amount_cents);
    amount.textContent = formatCents(level.amount_cents);
    li.append(name, amount);
    if (level.must_hit_by_cents !== null) {
      const must = document.createElement("span");
      must.className = "level-must-hit";
      must.textContent = `must hit by ${formatCents(level.must_hit_by_cents)}`;
      li.append(must);
    }
    return li;
  }

  function payRow(pay) {
    const tr = document.createElement("tr");
    tr.dataset.hand = pay.hand;
    const hand = document.createElement("th");
    hand.textContent = HANDS[pay.hand] || pay.hand;
    const cents = document.createElement("td");
    cents.textContent = formatCents(pay.fixed_cents);
    tr.append(hand, cents);
    return tr;
  }

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
    body.dataset.kind = fixed ? "fixed" : pool ? "levels" : "classic";
    body.dataset.mode = mode;
    body.dataset.seq = String(msg.seq);
    $("name").textContent = msg.name;
    $("game").textContent = msg.game_label;
    document.title = fixed ? `${msg.name} — bonus pays` : `${msg.name} — progressive jackpot`;

    const where = tableName(d.winning_table, d.winning_table_name);
    const seats = d.seats.length === 1 ? `seat ${d.seats[0]}` : `seats ${d.seats.join(", ")}`;
    const hand = HANDS[d.hand] || "";
    if (fixed) {
      // A bonus paying fixed amounts: no meter, nothing that grows, only its pays.
      $("headline").textContent = "Bonus pays";
      amountEl.textContent = "";
      amountEl.dataset.cents = "";
      $("must-hit").textContent = "";
      $("detail").textContent =
        d.mode === "won" || d.mode === "reset"
          ? `${formatCents(d.won_cents)} paid at ${where} · ${[seats, hand].filter(Boolean).join(" · ")}`
          : "";
      $("pays").tBodies[0].replaceChildren(...(msg.pays || []).map(payRow));
      $("levels").replaceChildren();
    } else if (pool) {
      const won = levels.find((l) => l.mode !== "live");
      if (top.mode === "won") {
        $("headline").textContent = `${top.name} won!`;
        showAmount(top.amount_cents, false);
      } else if (top.mode === "reset") {
        $("headline").textContent = `${top.name} now`;
        showAmount(top.amount_cents, previous !== null && previous.levels[0].mode === "reset");
      } else {
        $("headline").textContent = top.name;
        showAmount(top.amount_cents, previous !== null && (previous.levels || [])[0]?.mode === "live");
      }
      $("must-hit").textContent =
        top.must_hit_by_cents !== null ? `must hit by ${formatCents(top.must_hit_by_cents)}` : "";
      $("detail").textContent = won
        ? `${won.name}: ${formatCents(won.won_cents)} won at ${where} · ${[seats, hand].filter(Boolean).join(" · ")}`
        : "";
      $("levels").replaceChildren(...levels.slice(1).map(levelTile));
      $("pays").tBodies[0].replaceChildren();
    } else if (d.mode === "won") {
      $("headline").textContent = "Jackpot won!";
      showAmount(d.won_cents, false);
      $("detail").textContent = [where, seats, hand].filter(Boolean).join(" · ");
    } else if (d.mode === "reset") {
      $("headline").textContent = "Jackpot now";
      showAmount(d.amount_cents, sameMode);
      $("detail").textContent = `${formatCents(d.won_cents)} won at ${where} · ${hand}`;
    } else {
      $("headline").textContent = "Progressive jackpot";
      showAmount(d.amount_cents, sameMode);
      $("detail").textContent = "";
    }
    if (!fixed && !pool) {
      const only = levels[0];
      $("must-hit").textContent =
        only && only.must_hit_by_cents !== null ? `must hit by ${formatCents(only.must_hit_by_cents)}` : "";
    }

    const list = $("tables");
    list.replaceChildren(
      ...msg.tables.map((t) => {
        const li = document.createElement("li");
        li.className = t.state;
        li.dataset.table = t.table_id;
        const note = TABLE_STATES[t.state];
        li.textContent = note ? `${tableName(t.table_id, t.name)}: ${note}` : tableName(t.table_id, t.name);
        return li;
      }),
    );
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
        refusal = "This display needs a valid display token";
        delay = BACKOFF_MAX_MS;
      }
      liveness();
      setTimeout(connect, delay);
    };
  }

  connect();
})();
