// The usage page: reads api/usage (the ledger, as GET /louter/usage on the
// admin endpoint answers it) and api/state (ops_ui.go), beside the page, and
// renders them with textContent only: model and client names come from
// requests.
//
// Bidirectional control characters in such a name would reorder the text
// around it (U+202E turns the rest of the line backwards), so every
// string is shown with them escaped (visible), and the names set inside
// a longer text are isolated in <bdi> (name): a right-to-left name, or
// one with unbalanced controls, leaves the text beside it in order.
"use strict";

const BIDI_CONTROLS = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;

function visible(text) {
  return String(text).replace(BIDI_CONTROLS, c => "\\u" + c.charCodeAt(0).toString(16).toUpperCase().padStart(4, "0"));
}

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined && text !== null) e.textContent = visible(text);
  if (cls) e.className = cls;
  return e;
}

// name is a name from a request or the configuration, isolated.
function name(text) {
  return el("bdi", text);
}

// line builds an element from pieces: strings, louter's own text, and
// names.
function line(tag, pieces, cls) {
  const e = el(tag, undefined, cls);
  e.append(...pieces);
  return e;
}

function row(cells) {
  const tr = el("tr");
  for (const c of cells) {
    const td = typeof c === "number" ? el("td", c.toLocaleString("en-US"), "num") : el("td", c);
    tr.appendChild(td);
  }
  return tr;
}

function fill(id, rows, empty, width) {
  const body = document.getElementById(id);
  body.replaceChildren();
  if (rows.length === 0) {
    const td = el("td", empty, "note");
    td.colSpan = width;
    const tr = el("tr");
    tr.appendChild(td);
    body.appendChild(tr);
    return;
  }
  for (const r of rows) body.appendChild(r);
}

// renderSpend reads the ledger's report: {since, clients: {name: {cost_usd,
// models: {route: {requests, input_tokens, output_tokens, cost_usd}}}}}.
function renderSpend(usage) {
  const rows = [];
  const clients = (usage && usage.clients) || {};
  for (const name of Object.keys(clients).sort()) {
    const models = clients[name].models || {};
    for (const m of Object.keys(models).sort()) {
      const e = models[m];
      rows.push(row([name, m, e.requests || 0, e.input_tokens || 0, e.output_tokens || 0, (e.cost_usd || 0).toFixed(4)]));
    }
  }
  fill("spend-rows", rows, "No spend recorded: the ledger counts authenticated clients (client keys).", 6);
  document.getElementById("spend-since").textContent = usage && usage.since ? "Since " + new Date(usage.since).toISOString() : "";
}

function renderTraffic(series) {
  const byBackend = new Map();
  for (const p of series) byBackend.set(p.backend, (byBackend.get(p.backend) || 0) + p.requests);
  const max = Math.max(1, ...byBackend.values());
  const bars = document.getElementById("traffic-bars");
  bars.replaceChildren();
  for (const [b, n] of [...byBackend.entries()].sort()) {
    const d = el("div", undefined, "bar");
    d.appendChild(name(b)).className = "label";
    const f = el("span", undefined, "fill");
    f.style.width = (300 * n / max) + "px";
    d.appendChild(f);
    d.appendChild(el("span", n + " requests"));
    bars.appendChild(d);
  }
  const rows = series.slice().sort((a, b) => b.minute.localeCompare(a.minute) || a.client.localeCompare(b.client))
    .map(p => row([p.minute.slice(11, 16), p.client, p.model, p.backend, p.requests, p.errors, p.input_tokens, p.output_tokens]));
  fill("traffic-rows", rows, "No requests in the last hour.", 8);
}

// renderHealth shows a row per backend and model with a cooldown record
// (cooldowns are per backend and the model it is asked for), and one per
// backend without any.
function renderHealth(backends) {
  const rows = [];
  for (const b of backends) {
    if (!b.models || b.models.length === 0) {
      const tr = row([b.name, b.protocol, "", b.in_fallback ? "ok" : "ok (no fallback chain: no cooldown)", 0]);
      tr.children[3].className = "ok";
      rows.push(tr);
      continue;
    }
    for (const m of b.models) {
      let state = "ok", cls = "ok";
      if (m.cooling_until) { state = "cooling down until " + new Date(m.cooling_until).toISOString(); cls = "cooling"; }
      const tr = row([b.name, b.protocol, m.model, state, m.failures_in_row]);
      tr.children[3].className = cls;
      rows.push(tr);
    }
  }
  fill("health-rows", rows, "No louter handler is running.", 5);
}

function renderEvents(events) {
  const rows = events.map(e => {
    const tr = row([new Date(e.time).toISOString().slice(11, 19), e.kind, e.client || "", e.model || "", e.backend, e.status || "", e.reason, e.duration_ms]);
    tr.className = e.kind;
    return tr;
  });
  fill("error-rows", rows, "No failed attempts since the process started.", 8);
}

function pretty(v) {
  if (v === undefined || v === null) return "";
  return typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

function side(title, req, resp) {
  const d = el("div");
  d.appendChild(el("h3", title));
  let text = "";
  if (req) text += (req.method || "") + " " + (req.path || "") + "\n" + pretty(req.body !== undefined ? req.body : req.body_text);
  if (resp) {
    text += "status " + resp.status + "\n";
    if (resp.events) text += resp.events.slice(0, 100).map(ev => (ev.event ? "event: " + ev.event + "\n" : "") + "data: " + pretty(ev.data !== undefined ? JSON.stringify(ev.data) : ev.text)).join("\n");
    else text += pretty(resp.body !== undefined ? resp.body : resp.body_text);
  }
  d.appendChild(el("pre", text));
  return d;
}

function renderRecordings(st) {
  const list = document.getElementById("recording-list");
  list.replaceChildren();
  const note = document.getElementById("recordings-note");
  if (st.recording_dirs.length === 0) { note.textContent = "Recording is off (the louter directive's record block)."; return; }
  note.textContent = visible("From " + st.recording_dirs.join(", ")) + ": the last " + st.recordings.length + " exchanges, newest first.";
  for (const x of st.recordings.slice().reverse()) {
    const box = el("div", undefined, "exchange");
    const b = x.backend || {};
    const head = [new Date(x.time).toISOString() + "  " + x.client.protocol + " → ", name(b.name || "?"), " (" + (b.protocol || "") + ")  model ", name(b.model || "")];
    if (x.error) head.push("  error: ", name(x.error));
    box.appendChild(line("div", head));
    if (x.omitted) { box.appendChild(el("p", x.omitted, "note")); list.appendChild(box); continue; }
    const sides = el("div", undefined, "sides");
    sides.appendChild(side("Client request", x.client_request));
    sides.appendChild(side("Backend request", x.backend_request));
    sides.appendChild(side("Backend response", null, x.backend_response));
    sides.appendChild(side("Client response", null, x.client_response));
    box.appendChild(sides);
    list.appendChild(box);
  }
}

function show() {
  const id = (location.hash || "#spend").slice(1);
  for (const s of document.querySelectorAll("section")) s.classList.toggle("active", s.id === id);
  for (const a of document.querySelectorAll("nav a")) a.classList.toggle("active", a.getAttribute("href") === "#" + id);
}

async function load() {
  const status = document.getElementById("status");
  try {
    const [usage, st] = await Promise.all([
      fetch("api/usage").then(r => r.ok ? r.json() : null).catch(() => null),
      fetch("api/state").then(r => { if (!r.ok) throw new Error("state: " + r.status); return r.json(); }),
    ]);
    renderSpend(usage);
    renderTraffic(st.series || []);
    renderHealth(st.backends || []);
    renderEvents(st.events || []);
    renderRecordings(st);
    status.textContent = "updated " + new Date(st.now).toISOString().slice(11, 19);
    document.body.dataset.loaded = "1";
  } catch (e) {
    status.textContent = "error: " + e.message;
  }
}

window.addEventListener("hashchange", show);
show();
load();
setInterval(load, 10000);
