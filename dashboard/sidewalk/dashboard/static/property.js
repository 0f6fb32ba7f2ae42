// A page per property (GET /api/properties/{frontage or parcel}): the parcel, its owner of
// record and history, occupants, the frontages on the map, clocks and notices in plain words,
// the frames at each decision, bills and payments, defect surveys. Lengths as the ordinance
// writes them (ft/in), SI in the hover title.
import { drawMap, legend } from "./map.js";
import { left, when } from "./when.js";

export async function propertyPage(ctx, id) {
  const { api, h, main, state } = ctx;
  const p = await api(`/api/properties/${encodeURIComponent(id)}`);
  state.zone = p.zone;
  const at = (iso) => (iso ? when(iso, p.now, p.zone) : "–");
  const day = (iso) => {
    if (!iso) return "–";
    const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(iso);  // a bill's due date: no time of day
    return new Date(dateOnly ? `${iso}T12:00:00Z` : iso).toLocaleDateString("en-US",
      { timeZone: dateOnly ? "UTC" : p.zone, month: "short", day: "numeric", year: "numeric" });
  };
  const qty = (q) => (q ? h("span", { class: "qty", title: q.si }, q.text) : "–");
  const money = (v) => `$${Number(v).toFixed(2)}`;
  const badge = (cat, text) => h("span", { class: "badge", style: `background:${(p.categories[cat] || p.categories.none).color}` }, text);
  const cell = (labelText, ...content) => h("td", { "data-label": labelText }, ...content);
  const table = (heads, rows, empty) => rows.length
    ? h("table", { class: "cards" }, h("thead", {}, h("tr", {}, ...heads.map((t) => h("th", { scope: "col" }, t)))), h("tbody", {}, ...rows))
    : h("p", { class: "muted" }, empty);
  const panel = (key, title, ...body) => h("section", { class: "panel", id: `property-${key}`, "aria-labelledby": `property-${key}-h` },
    h("h2", { id: `property-${key}-h` }, title), ...body);

  const facts = h("dl", { class: "facts" },
    ...(p.parcel.parcel ? [h("dt", {}, "Parcel"), h("dd", {}, p.parcel.parcel)] : []),
    h("dt", {}, "Tax parcel"), h("dd", {}, p.parcel.tax_parcel || "–"),
    ...(p.parcel.place ? [h("dt", {}, "Place"), h("dd", {}, `${p.parcel.place}${p.parcel.zip_code ? ` ${p.parcel.zip_code}` : ""}`)] : []),
    h("dt", {}, p.frontages.length === 1 ? "Frontage" : "Frontages"), h("dd", {}, String(p.frontages.length)));

  const owner = p.owner === undefined ? null : panel("owner", "Owner of record",
    p.owner ? h("p", {}, h("strong", {}, p.owner.name), h("br", {}), ...p.owner.address_lines.flatMap((l, i) => (i ? [h("br", {}), l] : [l])),
      h("br", {}), h("span", { class: "muted" }, `since ${day(p.owner.since)}`)) : h("p", { class: "muted" }, "No owner of record."),
    ...(p.owner_changes || []).map((said) => h("p", { role: "note" }, h("strong", {}, said))),
    p.ownerships.length > 1 ? h("div", {}, h("h3", {}, "Ownership history"),
      table(["Owner", "From", "Until"], p.ownerships.map((o) => h("tr", {}, cell("Owner", o.name), cell("From", day(o.since)), cell("Until", o.until ? day(o.until) : "now"))), "")) : "",
    h("h3", {}, "Occupants and persons in charge"),
    table(["Name", "Role", "Phone", "E-mail", "Since"], (p.occupants || []).map((o) => h("tr", {},
      cell("Name", o.name), cell("Role", o.role), cell("Phone", o.phone || "–"), cell("E-mail", o.email || "–"),
      cell("Since", `${day(o.since)}${o.until ? ` – ${day(o.until)}` : ""}`))), "None recorded."));

  const mapPanel = panel("map", "On the map",
    h("div", { class: "map geo-map small" }, drawMap({
      parcels: p.map.features.filter((f) => f.properties.kind === "parcel"),
      frontages: p.map.features.filter((f) => f.properties.kind === "frontage"),
    }, p.categories, { label: (q) => `${q.address}: ${q.state}`, width: 600, minHeight: 120, numbers: false })),
    legend(Object.fromEntries(Object.entries(p.categories).filter(([k]) => p.frontages.some((f) => f.category === k)))));

  const frontages = panel("frontages", "Frontages",
    table(["Address", "Length", "Walk width", "Zone", "Now"], p.frontages.map((f) => h("tr", { "data-frontage": f.id },
      cell("Address", f.address, f.corner ? h("span", { class: "muted" }, " (corner)") : "", f.retired ? h("span", { class: "muted" }, " (no longer watched)") : ""),
      cell("Length", qty(f.length)), cell("Walk width", qty(f.walk_width)), cell("Zone", f.zone),
      cell("Now", badge(f.category, f.state)))), ""));

  const clocks = panel("clocks", "Clocks",
    table(["Frontage", "What", "State", "Deadline", "Citation"], p.clocks.map((c) => h("tr", { class: c.running ? "running" : "" },
      cell("Frontage", c.address), cell("What", c.kind), cell("State", badge(c.category, c.state)),
      cell("Deadline", c.deadline ? h("span", {}, at(c.deadline), c.running ? h("span", { class: "left" }, ` (${left(c.deadline, p.now)})`) : "") : c.closed_at ? `closed ${at(c.closed_at)}` : "–"),
      cell("Citation", c.citation || "–"))), "No clock has run on this property."));

  const notices = panel("notices", "Notices",
    table(["Notice", "What", "Status", "Issued", "Owner's deadline", "Served"], p.notices.map((n) => h("tr", { "data-notice": n.number },
      cell("Notice", h("a", { href: n.href, "aria-label": `Open notice ${n.number}` }, n.number)), cell("What", n.kind),
      cell("Status", n.status), cell("Issued", at(n.issued_at)),
      cell("Owner's deadline", n.deadline ? at(n.deadline) : n.served_at ? "–" : "starts when it is served"), cell("Served", n.served_at ? at(n.served_at) : "not yet"))),
    "No notice has been issued for this property."));

  const frame = (f) => h("figure", { class: "decision-frame" },
    f.url ? h("img", { src: f.url, alt: `${f.caption}${f.taken_at ? `, ${at(f.taken_at)}` : ""}`, class: "frame", loading: "lazy" })
      : h("p", { class: "muted" }, "The frame is no longer in the evidence store."),
    h("figcaption", {}, f.caption, f.taken_at ? `, ${at(f.taken_at)}` : ""));
  const decisions = panel("decisions", "Decisions and their frames",
    ...(p.decisions.length ? p.decisions.map((d) => h("article", { class: "decision" },
      h("h3", {}, `${d.what}: ${d.address}`),
      h("p", {}, `Decided ${at(d.at)}`, d.by_review ? " on review by a person" : "", d.citation ? ` (${d.citation})` : "", ". ",
        d.measured || d.required ? h("span", {}, "Cleared ", qty(d.measured), " of ", qty(d.required), " required.") : ""),
      d.frames.length ? h("div", { class: "frames" }, ...d.frames.map(frame)) : h("p", { class: "muted" }, "No camera frame was stored for this decision.")))
      : [h("p", { class: "muted" }, "No violation has been decided on this property.")]));

  const bills = panel("bills", "Bills and payments",
    table(["Bill", "Frontage", "Amount", "Paid", "Balance", "Status", "Due", "Payments"], p.bills.map((b) => h("tr", {},
      cell("Bill", `No. ${b.id}`), cell("Frontage", b.address), cell("Amount", money(b.amount)), cell("Paid", money(b.paid)),
      cell("Balance", money(b.balance)), cell("Status", b.status), cell("Due", b.due_date ? day(b.due_date) : "–"),
      cell("Payments", b.payments.length ? b.payments.map((x) => `${money(x.amount)} by ${x.method}, ${day(x.paid_at)}`).join("; ") : "none"))),
    "No bill for this property."));

  const surveys = panel("surveys", "Defect surveys",
    ...(p.surveys.length ? p.surveys.map((sv) => h("article", { class: "survey" },
      h("h3", {}, `${sv.kind} of ${sv.address}, ${at(sv.surveyed_at)}`),
      sv.measured ? h("p", {}, `${sv.defective_blocks} of ${sv.blocks} surveyed blocks defective.`) : h("p", { class: "error-text" }, `Not measured: ${sv.failure || "the file could not be read"}`),
      sv.defects.length ? table(["Block", "Defect", "Measured", "Limit", "Citation"], sv.defects.map((d) => h("tr", {},
        cell("Block", String(d.block)), cell("Defect", d.rule), cell("Measured", qty(d.measured)), cell("Limit", qty(d.limit)), cell("Citation", d.citation || "–"))), "") : "",
      sv.evidence_url ? h("img", { src: sv.evidence_url, alt: `annotated survey of ${sv.address}`, class: "frame evidence", loading: "lazy" }) : ""))
      : [h("p", { class: "muted" }, "No defect survey is stored for this property.")]));

  main.replaceChildren(
    h("p", { class: "crumbs" }, h("a", { href: "#map" }, "← Map")),
    h("h1", { id: "property-title" }, p.address),
    h("div", { class: "property-grid" },
      h("div", {}, panel("parcel", "Parcel", facts), owner || "", frontages),
      h("div", {}, mapPanel)),
    clocks, notices, decisions, bills, surveys);
}
