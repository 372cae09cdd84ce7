// The harness web app: one hand-written ES module, no build step. It talks
// to the JSON API of plugins/web and follows a session over SSE. Every text
// that comes from the model, a tool or a file is put in the page with
// textContent, never as HTML, with one exception: a complete assistant
// message is replaced by the server's rendering of its markdown (the
// "markdown" event: goldmark, then sanitised by bluemonday; the model's own
// HTML is escaped there).
// The settings page's module is imported when the page is first opened,
// so it is not on the way to the first screen.

const $ = (id) => document.getElementById(id);
const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};

export async function api(method, url, body) {
  const init = { method, headers: {}, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(url, init);
  const text = await r.text();
  const data = text ? JSON.parse(text) : null;
  if (!r.ok) {
    const err = new Error((data && data.error) || r.statusText);
    err.status = r.status;
    err.data = data;
    throw err;
  }
  return data;
}

const state = { boot: null, ws: null, session: null, source: null, events: [], modules: new Map(), streaming: null, reasoning: null, lastAssistant: null, tools: new Map(), timer: 0 };

// plural is "1 turn", "2 turns".
const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;

// fmtDur formats a duration as the TUI does: 850ms, 3.2s, 2m05s.
function fmtDur(ms) {
  if (ms < 1000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60000) return `${(ms / 1000).toFixed(1)}s`;
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

// fmtBytes formats a byte count as the TUI does: 980 B, 12.3 KB, 4.1 MB.
function fmtBytes(n) {
  if (n < 1000) return `${n} B`;
  if (n < 1e6) return `${(n / 1000).toFixed(1)} KB`;
  return `${(n / 1e6).toFixed(1)} MB`;
}

// fmtTokens: 950, 12.3k, 1.2M.
function fmtTokens(n) {
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1000).toFixed(1)}k`;
  return `${(n / 1e6).toFixed(1)}M`;
}

// visible makes a tool's output printable: escape sequences are dropped,
// other control characters shown as U+FFFD, and a carriage return (a
// progress bar redrawing its line) keeps what follows it.
function visible(s) {
  return s.replace(/\x1b\[[0-9;?]*[ -\/]*[@-~]/g, "").replace(/\x1b\][^\x07]*(\x07|\x1b\\)/g, "")
    .split("\n").map((l) => { l = l.replace(/\r$/, ""); const i = l.lastIndexOf("\r"); return i >= 0 ? l.slice(i + 1) : l; }).join("\n")
    .replace(/[\x00-\x08\x0b-\x1f\x7f]/g, "\ufffd");
}

// lastLines is the last n lines of s (no trailing empty line), with a
// "… N lines above" line first when some are left out.
function lastLines(s, n) {
  const lines = s.replace(/\n+$/, "").split("\n");
  if (lines.length === 1 && lines[0] === "") return [];
  if (lines.length <= n) return lines;
  return [`… ${lines.length - n} lines above`, ...lines.slice(-n)];
}

// ---- slots ----------------------------------------------------------------

async function loadModule(comp) {
  if (!state.modules.has(comp.url)) state.modules.set(comp.url, import(comp.url));
  await state.modules.get(comp.url);
}

function slotComponents(slot, filter = () => true) {
  return (state.boot?.slots || []).filter((c) => c.slot === slot && filter(c));
}

async function mountSlot(container, slot, props) {
  container.replaceChildren();
  for (const comp of slotComponents(slot)) {
    try {
      await loadModule(comp);
      const node = document.createElement(comp.element);
      Object.assign(node, props);
      container.append(node);
    } catch (e) {
      container.append(el("div", "error", `slot ${slot}: ${comp.element}: ${e.message}`));
    }
  }
}

// ---- workspaces -----------------------------------------------------------

// inlineBoot is the boot data the server put in the page (GET /api/boot
// with the first workspace's sessions), or null.
function inlineBoot() {
  const node = $("boot");
  if (!node || !node.textContent) return null;
  try { return JSON.parse(node.textContent); } catch { return null; }
}

async function loadBoot() {
  state.boot = inlineBoot() || await api("GET", "/api/boot");
  const sessions = state.boot.sessions;
  delete state.boot.sessions;
  renderWorkspaces();
  const last = state.boot.workspaces[0];
  if (last && !state.ws) await selectWorkspace(last, sessions);
  else mountSlot($("slot-sidebar"), "sidebar", { workspace: state.ws });
}

function renderWorkspaces() {
  if (!state.boot.workspaces.length) setNav(true); // on a narrow screen: the way to add one
  const ul = $("workspaces");
  ul.replaceChildren();
  for (const w of state.boot.workspaces) {
    const li = el("li", "item" + (state.ws && state.ws.id === w.id ? " selected" : ""));
    li.dataset.id = w.id;
    li.append(el("span", "", w.title), el("small", "", w.path));
    li.onclick = () => selectWorkspace(w);
    ul.append(li);
  }
}

// selectWorkspace shows workspace w: its sessions (the given list, else
// fetched) and, without waiting for it, its files.
async function selectWorkspace(w, sessions) {
  state.ws = w;
  renderWorkspaces();
  emptyHint();
  $("sessions-section").hidden = false;
  $("files-section").hidden = false;
  mountSlot($("slot-sidebar"), "sidebar", { workspace: w });
  showDir(".");
  if (sessions) renderSessions(sessions);
  else await loadSessions();
}

$("add-workspace").onsubmit = async (ev) => {
  ev.preventDefault();
  const errBox = $("workspace-error");
  errBox.hidden = true;
  try {
    const w = await api("POST", "/api/workspaces", { path: $("workspace-path").value.trim() });
    $("workspace-path").value = "";
    state.boot.workspaces = [w, ...state.boot.workspaces.filter((x) => x.id !== w.id)];
    await selectWorkspace(w);
  } catch (e) {
    errBox.textContent = e.message;
    errBox.hidden = false;
  }
};

// ---- sessions -------------------------------------------------------------

// loadSessions lists the workspace's sessions; a subagent's session is
// listed under its parent (when the parent is listed).
async function loadSessions() {
  return renderSessions(await api("GET", `/api/workspaces/${state.ws.id}/sessions`));
}

function renderSessions(list) {
  const ul = $("sessions");
  ul.replaceChildren();
  const byId = new Map(list.map((s) => [s.id, s]));
  const kids = new Map();
  for (const s of list) {
    if (s.parent && s.origin === "subagent" && byId.has(s.parent)) {
      if (!kids.has(s.parent)) kids.set(s.parent, []);
      kids.get(s.parent).push(s);
    }
  }
  const item = (s, depth) => {
    const li = el("li", "item" + (state.session === s.id ? " selected" : "") + (depth ? " child" : ""));
    li.dataset.id = s.id;
    if (s.parent) li.dataset.parent = s.parent;
    li.style.paddingLeft = `${7 + depth * 14}px`;
    const title = (depth ? "↳ " : "") + (s.title || "(untitled)");
    li.append(el("span", "", title), el("small", "", `${plural(s.turns, "turn")} · ${new Date(s.updated).toLocaleString()}${s.running ? " · running" : ""}`));
    li.onclick = () => openSession(s.id);
    ul.append(li);
    for (const k of (kids.get(s.id) || []).slice().reverse()) if (depth < 8) item(k, depth + 1);
  };
  for (const s of list) {
    if (!(s.parent && s.origin === "subagent" && byId.has(s.parent))) item(s, 0);
  }
  return list;
}

$("new-session").onclick = async () => {
  const s = await api("POST", `/api/workspaces/${state.ws.id}/sessions`);
  await loadSessions();
  await openSession(s.id);
};

$("fork-session").onclick = async () => {
  const s = await api("POST", `/api/workspaces/${state.ws.id}/sessions`, { fork: state.session });
  await loadSessions();
  await openSession(s.id);
};

$("delete-session").onclick = async () => {
  if (!confirm("Delete this session and its log?")) return;
  try {
    await api("DELETE", sessionURL(""));
  } catch (e) {
    showNotice(e.message);
    return;
  }
  closeStream();
  state.session = null;
  showView("view-empty");
  await loadSessions();
};

function sessionURL(suffix) {
  return `/api/workspaces/${state.ws.id}/sessions/${state.session}${suffix}`;
}

function showView(id) {
  for (const v of document.querySelectorAll(".view")) v.hidden = v.id !== id;
  if (id === "view-empty") emptyHint();
}

// emptyHint says what to do next on the empty pane.
function emptyHint() {
  $("empty-hint").textContent = state.ws ? `Start a new session in ${state.ws.title} (New), or open one from the list.` : "Add a workspace (the absolute path of a repository) to start.";
}

function closeStream() {
  if (state.source) state.source.close();
  state.source = null;
}

async function openSession(id) {
  closeStream();
  state.session = id;
  state.events = [];
  state.tools.clear();
  state.streaming = state.reasoning = null;
  $("conversation").replaceChildren();
  $("session-title").textContent = id;
  $("session-status").textContent = "";
  $("queue").hidden = true;
  $("todos").hidden = true;
  if (!$("changes").hidden) loadChanges();
  setReadOnly("");
  setBusy(false);
  showView("view-session");
  setNav(false);
  for (const li of $("sessions").children) li.classList.toggle("selected", li.dataset.id === id);
  const header = $("slot-session-header");
  await mountSlot(header, "session.header", { sessionId: id, events: state.events });
  const src = new EventSource(sessionURL("/events"));
  state.source = src;
  src.onmessage = (m) => {
    if (state.source !== src) return;
    const e = JSON.parse(m.data);
    onEvent(e);
    for (const node of header.children) node.dispatchEvent(new CustomEvent("event", { detail: e }));
  };
  src.onerror = () => { $("session-status").textContent = src.readyState === 2 ? "disconnected" : "reconnecting…"; };
  src.onopen = () => { $("session-status").textContent = ""; };
  $("prompt").focus();
}

// ---- the conversation -----------------------------------------------------

function conv() { return $("conversation"); }
function scrollDown() { const c = conv(); c.scrollTop = c.scrollHeight; }

function showNotice(text) { conv().append(el("div", "notice", text)); scrollDown(); }

// setReadOnly disables the input of a session shown read-only (reason ""
// enables it).
function setReadOnly(reason) {
  const form = $("prompt-form");
  form.hidden = !!reason;
  document.body.dataset.readonly = reason ? "1" : "";
  const box = $("readonly");
  box.hidden = !reason;
  box.textContent = reason ? `Read-only: ${reason}.` : "";
}

// subagentCard shows (or updates) a child's card: its name, state, usage
// when settled, the start of its answer, and a button that opens its
// session.
function subagentCard(a) {
  let card = conv().querySelector(`.subagent[data-child="${CSS.escape(a.id)}"]`);
  if (!card) {
    card = el("div", "subagent");
    card.dataset.child = a.id;
    conv().append(card);
  }
  card.dataset.state = a.state;
  const name = a.agent ? `${a.agent}: ${a.description || ""}` : a.description || "subagent";
  const head = el("div", "head");
  head.append(el("strong", "", "Subagent " + name), el("span", "state", ` · ${a.state}`));
  const open = el("button", "open-child", "Open");
  open.type = "button";
  open.onclick = () => openSession(a.id);
  head.append(" ", open);
  card.replaceChildren(head);
  if (a.usage) card.append(el("div", "usage muted", `tokens: ${fmtTokens(a.usage.promptTokens)} in · ${fmtTokens(a.usage.completionTokens)} out${a.steps ? ` · ${plural(a.steps, "step")}` : ""}`));
  if (a.error) card.append(el("div", "error", a.error));
  if (a.text) card.append(el("pre", "answer", a.text));
}

function setBusy(b) {
  $("stop").disabled = !b;
  document.body.dataset.busy = b ? "1" : "";
}

function onEvent(e) {
  state.events.push(e);
  switch (e.type) {
    case "reset":
      conv().replaceChildren(); state.events.length = 0; state.tools.clear(); state.streaming = state.reasoning = state.lastAssistant = null; setReadOnly(""); $("budget").hidden = true; break;
    case "session":
      $("session-title").textContent = `${e.sessionId} · ${e.model || ""}`; break;
    case "user":
      state.streaming = state.reasoning = null;
      conv().append(userMessage(e)); break;
    case "reasoning":
      if (!state.reasoning) { state.reasoning = el("div", "msg reasoning", ""); conv().append(state.reasoning); }
      state.reasoning.textContent += e.text; break;
    case "text":
      if (!state.streaming) { state.streaming = el("div", "msg assistant", ""); conv().append(state.streaming); }
      state.streaming.textContent += e.text; break;
    case "assistant": {
      const m = e.message || {};
      if (m.reasoning) {
        if (!state.reasoning) { state.reasoning = el("div", "msg reasoning", ""); conv().append(state.reasoning); }
        state.reasoning.textContent = m.reasoning;
      }
      if (m.content) {
        if (!state.streaming) { state.streaming = el("div", "msg assistant", ""); conv().append(state.streaming); }
        state.streaming.textContent = m.content;
      }
      state.lastAssistant = m.content ? state.streaming : null;
      state.streaming = state.reasoning = null;
      break;
    }
    case "markdown":
      // The sanitised rendering of the assistant message just completed.
      if (state.lastAssistant) { state.lastAssistant.innerHTML = e.html; state.lastAssistant.classList.add("md"); }
      state.lastAssistant = null;
      break;
    case "tool_call": toolCall(e.toolCall); break;
    case "tool_progress": toolProgress(e.toolProgress); break;
    case "tool_result": toolResult(e.toolResult); break;
    case "figures": showFigures(e.figures); break;
    case "notice": showNotice(e.text); break;
    case "budget": showBudget(e.budget); break;
    case "compaction": showNotice(`history compacted (${e.compaction.trigger}): ${e.compaction.tokensBefore} → ${e.compaction.tokensAfter} tokens`); break;
    case "result": {
      const r = e.result;
      const line = el("div", "done-note " + (r.isError ? "error" : "ok"), r.isError ? `turn ended: ${r.reason}${r.error ? ": " + r.error : ""}` : `done in ${plural(r.steps, "step")}`);
      line.dataset.result = r.reason;
      conv().append(line);
      break;
    }
    case "approval": showApproval(e.approval); break;
    case "approval_done": {
      const card = conv().querySelector(`.approval[data-id="${e.approval.id}"]`);
      if (card) card.remove();
      conv().append(el("div", "done-note", `${e.approval.tool}: ${e.answer}${e.reason ? " — " + e.reason : ""}`));
      break;
    }
    case "busy": setBusy(e.busy); if (!e.busy && state.ws) loadSessions(); if (!e.busy && !$("changes").hidden) loadChanges(); break;
    case "queue": showQueue(e.queue || []); break;
    case "subagent": subagentCard(e.subagent); break;
    case "readonly": setReadOnly(e.reason || "read-only"); break;
  }
  scrollDown();
}

function showQueue(q) {
  const box = $("queue");
  box.hidden = q.length === 0;
  box.replaceChildren(el("strong", "", "Queued: "));
  for (const p of q) box.append(el("div", "", p));
}

// showPlan shows the agent's plan: the one the last call that set a plan
// set (a presentation's _meta.plan, ACP's plan entries).
function showPlan(plan) {
  const box = $("todos");
  box.hidden = plan.length === 0;
  box.replaceChildren(el("strong", "", "Plan"));
  for (const t of plan) box.append(el("div", "", `${t.status === "completed" ? "☑" : t.status === "in_progress" ? "◐" : "☐"} ${t.content || t.activeForm || ""}`));
}

// Tool cards are drawn from the calls' presentations (the agent's
// tools.Presentation, ACP's tool_call shape): the page decodes no tool's
// arguments. A later presentation of a call updates the earlier one; a
// field it omits stays as it was.
function mergePresentation(old, p) {
  if (!p) return old || {};
  const out = Object.assign({}, old || {});
  for (const k of ["title", "kind", "status", "content", "locations", "rawInput", "_meta"]) if (p[k] !== undefined) out[k] = p[k];
  return out;
}

function toolLabel(name, p) {
  const t = (p && p.title) || "";
  return t && t !== name && !t.startsWith(name + " ") ? `${name} ${t}` : t || name;
}

function toolCall(call) {
  const views = slotComponents("conversation.toolview", (c) => c.tool === call.name);
  const card = el("div", "tool running");
  card.dataset.call = call.id;
  card.dataset.tool = call.name;
  conv().append(card);
  const entry = { card, call, result: null, custom: null, pres: mergePresentation(null, call.presentation), started: Date.now(), live: null, liveBytes: 0 };
  state.tools.set(call.id, entry);
  if (views.length) {
    const comp = views[0];
    loadModule(comp).then(() => {
      const node = document.createElement(comp.element);
      Object.assign(node, { call, result: entry.result, sessionId: state.session });
      entry.custom = node;
      card.classList.add("custom");
      card.append(node);
    }).catch((e) => card.append(el("div", "error", e.message)));
    return;
  }
  drawTool(entry);
  tick();
}

// toolProgress shows a running call's output so far (each progress
// supersedes the previous one).
function toolProgress(p) {
  const entry = p && state.tools.get(p.callId);
  if (!entry || entry.result || entry.custom) return;
  entry.live = p.tail || "";
  entry.liveBytes = p.bytes || 0;
  drawTool(entry);
}

function toolResult(r) {
  const entry = state.tools.get(r.callId);
  if (!entry) return;
  entry.result = r;
  if (entry.custom) { entry.custom.result = r; return; }
  // A result without a presentation (an old log) is its outcome alone.
  entry.pres = mergePresentation(entry.pres, r.presentation || { status: r.isError ? "failed" : "completed", _meta: r.isError ? { reason: r.content } : {} });
  entry.legacy = !r.presentation && !entry.call.presentation;
  if (r.presentation && r.presentation._meta && Array.isArray(r.presentation._meta.plan)) showPlan(r.presentation._meta.plan);
  drawTool(entry);
}

// toolState is "running", "done" or "failed", from the presentation's
// status (the truth: a command that timed out or exited non-zero is failed).
function toolState(entry) {
  if (!entry.result) return "running";
  return entry.pres.status === "failed" ? "failed" : "done";
}

// toolOutput is what a presentation shows of a call's output: the
// terminal's, else its text blocks ("" when it has neither).
function toolOutput(p) {
  const items = p.content || [];
  const term = items.find((c) => c.type === "terminal" && c._meta);
  if (term) return visible(term._meta.output || "");
  return visible(items.filter((c) => c.type === "content" && c.content && c.content.type === "text").map((c) => c.content.text).join("\n"));
}

// toolWhen is the card's time: running for how long (and how much output
// so far), the duration, or "failed · duration".
function toolWhen(entry) {
  switch (toolState(entry)) {
    case "running": return `running ${fmtDur(Date.now() - entry.started)}${entry.liveBytes ? " · " + fmtBytes(entry.liveBytes) : ""}`;
    // A result replayed from the log has no duration.
    case "failed": return entry.result.durationMs ? `failed · ${fmtDur(entry.result.durationMs)}` : "failed";
    default: return entry.result.durationMs ? fmtDur(entry.result.durationMs) : "";
  }
}

// drawTool draws a card as the TUI does, from the call's presentation
// alone: a line with the state, the tool's name, the title and the time;
// then the result's summary or the failure's reason; then the diff, the
// output so far while it runs, or the output's tail (the whole output
// behind a disclosure).
function drawTool(entry) {
  const { card, pres: p } = entry;
  const st = toolState(entry);
  card.className = "tool " + (st === "running" ? "running" : st === "failed" ? "error" : "ok");
  card.dataset.status = p.status || "";
  const icon = el("span", "icon", st === "running" ? "●" : st === "failed" ? "✗" : "✓");
  const when = el("span", "when", toolWhen(entry));
  const kids = [icon, el("span", "head", toolLabel(entry.result?.name || entry.call.name, p)), when];
  const meta = p._meta || {};
  if (st === "failed") kids.push(el("div", "status failed", `✗ failed: ${meta.reason || ""}`));
  else if (st === "done") kids.push(el("div", "status ok", `✓ ${meta.summary || "done"}`));
  const diff = (p.content || []).find((c) => c.type === "diff" && c.newText != null);
  const out = entry.legacy ? visible(entry.result.content || "") : toolOutput(p);
  if (st === "failed") {
    const lines = lastLines(out, 3);
    if (lines.length) kids.push(el("pre", "result", lines.join("\n")));
  } else if (diff) {
    kids.push(diffView(diff, st === "running" ? "args" : "result"));
  } else if (st === "running") {
    if (entry.live) kids.push(el("pre", "live", lastLines(visible(entry.live), 8).join("\n")));
  } else {
    const lines = lastLines(out, 8);
    if (lines.length) kids.push(el("pre", "result", lines.join("\n")));
    if (lines.length && lines[0].startsWith("… ")) {
      const all = el("details", "all");
      all.append(el("summary", "", "whole output"), el("pre", "", out));
      kids.push(all);
    }
  }
  card.replaceChildren(...kids);
}

// tick redraws the time of running cards every second while there are any.
function tick() {
  if (state.timer) return;
  state.timer = setInterval(() => {
    let running = 0;
    for (const entry of state.tools.values()) {
      if (entry.custom || entry.result) continue;
      running++;
      const w = entry.card.querySelector(":scope > .when");
      if (w) w.textContent = toolWhen(entry);
    }
    if (!running) { clearInterval(state.timer); state.timer = 0; }
  }, 1000);
}

// showBudget shows a budget event: its text as a notice, and a warning
// beside the footer's figures ("⚠ budget 83% tokens", "⚠ budget exceeded
// (tokens)"), as the TUI's status bar does.
function showBudget(b) {
  showNotice(b.text);
  const w = $("budget");
  w.hidden = false;
  w.dataset.exceeded = b.exceeded ? "1" : "";
  w.textContent = b.exceeded ? `⚠ budget exceeded (${b.kind})` : `⚠ budget ${Math.floor(100 * b.projected / b.limit)}% ${b.kind}`;
}

// showFigures shows the footer's figures as the TUI's status bar does:
// the model, the context in use, the tokens and the cost.
function showFigures(f) {
  const parts = [];
  if (f.model) parts.push(f.model);
  if (f.contextTokens > 0) parts.push(f.contextWindow > 0 ? `ctx ${(100 * f.contextTokens / f.contextWindow).toFixed(1)}%` : `ctx ${Math.floor(f.contextTokens / 1000)}k`);
  const t = f.total || {};
  if (t.promptTokens || t.completionTokens) parts.push(`${f.estimated ? "≈" : ""}${fmtTokens(t.promptTokens || 0)} in · ${fmtTokens(t.completionTokens || 0)} out`);
  if (f.cost != null) parts.push(`$${f.cost.toFixed(4)}`);
  const u = $("usage");
  u.textContent = parts.join(" · ");
  u.title = f.contextTokens > 0 ? `context: ${f.contextTokens} tokens${f.contextWindow ? ` of ${f.contextWindow}` : ""}` : "";
}

// diffView shows a diff content: the path, then the lines that changed
// (what old and new have in common at their start and end is cut to three
// lines of context).
function diffView(d, cls) {
  const pre = el("pre", "diff" + (cls ? " " + cls : ""));
  pre.append(el("div", "", d.path || ""));
  const split = (t) => (t == null || t === "" ? [] : t.replace(/\n$/, "").split("\n"));
  const a = split(d.oldText), b = split(d.newText);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  let j = 0;
  while (j < a.length - i && j < b.length - i && a[a.length - 1 - j] === b[b.length - 1 - j]) j++;
  for (const l of a.slice(Math.max(0, i - 3), i)) pre.append(el("span", "ctx", "  " + l));
  for (const l of a.slice(i, a.length - j)) pre.append(el("span", "del", "- " + l));
  for (const l of b.slice(i, b.length - j)) pre.append(el("span", "add", "+ " + l));
  for (const l of a.slice(a.length - j, a.length - j + 3)) pre.append(el("span", "ctx", "  " + l));
  return pre;
}

// contentView shows a presentation's content: its diff, else the
// terminal's output, else its text blocks (null when it has none).
function contentView(content, cls) {
  const items = content || [];
  const diff = items.find((c) => c.type === "diff" && c.newText != null);
  if (diff) return diffView(diff, cls);
  const text = toolOutput({ content: items });
  if (!text) return null;
  return el("pre", cls, text.length > 4000 ? text.slice(0, 4000) + "\n…" : text);
}

// approvalView shows what a call asking for approval would do: its
// presentation's content, else its raw input laid out, else the
// arguments' text.
function approvalView(ap) {
  const entry = state.tools.get(ap.callId);
  const v = entry && contentView(entry.pres.content, "");
  if (v) { v.classList.add("diff"); return v; }
  if (entry && entry.pres.rawInput !== undefined) return el("pre", "diff", JSON.stringify(entry.pres.rawInput, null, 2));
  return el("pre", "diff", ap.arguments);
}

function showApproval(ap) {
  const card = el("div", "approval");
  card.dataset.id = ap.id;
  const lb = ap.labels || {};
  card.append(el("strong", "", lb.title || `Approve ${ap.tool}?`));
  if (ap.reason) card.append(el("div", "muted", ap.reason));
  card.append(approvalView(ap));
  const buttons = el("div", "buttons");
  const once = el("button", "allow-once", lb.once || "Allow once");
  const always = el("button", "allow-always", lb.always || "Always: " + ap.always);
  const reason = el("input", "deny-reason");
  reason.setAttribute("aria-label", "Reason for denying (sent to the model)");
  reason.placeholder = lb.noWhy ? lb.noWhy + " (sent to the model)" : "reason (sent to the model)";
  const deny = el("button", "deny", lb.no || "Deny");
  const send = async (answer) => {
    for (const b of buttons.querySelectorAll("button")) b.disabled = true;
    try {
      await api("POST", sessionURL(`/approvals/${ap.id}`), { answer, reason: reason.value });
    } catch (e) {
      card.append(el("div", "error", e.message));
    }
  };
  once.onclick = () => send("once");
  always.onclick = () => send("always");
  deny.onclick = () => send("deny");
  buttons.append(once, always, reason, deny);
  card.append(buttons);
  conv().append(card);
}

$("prompt-form").onsubmit = async (ev) => {
  ev.preventDefault();
  const text = $("prompt").value.trim();
  if (!text || !state.session) return;
  $("prompt").value = "";
  try {
    await api("POST", sessionURL("/prompt"), { text });
  } catch (e) {
    showNotice(e.message);
  }
};

$("prompt").onkeydown = (ev) => {
  if (ev.key === "Enter" && !ev.shiftKey) { ev.preventDefault(); $("prompt-form").requestSubmit(); }
};

function stop() { api("POST", sessionURL("/interrupt"), {}).catch((e) => showNotice(e.message)); }
$("stop").onclick = stop;

// ---- keyboard shortcuts ---------------------------------------------------

// Ctrl/Cmd+Enter sends (Enter too, in the prompt), Esc stops the running
// turn, and outside a text field n starts a new session, / focuses the
// prompt and ? shows the list (the help dialog).
function typing(t) {
  return t && (t.isContentEditable || ["INPUT", "TEXTAREA", "SELECT"].includes(t.tagName));
}

document.addEventListener("keydown", (ev) => {
  if (ev.defaultPrevented || document.querySelector("dialog[open]")) return; // a dialog has the keys (Esc closes it)
  const inSession = !$("view-session").hidden && state.session;
  if (ev.key === "Enter" && (ev.ctrlKey || ev.metaKey)) {
    if (inSession) { ev.preventDefault(); $("prompt-form").requestSubmit(); }
    return;
  }
  if (ev.key === "Escape") {
    if (inSession && !$("stop").disabled) { ev.preventDefault(); stop(); }
    return;
  }
  if (typing(ev.target) || ev.ctrlKey || ev.metaKey || ev.altKey) return;
  if (ev.key === "/" && inSession && !$("prompt-form").hidden) { ev.preventDefault(); $("prompt").focus(); }
  else if (ev.key === "n" && state.ws) { ev.preventDefault(); $("new-session").click(); }
  else if (ev.key === "?") { ev.preventDefault(); $("shortcuts-dialog").showModal(); }
});

$("show-shortcuts").onclick = () => $("shortcuts-dialog").showModal();
$("close-shortcuts").onclick = () => $("shortcuts-dialog").close();

// ---- changes and rewind --------------------------------------------------

// userMessage is a prompt; one the user typed (it has a turn) gets a
// Rewind button.
function userMessage(e) {
  const m = el("div", "msg user" + (e.source ? " context" : ""));
  m.append(el("span", "text", e.text));
  if (!e.source && e.turn > 0) {
    m.dataset.turn = e.turn;
    const b = el("button", "rewind small", "Rewind");
    b.type = "button";
    b.setAttribute("aria-label", `Rewind to before prompt ${e.turn}`);
    b.onclick = () => rewindTurn(e.turn);
    m.append(b);
  }
  return m;
}

// unifiedDiff shows a unified diff, each line coloured by what it is.
function unifiedDiff(d) {
  const pre = el("pre", "diff");
  let hunk = false;
  for (const l of d.replace(/\n$/, "").split("\n")) {
    if (l.startsWith("@@")) hunk = true;
    const c = !hunk ? "file" : l.startsWith("@@") ? "hunk" : l[0] === "+" ? "add" : l[0] === "-" ? "del" : "ctx";
    pre.append(el("span", c, l));
  }
  return pre;
}

// loadChanges fills the changes panel: the files changed since the
// session's first checkpoint (click one for its diff) and the prompts to
// rewind to.
async function loadChanges() {
  const box = $("changes-list");
  let v;
  try {
    v = await api("GET", sessionURL("/changes"));
  } catch (e) {
    box.replaceChildren(el("p", "error", e.message));
    return null;
  }
  box.replaceChildren();
  if (!v.checkpoints) {
    box.append(el("p", "muted", "No checkpoint of this session yet: the checkpoint plugin takes one before each prompt."));
    return v;
  }
  if (!v.files.length) box.append(el("p", "muted", "No file changed since the session's first prompt."));
  const ul = el("ul", "change-files");
  for (const f of v.files) {
    const li = el("li", "change-file");
    li.dataset.path = f.path;
    const b = el("button", "file-head");
    b.type = "button";
    b.setAttribute("aria-expanded", "false");
    b.append(el("span", "path", f.path), el("span", "status", f.status), el("span", "count add", `+${f.added}`), el("span", "count del", `−${f.removed}`));
    b.onclick = () => {
      const open = b.getAttribute("aria-expanded") !== "true";
      b.setAttribute("aria-expanded", String(open));
      let d = li.querySelector(".diff, .nodiff");
      if (!d) li.append(d = f.diff ? unifiedDiff(f.diff) : el("p", "muted nodiff", f.cut ? "(the diffs shown are over their size bound: no diff)" : "(not a small text file: no diff)"));
      d.hidden = !open;
    };
    li.append(b);
    ul.append(li);
  }
  box.append(ul);
  if (v.more) box.append(el("p", "muted", "More files changed than are listed."));
  if (v.prompts.length) {
    box.append(el("h3", "", "Rewind to a prompt"));
    const pl = el("ul", "rewind-points");
    for (const p of v.prompts) {
      const li = el("li", "rewind-point");
      li.dataset.checkpoint = p.checkpoint;
      li.append(el("span", "", `${p.turn}. ${p.prompt.split("\n")[0].slice(0, 80)}`));
      const b = el("button", "rewind small", "Rewind…");
      b.type = "button";
      b.setAttribute("aria-label", `Rewind to before prompt ${p.turn}`);
      b.onclick = () => openRewind(p);
      li.append(b);
      pl.append(li);
    }
    box.append(pl);
  }
  return v;
}

$("toggle-changes").onclick = () => {
  const p = $("changes");
  p.hidden = !p.hidden;
  $("toggle-changes").setAttribute("aria-expanded", String(!p.hidden));
  if (!p.hidden) loadChanges();
};

// rewindTurn opens the rewind dialog for the prompt of turn.
async function rewindTurn(turn) {
  let v;
  try {
    v = await api("GET", sessionURL("/changes"));
  } catch (e) {
    showNotice(e.message);
    return;
  }
  const p = (v.prompts || []).find((x) => x.turn === turn);
  if (!p) { showNotice(`No checkpoint before prompt ${turn}: nothing to rewind to.`); return; }
  openRewind(p);
}

// openRewind shows what rewinding to prompt p would do (the preview
// /rewind N shows), then rewinds what the user picks when confirmed.
async function openRewind(p) {
  const dlg = $("rewind-dialog");
  $("rewind-title").textContent = `Rewind to before prompt ${p.turn}`;
  $("rewind-prompt").textContent = p.prompt;
  $("rewind-error").textContent = "";
  $("rewind-force").checked = false;
  $("rewind-force-row").hidden = true;
  const box = $("rewind-preview");
  box.replaceChildren(el("p", "muted", "Loading the preview…"));
  dlg.dataset.checkpoint = p.checkpoint;
  if (!dlg.open) dlg.showModal();
  try {
    const v = await api("GET", sessionURL(`/rewind/${p.checkpoint}`));
    box.replaceChildren();
    if (!v.changes.length) box.append(el("p", "muted", "The files already match this checkpoint."));
    for (const c of v.changes) {
      const row = el("div", "preview-change" + (c.refused ? " refused" : ""));
      row.dataset.path = c.path;
      row.append(el("strong", "", c.path), el("span", "muted", c.action === "delete" ? " · delete (new since)" : " · restore"));
      if (c.refused) row.append(el("span", "error", " · changed outside the agent"));
      if (c.diff) row.append(unifiedDiff(c.diff));
      box.append(row);
    }
    $("rewind-force-row").hidden = !(v.refused && v.refused.length);
  } catch (e) {
    box.replaceChildren(el("p", "error", e.message));
  }
}

$("rewind-cancel").onclick = () => $("rewind-dialog").close();

$("rewind-form").onsubmit = async (ev) => {
  ev.preventDefault();
  const dlg = $("rewind-dialog");
  const what = new FormData($("rewind-form")).get("what");
  const body = { checkpoint: Number(dlg.dataset.checkpoint), what, force: $("rewind-force").checked };
  $("rewind-confirm").disabled = true;
  try {
    const res = await api("POST", sessionURL("/rewind"), body);
    dlg.close();
    if (res.conversation) {
      await openSession(state.session);
      $("prompt").value = res.draft || "";
    }
    showNotice(res.text);
    if (!$("changes").hidden) loadChanges();
  } catch (e) {
    $("rewind-error").textContent = e.message;
    if (e.data && e.data.refused) $("rewind-force-row").hidden = false;
  } finally {
    $("rewind-confirm").disabled = false;
  }
};

// ---- files ----------------------------------------------------------------

async function showDir(path) {
  const box = $("files");
  try {
    const v = await api("GET", `/api/workspaces/${state.ws.id}/files?path=${encodeURIComponent(path)}`);
    box.replaceChildren();
    if (path !== ".") {
      const up = el("div", "entry", "..");
      up.onclick = () => showDir(path.split("/").slice(0, -1).join("/") || ".");
      box.append(up);
    }
    for (const e of v.entries || []) {
      const p = path === "." ? e.name : `${path}/${e.name}`;
      const d = el("div", "entry", e.dir ? e.name + "/" : e.name);
      d.dataset.path = p;
      d.onclick = () => (e.dir ? showDir(p) : showFile(p));
      box.append(d);
    }
  } catch (e) {
    box.replaceChildren(el("div", "error", e.message));
  }
}

async function showFile(path) {
  const v = await api("GET", `/api/workspaces/${state.ws.id}/files?path=${encodeURIComponent(path)}`);
  $("file-path").textContent = path + (v.next ? ` (first ${v.next} of ${v.size} bytes)` : "");
  $("file-text").textContent = v.binary ? "(binary file)" : v.text;
  showView("view-file");
}

// setNav opens or closes the sidebar's sections on a narrow screen (the
// Menu button; wider screens always show them).
function setNav(open) {
  document.body.classList.toggle("nav-open", open);
  $("nav-toggle").setAttribute("aria-expanded", String(open));
}

$("nav-toggle").onclick = () => setNav(!document.body.classList.contains("nav-open"));

$("close-file").onclick = () => showView(state.session ? "view-session" : "view-empty");

// ---- settings -------------------------------------------------------------

$("nav-settings").onclick = async () => {
  showView("view-settings");
  const { renderSettings } = await import("/assets/settings.js");
  await renderSettings({ api, el, mountCard: async (container, comp, props) => {
    await loadModule(comp);
    const node = document.createElement(comp.element);
    Object.assign(node, props);
    container.append(node);
  }, slots: (p) => slotComponents("settings.plugin.item", (c) => c.plugin === p) });
};
$("close-settings").onclick = () => showView(state.session ? "view-session" : "view-empty");

loadBoot().then(() => { performance.mark("harness-ready"); document.body.dataset.ready = "1"; }).catch((e) => {
  document.body.append(el("p", "error", "could not load: " + e.message));
});
