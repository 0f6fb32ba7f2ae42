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

// Fit every frontage into an SVG; lon/lat get an equirectangular projection with
// the x scale shrunk by cos(latitude), which is exact enough for one village.
export function mapSvg(collection, categories, label) {
  const streets = collection.streets || [];
  const all = collection.features.concat(streets).flatMap((f) => rings(f.geometry).flat());
  if (!all.length) return h("p", { class: "muted" }, "No frontages to draw.");
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const k = Math.cos(((minY + maxY) / 2) * Math.PI / 180);
  const width = 1000;
  const spanX = Math.max((maxX - minX) * k, 1e-9);
  const spanY = Math.max(maxY - minY, 1e-9);
  const scale = (width - 40) / Math.max(spanX, spanY * 1.6);
  const height = Math.max(spanY * scale + 40, 160);
  const px = (p) => [20 + (p[0] - minX) * k * scale, height - 20 - (p[1] - minY) * scale];
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
  return svg;
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
