// The map: the registry's parcels and the frontages (GeoJSON, WGS 84) drawn as SVG, offline
// (no tile server). Frontages are coloured by state with the state written in the legend,
// the filter and each shape's name; a click or Enter on a frontage opens its property page.
import { MAP_CANVAS_FROM, h, mapCanvas } from "./draw.js";

const SVG = "http://www.w3.org/2000/svg";

function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, value);
  el.append(...children);
  return el;
}

function rings(geometry) {
  if (!geometry) return [];
  if (geometry.type === "Polygon") return [geometry.coordinates[0]];
  if (geometry.type === "MultiPolygon") return geometry.coordinates.map((p) => p[0]);
  if (geometry.type === "LineString") return [geometry.coordinates];
  if (geometry.type === "MultiLineString") return geometry.coordinates;
  return [];
}

// "105 Main St" → "Main St": the street a frontage faces, for the street filter.
export const streetOf = (address) => address.replace(/^\s*\d+[A-Za-z]?\s+/, "");

export const openProperty = (id) => { location.hash = `#property/${encodeURIComponent(id)}`; };

// Equirectangular projection fitted to every drawn point; the x scale shrinks by
// cos(latitude), exact enough for one village.
function projection(points, width, minHeight) {
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const [minX, maxX, minY, maxY] = [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  const k = Math.cos(((minY + maxY) / 2) * Math.PI / 180);
  const spanX = Math.max((maxX - minX) * k, 1e-9);
  const spanY = Math.max(maxY - minY, 1e-9);
  const scale = Math.min((width - 40) / spanX, (width * 0.75 - 40) / spanY);
  const height = Math.max(spanY * scale + 40, minHeight);
  const offX = (width - spanX * scale) / 2;
  const px = (p) => [offX + (p[0] - minX) * k * scale, height - 20 - (p[1] - minY) * scale];
  return { px, height };
}

const pathOf = (ring, px, closed) =>
  ring.map((p, i) => `${i ? "L" : "M"}${px(p).map((v) => v.toFixed(1)).join(",")}`).join("") + (closed ? "Z" : "");

// layers: { parcels: [Feature], streets: [Feature], frontages: [Feature with properties
// {frontage, address, category, state}] }; categories: {key: {label, color}}.
export function drawMap(layers, categories, { label, width = 1000, minHeight = 160, numbers = true } = {}) {
  const frontages = layers.frontages || [];
  const all = [...(layers.parcels || []), ...(layers.streets || []), ...frontages]
    .flatMap((f) => rings(f.geometry).flat());
  if (!all.length) return h("p", { class: "muted" }, "No map geometry is recorded for these frontages yet.");
  const { px, height } = projection(all, width, minHeight);
  // A big village on one canvas (draw.js): thousands of SVG shapes cost Chromium seconds.
  if (frontages.length > MAP_CANVAS_FROM) {
    const byId = new Map(frontages.map((f) => [f.properties.frontage, f.properties]));
    return mapCanvas({ features: frontages, streets: layers.streets, parcels: layers.parcels }, categories,
      (id) => label(byId.get(id)), { px, width, height });
  }
  const svg = s("svg", { viewBox: `0 0 ${width} ${height.toFixed(0)}`, class: "geo", role: "group", "aria-label": "Map of parcels and frontages, coloured by state" });
  for (const parcel of layers.parcels || []) {
    for (const ring of rings(parcel.geometry)) svg.append(s("path", { d: pathOf(ring, px, true), class: "parcel", "aria-hidden": "true" }));
  }
  for (const street of layers.streets || []) {
    for (const ring of rings(street.geometry)) {
      const pts = ring.map(px);
      svg.append(s("path", { d: pathOf(ring, px, true), class: "street", "aria-hidden": "true" }));
      const ys = pts.map((p) => p[1]);
      svg.append(s("text", { x: Math.min(...pts.map((p) => p[0])) + 6, y: (Math.min(...ys) + Math.max(...ys)) / 2 + 5, class: "street-name", "aria-hidden": "true" }, street.properties.street));
    }
  }
  const labelled = numbers && frontages.length <= 80;
  for (const feature of frontages) {
    const props = feature.properties;
    const color = (categories[props.category] || categories.none).color;
    const name = label(props);
    const closed = feature.geometry.type.endsWith("Polygon");
    for (const ring of rings(feature.geometry)) {
      const shape = s("path", {
        d: pathOf(ring, px, closed), fill: closed ? color : "none", stroke: color,
        class: `frontage${closed ? "" : " line"}`, tabindex: "0", role: "link",
        "data-frontage-shape": props.frontage, "data-category": props.category, "aria-label": name,
      }, s("title", {}, name));
      shape.addEventListener("click", () => openProperty(props.frontage));
      shape.addEventListener("keydown", (e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); openProperty(props.frontage); } });
      svg.append(shape);
      if (labelled && props.address) {
        const c = ring.map(px).reduce(([x, y], [u, v]) => [x + u / ring.length, y + v / ring.length], [0, 0]);
        const number = props.address.split(" ")[0];
        svg.append(s("text", { x: c[0], y: c[1] + (Number(number) % 2 ? -10 : 20), class: "house-number", "aria-hidden": "true" }, number));
      }
    }
  }
  svg.setAttribute("data-shapes-drawn", String(frontages.length));
  return svg;
}

export function legend(categories, counts) {
  return h("ul", { class: "legend", "aria-label": "Map legend: colours and the states they stand for" },
    ...Object.entries(categories).filter(([key]) => counts === undefined || counts[key])
      .map(([key, c]) => h("li", {}, h("span", { class: "swatch", style: `background:${c.color}` }), c.label,
        counts === undefined ? "" : ` (${counts[key]})`)));
}

// ---------------------------------------------------------------- the map page

export async function mapPage(ctx) {
  const { api, main } = ctx;
  const [map, parcels] = await Promise.all([api("/api/map"), api("/api/parcels")]);
  const categories = parcels.categories;
  const streets = [...new Set(map.features.map((f) => streetOf(f.properties.address)))].sort();
  const present = [...new Set(map.features.map((f) => f.properties.category))];
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  const stateSel = h("select", { id: "map-state", name: "state" },
    h("option", { value: "" }, "Every state"),
    ...Object.entries(categories).filter(([k]) => present.includes(k)).map(([k, c]) => h("option", { value: k }, c.label)));
  const streetSel = h("select", { id: "map-street", name: "street" },
    h("option", { value: "" }, "Every street"), ...streets.map((name) => h("option", { value: name }, name)));
  stateSel.value = params.get("state") || "";
  streetSel.value = params.get("street") || "";
  const holder = h("div", { class: "map geo-map", id: "map-drawing" });
  const count = h("p", { class: "muted", id: "map-count", role: "status" });
  const list = h("ul", { class: "map-list", id: "map-list" });
  const keyHolder = h("div", {});
  const label = (p) => `${p.address}: ${p.state_words || categories[p.category]?.label || ""}`;
  function draw() {
    const shown = map.features.filter((f) =>
      (!stateSel.value || f.properties.category === stateSel.value) &&
      (!streetSel.value || streetOf(f.properties.address) === streetSel.value));
    const counts = {};
    for (const f of shown) counts[f.properties.category] = (counts[f.properties.category] || 0) + 1;
    for (const f of shown) f.properties.state_words = categories[f.properties.category]?.label;
    const wantStreets = streetSel.value ? map.streets.filter((st) => st.properties.street === streetSel.value) : map.streets;
    holder.replaceChildren(drawMap({ parcels: streetSel.value ? parcels.features.filter((p) => streetOf(p.properties.address) === streetSel.value) : parcels.features, streets: wantStreets, frontages: shown }, categories, { label }));
    keyHolder.replaceChildren(legend(categories, counts));
    count.textContent = `${shown.length} of ${map.features.length} frontages shown.`;
    const cap = 300;
    list.replaceChildren(...shown.slice(0, cap).map((f) => h("li", {},
      h("a", { href: `#property/${encodeURIComponent(f.properties.frontage)}` }, f.properties.address),
      ` · ${categories[f.properties.category]?.label || ""}`)),
    ...(shown.length > cap ? [h("li", { class: "muted" }, `and ${shown.length - cap} more: narrow the filter.`)] : []));
  }
  stateSel.addEventListener("change", draw);
  streetSel.addEventListener("change", draw);
  main.replaceChildren(
    h("h1", {}, "Map"),
    h("form", { class: "panel map-filter inline", role: "search", "aria-label": "Filter the map", onsubmit: (e) => e.preventDefault() },
      h("label", { for: "map-state" }, "State"), stateSel,
      h("label", { for: "map-street" }, "Street"), streetSel),
    h("section", { class: "panel", "aria-labelledby": "map-h" },
      h("h2", { id: "map-h" }, "Parcels and frontages"),
      h("p", { class: "muted" }, map.features.length > MAP_CANVAS_FROM
        ? "Select a frontage (click) to open its property page; the list below links to each (narrow it by state or street)."
        : "Select a frontage (click, or Tab and Enter) to open its property page."),
      holder, keyHolder, count),
    h("section", { class: "panel", "aria-labelledby": "map-list-h" },
      h("h2", { id: "map-list-h" }, "The same frontages as a list"), list));
  draw();
}
