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

const state = { sessions: new Map(), open: null, listSocket: null, view: null };

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
  ws.onmessage = (e) => showList(JSON.parse(e.data).sessions);
  ws.onclose = () => {
    setConnection("closed", "disconnected — retrying");
    setTimeout(() => connectList(Math.min(delay * 2, 5000)), delay);
  };
}

function showList(live) {
  const seen = new Set();
  for (const s of live) {
    seen.add(s.id);
    state.sessions.set(s.id, { ...s, ended: false });
  }
  // Ended sessions stay listed (greyed) for as long as this page is open.
  for (const [id, s] of state.sessions) if (!seen.has(id)) s.ended = true;
  const list = $("sessions");
  list.replaceChildren();
  for (const s of state.sessions.values()) {
    const li = document.createElement("li");
    li.dataset.id = s.id;
    li.className = (s.ended ? "ended " : "") + (state.open === s.id ? "open" : "");
    const status = s.ended ? "ended" : s.busy ? "busy" : "idle";
    const who = s.controller === "person" ? '<span class="badge person">person</span>' : "";
    li.innerHTML = `<div class="row1"><span class="id"></span><span class="badge ${status}">${status}</span>${who}</div>
      <div class="meta fg"></div><div class="meta cwd"></div>`;
    li.querySelector(".id").textContent = s.name ? `${s.name} (${s.id})` : s.id;
    li.querySelector(".fg").textContent = `${s.foreground || s.shell.split("/").pop()} · ${s.cols}×${s.rows}`;
    li.querySelector(".cwd").textContent = s.cwd;
    li.title = s.cwd;
    if (!s.ended) li.onclick = () => openSession(s.id);
    list.appendChild(li);
  }
  $("empty").hidden = state.sessions.size > 0;
}

// ---- one session ----------------------------------------------------------------------

function openSession(id) {
  if (state.view) state.view.close();
  state.open = id;
  showList([...state.sessions.values()].filter((s) => !s.ended));
  $("view").hidden = false;
  $("title").textContent = id;
  $("notice").textContent = "";
  state.view = new View(id);
}

class View {
  constructor(id) {
    this.id = id;
    this.you = false;
    this.term = null;
    this.ws = new WebSocket(wsUrl(`/ws/session/${encodeURIComponent(id)}`));
    this.ws.binaryType = "arraybuffer";
    this.ws.onmessage = (e) => this.receive(e.data);
    this.ws.onclose = () => {
      if (state.view === this) $("notice").textContent = this.ended ? "The session has ended." : "Disconnected.";
      this.showControl("agent", false);
    };
  }

  close() {
    this.ws.onclose = null;
    this.ws.close();
    if (this.term) this.term.dispose();
  }

  send(message) {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  receive(data) {
    if (data instanceof ArrayBuffer) {
      this.term.write(new Uint8Array(data));
      return;
    }
    const m = JSON.parse(data);
    if (m.type === "hello") {
      const theme = THEMES[m.theme] || THEMES.dark;
      document.body.classList.toggle("light", theme.light);
      $("term").replaceChildren();
      this.term = new Terminal({
        cols: m.cols, rows: m.rows, scrollback: 5000, theme: theme.colors, cursorBlink: false,
        fontFamily: '"JetBrains Mono", "DejaVu Sans Mono", monospace', fontSize: 14, allowProposedApi: false,
      });
      this.term.open($("term"));
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
    } else if (m.type === "resync") {
      this.term.reset();
    } else if (m.type === "refused") {
      $("notice").textContent = m.why;
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

$("take").onclick = () => { if (state.view) { state.view.send({ type: "take" }); state.view.term?.focus(); } };
$("release").onclick = () => { if (state.view) state.view.send({ type: "release" }); };

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
  // Resolves true as soon as `text` is in the open terminal's buffer (checked after every
  // write the terminal parses), false after `ms`.
  waitText(text, ms) {
    return new Promise((done) => {
      const term = state.view && state.view.term;
      if (!term) return done(false);
      if (this.screenText().includes(text)) return done(true);
      const timer = setTimeout(() => { hook.dispose(); done(false); }, ms);
      const hook = term.onWriteParsed(() => {
        if (this.screenText().includes(text)) { clearTimeout(timer); hook.dispose(); done(true); }
      });
    });
  },
};

connectList();
