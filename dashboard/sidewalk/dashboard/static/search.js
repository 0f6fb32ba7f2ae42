// The search box in the header of every page (GET /api/search?q=): addresses, owners, parcel
// and notice numbers. Keyboard: "/" focuses it; typing lists matches as links; ↓/↑ move
// through them, Enter opens one (Enter in the box opens the first, or the full results page),
// Escape closes the list and returns to the box.
import { h } from "./draw.js";

const item = (m) => h("li", { role: "none" },
  h("a", { href: m.href, role: "option", class: "search-hit", "data-kind": m.kind },
    h("span", { class: "search-what" }, m.what), " ", h("strong", {}, m.label),
    m.detail ? h("span", { class: "search-detail" }, ` · ${m.detail}`) : ""));

export function installSearch(ctx) {
  const header = document.querySelector("header.top");
  if (!header || document.getElementById("search-q")) return;
  const input = h("input", {
    id: "search-q", name: "q", type: "search", autocomplete: "off", spellcheck: "false",
    placeholder: "Address, owner, parcel or notice", "aria-label": "Search by address, owner, parcel or notice number",
    role: "combobox", "aria-expanded": "false", "aria-controls": "search-list", "aria-autocomplete": "list",
  });
  const list = h("ul", { id: "search-list", class: "search-list", role: "listbox", "aria-label": "Matches", hidden: "" });
  const status = h("span", { class: "visually-hidden", role: "status", "aria-live": "polite" });
  let last = null;
  let timer = null;
  let found = [];
  const close = () => { list.hidden = true; input.setAttribute("aria-expanded", "false"); };
  const links = () => [...list.querySelectorAll("a")];
  async function look() {
    const q = input.value.trim();
    if (!q) { close(); found = []; return; }
    if (q === last) return;
    last = q;
    let r;
    try { r = await ctx.api(`/api/search?q=${encodeURIComponent(q)}`); } catch (err) { status.textContent = err.message; return; }
    if (input.value.trim() !== q) return;  // a newer query is on its way
    found = r.matches;
    list.replaceChildren(...(found.length ? found.map(item) : [h("li", { class: "muted search-none", role: "option", "aria-disabled": "true" }, `Nothing matches “${q}”.`)]),
      ...(r.more ? [h("li", { role: "none" }, h("a", { href: `#search/${encodeURIComponent(q)}`, role: "option" }, "All matches…"))] : []));
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
    status.textContent = `${found.length}${r.more ? "+" : ""} ${found.length === 1 ? "match" : "matches"}`;
  }
  input.addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(look, 180); });
  input.addEventListener("keydown", async (e) => {
    if (e.key === "ArrowDown") { e.preventDefault(); await look(); links()[0]?.focus(); }
    else if (e.key === "Escape") { close(); }
    else if (e.key === "Enter") {
      e.preventDefault();
      clearTimeout(timer);
      await look();
      const q = input.value.trim();
      if (!q) return;
      close();
      location.hash = found.length === 1 ? found[0].href : `#search/${encodeURIComponent(q)}`;
    }
  });
  list.addEventListener("keydown", (e) => {
    const all = links();
    const i = all.indexOf(document.activeElement);
    if (e.key === "ArrowDown") { e.preventDefault(); all[Math.min(i + 1, all.length - 1)]?.focus(); }
    else if (e.key === "ArrowUp") { e.preventDefault(); if (i <= 0) input.focus(); else all[i - 1].focus(); }
    else if (e.key === "Escape") { close(); input.focus(); }
  });
  list.addEventListener("click", (e) => { if (e.target.closest("a")) close(); });
  const form = h("form", { class: "search", role: "search", onsubmit: (e) => e.preventDefault() }, input, list, status);
  form.addEventListener("focusout", (e) => { if (!form.contains(e.relatedTarget)) close(); });
  header.insertBefore(form, header.querySelector(".who"));
  document.addEventListener("keydown", (e) => {
    const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement?.tagName || "");
    if (e.key === "/" && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) { e.preventDefault(); input.focus(); }
  });
}

// "#search/main": every match, for when the list under the box is not enough.
export async function searchPage(ctx, q) {
  const { api, main } = ctx;
  if (!q) { main.replaceChildren(h("h1", {}, "Search"), h("p", {}, "Type an address, an owner, a parcel or a notice number in the search box.")); return; }
  const r = await api(`/api/search?q=${encodeURIComponent(q)}`);
  main.replaceChildren(h("h1", {}, `Search: “${q}”`),
    h("section", { class: "panel", id: "search-results" },
      r.matches.length ? h("ul", { class: "search-page" }, ...r.matches.map((m) => h("li", {},
        h("a", { href: m.href }, `${m.what} ${m.label}`), m.detail ? ` · ${m.detail}` : "")))
        : h("p", { class: "muted" }, "Nothing matches."),
      r.more ? h("p", { class: "muted" }, "More match than are listed: add to the words you look for.") : ""));
}
