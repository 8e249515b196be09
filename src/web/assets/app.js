// termpilot's page: the session list (pushed over /ws/sessions) and one session live over
// /ws/session/{id} in xterm.js. Read-only until "Take control"; see src/web/live.rs for the
// messages.
"use strict";

const NAMES = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"];
const palette = (fg, bg, cursor, ansi) => {
  const theme = { foreground: fg, background: bg, cursor, cursorAccent: bg, selectionBackground: "#3b82f655" };
  ansi.forEach((c, i) => { theme[(i < 8 ? "" : "bright") + (i < 8 ? NAMES[i] : NAMES[i - 8][0].toUpperCase() + NAMES[i - 8].slice(1))] = c; });
  return theme;
};
// The screenshot themes (src/render/theme.rs), so the page and the PNGs look alike.
const SOLARIZED = ["#073642", "#dc322f", "#859900", "#b58900", "#268bd2", "#d33682", "#2aa198", "#eee8d5",
  "#002b36", "#cb4b16", "#586e75", "#657b83", "#839496", "#6c71c4", "#93a1a1", "#fdf6e3"];
const THEMES = {
  dark: { light: false, colors: palette("#cccccc", "#1e1e1e", "#aeafad", ["#000000", "#cd3131", "#0dbc79", "#e5e510",
    "#2472c8", "#bc3fbc", "#11a8cd", "#e5e5e5", "#666666", "#f14c4c", "#23d18b", "#f5f543", "#3b8eea", "#d670d6", "#29b8db", "#ffffff"]) },
  light: { light: true, colors: palette("#333333", "#ffffff", "#000000", ["#000000", "#cd3131", "#00bc00", "#949800",
    "#0451a5", "#bc05bc", "#0598bc", "#555555", "#666666", "#cd3131", "#14ce14", "#b5ba00", "#0451a5", "#bc05bc", "#0598bc", "#a5a5a5"]) },
  "solarized-dark": { light: false, colors: palette("#839496", "#002b36", "#93a1a1", SOLARIZED) },
  "solarized-light": { light: true, colors: palette("#657b83", "#fdf6e3", "#586e75", SOLARIZED) },
};

const $ = (id) => document.getElementById(id);
const wsUrl = (path) => `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;

const state = { sessions: new Map(), ended: [], open: null, listSocket: null, view: null };

// ---- layout: the list beside the terminal, or over it on a narrow screen -------------------

const narrow = matchMedia("(max-width: 720px)");

function setListShown(shown) {
  document.body.classList.toggle("list-hidden", !shown);
  $("menu").setAttribute("aria-expanded", String(shown));
}
$("menu").onclick = () => setListShown(document.body.classList.contains("list-hidden"));
// On a phone the list starts open (nothing is chosen yet) and closes once a session is.
narrow.addEventListener("change", () => setListShown(!narrow.matches || !state.view));

// The terminal keeps the session's columns and rows (the agent's size); its font is scaled
// so the whole grid fits the pane, as terminal web clients do: never above FONT_MAX, and
// at FONT_MIN whatever still does not fit scrolls.
const FONT_MAX = 14;
const FONT_MIN = 4;

function fit(term) {
  if (!term || !term.element) return;
  const pane = $("screen");
  const style = getComputedStyle(pane);
  const width = pane.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  const height = pane.clientHeight - parseFloat(style.paddingTop) - parseFloat(style.paddingBottom);
  if (width <= 0 || height <= 0) return;
  const box = () => $("term").getBoundingClientRect();
  // The grid's size is near proportional to the font's: one guess, then half-pixel steps
  // down while the (rounded) cells still overflow.
  const now = box();
  let size = term.options.fontSize;
  const guess = Math.floor(size * Math.min(width / now.width, height / now.height) * 2) / 2;
  size = Math.max(FONT_MIN, Math.min(FONT_MAX, guess));
  for (let i = 0; i < 16; i++) {
    if (term.options.fontSize !== size) term.options.fontSize = size;
    const b = box();
    if ((b.width <= width && b.height <= height) || size <= FONT_MIN) break;
    size = Math.max(FONT_MIN, size - 0.5);
  }
}

const refit = () => fit(state.view && state.view.term);
new ResizeObserver(refit).observe($("screen"));
// The terminal's face arrives after the terminal is made: measure again once it has.
document.fonts.addEventListener("loadingdone", refit);

function setConnection(s, text) {
  const el = $("conn");
  el.dataset.state = s;
  el.textContent = text;
}

// ---- the list -------------------------------------------------------------------------

function connectList(delay = 250) {
  setConnection("connecting", "connecting…");
  const ws = new WebSocket(wsUrl("/ws/sessions"));
  state.listSocket = ws;
  ws.onopen = () => { delay = 250; setConnection("open", "live"); };
  ws.onmessage = (e) => {
    const m = JSON.parse(e.data);
    state.secretLinks = m.secretLinks || {};
    state.secretPrompts = m.secretPrompts || {};
    showList(m.sessions, m.ended || []);
  };
  ws.onclose = () => {
    setConnection("closed", "disconnected — retrying");
    setTimeout(() => connectList(Math.min(delay * 2, 5000)), delay);
  };
}

function showList(live, ended) {
  state.sessions = new Map(live.map((s) => [s.id, s]));
  state.ended = ended;
  render();
}

// Live sessions first, then the ended ones the server remembers (newest first).
function render() {
  const list = $("sessions");
  list.replaceChildren();
  for (const s of state.sessions.values()) {
    const status = busyOf(s) ? "busy" : "idle";
    const li = row(s, status, `${s.foreground || s.shell.split("/").pop()} · ${s.cols}×${s.rows}`, s.cwd);
    li.className = state.open === s.id ? "open" : "";
    if (s.controller === "person") li.querySelector(".row1").insertAdjacentHTML("beforeend", '<span class="badge person">person</span>');
    // Held by the user's session host: it outlives this server.
    if (s.kept) li.querySelector(".row1").insertAdjacentHTML("beforeend", '<span class="badge kept" title="A kept session: it outlives the server and client that started it">kept</span>');
    // Waiting at a password prompt a call asked a person about: its one-time page.
    const secret = (state.secretLinks || {})[s.id];
    if (secret) {
      const a = document.createElement("a");
      a.className = "badge secret";
      a.href = secret;
      a.target = "_blank";
      a.rel = "noopener noreferrer";
      a.textContent = "password";
      a.title = "This session waits at a password prompt: type the answer on its one-time page";
      a.onclick = (e) => e.stopPropagation();
      li.querySelector(".row1").appendChild(a);
    }
    li.onclick = () => openSession(s.id);
    list.appendChild(li);
  }
  for (const s of [...state.ended].reverse()) {
    const when = new Date(s.endedMs).toLocaleTimeString();
    const li = row(s, "ended", `${s.exited} · ${when}${s.cast ? " · replay" : ""}`, s.cwd);
    li.dataset.seq = s.seq;
    li.className = "ended" + (state.open === `#${s.seq}` ? " open" : "");
    li.title = `${s.why} — ${s.cwd}`;
    li.onclick = () => openEnded(s);
    list.appendChild(li);
  }
  $("empty").hidden = state.sessions.size + state.ended.length > 0;
  showSecretField();
}

// Whether a live session runs a command. The open one's is known from its own bytes as they
// arrive (the shell's OSC 133 marks: C a command starts, D it ended, A a prompt); the list,
// re-sent every second, says it for the others and until the open one's first mark.
function busyOf(s) {
  const view = state.view;
  if (view instanceof View && view.id === s.id && view.busy !== null) return view.busy;
  return s.busy;
}

function showBusy(id, busy) {
  const badge = document.querySelector(`#sessions li[data-id="${CSS.escape(id)}"]:not(.ended) .badge`);
  if (!badge) return;
  const status = busy ? "busy" : "idle";
  badge.className = `badge ${status}`;
  badge.textContent = status;
}

function row(s, status, meta, cwd) {
  const li = document.createElement("li");
  li.dataset.id = s.id;
  li.innerHTML = `<div class="row1"><span class="id"></span><span class="badge ${status}">${status}</span></div>
    <div class="meta fg"></div><div class="meta cwd"></div>`;
  li.querySelector(".id").textContent = s.name ? `${s.name} (${s.id})` : s.id;
  li.querySelector(".fg").textContent = meta;
  li.querySelector(".cwd").textContent = cwd;
  li.title = cwd;
  return li;
}

// A terminal widget in #term, at a session's size and in its theme.
function newTerminal(cols, rows, themeName) {
  const theme = THEMES[themeName] || THEMES.dark;
  document.body.classList.toggle("light", theme.light);
  $("term").replaceChildren();
  const term = new Terminal({
    cols, rows, scrollback: 5000, theme: theme.colors, cursorBlink: false,
    fontFamily: '"JetBrains Mono", "DejaVu Sans Mono", monospace', fontSize: FONT_MAX, allowProposedApi: false,
  });
  term.open($("term"));
  fit(term);
  return term;
}

function showBar(live) {
  $("take").hidden = !live;
  $("release").hidden = true;
  $("replay").hidden = true;
  $("speed").hidden = true;
  $("term").classList.remove("controlling");
  $("who").classList.remove("person");
}

// ---- one session ----------------------------------------------------------------------

// Shows the view pane; on a narrow screen the list makes room for it.
function showView() {
  $("view").hidden = false;
  if (narrow.matches) setListShown(false);
}

function openSession(id) {
  if (state.view) state.view.close();
  state.open = id;
  render();
  showView();
  $("title").textContent = id;
  $("notice").textContent = "";
  showBar(true);
  state.view = new View(id);
}

function openEnded(s) {
  if (state.view) state.view.close();
  state.open = `#${s.seq}`;
  render();
  showView();
  $("title").textContent = s.name ? `${s.name} (${s.id})` : s.id;
  $("notice").textContent = "";
  showBar(false);
  state.view = new EndedView(s);
}

// An ended session: its last screen, and its transcript replayed on request.
class EndedView {
  constructor(s) {
    this.s = s;
    this.mode = "loading";
    this.closed = false;
    this.timer = null;
    $("who").textContent = `ended: ${s.exited} · ${s.why}`;
    $("replay").hidden = !s.cast;
    $("speed").hidden = !s.cast;
    this.term = newTerminal(s.cols, s.rows, s.theme);
    fetch(`/api/ended/${s.seq}/screen`).then((r) => {
      if (!r.ok) throw new Error(`the last screen is gone (${r.status})`);
      return r.arrayBuffer();
    }).then((bytes) => {
      if (this.closed) return;
      this.term.write(new Uint8Array(bytes));
      this.mode = "ended";
    }).catch((e) => { $("notice").textContent = e.message; });
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    if (this.term) this.term.dispose();
  }

  // Plays the .cast with its recorded timing (pauses over 2 s shortened to 2 s), at the
  // speed chosen in #speed (read before every event, so it can change while playing).
  async replay() {
    clearTimeout(this.timer);
    const r = await fetch(`/api/ended/${this.s.seq}/cast`);
    if (!r.ok) { $("notice").textContent = await r.text(); return; }
    const lines = (await r.text()).split("\n").filter((l) => l.trim());
    const header = JSON.parse(lines[0]);
    const events = [];
    for (const line of lines.slice(1)) {
      try {
        const [at, kind, data] = JSON.parse(line);
        if (kind === "o") events.push([at, data]);
      } catch (_) { /* a line that is not an event is skipped */ }
    }
    if (this.closed) return;
    this.term.dispose();
    this.term = newTerminal(header.width || this.s.cols, header.height || this.s.rows, this.s.theme);
    this.mode = "replay";
    this.played = [];
    $("notice").textContent = "replaying…";
    let i = 0;
    let last = 0;
    const step = () => {
      if (this.closed) return;
      if (i >= events.length) {
        this.mode = "replayed";
        $("notice").textContent = "replay done";
        return;
      }
      const [at, data] = events[i++];
      this.term.write(data);
      this.played.push({ t: performance.now(), data });
      const next = events[i];
      last = at;
      const gap = next ? Math.min(Math.max(next[0] - last, 0), 2) : 0;
      const speed = Number($("speed").value) || 1;
      this.timer = setTimeout(step, (gap * 1000) / speed);
    };
    const first = events.length ? Math.min(events[0][0], 2) : 0;
    this.timer = setTimeout(step, (first * 1000) / (Number($("speed").value) || 1));
  }

  send() {}
}

class View {
  constructor(id) {
    this.id = id;
    this.you = false;
    this.term = null;
    // Whether a command runs, from the OSC 133 marks seen live (null: none seen yet).
    this.busy = null;
    this.ended = false;
    this.closed = false;
    this.retry = 250;
    this.timer = null;
    this.connect();
  }

  // One WebSocket at a time; a new one after a drop (the next hello starts a fresh terminal
  // with the current screen, so nothing shown is stale or doubled).
  connect() {
    const ws = new WebSocket(wsUrl(`/ws/session/${encodeURIComponent(this.id)}`));
    ws.binaryType = "arraybuffer";
    ws.onmessage = (e) => { if (this.ws === ws && !this.closed) this.receive(e.data); };
    ws.onclose = () => {
      if (this.ws !== ws || this.closed || state.view !== this) return;
      this.showControl("agent", false);
      if (this.ended || !state.sessions.has(this.id)) {
        $("notice").textContent = "The session has ended.";
        return;
      }
      $("notice").textContent = "Disconnected — reconnecting…";
      this.timer = setTimeout(() => this.connect(), this.retry);
      this.retry = Math.min(this.retry * 2, 5000);
    };
    this.ws = ws;
  }

  close() {
    this.closed = true;
    clearTimeout(this.timer);
    this.ws.close();
    if (this.term) this.term.dispose();
  }

  send(message) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  setBusy(busy) {
    if (this.busy === busy) return;
    this.busy = busy;
    showBusy(this.id, busy);
  }

  receive(data) {
    if (data instanceof ArrayBuffer) {
      this.term.write(new Uint8Array(data));
      return;
    }
    const m = JSON.parse(data);
    if (m.type === "hello") {
      if (this.term) this.term.dispose();
      this.retry = 250;
      $("notice").textContent = "";
      this.term = newTerminal(m.cols, m.rows, m.theme);
      this.term.parser.registerOscHandler(133, (mark) => {
        if (mark.startsWith("C")) this.setBusy(true);
        else if (mark.startsWith("D") || mark.startsWith("A")) this.setBusy(false);
        return true;
      });
      this.term.onData((keys) => {
        if (this.you) this.send({ type: "input", data: keys });
        else $("notice").textContent = "Read-only: press Take control to type.";
      });
      this.term.focus();
      this.showControl(m.controller, m.you);
    } else if (m.type === "control") {
      this.showControl(m.controller, m.you);
    } else if (m.type === "size") {
      this.term.resize(m.cols, m.rows);
      fit(this.term);
    } else if (m.type === "resync") {
      this.term.reset();
    } else if (m.type === "refused") {
      $("notice").textContent = m.why;
      this.force = !!m.canForce;
    } else if (m.type === "ended") {
      this.ended = true;
      $("notice").textContent = "The session has ended.";
    }
  }

  showControl(controller, you) {
    this.you = you;
    $("take").hidden = you;
    $("release").hidden = !you;
    $("term").classList.toggle("controlling", you);
    const who = $("who");
    who.textContent = you ? "you are typing" : controller === "person" ? "a person is typing" : "the agent is typing · read-only";
    who.classList.toggle("person", controller === "person");
    if (you) $("notice").textContent = "";
  }
}

// ---- the password field: the open session waits at a secret prompt (echo off) ----------
// What is typed goes by POST /api/secret/{id} (src/web/secret_field.rs) straight to the
// terminal, only if the same program still waits at the same prompt; never through the
// session's socket, and the field is emptied at once.

function secretField() {
  let form = $("secret-field");
  if (form) return form;
  form = document.createElement("form");
  form.id = "secret-field";
  form.className = "secret-field";
  form.autocomplete = "off";
  form.hidden = true;
  form.innerHTML = `<label for="secret-answer" class="ask"></label>
    <input type="password" id="secret-answer" autocomplete="off" spellcheck="false">
    <button type="submit" id="secret-send">Type it into the terminal</button>
    <span class="said" role="status"></span>`;
  form.onsubmit = async (e) => {
    e.preventDefault();
    const field = $("secret-answer");
    const [id, program, prompt] = JSON.parse(form.dataset.key);
    const secret = field.value;
    field.value = "";
    $("secret-send").disabled = true;
    const said = form.querySelector(".said");
    try {
      const r = await fetch(`/api/secret/${encodeURIComponent(id)}`, {
        method: "POST", headers: { "Content-Type": "text/plain;charset=utf-8" }, body: `${program}\n${prompt}\n${secret}`,
      });
      said.textContent = await r.text();
      said.dataset.status = String(r.status);
      $("notice").textContent = said.textContent;
    } catch (err) {
      said.textContent = `The server could not be reached: ${err}`;
      said.dataset.status = "0";
    }
    $("secret-send").disabled = false;
  };
  $("screen").before(form);
  return form;
}

// Shown while the open live session waits at a secret prompt; kept as is (what the person
// is typing included) while that prompt stays.
function showSecretField() {
  const form = secretField();
  const id = state.open;
  const ask = id && (state.secretPrompts || {})[id];
  if (!ask) { form.hidden = true; form.dataset.key = ""; $("secret-answer").value = ""; return; }
  const key = JSON.stringify([id, ask.program, ask.prompt]);
  if (form.dataset.key === key && !form.hidden) return;
  form.dataset.key = key;
  form.querySelector(".ask").textContent = `${ask.program} asks: ${ask.prompt}`;
  form.querySelector(".said").textContent = "";
  form.hidden = false;
}

// A second press after "another page holds control" takes it from that page.
$("take").onclick = () => { if (state.view) { state.view.send({ type: "take", force: !!state.view.force }); state.view.force = false; state.view.term?.focus(); } };
$("release").onclick = () => { if (state.view) state.view.send({ type: "release" }); };
$("replay").onclick = () => { if (state.view && state.view.replay) state.view.replay(); };

// For tests and for people who script the page: the open terminal's text.
window.termpilot = {
  screenText() {
    const term = state.view && state.view.term;
    if (!term) return "";
    const buffer = term.buffer.active;
    const lines = [];
    for (let i = 0; i < buffer.length; i++) lines.push(buffer.getLine(i).translateToString(true));
    return lines.join("\n");
  },
  get controlling() { return !!(state.view && state.view.you); },
  // "live", or for an ended session "loading", "ended" (its last screen shown), "replay"
  // (its transcript playing) and "replayed".
  get mode() { return state.view ? (state.view.mode || "live") : ""; },
  // The replay so far: `{t, data}` for each event written (t from performance.now()).
  get played() { return (state.view && state.view.played) || []; },
  // The open terminal (xterm.js), if any.
  get term() { return (state.view && state.view.term) || null; },
  // Resolves true as soon as `text` is in the open terminal's buffer, false after `ms`:
  // checked after every write the terminal parses, and on every frame (a terminal that is
  // not there yet, or replaced by a reconnect, is waited for too).
  waitText(text, ms) {
    return new Promise((done) => {
      const until = performance.now() + ms;
      let settled = false;
      let hooked = null;
      let hook = null;
      const finish = (ok) => {
        if (settled) return;
        settled = true;
        if (hook) hook.dispose();
        done(ok);
      };
      const check = () => {
        if (settled) return;
        if (this.screenText().includes(text)) return finish(true);
        if (performance.now() > until) return finish(false);
        const term = this.term;
        if (term && term !== hooked) {
          if (hook) hook.dispose();
          hooked = term;
          hook = term.onWriteParsed(() => { if (this.screenText().includes(text)) finish(true); });
        }
        requestAnimationFrame(check);
      };
      check();
    });
  },
};

connectList();
