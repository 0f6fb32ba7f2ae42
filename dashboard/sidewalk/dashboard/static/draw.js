// DOM and SVG drawing helpers: the map (GeoJSON → SVG, no tiles) and line charts.
const SVG = "http://www.w3.org/2000/svg";

// h("tag", {attrs, onclick}, ...children): builds elements without innerHTML (no XSS).
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (key.startsWith("on") && typeof value === "function") el.addEventListener(key.slice(2), value);
    // CSSOM, not the style attribute: the page's CSP refuses inline style attributes.
    else if (key === "style") el.style.cssText = value;
    else el.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === "" || child === null || child === undefined) continue;
    el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  el.append(...children);
  return el;
}

function rings(geometry) {
  if (geometry.type === "Polygon") return [geometry.coordinates[0]];
  if (geometry.type === "MultiPolygon") return geometry.coordinates.map((p) => p[0]);
  if (geometry.type === "LineString") return [geometry.coordinates];
  if (geometry.type === "MultiLineString") return geometry.coordinates;
  return [];
}

// Lon/lat to the map's 1000-wide drawing: an equirectangular projection with the x scale
// shrunk by cos(latitude), which is exact enough for one village.
function fitted(all) {
  let [minX, maxX, minY, maxY] = [Infinity, -Infinity, Infinity, -Infinity];
  for (const [x, y] of all) {
    if (x < minX) minX = x; if (x > maxX) maxX = x;
    if (y < minY) minY = y; if (y > maxY) maxY = y;
  }
  const k = Math.cos(((minY + maxY) / 2) * Math.PI / 180);
  const width = 1000;
  const spanX = Math.max((maxX - minX) * k, 1e-9);
  const spanY = Math.max(maxY - minY, 1e-9);
  const scale = (width - 40) / Math.max(spanX, spanY * 1.6);
  const height = Math.max(spanY * scale + 40, 160);
  const px = (p) => [20 + (p[0] - minX) * k * scale, height - 20 - (p[1] - minY) * scale];
  return { px, width, height };
}

// Above this many frontages the map is one canvas (MAP_CANVAS_FROM): 2,000 SVG shapes, each
// a tab stop with its own name, cost Chromium most of a second to build, style and paint.
export const MAP_CANVAS_FROM = 100;

// Fit every frontage into an SVG (a small village: each shape named and reached by Tab) or,
// past MAP_CANVAS_FROM frontages, one canvas (mapCanvas).
export function mapSvg(collection, categories, label) {
  const streets = collection.streets || [];
  const all = collection.features.concat(streets).flatMap((f) => rings(f.geometry).flat());
  if (!all.length) return h("p", { class: "muted" }, "No frontages to draw.");
  if (collection.features.length > MAP_CANVAS_FROM) return mapCanvas(collection, categories, label, fitted(all));
  const { px, width, height } = fitted(all);
  const svg = s("svg", { viewBox: `0 0 ${width} ${height.toFixed(0)}`, role: "group", "aria-label": "Map of frontages colored by state" });
  for (const street of streets) {
    for (const ring of rings(street.geometry)) {
      const pts = ring.map(px);
      svg.append(s("path", { d: pts.map((p, i) => `${i ? "L" : "M"}${p[0].toFixed(1)},${p[1].toFixed(1)}`).join("") + "Z", class: "street", "aria-hidden": "true" }));
      const ys = pts.map((p) => p[1]);
      svg.append(s("text", { x: Math.min(...pts.map((p) => p[0])) + 6, y: (Math.min(...ys) + Math.max(...ys)) / 2 + 5, class: "street-name", "aria-hidden": "true" }, street.properties.street));
    }
  }
  // A frontage opens its property page (click, or Enter when focused): one listener for the
  // map, not two per shape (2,000 of them in a big village).
  const open = (e) => {
    const shape = e.target.closest?.("[data-frontage-shape]");
    if (shape) location.hash = `#property/${encodeURIComponent(shape.getAttribute("data-frontage-shape"))}`;
  };
  svg.addEventListener("click", open);
  svg.addEventListener("keydown", (e) => { if (e.key === "Enter") open(e); });
  const labelled = collection.features.length <= 60;
  for (const feature of collection.features) {
    const props = feature.properties;
    const color = (categories[props.category] || categories.none).color;
    for (const ring of rings(feature.geometry)) {
      const d = ring.map((p, i) => `${i ? "L" : "M"}${px(p).map((v) => v.toFixed(1)).join(",")}`).join("") + (feature.geometry.type.endsWith("Polygon") ? "Z" : "");
      const path = s("path", {
        // A walk is 5 ft deep: outlined in its own colour so even a long street shows it.
        d, fill: color, stroke: color, class: "frontage", tabindex: "0", role: "img",
        "data-frontage-shape": props.frontage, "data-category": props.category,
        "aria-label": label(props.frontage),
      }, s("title", {}, label(props.frontage)));
      svg.append(path);
      if (labelled) {
        const c = ring.map(px).reduce(([x, y], [u, v]) => [x + u / ring.length, y + v / ring.length], [0, 0]);
        const number = props.address.split(" ")[0];
        // Odd numbers are on the north side (§ 370-16): label them above, even ones below.
        svg.append(s("text", { x: c[0], y: c[1] + (Number(number) % 2 ? -10 : 20), class: "house-number", "aria-hidden": "true" }, number));
      }
    }
  }
  svg.setAttribute("data-shapes-drawn", String(collection.features.length));
  svg.recolor = (frontage, category, color) => {
    const shape = svg.querySelector(`[data-frontage-shape="${CSS.escape(frontage)}"]`);
    if (!shape) return;
    shape.setAttribute("fill", color);
    shape.setAttribute("stroke", color);
    shape.setAttribute("data-category", category);
    shape.classList.remove("flash");
    void shape.getBBox?.();
    shape.classList.add("flash");
  };
  return svg;
}

// A big village's map: every frontage painted on one canvas, repainted at most once per
// animation frame (a live event recolours its shape). The pointer names the frontage under it
// (the canvas's title) and a click opens its property page; the keyboard's way to each property
// is the frontage table's address links, whose filter finds any frontage. ``canvas.shapes``:
// each frontage's id, category and box in the drawing's units (for the tests). The Map page
// draws its big village with it too, the parcels (``collection.parcels``) beneath.
export function mapCanvas(collection, categories, label, { px, width, height }) {
  const canvas = h("canvas", {
    class: "geo-canvas", role: "img", width: String(width), height: String(Math.round(height)),
    "aria-label": `Map of ${collection.features.length} frontages coloured by state; each is listed below with its state`,
  });
  const ringPath = (ring) => {
    const path = new Path2D();
    ring.forEach((p, i) => { const [x, y] = px(p); if (i) path.lineTo(x, y); else path.moveTo(x, y); });
    path.closePath();
    return path;
  };
  const parcels = (collection.parcels || []).flatMap((f) => rings(f.geometry).map(ringPath));
  const streets = [];
  for (const street of collection.streets || []) {
    for (const ring of rings(street.geometry)) {
      const pts = ring.map(px);
      const path = new Path2D();
      pts.forEach(([x, y], i) => (i ? path.lineTo(x, y) : path.moveTo(x, y)));
      path.closePath();
      const ys = pts.map((p) => p[1]);
      streets.push({ path, name: street.properties.street, x: Math.min(...pts.map((p) => p[0])) + 6, y: (Math.min(...ys) + Math.max(...ys)) / 2 + 5 });
    }
  }
  const shapes = [];
  const byId = new Map();
  for (const feature of collection.features) {
    const props = feature.properties;
    const closed = feature.geometry.type.endsWith("Polygon");
    for (const ring of rings(feature.geometry)) {
      const path = new Path2D();
      let [x0, y0, x1, y1] = [Infinity, Infinity, -Infinity, -Infinity];
      ring.forEach((p, i) => {
        const [x, y] = px(p);
        if (i) path.lineTo(x, y); else path.moveTo(x, y);
        if (x < x0) x0 = x; if (x > x1) x1 = x;
        if (y < y0) y0 = y; if (y > y1) y1 = y;
      });
      if (closed) path.closePath();
      const shape = { id: props.frontage, category: props.category, closed, path, box: [x0, y0, x1 - x0, y1 - y0], flash: 0 };
      shapes.push(shape);
      if (!byId.has(shape.id)) byId.set(shape.id, []);
      byId.get(shape.id).push(shape);
    }
  }
  const colour = (category) => (categories[category] || categories.none).color;
  let cssWidth = 0;
  let pending = false;
  let over = null;
  function paint() {
    pending = false;
    cssWidth = canvas.clientWidth || width;
    const ratio = window.devicePixelRatio || 1;
    const pixels = Math.max(1, Math.round(cssWidth * ratio));
    if (canvas.width !== pixels) {
      canvas.width = pixels;
      canvas.height = Math.max(1, Math.round((pixels * height) / width));
    }
    const g = canvas.getContext("2d");
    const k = canvas.width / width;
    const onScreen = width / cssWidth; // drawing units per CSS pixel: strokes keep their screen width
    g.setTransform(1, 0, 0, 1, 0, 0);
    g.fillStyle = "#e9edf1";
    g.fillRect(0, 0, canvas.width, canvas.height);
    g.setTransform(k, 0, 0, k, 0, 0);
    g.lineJoin = "round";
    g.fillStyle = "#f7f4ea"; g.strokeStyle = "#8a7f62"; g.lineWidth = onScreen;
    for (const parcel of parcels) { g.fill(parcel); g.stroke(parcel); }
    for (const st of streets) {
      g.fillStyle = "#c3cad2"; g.fill(st.path);
      g.strokeStyle = "#fff"; g.lineWidth = onScreen; g.stroke(st.path);
    }
    g.fillStyle = "#4b5560";
    g.font = "600 14px system-ui, sans-serif";
    for (const st of streets) g.fillText(st.name, st.x, st.y);
    const now = performance.now();
    for (const shape of shapes) {
      const c = colour(shape.category);
      const lit = shape === over || shape.flash > now;
      g.strokeStyle = lit ? "#ffbf47" : c;
      g.lineWidth = (lit ? 6 : 4) * onScreen;
      if (shape.closed) { g.fillStyle = c; g.fill(shape.path); }
      g.stroke(shape.path);
    }
    canvas.setAttribute("data-shapes-drawn", String(collection.features.length));
  }
  const repaint = () => {
    if (!pending) { pending = true; requestAnimationFrame(paint); }
  };
  // The frontage under a pointer event: its box first, then the shape itself.
  function shapeAt(e) {
    const rect = canvas.getBoundingClientRect();
    if (!rect.width) return null;
    const x = ((e.clientX - rect.left) * width) / rect.width;
    const y = ((e.clientY - rect.top) * width) / rect.width;
    const g = canvas.getContext("2d");
    const k = canvas.width / width;
    const slack = (6 * width) / rect.width;
    g.setTransform(k, 0, 0, k, 0, 0);
    g.lineWidth = slack;
    for (let i = shapes.length - 1; i >= 0; i--) {
      const { box, path, closed } = shapes[i];
      if (x < box[0] - slack || x > box[0] + box[2] + slack || y < box[1] - slack || y > box[1] + box[3] + slack) continue;
      if ((closed && g.isPointInPath(path, x * k, y * k)) || g.isPointInStroke(path, x * k, y * k)) return shapes[i];
    }
    return null;
  }
  canvas.addEventListener("pointermove", (e) => {
    const shape = shapeAt(e);
    if (shape === over) return;
    over = shape;
    if (shape) canvas.setAttribute("title", label(shape.id)); else canvas.removeAttribute("title");
    canvas.classList.toggle("over", !!shape);
    repaint();
  });
  canvas.addEventListener("pointerleave", () => {
    if (!over) return;
    over = null; canvas.removeAttribute("title"); canvas.classList.remove("over"); repaint();
  });
  canvas.addEventListener("click", (e) => {
    const shape = shapeAt(e);
    if (shape) location.hash = `#property/${encodeURIComponent(shape.id)}`;
  });
  canvas.shapes = shapes;
  canvas.recolor = (frontage, category) => {
    const until = performance.now() + 1200;
    for (const shape of byId.get(frontage) || []) { shape.category = category; shape.flash = until; }
    repaint();
    setTimeout(repaint, 1250);
  };
  // Drawn once it is in the page (its width known), again when that width changes.
  new ResizeObserver(() => { if (canvas.clientWidth && canvas.clientWidth !== cssWidth) paint(); }).observe(canvas);
  return canvas;
}

// Units as the ordinance writes them (feet and inches, °F), with the SI value for the hover
// title; readings are stored in SI (mm, °C).
export const UNITS = {
  in: { to: (mm) => mm / 25.4, text: (v) => `${v.toFixed(1)} in`, si: (mm) => `${Math.round(mm)} mm` },
  ft: { to: (mm) => mm / 304.8, text: (v) => feetInches(v * 304.8), si: (mm) => `${Math.round(mm)} mm` },
  f: { to: (c) => (c * 9) / 5 + 32, text: (v) => `${Math.round(v)} °F`, si: (c) => `${c.toFixed(1)} °C` },
};

export function feetInches(mm) {
  const total = Math.round(mm / 25.4);
  const ft = Math.floor(total / 12);
  const inch = total % 12;
  return ft ? `${ft} ft${inch ? ` ${inch} in` : ""}` : `${inch} in`;
}

// A limit as the ordinance writes it: 19.05 mm → "3/4 in", 31.75 mm → "1 1/4 in" (sixteenths).
export function inchFraction(mm) {
  const sixteenths = Math.round((mm / 25.4) * 16);
  const whole = Math.floor(sixteenths / 16);
  let num = sixteenths % 16, den = 16;
  while (num && num % 2 === 0) { num /= 2; den /= 2; }
  return `${[whole || (num ? "" : "0"), num ? `${num}/${den}` : ""].filter(Boolean).join(" ")} in`;
}

// "3 ft 4 in", with "1016 mm" when the pointer rests on it.
export function measure(unit, si, digits) {
  const u = UNITS[unit];
  const text = digits === undefined ? u.text(u.to(si)) : `${u.to(si).toFixed(digits)} ${unit === "f" ? "°F" : unit}`;
  return h("span", { class: "si", title: u.si(si) }, text);
}

// A small line chart: x = event time (ms), one or more series (SI values, shown in ``unit``),
// optional dashed limit. Pointing at it reads out the values there, SI beside them.
export function lineChart(title, ts, lines, limit, zone = "America/Chicago", unit = null) {
  const u = unit ? UNITS[unit] : { to: (v) => v, text: (v) => v.toFixed(0), si: () => "" };
  const when = (ms) => new Date(ms).toLocaleString("en-US", { timeZone: zone, month: "short", day: "numeric", hour: "numeric", minute: "2-digit" });
  const W = 800, H = 220, L = 62, B = 28, T = 10, R = 10;
  // Series with no value at all (a sensor this pole lacks) are left out, not drawn flat.
  const series = lines.map(([name, values, color, own]) => ({ name, raw: values, values: values.map((v) => (v === null || v === undefined ? null : u.to(v))), color, ts: own || ts }))
    .filter((q) => q.values.some((v) => v !== null));
  const points = series.flatMap((q) => q.values.map((v, i) => [q.ts[i], v]).filter(([, v]) => v !== null));
  if (!points.length) return h("p", { class: "muted" }, "No data in this window.");
  const shownLimit = limit === undefined ? undefined : u.to(limit);
  const minT = Math.min(...points.map((p) => p[0])), maxT = Math.max(...points.map((p) => p[0]));
  const values = points.map((p) => p[1]).concat(shownLimit === undefined ? [] : [shownLimit]);
  let lo = Math.min(...values), hi = Math.max(...values);
  if (hi === lo) { hi += 1; lo -= 1; }
  const x = (t) => L + ((t - minT) / Math.max(maxT - minT, 1)) * (W - L - R);
  const y = (v) => T + (1 - (v - lo) / (hi - lo)) * (H - T - B);
  const fromShown = (v) => (unit === "f" ? ((v - 32) * 5) / 9 : unit === "in" ? v * 25.4 : unit === "ft" ? v * 304.8 : v);
  const tick = (v, yy) => s("text", { x: 4, y: yy }, u.text(v), s("title", {}, unit ? u.si(fromShown(v)) : ""));
  const svg = s("svg", { viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": `${title}: ${series.map((q) => q.name).join(", ")}` },
    s("line", { class: "axis", x1: L, y1: H - B, x2: W - R, y2: H - B }),
    s("line", { class: "axis", x1: L, y1: T, x2: L, y2: H - B }),
    tick(hi, T + 10), tick(lo, H - B),
    s("text", { x: L, y: H - 8 }, when(minT)),
    s("text", { x: W - R - 110, y: H - 8 }, when(maxT)));
  if (shownLimit !== undefined) svg.append(s("line", { x1: L, x2: W - R, y1: y(shownLimit), y2: y(shownLimit), stroke: "#a4161a", "stroke-dasharray": "6 4" }));
  series.forEach((q, n) => {
    const d = q.values.map((v, i) => (v === null ? null : [x(q.ts[i]), y(v)])).filter(Boolean)
      .map(([a, b], i) => `${i ? "L" : "M"}${a.toFixed(1)},${b.toFixed(1)}`).join("");
    svg.append(s("path", { d, fill: "none", stroke: q.color, "stroke-width": 2 }));
    svg.append(s("text", { x: L + 10 + n * 140, y: T + 12, fill: q.color }, q.name));
  });
  // The readout: the time under the pointer and each series' value there (ordinance unit, SI).
  const cursor = s("line", { class: "cursor", y1: T, y2: H - B, x1: -10, x2: -10 });
  const readout = s("text", { class: "readout", x: W - R, y: T + 12, "text-anchor": "end" });
  const hit = s("rect", { x: L, y: T, width: W - L - R, height: H - T - B, fill: "transparent" });
  svg.append(cursor, readout, hit);
  hit.addEventListener("pointermove", (e) => {
    const m = svg.getScreenCTM();
    if (!m) return;
    const px = new DOMPoint(e.clientX, e.clientY).matrixTransform(m.inverse()).x;
    const t = minT + ((px - L) / (W - L - R)) * (maxT - minT);
    const parts = series.map((q) => {
      let best = -1;
      q.ts.forEach((tt, i) => { if (q.raw[i] !== null && q.raw[i] !== undefined && (best < 0 || Math.abs(tt - t) < Math.abs(q.ts[best] - t))) best = i; });
      return best < 0 ? "" : `${q.name} ${u.text(q.values[best])}${unit ? ` (${u.si(q.raw[best])})` : ""}`;
    }).filter(Boolean);
    cursor.setAttribute("x1", px); cursor.setAttribute("x2", px);
    readout.textContent = `${when(t)}: ${parts.join(", ")}`;
  });
  hit.addEventListener("pointerleave", () => { readout.textContent = ""; cursor.setAttribute("x1", -10); cursor.setAttribute("x2", -10); });
  return svg;
}
