// The settings page: one card per plugin row, generated from the plugin's
// JSON Schema (descriptions, enums, defaults, durations, secrets), unless a
// plugin put its own component in the settings.plugin.item slot. A card
// sends only the fields the user changed, with the revision it read; a
// secret field is never filled in (write-only): typing a value replaces it.

let revision = "0";

export async function renderSettings({ api, el, mountCard, slots }) {
  const box = document.getElementById("settings-cards");
  const note = document.getElementById("settings-note");
  box.replaceChildren();
  let snap;
  try {
    snap = await api("GET", "/api/settings");
  } catch (e) {
    box.append(el("p", "error", e.message));
    return;
  }
  revision = snap.revision;
  note.textContent = `Saved to ${snap.file} (a --patch layer over harness.yml). A change applies at once unless its card says otherwise.`;
  for (const row of snap.rows) {
    const card = el("section", "card");
    card.dataset.row = row.id;
    box.append(card);
    const own = slots(row.plugin);
    if (own.length) {
      await mountCard(card, own[0], { plugin: row.plugin, id: row.id, schema: row.schema, values: row.values,
        save: (values) => save(api, row.id, values) });
      continue;
    }
    generatedCard(card, row, { api, el });
  }
}

async function save(api, id, values) {
  const res = await api("PATCH", `/api/settings/${encodeURIComponent(id)}`, { revision, values });
  revision = res.revision;
  return res;
}

function generatedCard(card, row, { api, el }) {
  card.append(el("h3", "", `${row.id}` + (row.id !== row.plugin ? ` · ${row.plugin}` : "")));
  if (row.description) card.append(el("div", "desc", row.description));
  if (row.restartOnly) card.append(el("div", "desc", "Changes here apply when harness serve restarts."));
  const props = (row.schema && row.schema.properties) || {};
  const inputs = new Map();
  for (const [name, ps] of Object.entries(props)) {
    const field = el("div", "field");
    field.dataset.field = name;
    const id = `f-${row.id}-${name}`;
    const label = el("label", "", name);
    label.htmlFor = id;
    field.append(label);
    const input = inputFor(ps, row.values[name], row.secrets && row.secrets[name], el);
    input.id = id;
    input.name = name;
    field.append(input);
    if (ps.description) field.append(el("div", "desc", ps.description));
    field.append(el("div", "field-error"));
    card.append(field);
    inputs.set(name, { input, ps, original: input.type === "checkbox" ? input.checked : input.value });
  }
  const status = el("span", "muted");
  const button = el("button", "save", "Save");
  button.type = "button";
  const row2 = el("div", "row");
  row2.append(button, status);
  card.append(row2);
  button.onclick = async () => {
    for (const e of card.querySelectorAll(".field-error")) e.textContent = "";
    status.textContent = "";
    const values = {};
    try {
      for (const [name, { input, ps, original }] of inputs) {
        const now = input.type === "checkbox" ? input.checked : input.value;
        if (now === original) continue;
        if (ps.writeOnly && now === "") continue;
        values[name] = parseValue(ps, now, input);
      }
    } catch (e) {
      status.textContent = e.message;
      status.className = "error";
      return;
    }
    if (Object.keys(values).length === 0) { status.textContent = "nothing changed"; status.className = "muted"; return; }
    try {
      const res = await save(api, row.id, values);
      for (const [name, v] of inputs) {
        if (v.ps.writeOnly) { v.input.value = ""; v.input.placeholder = "set (write-only)"; }
        v.original = v.input.type === "checkbox" ? v.input.checked : v.input.value;
      }
      status.textContent = res.applied ? "saved and applied" : "saved; applies on restart";
      status.className = "ok";
    } catch (e) {
      status.textContent = e.message.split("\n")[0];
      status.className = "error";
      const fields = (e.data && e.data.fields) || {};
      for (const [path, msg] of Object.entries(fields)) {
        const top = path.split(/[.[]/)[0];
        const f = card.querySelector(`.field[data-field="${CSS.escape(top)}"] .field-error`);
        if (f) f.textContent = `${path}: ${msg}`;
      }
    }
  };
}

function typeOf(ps) {
  if (Array.isArray(ps.type)) return ps.type.find((t) => t !== "null") || "string";
  return ps.type || (ps.properties ? "object" : "string");
}

function inputFor(ps, value, secretSet, el) {
  const t = typeOf(ps);
  if (ps.enum) {
    const sel = el("select");
    for (const v of ps.enum) {
      const o = el("option", "", String(v));
      o.value = String(v);
      sel.append(o);
    }
    sel.value = value !== undefined ? String(value) : ps.default !== undefined ? String(ps.default) : "";
    return sel;
  }
  if (t === "boolean") {
    const cb = el("input");
    cb.type = "checkbox";
    cb.checked = value !== undefined ? !!value : !!ps.default;
    return cb;
  }
  if (ps.writeOnly) {
    const pw = el("input");
    pw.type = "password";
    pw.autocomplete = "off";
    pw.placeholder = secretSet ? "set (write-only)" : "not set";
    return pw;
  }
  if (t === "integer" || t === "number") {
    const n = el("input");
    n.type = "number";
    if (t === "integer") n.step = "1";
    n.value = value !== undefined && value !== null ? String(value) : "";
    if (ps.default !== undefined) n.placeholder = String(ps.default);
    return n;
  }
  if (t === "object" || t === "array") {
    const ta = el("textarea");
    ta.rows = 3;
    ta.value = value !== undefined && value !== null ? JSON.stringify(value, null, 2) : "";
    ta.dataset.json = "1";
    return ta;
  }
  const s = el("input");
  s.type = "text";
  s.value = value !== undefined && value !== null ? String(value) : "";
  if (ps.default !== undefined) s.placeholder = String(ps.default);
  return s;
}

function parseValue(ps, v, input) {
  const t = typeOf(ps);
  if (input.type === "checkbox") return v;
  if (v === "") return null; // back to harness.yml's value or the default
  if (ps.enum) return ps.enum.find((e) => String(e) === v) ?? v;
  if (t === "integer" || t === "number") {
    const n = Number(v);
    if (Number.isNaN(n)) throw new Error(`${input.name}: not a number`);
    return n;
  }
  if (input.dataset.json) {
    try { return JSON.parse(v); } catch { throw new Error(`${input.name}: not valid JSON`); }
  }
  return v;
}
