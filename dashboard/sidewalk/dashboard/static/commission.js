// Poles (admin): register a pole, pick the frontages it watches, click the walk's
// corners on its newest picture, save, and send the calibration to the pole.
// Everything goes through /api/registry/… (routes/registry.py); the homography is
// computed there, this page only collects the clicks and draws what comes back.
const SVG = "http://www.w3.org/2000/svg";
const CLICKS = [
  "where the frontage starts, on the street side of the walk",
  "where it ends, on the street side",
  "where it ends, on the house side",
  "where it starts, on the house side",
];
const WORD_CLASS = { matches: "cal-ok", differs: "cal-bad", not_reported: "cal-warn", not_calibrated: "cal-none" };

function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  el.append(...children);
  return el;
}

function stylesheet() {
  // The page's own rules, loaded once (the CSP allows same-origin stylesheets only).
  if (document.getElementById("commission-css")) return;
  const link = document.createElement("link");
  Object.assign(link, { id: "commission-css", rel: "stylesheet", href: "/static/commission.css" });
  document.head.append(link);
}

export async function polesPage(ctx, arg = "") {
  const { api, h, main, toast } = ctx;
  stylesheet();
  const [poles, frontages, knocking] = await Promise.all([
    api("/api/registry/poles"), api("/api/registry/frontages"), api("/api/registry/knocking")]);
  // The village's clock, as every other page (never the browser's zone).
  const zone = ctx.state.zone || ctx.state.overview?.zone || "America/Chicago";
  const fmt = (iso) => (iso ? new Date(iso).toLocaleString("en-US", { timeZone: zone, month: "short", day: "numeric", hour: "numeric", minute: "2-digit" }) : "never");
  const rerender = (open = "") => polesPage(ctx, open);

  const register = h("form", { class: "entry pole-form", id: "register-pole", onsubmit: async (e) => {
    e.preventDefault();
    const f = e.target;
    const num = (v) => (v.trim() === "" ? null : Number(v));
    try {
      await api("/api/registry/poles", { method: "POST", body: {
        device_id: f.device_id.value.trim(), label: f.label.value.trim(),
        latitude: num(f.latitude.value), longitude: num(f.longitude.value) } });
      toast(`Pole ${f.device_id.value.trim()} registered`);
      await rerender(f.device_id.value.trim());
    } catch (err) { toast(`Not registered: ${err.message}`); }
  } },
    // The pattern attribute is compiled with the "v" flag: a bare "-" in a class is a syntax error there.
    field(h, "reg-id", "Pole id (as set up on the pole)", { name: "device_id", required: "", pattern: "[a-z0-9][a-z0-9\\-]{0,62}",
      title: "lower-case letters, digits and hyphens, starting with a letter or digit", placeholder: "pole-main-02" }),
    field(h, "reg-label", "Name", { name: "label", required: "", placeholder: "Main St at Oak" }),
    field(h, "reg-lat", "Latitude", { name: "latitude", inputmode: "decimal", placeholder: "43.21" }),
    field(h, "reg-lon", "Longitude", { name: "longitude", inputmode: "decimal", placeholder: "-88.72" }),
    h("button", { type: "submit" }, "Register pole"));

  // A pole sending before anyone registered it: its readings are refused until it is.
  const knocks = knocking.length ? h("section", { class: "panel", id: "knocking", "aria-labelledby": "knock-h" },
    h("h2", { id: "knock-h" }, "Poles sending but not registered"),
    h("p", { class: "muted" }, "Their readings are refused until each is registered under the id it sends as."),
    h("ul", { class: "knocking" }, ...knocking.map((k) => h("li", {},
      h("strong", {}, k.device_id), ` — ${k.messages} message${k.messages === 1 ? "" : "s"} refused, the last ${fmt(k.last_at)} `,
      h("button", { type: "button", class: "secondary", "aria-label": `Register ${k.device_id}`, onclick: () => {
        register.device_id.value = k.device_id;
        register.label.focus();
        toast(`Give pole ${k.device_id} a name, then Register pole`);
      } }, "Register"))))) : "";

  main.replaceChildren(
    h("h1", {}, "Poles"),
    knocks,
    h("section", { class: "panel", "aria-labelledby": "reg-h" }, h("h2", { id: "reg-h" }, "Register a pole"), register),
    ...(poles.length ? poles.map((p) => poleSection(ctx, p, frontages, fmt, rerender, arg === p.id))
      : [h("p", { class: "muted" }, "No pole is registered yet.")]));
}

// A length kept in feet, as the ordinance writes it: 50.5 → "50 ft 6 in".
function feet(ft) {
  const total = Math.round(ft * 12);
  return total % 12 ? `${Math.floor(total / 12)} ft ${total % 12} in` : `${total / 12} ft`;
}

function field(h, id, text, attrs) {
  return h("div", { class: "field" }, h("label", { for: id }, text), h("input", { id, ...attrs }));
}

function poleSection(ctx, p, frontages, fmt, rerender, open) {
  const { api, h, toast } = ctx;
  const id = p.id;
  const result = h("p", { class: "send-result", id: `send-${id}`, role: "status", "aria-live": "polite" });
  const say = (r) => {
    result.replaceChildren(h("strong", {}, { ok: "Answered: ", error: "Refused: ", no_answer: "No answer: ", not_connected: "Not sent: " }[r.outcome] || ""), r.message,
      r.transaction ? h("span", { class: "muted" }, ` (reference ${r.transaction.slice(0, 8)})`) : "");
    result.className = `send-result ${r.outcome === "ok" ? "cal-ok" : "cal-bad"}`;
  };
  // The pole's calibration tag, refreshed in place from a command's answer (no reload).
  const tag = h("span", { class: `tag ${WORD_CLASS[p.calibration]}`, "data-calibration": p.calibration }, p.calibration_words);
  const told = h("span", { class: "muted cal-told" }, p.calibration_reported_at ? ` (the pole said so ${fmt(p.calibration_reported_at)})` : "");
  const showCalibration = (r) => {
    if (!r.calibration) return;
    tag.className = `tag ${WORD_CLASS[r.calibration]}`;
    tag.dataset.calibration = r.calibration;
    tag.textContent = r.calibration_words;
    told.textContent = r.calibration_reported_at ? ` (the pole said so ${fmt(r.calibration_reported_at)})` : "";
  };
  const command = async (name, button) => {
    button.disabled = true;
    result.textContent = "Waiting for the pole's answer…";
    try {
      const r = await api(`/api/registry/poles/${encodeURIComponent(id)}/commands`, { method: "POST", body: { command: name } });
      say(r);
      showCalibration(r);
    } catch (err) { say({ outcome: "error", message: err.message }); }
    button.disabled = false;
  };
  const watched = new Set(p.frontages.map((f) => f.id));
  const others = frontages.filter((f) => !watched.has(f.id));
  const assign = h("form", { class: "entry inline", onsubmit: async (e) => {
    e.preventDefault();
    try {
      await api(`/api/registry/poles/${encodeURIComponent(id)}/frontages`, { method: "PUT", body: { frontages: [e.target.frontage.value] } });
      toast("Frontage assigned"); await rerender(id);
    } catch (err) { toast(`Not assigned: ${err.message}`); }
  } },
    h("label", { for: `add-${id}` }, "Add a frontage"),
    h("select", { id: `add-${id}`, name: "frontage" }, ...others.map((f) => h("option", { value: f.id }, f.pole ? `${f.address} (now watched by ${f.pole})` : f.address))),
    h("button", { type: "submit" }, "Assign"));

  const calibrateArea = h("div", { class: "calibrate-area" });
  const cameraOf = (f) => p.cameras.find((c) => c.frontage === f.id);
  const list = h("ul", { class: "pole-frontages" }, ...p.frontages.map((f) => h("li", {},
    h("span", {}, f.address), " ",
    h("span", { class: f.calibrated ? "cal-ok tag" : "cal-none tag" }, f.calibrated ? "calibrated" : "not calibrated"), " ",
    cameraOf(f) ? h("span", { class: "muted cal-when" }, `${fmt(cameraOf(f).calibrated_at)} by ${cameraOf(f).calibrated_by}; walk ${feet(f.length_ft)} long, ${feet(f.walk_width_ft ?? 5)} wide `) : "",
    h("button", { type: "button", class: "secondary", "aria-label": `Calibrate ${f.address}`,
      onclick: () => calibrateArea.replaceChildren(calibrator(ctx, p, f, rerender)) }, "Calibrate"))));
  // Calibrating needs the pole's picture.
  if (!p.frame_url) for (const b of list.querySelectorAll("button")) b.setAttribute("disabled", "");

  const send = h("button", { type: "button", id: `send-btn-${id}`, onclick: (e) => command("send_calibration", e.target) }, "Send to pole");
  if (!p.cameras.length) send.setAttribute("disabled", "");
  const capture = h("button", { type: "button", class: "secondary", onclick: (e) => command("capture_now", e.target) }, "Ask the pole for a new picture");
  const section = h("section", { class: "panel pole", id: `pole-${id}`, "data-pole": id, "aria-labelledby": `pole-h-${id}` },
    h("h2", { id: `pole-h-${id}` }, p.label ? `${p.label} (${id})` : id),
    h("p", { class: "pole-status" },
      h("span", {}, `Last heard: ${fmt(p.last_heard)}`), " · ",
      tag, told),
    h("h3", {}, "Frontages it watches"),
    p.frontages.length ? list : h("p", { class: "muted" }, "None yet: assign the frontages this pole's camera sees."),
    others.length ? assign : h("p", { class: "muted" }, "Every frontage in the registry is assigned to this pole."),
    p.frame_url ? "" : h("p", { class: "muted" }, "No picture from this pole yet. Ask for one once it is on line; calibrating needs it."),
    h("div", { class: "actions" }, send, capture),
    result, calibrateArea);
  if (open && p.frontages.length === 1 && p.frame_url && !p.frontages[0].calibrated) {
    calibrateArea.replaceChildren(calibrator(ctx, p, p.frontages[0], rerender));
  }
  return section;
}

function calibrator(ctx, p, f, rerender) {
  const { api, h, toast } = ctx;
  const camera = p.cameras.find((c) => c.frontage === f.id);
  let points = camera ? camera.region.map(([x, y]) => [x, y]) : [];
  const image = svg("image", { href: p.frame_url, x: 0, y: 0 });
  const marks = svg("g", { class: "marks" });
  const outline = svg("g", { class: "outline" });
  const board = svg("svg", { class: "calib-board", role: "img", "aria-label": `Newest picture from ${p.id}; click the walk's corners`, "data-clicks": "0" }, image, outline, marks);
  const steps = h("ol", { class: "calib-steps" }, ...CLICKS.map((t) => h("li", {}, `Click ${t}.`)));
  const length = h("input", { id: `len-${p.id}`, inputmode: "decimal", value: String(f.length_ft), size: "6", required: "" });
  const width = h("input", { id: `wid-${p.id}`, inputmode: "decimal", value: String(f.walk_width_ft ?? 5), size: "6", required: "" });
  const note = h("p", { class: "calib-note", role: "status" });
  const save = h("button", { type: "button", disabled: "" }, "Save calibration");
  const body = () => ({ frontage: f.id, corners: points, length_ft: Number(length.value), walk_width_ft: Number(width.value) });
  const base = `/api/registry/poles/${encodeURIComponent(p.id)}/cameras`;

  let unit = 10; // marker size in image pixels: a hundredth of the picture's width
  const draw = async () => {
    marks.replaceChildren(...points.map(([x, y], i) => svg("g", {},
      svg("circle", { cx: x, cy: y, r: unit * 0.9, class: "corner" }),
      svg("text", { x: x + unit * 1.2, y: y - unit, class: "corner-n", "font-size": unit * 2.8 }, String(i + 1)))));
    board.dataset.clicks = String(points.length);
    [...steps.children].forEach((li, i) => li.classList.toggle("done", i < points.length));
    outline.replaceChildren();
    if (points.length < 4) {
      save.setAttribute("disabled", "");
      note.textContent = `${4 - points.length} corner${points.length === 3 ? "" : "s"} to click.`;
      return;
    }
    try {
      const fit = await api(`${base}/preview`, { method: "POST", body: body() });
      outline.replaceChildren(...fit.outline.map((line, i) => svg("polyline", {
        points: line.map(([x, y]) => `${x},${y}`).join(" "), class: i < 2 ? "edge" : i === 2 ? "centre" : "cross" })));
      save.removeAttribute("disabled");
      note.textContent = "The walk as mapped: its edges, centre line and a line every 5 ft. Check it lies on the walk, then save.";
    } catch (err) { save.setAttribute("disabled", ""); note.textContent = err.message; }
  };
  const img = new Image();
  img.onload = () => {
    // Image pixels are the board's coordinates: the clicks go to the server as pixels.
    board.setAttribute("viewBox", `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
    unit = img.naturalWidth / 100;
    image.setAttribute("width", img.naturalWidth);
    image.setAttribute("height", img.naturalHeight);
    draw();
  };
  img.src = p.frame_url;
  board.addEventListener("click", (e) => {
    if (points.length >= 4) return;
    const m = board.getScreenCTM();
    if (!m) return;
    const pt = new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse());
    points.push([Math.round(pt.x * 10) / 10, Math.round(pt.y * 10) / 10]);
    draw();
  });
  for (const input of [length, width]) input.addEventListener("change", draw);
  save.addEventListener("click", async () => {
    try {
      await api(base, { method: "PUT", body: body() });
      toast(`Calibration of ${f.address} saved; send it to the pole`);
      await rerender(p.id);
    } catch (err) { note.textContent = err.message; }
  });
  return h("div", { class: "panel calibrator", id: `calibrate-${p.id}`, "aria-labelledby": `cal-h-${p.id}` },
    h("h3", { id: `cal-h-${p.id}` }, `Calibrate ${f.address}`),
    steps,
    h("div", { class: "calib-size" },
      h("label", { for: `len-${p.id}` }, "Walk length (ft)"), length,
      h("label", { for: `wid-${p.id}` }, "Walk width (ft)"), width,
      h("button", { type: "button", class: "secondary", onclick: () => { points = []; draw(); } }, "Start over")),
    h("div", { class: "calib-frame" }, board),
    note, h("div", { class: "actions" }, save));
}
