// The crew's hours (who worked how long, which equipment ran how long) where the crew
// records that it finished, and the bill they make: priced at the profile's rates, shown
// as the owner will read it, then confirmed and numbered in the notice register.

// Rows of "name, hours" with a button to add one more; `kind` is "worker" or "equipment".
function hoursRows(h, prefix, kind, rows) {
  const list = h("div", { class: "hours-rows", "data-hours": kind });
  const label = kind === "worker" ? "Worker" : "Equipment";
  const add = (row = {}) => {
    const i = list.children.length + 1;
    const id = `${prefix}-${kind}-${i}`;
    list.append(h("div", { class: "hours-row" },
      h("label", { for: `${id}-name` }, `${label} ${i}`),
      h("input", { id: `${id}-name`, name: `${kind}-name`, autocomplete: kind === "worker" ? "name" : "off", value: row.name || "",
        placeholder: kind === "worker" ? "name" : "e.g. plow truck" }),
      h("label", { for: `${id}-hours` }, "hours"),
      h("input", { id: `${id}-hours`, name: `${kind}-hours`, inputmode: "decimal", class: "hours", value: row.hours || "", placeholder: "1.5" })));
  };
  (rows && rows.length ? rows : [{}]).forEach(add);
  const more = h("button", { type: "button", class: "secondary add-row", onclick: () => { add(); list.lastElementChild.querySelector("input").focus(); } },
    kind === "worker" ? "Add a worker" : "Add equipment");
  return { list, more };
}

// The crew's fields: workers, equipment, and the rates they are priced at.
export function crewFields(h, prefix, rates, recorded) {
  const workers = hoursRows(h, prefix, "worker", recorded?.workers);
  const equipment = hoursRows(h, prefix, "equipment", recorded?.equipment);
  return h("div", { class: "crew-fields" },
    h("fieldset", {}, h("legend", {}, "Who worked, and how many hours each"), workers.list, workers.more),
    h("fieldset", {}, h("legend", {}, "Equipment used, and how many hours (if any)"), equipment.list, equipment.more),
    rates && rates.length ? h("p", { class: "muted rates" }, "Priced on the bill at: ",
      ...rates.map((r, i) => h("span", { class: r.confirmed ? "" : "not-confirmed" }, i ? "; " : "", r.text))) : "");
}

// What the fields say: {workers, equipment} (rows left empty are skipped), or a problem.
export function readCrew(root) {
  const rows = (kind) => [...root.querySelectorAll(`[data-hours=${kind}] .hours-row`)].map((row) => ({
    name: row.querySelector(`[name=${kind}-name]`).value.trim(),
    hours: row.querySelector(`[name=${kind}-hours]`).value.trim(),
  })).filter((r) => r.name || r.hours);
  const workers = rows("worker"), equipment = rows("equipment");
  if (!workers.length) return { problem: "Write who worked and the hours each worked (at least one worker)." };
  for (const [what, list] of [["Worker", workers], ["Equipment", equipment]]) {
    for (const [i, r] of list.entries()) {
      if (!r.name) return { problem: `${what} ${i + 1}: write ${what === "Worker" ? "who it was" : "which machine it was"}.` };
      if (!/^\d+([.,]\d{1,2})?$/.test(r.hours) || Number(r.hours.replace(",", ".")) <= 0 || Number(r.hours.replace(",", ".")) > 24) {
        return { problem: `${what} ${i + 1} (${r.name}): write the hours as a number more than 0 and at most 24, e.g. 1.5.` };
      }
    }
  }
  return { workers, equipment };
}

export function crewWords(crew) {
  const said = (list) => list.map((r) => `${r.name} ${r.hours} h`).join(", ");
  return [said(crew.workers), said(crew.equipment)].filter(Boolean).join("; ");
}

// The bill of one work order: the crew's hours, materials, a preview as the owner will
// read it, then "Confirm and issue the bill". `done` runs after it is issued.
export function billPanel(ctx, a, done) {
  const { api, h, toast } = ctx;
  const problem = h("div", { class: "problem", role: "alert" });
  const work = h("div", { class: "bill-work" });
  const show = (message) => { problem.textContent = message; problem.classList.add("show"); };
  const materials = h("div", { class: "hours-rows", "data-materials": "" });
  const addMaterial = () => {
    const i = materials.children.length + 1;
    const id = `mat-${a.id}-${i}`;
    materials.append(h("div", { class: "hours-row" },
      h("label", { for: `${id}-desc` }, `Material ${i}`), h("input", { id: `${id}-desc`, name: "material-desc", placeholder: "e.g. salt" }),
      h("label", { for: `${id}-cost` }, "cost $"), h("input", { id: `${id}-cost`, name: "material-cost", inputmode: "decimal", class: "hours", placeholder: "12.50" })));
  };
  addMaterial();
  const body = () => {
    const out = { materials: [...materials.children].map((row) => ({
      description: row.querySelector("[name=material-desc]").value.trim(),
      cost: row.querySelector("[name=material-cost]").value.trim().replace(/^\$/, ""),
    })).filter((m) => m.description || m.cost) };
    for (const m of out.materials) if (!m.description || !m.cost) return { problem: "Each material needs what it was and its cost." };
    return out;
  };
  const preview = async () => {
    problem.classList.remove("show");
    const b = body();
    if (b.problem) { show(b.problem); return; }
    let seen;
    try { seen = await api(`/api/abatements/${a.id}/bill/preview`, { method: "POST", body: b }); } catch (err) { show(err.message); return; }
    const yes = h("button", { type: "button", id: `issue-bill-${a.id}`, onclick: async () => {
      yes.disabled = true;
      try {
        const bill = await api(`/api/abatements/${a.id}/bill`, { method: "POST", body: { ...b, total: seen.total } });
        toast(bill.held ? `Bill ${bill.number} numbered and kept: held, not sent, until the values are confirmed.` : `Bill ${bill.number} issued: print it from its page and send it.`);
        await done();
      } catch (err) { show(err.message); yes.disabled = false; }
    } }, `Confirm and issue the bill ($${seen.total})`);
    work.replaceChildren(h("div", { class: "confirm bill-preview", role: "group", "aria-label": "The bill as the owner will read it" },
      h("h3", {}, "The bill as the owner will read it"),
      h("p", {}, h("strong", {}, "To: "), seen.to),
      seen.crew ? h("p", {}, h("strong", {}, "Crew's hours: "), seen.crew) : "",
      h("table", { class: "ledger" }, h("tbody", {},
        ...seen.lines.map((x) => h("tr", {}, h("td", {}, x.text.replace(/ = \$[\d,.]+$/, ""), x.unconfirmed ? h("span", { class: "unconfirmed" }, "rate not confirmed") : ""), h("td", { class: "num" }, x.amount))),
        h("tr", { class: "total" }, h("th", { scope: "row" }, "Total"), h("td", { class: "num" }, `$${seen.total}`)))),
      seen.held ? h("p", { class: "error-text" }, seen.held) : "",
      h("details", { class: "letter-words", open: "" }, h("summary", {}, "The letter's words (as printed)"), h("pre", { class: "letter-text" }, seen.text)),
      h("p", { class: "muted" }, "Nothing is recorded until you confirm. The bill is then numbered in the notice register."),
      h("div", { class: "actions" }, yes, h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Change something"))));
    yes.focus();
  };
  return h("div", { class: "bill-panel" },
    h("fieldset", {}, h("legend", {}, "Materials used (at cost, if any)"), materials,
      h("button", { type: "button", class: "secondary add-row", onclick: addMaterial }, "Add a material")),
    h("div", { class: "actions" }, h("button", { type: "button", id: `preview-bill-${a.id}`, onclick: preview }, "Preview the bill")),
    problem, work);
}
