// Today: what needs a person now (GET /api/today), and the printable daily list.
import { left, longDate, when } from "./when.js";

export async function todayPage(ctx) {
  const { api, h, main, state } = ctx;
  const today = await api("/api/today");
  state.zone = today.zone;
  const total = today.groups.reduce((n, g) => n + g.items.length, 0);
  const item = (i) => h("li", { class: `todo-item${i.urgent ? " urgent" : ""}`, "data-frontage": i.frontage },
    h("span", { class: "tick", "aria-hidden": "true" }, "☐"),
    h("div", {},
      h("div", { class: "todo-head" }, h("strong", { class: "addr" }, i.address), " ", h("span", {}, i.what)),
      i.at ? h("div", { class: "todo-when" }, `${i.at_words}: ${when(i.at, today.now, today.zone)}`,
        i.at_words === "Deadline" ? h("span", { class: "left" }, ` (${left(i.at, today.now)})`) : "") : "",
      h("div", { class: "todo-do" }, i.todo),
      i.notice ? h("a", { href: `#notice/${encodeURIComponent(i.notice)}`, class: "open-notice", "aria-label": `Open notice ${i.notice}` }, `Notice ${i.notice} ›`) : ""));
  const group = (g) => h("section", { class: "panel today-group", id: `today-${g.key}`, "aria-labelledby": `h-${g.key}` },
    h("h2", { id: `h-${g.key}` }, g.title, " ", h("span", { class: "count" }, `(${g.items.length})`)),
    g.items.length ? h("ul", { class: "todo" }, ...g.items.map(item)) : h("p", { class: "muted" }, g.empty));
  main.replaceChildren(
    h("div", { class: "page-head" },
      h("h1", {}, "Today", h("span", { class: "sub" }, ` · ${longDate(today.now, today.zone)}`)),
      h("button", { type: "button", id: "print-today", class: "no-print", onclick: () => window.print() }, "Print today's list")),
    h("p", { class: "lead" }, total ? `${total} ${total === 1 ? "thing needs" : "things need"} a person today, ${today.village}.` : `Nothing needs a person today, ${today.village}.`),
    h("div", { class: "today-grid" }, ...today.groups.map(group)));
}
