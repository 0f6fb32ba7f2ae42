// Sidewalk Watch dashboard: plain ES module, no build step, no CDN.
// Every read and action goes through the same JSON API (see /docs for OpenAPI).
import { adminPage } from "./admin.js";
import { polesPage } from "./commission.js";
import { feetInches, h, inchFraction, lineChart, mapSvg, measure } from "./draw.js";
import { billPanel, crewFields, readCrew } from "./crew.js";
import { exportsPage } from "./exports.js";
import { jsonApi } from "./http.js";
import { forgetRounds, roundsPage, startOutbox } from "./inspector.js";
import { mapPage } from "./map.js";
import { noticePage, noticesPage } from "./notices.js";
import { propertyPage } from "./property.js";
import { installSearch, searchPage } from "./search.js";
import { todayPage } from "./today.js";

const main = document.getElementById("main");
const state = { session: null, overview: null, offsetMs: 0, live: [] };
// For tests and the latency bench: every live event with its arrival time.
window.__swLive = state.live;

const plainApi = jsonApi(() => state.session);
// The first page's read starts beside the session's, a round trip sooner; its first call
// gets that answer. The Overview and Today are the pages a clerk opens the day with.
const FIRST_READ = { overview: "/api/overview/page", today: "/api/today" };
const early = new Map();
// The page being drawn: leaving it (another route) aborts its reads, so a slow answer for a
// page the user has left never paints over the page they went to (it never settles).
let reading = new AbortController();
const never = () => new Promise(() => {});
function api(path, options = {}) {
  if (options.method) return plainApi(path, options);
  const page = reading.signal;
  const ready = early.get(path);
  early.delete(path);
  const read = ready || plainApi(path, { ...options, signal: options.signal || page });
  return read.then((data) => (page.aborted ? never() : data),
    (err) => (page.aborted ? never() : Promise.reject(err)));
}

const may = (permission) => state.session.permissions.includes(permission);

// Stored names in the clerk's words (/api/words): a clock's kind, and its state by kind.
const spaced = (name) => (name ? name.charAt(0).toUpperCase() + name.slice(1).replaceAll("_", " ") : "");
const kindWords = (kind) => state.words?.kinds?.[kind] || spaced(kind);
const stateWords = (kind, s) => (s ? state.words?.states?.[kind]?.[s] || spaced(s) : "No clock yet");

function toast(text) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.classList.add("show");
  setTimeout(() => el.classList.remove("show"), 3000);
}

// One formatter per zone: building one per date cost seconds on a 2,000-row page.
const formatters = new Map();

function fmt(iso) {
  if (!iso) return "–";
  const zone = state.zone || state.overview?.zone || "America/Chicago";
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone: zone, month: "short", day: "numeric", hour: "numeric", minute: "2-digit",
    });
    formatters.set(zone, f);
  }
  return f.format(new Date(iso));
}

function countdown(deadlineIso) {
  const left = Date.parse(deadlineIso) - (Date.now() + state.offsetMs);
  const sign = left < 0 ? "overdue " : "";
  const s = Math.abs(Math.floor(left / 1000));
  const text = `${sign}${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, "0")}m ${String(s % 60).padStart(2, "0")}s`;
  return { text, overdue: left < 0 };
}

function badge(category, text) {
  const c = state.overview?.categories?.[category];
  return h("span", { class: "badge", style: `background:${c ? c.color : "#555"}` }, text || category);
}

// ---------------------------------------------------------------- overview

// The Overview draws its long tables a page at a time: 2,000 rows at once cost Chromium
// seconds of style and layout. A filter box finds any row (find-in-page sees only the rows
// drawn); "Show more" draws the next ones. A village with one page of rows sees neither.
const CLOCK_STEP = 50;
const FRONTAGE_STEP = 100;
let overviewTables = null;
let overviewMap = null;

const counted = new Intl.NumberFormat("en-US");
const thousands = (x) => counted.format(x);

// Rows are drawn once and kept by ``key``: a render draws only the rows it lacks (or that
// ``changed`` marked) and moves the rest into place, so a live event costs its own row.
function pagedTable({ id, tbody, rows, draw, text, step, find, what, empty, colspan, key }) {
  let shown = step;
  let drawn = new Map();
  const filter = h("input", { id: `${id}-filter`, type: "search", autocomplete: "off", "aria-controls": id });
  const tools = h("div", { class: "table-find" }, h("label", { for: `${id}-filter` }, find), filter);
  const status = h("span", { role: "status" });
  const more = h("button", { type: "button", class: "secondary" }, `Show ${step} more`);
  const foot = h("p", { class: "table-more" }, status, " ", more);
  function render() {
    const all = rows();
    const q = filter.value.trim().toLowerCase();
    const matched = q ? all.filter((r) => text(r).toLowerCase().includes(q)) : all;
    const page = matched.slice(0, shown);
    const none = q ? "Nothing here matches what you typed." : empty;
    const kept = new Map();
    const want = page.map((r) => {
      const row = drawn.get(key(r)) || draw(r);
      kept.set(key(r), row);
      return row;
    });
    drawn = kept;
    if (!want.length && none) want.push(h("tr", {}, h("td", { colspan, class: "muted" }, none)));
    want.forEach((row, i) => { if (tbody.children[i] !== row) tbody.insertBefore(row, tbody.children[i] || null); });
    while (tbody.children.length > want.length) tbody.lastElementChild.remove();
    tools.hidden = foot.hidden = all.length <= step;
    status.textContent = q ? `Showing ${thousands(page.length)} of the ${thousands(matched.length)} ${what} that match (${thousands(all.length)} in all).`
      : `Showing ${thousands(page.length)} of ${thousands(all.length)} ${what}.`;
    if (page.length >= matched.length && document.activeElement === more) filter.focus();
    more.hidden = page.length >= matched.length;
  }
  filter.addEventListener("input", () => { shown = step; render(); });
  more.addEventListener("click", () => { shown += step; render(); });
  // A row's record changed: drawn afresh by the next render, or ``row`` is its new drawing.
  const changed = (k, row) => (row ? drawn.set(k, row) : drawn.delete(k));
  return { tools, foot, render, changed };
}

async function overviewPage() {
  // One request, only the fields drawn (/api/overview and /api/map are the whole records).
  const overview = await api("/api/overview/page");
  state.overview = overview;
  state.offsetMs = Date.parse(overview.now) - Date.now();
  const byId = frontageIndex();
  const legend = h("ul", { class: "legend", "aria-label": "Map legend" },
    ...Object.entries(overview.categories).map(([key, c]) =>
      h("li", {}, h("span", { class: "swatch", style: `background:${c.color}` }), `${c.label} (${overview.counts[key] || 0})`)));
  const map = {
    features: overview.shapes.map((s) => ({ geometry: s.geometry, properties: { frontage: s.id, category: s.category, address: byId.get(s.id)?.address || s.id } })),
    streets: overview.streets,
  };
  const clockBody = h("tbody", { id: "clock-rows" });
  const clocks = pagedTable({
    id: "clock-rows", tbody: clockBody, rows: () => state.overview.clocks, draw: clockRow, step: CLOCK_STEP,
    text: (c) => `${c.address || c.frontage} ${kindWords(c.kind)} ${stateWords(c.kind, c.state)}`, find: "Find a frontage or state",
    what: "running clocks, soonest deadline first", empty: "No clock is running.", colspan: "4", key: (c) => c.id,
  });
  const owners = may("owner_details");
  const frontageBody = h("tbody", { id: "frontage-rows" });
  const frontages = pagedTable({
    id: "frontage-rows", tbody: frontageBody, rows: () => state.overview.frontages, draw: frontageRow, step: FRONTAGE_STEP,
    text: (f) => `${f.address} ${f.id} ${stateWords(f.kind, f.state)} ${f.owner || ""}`,
    find: owners ? "Find an address, state or owner" : "Find an address or state",
    what: "frontages", empty: "", colspan: owners ? "4" : "3", key: (f) => f.id,
  });
  overviewTables = { clocks, frontages, dirty: false };
  const live = h("ul", { class: "events", id: "live-events", "aria-live": "polite" },
    ...state.live.slice(-20).reverse().map(liveItem));
  main.replaceChildren(
    h("h1", {}, `${overview.village}: overview`),
    h("div", { class: "grid" },
      h("section", { class: "panel map", "aria-labelledby": "map-h" },
        h("h2", { id: "map-h" }, `Frontages (${overview.frontages.length})`),
        overviewMap = mapSvg(map, overview.categories, (id) => frontageLabel(id)),
        legend),
      h("div", {},
        h("section", { class: "panel", "aria-labelledby": "clocks-h" },
          h("h2", { id: "clocks-h" }, "Active clocks"),
          clocks.tools,
          h("div", { class: "scroll", tabindex: "0", "aria-label": "Active clocks, soonest deadline first" },
            h("table", {}, h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Frontage"), h("th", { scope: "col" }, "Clock"), h("th", { scope: "col" }, "State"), h("th", { scope: "col" }, "Time left"))), clockBody)),
          clocks.foot),
        h("section", { class: "panel", "aria-labelledby": "alerts-h" },
          h("h2", { id: "alerts-h" }, "New alerts"),
          h("ul", { class: "events", id: "alerts" }, ...overview.alerts.map((a) =>
            h("li", {}, h("strong", {}, a.what), a.about ? ` ${a.about}` : "", ` · ${fmt(a.at)}`)))),
        h("section", { class: "panel", "aria-labelledby": "live-h" },
          h("h2", { id: "live-h" }, "Live clock events"), live))),
    h("section", { class: "panel", "aria-labelledby": "frontages-h" },
      h("h2", { id: "frontages-h" }, "Frontages by state"),
      frontages.tools,
      // On a phone the table scrolls in its box (the Owner column was cut off at 390 px).
      h("div", { class: "scroll", tabindex: "0", "aria-label": "Frontages by state" }, h("table", { id: "frontage-table" },
        h("thead", {}, h("tr", {}, ...["Address", "State", "Deadline", ...(owners ? ["Owner"] : [])].map((t) => h("th", { scope: "col" }, t)))),
        frontageBody)),
      frontages.foot),
  );
  frontages.render();
  clocks.render();
  tick();
}

function frontageRow(f) {
  return h("tr", { "data-frontage": f.id },
    h("td", {}, h("a", { href: `#property/${encodeURIComponent(f.id)}` }, f.address)),
    h("td", { class: "state" }, badge(f.category, stateWords(f.kind, f.state))),
    h("td", {}, fmt(f.deadline)), ...(may("owner_details") ? [h("td", {}, f.owner || "–")] : []));
}

function clockRow(c) {
  return h("tr", { "data-clock": c.id },
    h("td", {}, c.address || c.frontage), h("td", {}, kindWords(c.kind), c.unconfirmed ? " " : "", c.unconfirmed ? h("span", { class: "unconfirmed", title: "uses a value the ordinance text does not settle" }, "unconfirmed") : ""),
    h("td", {}, badge(c.category, stateWords(c.kind, c.state))),
    h("td", { class: "countdown", "data-deadline": c.deadline || "" }, c.deadline ? countdown(c.deadline).text : "–"));
}

// Indexed once per overview: a search per map shape was 2,000 × 2,000.
function frontageIndex() {
  if (state.byFrontage?.source !== state.overview) {
    state.byFrontage = { source: state.overview, index: new Map((state.overview?.frontages || []).map((x) => [x.id, x])) };
  }
  return state.byFrontage.index;
}

function frontageLabel(id) {
  const f = frontageIndex().get(id);
  return f ? `${f.address}: ${stateWords(f.kind, f.state)}` : id;
}

function tick() {
  for (const cell of document.querySelectorAll("td.countdown[data-deadline]")) {
    if (!cell.dataset.deadline) continue;
    const { text, overdue } = countdown(cell.dataset.deadline);
    cell.textContent = text;
    cell.classList.toggle("overdue", overdue);
  }
}
setInterval(tick, 1000);

function liveItem(e) {
  return h("li", { "data-event": e.id },
    h("strong", {}, frontageIndex().get(e.frontage)?.address || e.frontage),
    ` ${kindWords(e.clock_kind)}: ${stateWords(e.clock_kind, e.from)} → `, badge(e.category, stateWords(e.clock_kind, e.to)), ` at ${fmt(e.at)}`);
}

// Soonest deadline first, clocks without one after them in the order they came (as the server).
const deadlineKey = (c) => (c.deadline ? Date.parse(c.deadline) : Infinity);
const bySoonest = (a, b) => deadlineKey(a) - deadlineKey(b) || 0;

// A clock event applied to the Overview's own rows: the clock's row (added, changed or gone)
// and its frontage's row, instead of reading the whole village again. A missed event ends in
// a "resync", which reads everything afresh.
function applyTransition(e) {
  const o = state.overview;
  if (!o?.clocks) return;
  const i = o.clocks.findIndex((c) => c.id === e.clock_id);
  if (e.active) {
    const f = frontageIndex().get(e.frontage);
    // The clock's row as the server makes it for a reload (its "unconfirmed" mark too).
    const clock = Object.assign(i >= 0 ? o.clocks[i] : {}, e.clock || { id: e.clock_id, frontage: e.frontage, kind: e.clock_kind, state: e.to, category: e.category, deadline: e.deadline, unconfirmed: false });
    clock.address = f?.address || null;
    if (i < 0) o.clocks.push(clock);
  } else if (i >= 0) o.clocks.splice(i, 1);
  const f = frontageIndex().get(e.frontage);
  if (f && (e.active || e.clock_kind === "clearing")) {
    Object.assign(f, { kind: e.clock_kind, state: e.to, category: e.category, deadline: e.active ? e.deadline : null });
    // Its row, where it is drawn, redrawn in place (the table's order does not change).
    const row = document.querySelector(`#frontage-rows tr[data-frontage="${CSS.escape(e.frontage)}"]`);
    const fresh = row ? frontageRow(f) : undefined;
    if (row) row.replaceWith(fresh);
    overviewTables?.frontages.changed(f.id, fresh);
  }
  overviewTables?.clocks.changed(e.clock_id);
  // A storm moves many clocks at once: one sort and one render per frame, not per event; the
  // render draws the changed clocks' rows only.
  if (overviewTables && !overviewTables.dirty) {
    overviewTables.dirty = true;
    requestAnimationFrame(() => {
      overviewTables.dirty = false;
      o.clocks.sort(bySoonest);
      if (currentPage() === "overview") { overviewTables.clocks.render(); tick(); }
    });
  }
}

function onTransition(e) {
  e.received_ms = Date.now();
  state.live.push(e);
  const color = state.overview?.categories?.[e.category]?.color;
  if (overviewMap?.isConnected && overviewMap.recolor && color && (e.active || e.clock_kind === "clearing")) {
    overviewMap.recolor(e.frontage, e.category, color);
  }
  const list = document.getElementById("live-events");
  if (list) list.prepend(liveItem(e));
  applyTransition(e);
}

function connectLive() {
  const status = document.getElementById("live-status");
  const source = new EventSource("/api/events");
  source.addEventListener("hello", () => { status.textContent = "live"; status.classList.add("on"); });
  source.addEventListener("transition", (m) => onTransition(JSON.parse(m.data)));
  source.addEventListener("audit", (m) => {
    const a = JSON.parse(m.data);
    const alerts = document.getElementById("alerts");
    if (alerts && a.alert) alerts.prepend(h("li", {}, h("strong", {}, a.action), ` ${a.subject} · ${a.actor}`));
  });
  source.addEventListener("resync", () => route());
  // The session ended (logged out elsewhere, account disabled, password reset): log in again.
  source.addEventListener("ended", () => { source.close(); window.location.assign("/login"); });
  source.onerror = () => { status.textContent = "reconnecting…"; status.classList.remove("on"); };
  // No signal (a phone on the round): say so plainly; the event stream comes back by itself.
  window.addEventListener("offline", () => { status.textContent = "no connection"; status.classList.remove("on"); });
  window.addEventListener("online", () => { if (!status.classList.contains("on")) status.textContent = "reconnecting…"; });
}

// ---------------------------------------------------------------- notices

function abatementBlock(a) {
  const money = may("money");
  // The crew's hours: entered where the crew records that it finished (the notice's page),
  // or here; changed here until the bill is issued.
  const crewForm = () => {
    const problem = h("div", { class: "problem", role: "alert" });
    const form = h("form", { class: "crew-form", novalidate: "", onsubmit: async (e) => {
      e.preventDefault();
      const crew = readCrew(form);
      if (crew.problem) { problem.textContent = crew.problem; problem.classList.add("show"); return; }
      try {
        await api(`/api/abatements/${a.id}/crew-work`, { method: "POST", body: crew });
        toast("The crew's hours are recorded"); await route();
      } catch (err) { problem.textContent = err.message; problem.classList.add("show"); }
    } }, crewFields(h, `crew-${a.id}`, a.rates, a.crew_work),
      h("div", { class: "actions" }, h("button", { type: "submit" }, "Record the crew's hours")), problem);
    return form;
  };
  const mayCrew = !a.bill && a.status !== "withdrawn" && (money || may("notice_action"));
  const crewBox = h("div", { class: "crew-box" });
  if (a.crew_work) {
    crewBox.append(h("p", {}, h("strong", {}, "Crew's hours: "), a.crew_work.words));
    if (mayCrew) crewBox.append(h("button", { type: "button", class: "secondary", onclick: () => crewBox.replaceChildren(crewForm()) }, "Change the crew's hours"));
  } else if (mayCrew) {
    crewBox.append(h("p", { class: "muted" }, "The crew's hours are not entered yet."), crewForm());
  }
  const billing = money && !a.bill && a.status === "completed"
    ? (a.crew_work ? billPanel(ctx, a, () => route()) : h("p", { class: "muted" }, "Enter the crew's hours to bill this work."))
    : "";
  const payForm = money && a.bill && a.bill.status === "open" ? h("form", { class: "entry inline", onsubmit: async (e) => {
    e.preventDefault();
    const f = e.target;
    try {
      await api(`/api/bills/${a.bill.id}/payments`, { method: "POST", body: { key: f.key.value, amount: f.amount.value, method: f.method.value } });
      toast("Payment recorded"); await route();
    } catch (err) { toast(`Refused: ${err.message}`); }
  } },
    h("input", { type: "hidden", name: "key", value: crypto.randomUUID() }),
    h("label", { for: `pay-${a.id}` }, "Payment $"), h("input", { id: `pay-${a.id}`, name: "amount", required: "", size: "8" }),
    h("label", { for: `method-${a.id}` }, "by"), h("select", { id: `method-${a.id}`, name: "method" }, h("option", {}, "check"), h("option", {}, "cash"), h("option", {}, "card")),
    h("button", { type: "submit" }, "Record payment")) : "";
  return h("div", { class: "panel" },
    h("h2", {}, `Village work at ${a.address}: ${({ ordered: "crew to send", completed: "work done", withdrawn: "order withdrawn (the service it rested on was corrected)" })[a.status] || a.status}`),
    h("p", {}, `Why: ${a.reason_words}. Ordered ${fmt(a.ordered_at)}.`),
    h("ul", {}, ...a.expenses.map((e) => h("li", {}, `$${e.amount} ${e.description} (${fmt(e.incurred_at)})`))),
    a.bill ? h("p", {}, `Bill${a.bill.number ? ` ${a.bill.number}` : ""}: $${a.bill.amount}, paid $${a.bill.paid}, left to pay $${a.bill.balance} (${({ open: "unpaid", paid: "paid", certified: "on the tax roll" })[a.bill.status] || a.bill.status})${a.bill.due_date ? `, due ${a.bill.due_date}` : ""}`) : "",
    a.bill && a.bill.held ? h("p", { class: "error-text" }, `Held, not sent: ${a.bill.held}`) : "",
    crewBox, billing, payForm);
}

// ---------------------------------------------------------------- site

async function sitePage() {
  const devices = await api("/api/devices");
  const select = h("select", { id: "site-device", onchange: () => drawSite(select.value) },
    ...devices.map((d) => h("option", { value: d.id }, d.name || d.id)));
  main.replaceChildren(h("h1", {}, "Site"),
    h("div", { class: "panel" }, h("label", { for: "site-device" }, "Pole"), select),
    h("div", { id: "site-body" }));
  if (devices.length) await drawSite(devices[0].id);
}

async function drawSite(device) {
  const body = document.getElementById("site-body");
  let data;
  try { data = await api(`/api/sites/${encodeURIComponent(device)}/series?hours=72`); } catch (err) {
    body.replaceChildren(h("p", { class: "error" }, err.message)); return;
  }
  const w = data.weather;
  const zone = state.overview?.zone;
  const charts = [
    ["Snow depth (in)", "in", [["depth", w.snow_depth_mm, "#3b6fb6"]]],
    ["Temperature (°F)", "f", [["air", w.air_temp_c, "#c0392b"], ["surface", w.surface_temp_c, "#8a6d00"], ["ground", w.ground_temp_c, "#1b7f3b"]]],
  ].map(([title, unit, lines]) => h("section", { class: "panel chart" }, h("h2", {}, title, h("span", { class: "chart-hint" }, " · point at the chart for values, SI beside them")), lineChart(title, w.ts, lines, undefined, zone, unit)));
  const widths = Object.entries(data.cleared_width);
  const palette = ["#0b5cad", "#a4161a", "#1b7f3b", "#6b4fa1", "#8a6d00"];
  const widthChart = h("section", { class: "panel chart" }, h("h2", {}, "Cleared width (ft); dashed = required ", measure("ft", data.required_width_mm)),
    widths.length ? lineChart("Cleared width", widths[0][1].ts, widths.map(([f, s], i) => [data.addresses?.[f] || f, s.mm, palette[i % palette.length], s.ts]), data.required_width_mm, zone, "ft") : h("p", { class: "muted" }, "No camera measurements."));
  const frames = h("section", { class: "panel" }, h("h2", {}, "Latest measured path"),
    ...Object.entries(data.latest).map(([f, s]) => h("figure", {}, s.frame_url ? framed(s, data.required_width_mm) : "", pathSketch(s, data.required_width_mm),
      h("figcaption", {}, `${data.addresses?.[f] || f}: cleared `, h("span", { class: "si", title: `${s.cleared_width_mm.toFixed(1)} mm` }, s.cleared_width_text), `, cover ${(s.snow_cover_fraction * 100).toFixed(0)} %, ${fmt(new Date(s.ts).toISOString())}${s.ice_suspected ? ", ice suspected" : ""}`))));
  body.replaceChildren(...charts, widthChart, frames);
}

function framed(s, requiredMm) {
  // The camera's frame with the measured clear width drawn across its foot, beside the 4-ft line.
  const img = h("img", { src: s.frame_url, alt: `camera frame for this measurement (${s.frame_sha256.slice(0, 12)}…)`, class: "frame" });
  const share = Math.min(s.cleared_width_mm / 1524, 1) * 100;
  const need = Math.min(requiredMm / 1524, 1) * 100;
  return h("div", { class: "frame-wrap" }, img,
    h("div", { class: "frame-path", style: `width:${share.toFixed(1)}%`, title: "measured clear path" }),
    h("div", { class: "frame-need", style: `width:${need.toFixed(1)}%`, title: "required width" }));
}

function pathSketch(s, requiredMm) {
  // The walk as the camera sees it (5 ft), snow in grey and the measured clear path drawn on it.
  const walk = 1524;
  const scale = 300 / walk;
  const clear = Math.min(s.cleared_width_mm, walk) * scale;
  const need = requiredMm * scale;
  const ns = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(ns, "svg");
  svg.setAttribute("viewBox", "0 0 320 70");
  svg.setAttribute("class", "path-sketch");
  svg.setAttribute("role", "img");
  svg.setAttribute("aria-label", `cleared ${s.cleared_width_text} of ${feetInches(requiredMm)} required`);
  const rect = (x, y, width, height, fill, extra = {}) => {
    const r = document.createElementNS(ns, "rect");
    Object.entries({ x, y, width, height, fill, ...extra }).forEach(([k, v]) => r.setAttribute(k, v));
    svg.append(r);
  };
  rect(10, 10, 300, 50, "#d9dde2");
  rect(10, 10, clear, 50, "#9aa3ad");
  rect(10, 8, need, 54, "none", { stroke: "#a4161a", "stroke-width": 2, "stroke-dasharray": "5 3" });
  return svg;
}

// ---------------------------------------------------------------- defects, cold weather, devices

async function defectsPage() {
  const d = await api("/api/defects");
  const num = (v) => (v === null || v === undefined ? "–" : Number(v).toFixed(1));
  const pct = (f) => (f === null || f === undefined ? "–" : `${Math.round(f * 100)} %`);
  // How each frontage's block count is known (the 80 % rule's denominator).
  const basis = (c) => c.basis === "recorded" ? `${c.frontage}: ${c.blocks} (recorded)`
    : c.basis === "length_spacing" ? `${c.frontage}: ${c.blocks} (length ÷ ${num(c.spacing_ft)} ft joint spacing)`
    : `${c.frontage}: not known`;
  const owners = h("section", { class: "panel" }, h("h2", {}, "Owners (§ 370-5 (11), 80 % rule)"),
    d.owners.length
      ? h("table", { class: "owners" },
          h("thead", {}, h("tr", {}, ...["Owner", "Frontages", "Blocks", "Share of owner's blocks", "Block count", "Replace entire sidewalk"].map((t) => h("th", {}, t)))),
          h("tbody", {}, ...d.owners.map((o) => h("tr", {},
            h("td", {}, o.owner ? o.owner.name : "–"), h("td", {}, o.frontages.join(", ")),
            h("td", { class: "owner-status" }, o.status), h("td", {}, pct(o.defective_fraction)),
            h("td", {}, o.counts.map(basis).join("; ")),
            h("td", { class: o.replace_entire_sidewalk ? "bad" : "" }, o.replace_entire_sidewalk ? "yes" : "no")))))
      : h("p", { class: "muted" }, "No surveyed blocks yet."));
  const checkRow = (b, c) => h("tr", { class: c.failed ? "bad" : "" },
    h("td", {}, String(b.block)), h("td", {}, c.rule.replaceAll("_", " ")),
    h("td", {}, measure("in", c.measured_mm, 2), " ± ", measure("in", c.uncertainty_mm, 2)), h("td", { title: `${c.limit_mm} mm` }, inchFraction(c.limit_mm)),
    h("td", {}, c.failed ? "defective" : "ok", c.confident ? "" : " (within 2σ)"), h("td", {}, c.citation || ""));
  const inspection = (i) => h("section", { class: "panel inspection" },
    h("h2", {}, `${i.address} (${i.frontage}) — ${spaced(i.kind)} survey, ${i.source}, ${fmt(i.surveyed_at)}`),
    i.status !== "ok" ? h("p", { class: "error-text" }, `Not measured: ${i.failure}`) : "",
    i.evidence_url ? h("img", { src: i.evidence_url, alt: `annotated evidence for ${i.source}`, class: "frame evidence" }) : "",
    i.blocks.length
      ? h("table", {},
          h("thead", {}, h("tr", {}, ...["Block", "Rule", "Measured", "Limit", "Verdict", "Citation"].map((t) => h("th", {}, t)))),
          h("tbody", {}, ...i.blocks.flatMap((b) => b.checks.map((c) => checkRow(b, c)))))
      : "");
  main.replaceChildren(h("h1", {}, "Defects"),
    h("section", { class: "panel" },
      h("p", {}, `Replacement rule: ${d.replacement_share.value} ${d.replacement_share.unit} of an owner's blocks defective → the entire sidewalk is replaced (${d.replacement_share.citation}).`),
      h("p", {}, "Limits: ", ...d.limits.flatMap((l, i) => [i ? "; " : "", `${l.rule.replaceAll("_", " ")} `, h("span", { class: "si", title: `${l.limit_mm} mm` }, inchFraction(l.limit_mm)), ` (${l.citation})`]), ".")),
    owners,
    ...(d.inspections.length ? d.inspections.map(inspection) : [h("p", { class: "muted" }, "No inspection results are stored yet.")]));
}

async function coldPage() {
  const c = await api("/api/cold-weather");
  const yes = (b) => (b ? "yes" : "no");
  main.replaceChildren(h("h1", {}, "Cold weather"),
    h("div", { class: "grid" },
      h("section", { class: "panel" }, h("h2", {}, `Windows on ${c.today}`),
        h("table", {}, h("tbody", {},
          h("tr", {}, h("th", { scope: "row" }, `Frozen-ground window (no openings, ${c.frozen_ground_window.start} – ${c.frozen_ground_window.end})`), h("td", {}, yes(c.frozen_ground_window.active)), h("td", {}, c.frozen_ground_window.citation || "")),
          h("tr", {}, h("th", { scope: "row" }, "Sump discharge to the back yard"), h("td", {}, yes(c.sump_discharge_window.active)), h("td", {}, c.sump_discharge_window.citation || ""))))),
      h("section", { class: "panel" }, h("h2", {}, "Pour window"),
        h("p", {}, `No pour if the air may fall below ${c.pour_rules.min_temp_f} °F within ${c.pour_rules.window} h, or on frozen subgrade (≤ ${c.pour_rules.frozen_subgrade_at_or_below} °F`, c.pour_rules.frozen_subgrade_unconfirmed ? h("span", { class: "unconfirmed" }, "unconfirmed") : "", `) — ${c.pour_rules.citation}.`),
        h("table", {}, h("thead", {}, h("tr", {}, ...["Pole", "Ground", "Probe depth", "Frozen subgrade"].map((t) => h("th", { scope: "col" }, t)))),
          h("tbody", {}, ...(c.subgrade.length ? c.subgrade.map((s) => h("tr", {}, h("td", {}, s.device), h("td", {}, measure("f", s.ground_temp_c)), h("td", {}, measure("in", s.probe_depth_mm)), h("td", {}, yes(s.frozen))))
            : [h("tr", {}, h("td", { colspan: "4", class: "muted" }, "No ground-probe readings: frozen subgrade unknown."))]))))),
    h("section", { class: "panel" }, h("h2", {}, "Keep-off, subgrade and permit clocks"),
      c.clocks.length ? h("table", {}, h("tbody", {}, ...c.clocks.map((k) => h("tr", {}, h("td", {}, k.address || k.frontage), h("td", {}, kindWords(k.kind)), h("td", {}, stateWords(k.kind, k.state)), h("td", {}, fmt(k.deadline))))))
        : h("p", { class: "muted" }, "No cold-weather clocks recorded.")));
}

async function devicesPage() {
  const [devices, letters] = await Promise.all([api("/api/devices"), api("/api/dead-letters")]);
  // The camera's calibration in words: the registry's (when, by whom) and whether the pole runs it.
  const calibration = (d) => h("td", { class: "calibration", "data-calibration": d.calibration },
    d.calibration, d.calibrated_at ? h("span", { class: "cal-when" }, ` · calibrated ${fmt(d.calibrated_at)}${d.calibrated_by ? ` by ${d.calibrated_by}` : ""}`) : "",
    d.calibration_reported_at ? h("span", { class: "cal-when" }, ` · pole last reported ${fmt(d.calibration_reported_at)}`) : "");
  main.replaceChildren(h("h1", {}, "Devices"),
    h("section", { class: "panel" }, h("div", { class: "scroll", tabindex: "0", "aria-label": "Poles" }, h("table", {},
      h("thead", {}, h("tr", {}, ...["Device", "Availability", "Camera calibration", "Readings", "Complete up to reading no.", "Backlog", "Data gaps", "Dead letters"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...devices.map((d) => h("tr", {}, h("td", {}, d.name, d.name !== d.id ? h("span", { class: "muted" }, ` (${d.id})`) : ""), h("td", { class: "heard" }, d.heard), calibration(d),
        h("td", {}, String(d.readings ?? "–")), h("td", {}, String(d.stored_up_to ?? "–")), h("td", {}, String(d.backlog ?? "–")),
        h("td", {}, d.gaps ? (d.gaps.length ? d.gaps.map((g) => `${g.from}–${g.to}${g.lost ? " lost" : ""}`).join(", ") : "none") : "–"),
        h("td", {}, String(d.dead_letters ?? "–")))))))),
    // Refused messages in words: when on the village's clock, the pole by name, what was wrong.
    h("section", { class: "panel" }, h("h2", {}, "Messages refused (newest first)"),
      letters.length ? h("div", { class: "scroll", tabindex: "0", "aria-label": "Messages refused" }, h("table", { id: "dead-letters" },
        h("thead", {}, h("tr", {}, ...["When", "Pole", "What was wrong", "Details"].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, ...letters.map((l) => h("tr", {}, h("td", {}, l.received), h("td", {}, l.pole), h("td", {}, l.why), h("td", { class: "muted" }, l.detail))))))
        : h("p", { class: "muted" }, "None.")));
}

// ---------------------------------------------------------------- routing

// The views in their own modules (today.js, notices.js, inspector.js) get what they share.
const ctx = { api, h, main, may, toast, state, abatementBlock, route: () => route() };
const PAGES = {
  today: () => todayPage(ctx), overview: overviewPage, notices: () => noticesPage(ctx),
  notice: (number) => noticePage(ctx, number), rounds: () => roundsPage(ctx),
  site: sitePage, defects: defectsPage, cold: coldPage, devices: devicesPage,
  poles: (device) => polesPage(ctx, device),
  admin: () => adminPage(ctx), exports: () => exportsPage(ctx),
  map: () => mapPage(ctx), property: (id) => propertyPage(ctx, id), search: (q) => searchPage(ctx, q),
};
// "#notice/CLY-2026-000001": a page and its argument.
const currentRoute = () => {
  const [name, ...rest] = location.hash.slice(1).split("/");
  return name in PAGES ? [name, decodeURIComponent(rest.join("/"))] : ["today", ""];
};
const currentPage = () => currentRoute()[0];

// On a phone the links are one row that scrolls: keep the current page's link in view.
function currentLinkInView() {
  const nav = document.querySelector("header.top nav");
  const here = nav?.querySelector("a[aria-current]");
  if (nav && here && nav.scrollWidth > nav.clientWidth) nav.scrollLeft = here.offsetLeft - nav.offsetLeft - (nav.clientWidth - here.offsetWidth) / 2;
}
window.addEventListener("resize", currentLinkInView);

async function route() {
  const [page, arg] = currentRoute();
  const section = page === "notice" ? "notices" : page;
  for (const a of document.querySelectorAll("nav a")) {
    if (a.dataset.page === section) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  currentLinkInView();
  reading.abort();
  const mine = (reading = new AbortController()).signal;
  try { await PAGES[page](arg); } catch (err) {
    if (mine.aborted) return;
    main.replaceChildren(h("p", { class: "error" }, err.message));
  }
  if (!mine.aborted) document.body.dataset.ready = page;
}

async function start() {
  const first = FIRST_READ[currentPage()];
  if (first) early.set(first, plainApi(first));
  [state.session, state.words] = await Promise.all([api("/api/session"), api("/api/words")]);
  // The role in words beside the name where there is room (the header stays one line).
  document.getElementById("who").replaceChildren(state.session.username, h("span", { class: "role" }, ` (${state.session.role})`));
  document.getElementById("logout").addEventListener("click", async () => {
    await forgetRounds(); // what the phone kept of the round (inspector.js)
    await api("/api/session", { method: "DELETE" });
    window.location.assign("/login");
  });
  // Commissioning poles is the administrator's (the API refuses everyone else).
  document.querySelector('nav a[data-page="poles"]').hidden = !may("users");
  document.querySelector('nav a[data-page="admin"]').hidden = !may("users");
  document.querySelector('nav a[data-page="exports"]').hidden = !may("owner_details");
  window.addEventListener("hashchange", route);
  connectLive();
  installSearch(ctx);
  // Rounds: findings kept on the phone with no signal are sent when the connection returns.
  startOutbox(ctx);
  await route();
}

start();
