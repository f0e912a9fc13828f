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

  function apply(msg) {
    const previous = state;
    state = msg;
    const d = msg.display;
    const sameMode = previous !== null && previous.display.mode === d.mode;
    body.dataset.mode = d.mode;
    body.dataset.seq = String(msg.seq);
    $("name").textContent = msg.name;
    $("game").textContent = msg.game_label;
    document.title = `${msg.name} — progressive jackpot`;

    const where = tableName(d.winning_table, d.winning_table_name);
    const seats = d.seats.length === 1 ? `seat ${d.seats[0]}` : `seats ${d.seats.join(", ")}`;
    const hand = HANDS[d.hand] || "";
    if (d.mode === "won") {
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
    let reason = null;
    if (refusal) {
      reason = refusal;
    } else if (state === null) {
      reason = connected ? "Waiting for the jackpot controller…" : "Connecting to the jackpot controller…";
    } else if (!connected) {
      reason = "NOT LIVE — connection lost, reconnecting";
    } else if (silentFor > STALE_AFTER_MS) {
      reason = "NOT LIVE — no word from the jackpot controller";
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
