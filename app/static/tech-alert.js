// The technician page's alarm: how long a hit holding a table has waited ("waiting 4 min"),
// its escalation once overdue, and a beep the browser plays when one appears (louder and
// repeated while any is overdue). Browsers play no sound before the person has touched the
// page, so the sound is switched on by a button, and the choice is remembered.
"use strict";

const TechAlert = (() => {
  const KEY = "progressive.tech.sound";
  const REPEAT_MS = 30000; // an overdue hit beeps again this often
  let audio = null;
  let known = null; // ids of the holding hits already announced; null: nothing seen yet
  let lastRepeat = 0;

  function enabled() { return localStorage.getItem(KEY) === "on"; }

  function context() {
    const Ctor = window.AudioContext || window.webkitAudioContext;
    if (!Ctor) return null;
    if (!audio) audio = new Ctor();
    if (audio.state === "suspended") audio.resume().catch(() => {});
    return audio;
  }

  // A short tone, `times` over; louder and higher when something is overdue.
  function beep(loud, times) {
    if (!enabled()) return;
    const ctx = context();
    if (!ctx) return;
    for (let i = 0; i < times; i += 1) {
      const start = ctx.currentTime + i * 0.35;
      const osc = ctx.createOscillator();
      const gain = ctx.createGain();
      osc.type = loud ? "square" : "sine";
      osc.frequency.value = loud ? 1320 : 880;
      gain.gain.setValueAtTime(loud ? 0.5 : 0.2, start);
      gain.gain.exponentialRampToValueAtTime(0.001, start + 0.25);
      osc.connect(gain).connect(ctx.destination);
      osc.start(start);
      osc.stop(start + 0.3);
    }
  }

  function renderToggle() {
    const button = document.getElementById("sound");
    const on = enabled();
    button.textContent = on ? "Sound: on" : "Sound: off";
    button.setAttribute("aria-pressed", on ? "true" : "false");
    button.title = on
      ? "A beep when a jackpot holds a table, louder and repeated when overdue. Click to mute."
      : "Click to hear a beep when a jackpot holds a table.";
  }

  function toggle() {
    localStorage.setItem(KEY, enabled() ? "off" : "on");
    renderToggle();
    beep(false, 1); // the click is the gesture that lets the page play sound
  }

  // "waiting 35 s", "waiting 4 min", "waiting 1 h 12 min".
  function waitingText(seconds) {
    const s = Math.max(0, Math.floor(seconds));
    if (s < 60) return `waiting ${s} s`;
    const minutes = Math.floor(s / 60);
    if (minutes < 60) return `waiting ${minutes} min`;
    return `waiting ${Math.floor(minutes / 60)} h ${minutes % 60} min`;
  }

  const waited = (atUs) => (Date.now() - atUs / 1000) / 1000;

  // Every second: the waiting times and the overdue marks of the cards on the page.
  function tick(escalateS) {
    let overdue = 0;
    for (const box of document.querySelectorAll("[data-at-us]")) {
      const seconds = waited(Number(box.getAttribute("data-at-us")));
      const late = box.classList.contains("holding") && seconds >= escalateS;
      box.querySelector(".waiting").textContent = waitingText(seconds);
      box.classList.toggle("overdue", late);
      const mark = box.querySelector(".overdue-mark");
      if (mark) mark.hidden = !late;
      if (late) overdue += 1;
    }
    document.body.classList.toggle("has-overdue", overdue > 0);
    if (overdue && Date.now() - lastRepeat >= REPEAT_MS) {
      lastRepeat = Date.now();
      beep(true, 3);
    }
  }

  // A new hit holding a table beeps (the ones there when the page opened too, once).
  function notice(holding) {
    const ids = new Set(holding.map((h) => h.hit_id));
    const fresh = [...ids].filter((id) => known === null || !known.has(id));
    known = ids;
    if (fresh.length) beep(false, 2);
  }

  function start() {
    const button = document.getElementById("sound");
    button.addEventListener("click", toggle);
    renderToggle();
  }

  return { start, tick, notice, waitingText, enabled };
})();
