import { stylesheet } from "./admin.js";

// Exports (clerk and administrator): notices, bills, payments and the tax-roll
// list as CSV or spreadsheet, from /api/exports/… (routes/exports.py). Plain
// download links: the browser's own save works, and so does a keyboard.
const EXPORTS = [
  ["notices", "Notices", "Every notice: number, property, owner of record, issued, deadline, status, when served."],
  ["bills", "Bills", "Bills for work the Village did: amount, paid, balance due, status."],
  ["payments", "Payments", "Every payment against a bill: date, amount, how it was paid."],
  ["tax-roll", "Tax roll", "Special taxes certified to the tax roll, with the ordinance section."],
];

export async function exportsPage(ctx) {
  const { h, main } = ctx;
  stylesheet();
  const year = h("input", { id: "tax-year", type: "number", min: "2000", max: "2100", inputmode: "numeric", placeholder: "all years", "aria-describedby": "tax-year-hint" });
  const rows = EXPORTS.map(([name, title, what]) => {
    const href = (fmt) => `/api/exports/${name}.${fmt}${name === "tax-roll" && year.value ? `?year=${year.value}` : ""}`;
    const link = (fmt, words) => {
      const a = h("a", { href: href(fmt), download: "", class: "download", "aria-label": `${title} as ${words}` }, words);
      // The tax-roll year is read when the link is followed.
      a.addEventListener("click", () => { a.href = href(fmt); });
      return a;
    };
    return h("tr", {},
      h("th", { scope: "row" }, title),
      h("td", { "data-label": "What it holds" }, what),
      h("td", {}, h("div", { class: "actions" }, link("csv", "CSV"), link("xlsx", "Spreadsheet (.xlsx)"))));
  });
  const table = h("table", { class: "exports stack" },
    h("thead", {}, h("tr", {}, ...["Export", "What it holds", "Download"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", {}, ...rows));
  main.replaceChildren(h("div", { class: "desk" },
    h("h1", {}, "Exports"),
    h("section", { class: "panel", "aria-labelledby": "exports-h" },
      h("h2", { id: "exports-h" }, "Download"),
      h("p", { class: "muted" }, "Times are the Village's local time; amounts are in dollars. Owner names and addresses are included: keep the files private."),
      h("div", { class: "field" }, h("label", { for: "tax-year" }, "Tax year for the tax roll"), year,
        h("p", { class: "muted", id: "tax-year-hint" }, "Leave blank for every year.")),
      table)));
}
