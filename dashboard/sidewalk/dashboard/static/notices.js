// Notices: the list (deadline that matters, status in the clerk's words, print batches) and
// one notice's page (its letter, only the steps valid now, service with a confirmation).
import { crewFields, crewWords, readCrew } from "./crew.js";
import { left, when } from "./when.js";

async function clock(api, state) {
  const c = await api("/api/now");
  state.zone = c.zone;
  return c;
}

function deadlineCell(h, n, c) {
  if (n.owner_deadline) {
    return h("div", { class: "deadline" }, h("strong", {}, when(n.owner_deadline, c.now, c.zone)),
      h("span", { class: "left" }, ` (${left(n.owner_deadline, c.now)})`),
      h("div", { class: "muted" }, n.deadline_note || ""));
  }
  return h("div", { class: "deadline muted" }, n.deadline_note || "No deadline now");
}

export async function noticesPage(ctx) {
  const { api, h, main, may, toast, state, abatementBlock } = ctx;
  const [notices, abatements, toIssue, c] = await Promise.all([api("/api/notices"), api("/api/abatements"), api("/api/notices-to-issue"), clock(api, state)]);
  const rows = notices.map((n) => h("tr", { "data-notice": n.number },
    h("td", { class: "pick-cell" }, may("print") ? h("input", { type: "checkbox", class: "pick", value: n.number, id: `pick-${n.number}`, "aria-label": `Select ${n.number} for printing` }) : ""),
    h("td", { "data-label": "Notice" }, h("a", { href: `#notice/${encodeURIComponent(n.number)}`, class: "notice-link" }, n.number), h("div", {}, n.kind_words),
      n.unconfirmed ? h("span", { class: "unconfirmed", title: "relies on a value the Village has not confirmed" }, "value not confirmed") : ""),
    h("td", { "data-label": "Property" }, h("strong", {}, n.address), n.owner ? h("div", { class: "muted" }, n.owner.name) : ""),
    h("td", { "data-label": "Status", class: "notice-status" }, n.status_words, n.case_words ? h("div", { class: "muted" }, n.case_words) : ""),
    h("td", { "data-label": "Deadline" }, deadlineCell(h, n, c)),
    h("td", { "data-label": "" }, h("a", { href: `#notice/${encodeURIComponent(n.number)}`, class: "button-link", "aria-label": `Open notice ${n.number}` }, n.steps.length ? "Open · act" : "Open"))));
  const printButton = may("print") ? h("button", { type: "button", id: "print-batch", onclick: () => printBatch(ctx) }, "Print selected letters") : "";
  main.replaceChildren(
    h("h1", {}, "Notices"),
    toIssuePanel(ctx, toIssue, c),
    h("section", { class: "panel" },
      h("div", { class: "actions" }, printButton,
        may("print") ? h("span", { class: "muted" }, "Printing does not record service: record how each letter was served on its page.") : ""),
      h("table", { class: "cards" }, h("thead", {}, h("tr", {}, ...["", "Notice", "Property", "Status", "Deadline", ""].map((t) => h("th", { scope: "col" }, t)))),
        h("tbody", {}, ...(rows.length ? rows : [h("tr", {}, h("td", { colspan: "6", class: "muted" }, "No notices."))])))),
    h("section", { class: "panel" }, h("h2", {}, "Village work, costs and payments"),
      abatements.length ? h("div", {}, ...abatements.map(abatementBlock)) : h("p", { class: "muted" }, "No Village work orders.")),
  );
  void toast;
}

// Obstructions and inspectors' findings whose written notice is still to be issued: each
// issued (numbered, under the Village's letterhead) after a confirmation, then opened to
// print it and record its service.
function toIssuePanel(ctx, cases, c) {
  const { h, may } = ctx;
  if (!cases.length) return "";
  const work = h("div", { id: "issue-work" });
  const problem = h("div", { id: "issue-problem", class: "problem", role: "alert" });
  const rows = cases.map((k) => h("tr", { "data-case": k.case },
    h("td", { "data-label": "Notice" }, k.kind_words, k.ordinance ? h("div", { class: "muted" }, k.ordinance) : ""),
    h("td", { "data-label": "Property" }, h("strong", {}, k.address)),
    h("td", { "data-label": "Found" }, k.what || "", h("div", { class: "muted" }, k.seen_at ? when(k.seen_at, c.now, c.zone) : "")),
    h("td", { "data-label": "" }, may("notice_action")
      ? h("button", { type: "button", "data-issue": k.case, onclick: () => confirmIssue(ctx, k, work, problem) }, "Issue the notice…")
      : "")));
  return h("section", { class: "panel", "aria-labelledby": "to-issue-h" },
    h("h2", { id: "to-issue-h" }, "Notices to issue"),
    h("p", { class: "muted" }, "Found by an inspector; the owner's time starts only when the notice is served."),
    h("table", { class: "cards" }, h("thead", {}, h("tr", {}, ...["Notice", "Property", "Found", ""].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...rows)),
    problem, work);
}

function confirmIssue(ctx, k, work, problem) {
  const { api, h, toast } = ctx;
  problem.classList.remove("show");
  const yes = h("button", { type: "button", id: "confirm-issue", onclick: async () => {
    yes.disabled = true;
    try {
      const result = await api("/api/notices", { method: "POST", body: { case: k.case } });
      toast(result.message);
      window.location.hash = `#notice/${encodeURIComponent(result.number)}`;
    } catch (err) { showProblem(problem, err.message); yes.disabled = false; }
  } }, "Yes, issue it");
  work.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": "Confirm the notice" },
    h("p", {}, h("strong", {}, `${k.kind_words}, ${k.address}`)),
    h("p", {}, k.what || ""),
    h("p", { class: "muted" }, "It is numbered in the notice register and written under the Village's letterhead, in your name."),
    h("div", { class: "actions" }, yes, h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Cancel"))));
  yes.focus();
}

async function printBatch(ctx) {
  const { api, toast } = ctx;
  const numbers = [...document.querySelectorAll("input.pick:checked")].map((el) => el.value);
  if (!numbers.length) { toast("Select the letters to print first."); return; }
  try {
    const result = await api("/api/notices/print-batch", { method: "POST", body: { numbers } });
    window.open(result.url, "_blank", "noopener");
  } catch (err) { toast(err.message); }
}

// ---------------------------------------------------------------- one notice

export async function noticePage(ctx, number) {
  const { api, h, main, may, state } = ctx;
  const [n, c] = await Promise.all([api(`/api/notices/${encodeURIComponent(number)}`), clock(api, state)]);
  const work = h("div", { id: "notice-work" });
  const problem = h("div", { id: "notice-problem", class: "problem", role: "alert" });
  const steps = n.steps.length
    ? h("div", { class: "actions steps" }, ...n.steps.map((s) => h("button", {
        type: "button", class: s.kind === "record_delivery" ? "" : "secondary", "data-step": s.kind,
        onclick: () => (s.kind === "record_delivery" ? serviceForm(ctx, n, c, work, problem)
          : s.kind === "abatement_done" ? crewDoneForm(ctx, n, s, work, problem) : confirmStep(ctx, n, s, work, problem)),
      }, s.label)))
    : n.still_to_do ? "" : h("p", { class: "muted", id: "no-steps" }, "Nothing can be recorded on this notice now.");
  const toDo = n.still_to_do ? h("p", { id: "still-to-do" }, n.still_to_do, " ", h("a", { href: "#notices" }, "Open the Notices page")) : "";
  // The letter is the command line's PDF; it is drawn here only when asked for (it takes a moment).
  const pdf = `/api/notices/${encodeURIComponent(n.number)}/letter.pdf`;
  const preview = h("div", { class: "preview" }, h("button", { type: "button", class: "secondary", id: "show-letter", onclick: () => {
    preview.replaceChildren(h("iframe", { class: "letter-preview", title: `Letter of notice ${n.number}`, src: `${pdf}#view=FitH` }));
  } }, "Show the letter here"));
  const letter = may("print") && n.status !== "held" && n.status !== "pending"
    ? h("section", { class: "panel letter", "aria-labelledby": "letter-h" },
        h("h2", { id: "letter-h" }, "The letter"),
        h("div", { class: "actions" },
          h("a", { class: "button-link", href: `${pdf}?download=true`, download: `notice-${n.number}.pdf` }, "Download PDF"),
          h("a", { class: "button-link secondary", href: pdf, target: "_blank", rel: "noopener" }, "Reprint (opens the PDF to print)")),
        preview)
    : "";
  main.replaceChildren(
    h("p", { class: "crumbs" }, h("a", { href: "#notices" }, "← All notices")),
    h("h1", {}, `${n.kind_words}`, h("span", { class: "sub" }, ` · Notice ${n.number}`)),
    h("div", { class: letter ? "notice-grid" : "notice-grid single" },
      h("div", {},
        h("section", { class: "panel", "aria-labelledby": "where-h" },
          h("h2", { id: "where-h" }, n.address),
          n.owner ? h("p", {}, `Owner of record: ${n.owner.name}`, h("br"), n.owner.address_lines.join(", ")) : "",
          h("dl", { class: "facts" },
            h("dt", {}, "Status"), h("dd", { id: "notice-status" }, n.status_words),
            n.case_words ? h("dt", {}, "The case") : "", n.case_words ? h("dd", {}, n.case_words) : "",
            h("dt", {}, "Issued"), h("dd", {}, when(n.issued_at, c.now, c.zone)),
            h("dt", {}, "Deadline"), h("dd", { id: "notice-deadline" }, deadlineCell(h, n, c)),
            n.ordinance ? h("dt", {}, "Ordinance") : "", n.ordinance ? h("dd", {}, n.ordinance) : "")),
        h("section", { class: "panel", "aria-labelledby": "do-h" },
          h("h2", { id: "do-h" }, "What can be recorded now"), toDo, steps, problem, work),
        h("section", { class: "panel", "aria-labelledby": "hist-h" },
          h("h2", { id: "hist-h" }, "History"),
          h("ol", { class: "history" }, ...n.history.map((l) => h("li", { class: l.outcome },
            h("span", { class: "when" }, when(l.at, c.now, c.zone)), " ", l.text, l.who ? ` — ${l.who}` : "")))),
        corrections(ctx, n, c)),
      letter));
  // An entry just recorded is applied to its case in a moment: read the page again then, so
  // it shows what a reload would (not while a form is open, nor once another page is shown).
  if (n.history.some((l) => l.outcome === "waiting")) {
    const here = window.location.hash;
    setTimeout(() => {
      if (window.location.hash === here && !work.childElementCount && document.contains(work)) void ctx.route();
    }, 700);
  }
}

// ---------------------------------------------------------------- corrections

// A service or the crew's completion entered wrongly: corrected (the right time, the right
// method) or undone, with a reason, after a confirmation. The entry stays on record; the
// server refuses, in words, what a later act rests on (and says what to undo first).
function corrections(ctx, n, c) {
  const { h, may } = ctx;
  const shown = (n.entries || []).filter((e) => !e.undone);
  const paid = n.payments || [];
  if ((!shown.length && !paid.length) || !may("correct")) return "";
  const work = h("div", { id: "correct-work" });
  const problem = h("div", { id: "correct-problem", class: "problem", role: "alert" });
  const items = shown.map((e) => h("li", { "data-entry": String(e.id) },
    h("span", { class: "when" }, when(e.at, c.now, c.zone)), " ", e.text, ` — ${e.who}`,
    e.may_correct
      ? h("div", {}, h("button", { type: "button", class: "secondary", "data-correct": String(e.id),
          onclick: () => correctionForm(ctx, n, c, e, work, problem) }, "Correct or undo…"))
      : h("div", { class: "muted blocked" }, e.blocked || "")));
  items.push(...paid.map((p) => h("li", { "data-payment": String(p.id) },
    h("span", { class: "when" }, when(p.paid_at, c.now, c.zone)), " ", `Payment of $${p.amount}`,
    p.may_correct
      ? h("div", {}, h("button", { type: "button", class: "secondary", "data-correct-payment": String(p.id),
          onclick: () => paymentForm(ctx, n, c, p, work, problem) }, "Correct or undo…"))
      : h("div", { class: "muted blocked" }, p.blocked || ""))));
  return h("section", { class: "panel", "aria-labelledby": "fix-h" },
    h("h2", { id: "fix-h" }, "Correct an entry"),
    h("p", { class: "muted" }, "A wrong time, method, amount or notice. The entry stays on record; the correction is recorded with your name and reason."),
    h("ul", { class: "entries" }, ...items), problem, work);
}

function correctionForm(ctx, n, c, e, work, problem) {
  const { h } = ctx;
  problem.classList.remove("show");
  const methods = e.methods.length
    ? h("fieldset", { id: "fix-method" }, h("legend", {}, "How it was served"),
        ...e.methods.map((m) => h("label", { class: "choice" },
          h("input", { type: "radio", name: "method", value: m.value, ...(m.value === e.method ? { checked: "" } : {}) }), ` ${m.label}`)))
    : "";
  const form = h("form", { class: "service", id: "correction-form", novalidate: "", onsubmit: (ev) => {
    ev.preventDefault();
    const undo = form.elements.what.value === "undo";
    const reason = form.elements.reason.value.trim();
    const at = form.elements.at.value;
    const picked = form.querySelector("input[name=method]:checked")?.value || null;
    const method = picked && picked !== e.method ? picked : null;
    if (!reason) { showProblem(problem, "Reason: say why the entry is corrected (it is kept on record)."); form.elements.reason.focus(); return; }
    if (!undo && !at && !method) { showProblem(problem, "When: give the right time (or the right method)."); form.elements.at.focus(); return; }
    problem.classList.remove("show");
    confirmCorrection(ctx, n, c, e, work, problem, { undo, reason, at, method });
  } },
    h("fieldset", {}, h("legend", {}, `${e.text}, ${when(e.at, c.now, c.zone)}`),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "what", value: "correct", checked: "" }), " Correct it: the time or the method was wrong"),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "what", value: "undo" }), " Undo it: it should not have been recorded (wrong notice, not done)")),
    h("label", { for: "fix-at" }, "The right time (leave empty to keep it)"),
    h("input", { id: "fix-at", name: "at", type: "datetime-local" }),
    methods,
    h("label", { for: "fix-reason" }, "Reason (required, kept on record)"),
    h("textarea", { id: "fix-reason", name: "reason", rows: "2", maxlength: "500", required: "" }),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Continue"),
      h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Cancel")));
  work.replaceChildren(form);
  form.querySelector("input[name=what]")?.focus();
}

function confirmCorrection(ctx, n, c, e, work, problem, f) {
  const { api, h, toast, route } = ctx;
  const yes = h("button", { type: "button", id: "confirm-correction", onclick: async () => {
    yes.disabled = true;
    try {
      const body = { undo: f.undo, reason: f.reason };
      if (!f.undo && f.at) body.at = f.at; // the village's local time
      if (!f.undo && f.method) body.method = f.method;
      const result = await api(`/api/notices/${encodeURIComponent(n.number)}/entries/${e.id}/correction`, { method: "POST", body });
      toast(result.message);
      await route();
    } catch (err) { showProblem(problem, err.message); yes.disabled = false; }
  } }, f.undo ? "Yes, undo it" : "Yes, record the correction");
  const how = f.method ? e.methods.find((m) => m.value === f.method)?.label.split(" (")[0].toLowerCase() : "";
  const change = f.undo ? "Undo" : `Correct to ${f.at ? localWords(f.at) : when(e.at, c.now, c.zone)}${how ? `, ${how}` : ""}:`;
  work.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": "Confirm the correction" },
    h("p", {}, h("strong", {}, `Notice ${n.number}, ${n.address}`)),
    h("p", { id: "correction-text" }, `${change} “${e.text}”, ${when(e.at, c.now, c.zone)}.`),
    h("p", {}, `Reason: ${f.reason}`),
    h("p", { class: "muted" }, "The deadlines are worked out again from the corrected facts. The original entry stays on record."),
    h("div", { class: "actions" }, yes, h("button", { type: "button", class: "secondary", onclick: () => correctionForm(ctx, n, c, e, work, problem) }, "Go back"))));
  yes.focus();
}

// A payment entered with the wrong amount or date (corrected) or on the wrong bill (undone,
// then recorded on the right one): the wrong entry stays on record, voided.
function paymentForm(ctx, n, c, p, work, problem) {
  const { h } = ctx;
  problem.classList.remove("show");
  const form = h("form", { class: "service", id: "payment-correction-form", novalidate: "", onsubmit: (ev) => {
    ev.preventDefault();
    const undo = form.elements.what.value === "undo";
    const reason = form.elements.reason.value.trim();
    const amount = form.elements.amount.value.trim();
    const paidAt = form.elements.paid_at.value;
    if (!reason) { showProblem(problem, "Reason: say why the payment is corrected (it is kept on record)."); form.elements.reason.focus(); return; }
    if (!undo && !amount && !paidAt) { showProblem(problem, "Amount: give the right amount (or the right date paid)."); form.elements.amount.focus(); return; }
    problem.classList.remove("show");
    confirmPayment(ctx, n, c, p, work, problem, { undo, reason, amount, paidAt });
  } },
    h("fieldset", {}, h("legend", {}, `Payment of $${p.amount}, ${when(p.paid_at, c.now, c.zone)}`),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "what", value: "correct", checked: "" }), " Correct it: the amount or the date was wrong"),
      h("label", { class: "choice" }, h("input", { type: "radio", name: "what", value: "undo" }), " Undo it: it should not have been recorded (wrong bill, not paid)")),
    h("label", { for: "fix-amount" }, "The right amount in dollars (leave empty to keep it)"),
    h("input", { id: "fix-amount", name: "amount", inputmode: "decimal", autocomplete: "off" }),
    h("label", { for: "fix-paid-at" }, "The right date paid (leave empty to keep it)"),
    h("input", { id: "fix-paid-at", name: "paid_at", type: "datetime-local" }),
    h("label", { for: "fix-pay-reason" }, "Reason (required, kept on record)"),
    h("textarea", { id: "fix-pay-reason", name: "reason", rows: "2", maxlength: "500", required: "" }),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Continue"),
      h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Cancel")));
  work.replaceChildren(form);
  form.querySelector("input[name=what]")?.focus();
}

function confirmPayment(ctx, n, c, p, work, problem, f) {
  const { api, h, toast, route } = ctx;
  const yes = h("button", { type: "button", id: "confirm-payment-correction", onclick: async () => {
    yes.disabled = true;
    try {
      const body = { undo: f.undo, reason: f.reason };
      if (!f.undo && f.amount) body.amount = f.amount;
      if (!f.undo && f.paidAt) body.paid_at = f.paidAt; // the village's local time
      const result = await api(`/api/notices/${encodeURIComponent(n.number)}/payments/${p.id}/correction`, { method: "POST", body });
      toast(result.message);
      await route();
    } catch (err) { showProblem(problem, err.message); yes.disabled = false; }
  } }, f.undo ? "Yes, undo it" : "Yes, record the correction");
  const to = [f.amount ? `$${f.amount.replace(/^\$/, "")}` : "", f.paidAt ? `paid ${localWords(f.paidAt)}` : ""].filter(Boolean).join(", ");
  work.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": "Confirm the correction" },
    h("p", {}, h("strong", {}, `Bill ${n.number}, ${n.address}`)),
    h("p", { id: "payment-correction-text" }, `${f.undo ? "Undo" : `Correct to ${to}:`} the payment of $${p.amount}, ${when(p.paid_at, c.now, c.zone)}.`),
    h("p", {}, `Reason: ${f.reason}`),
    h("p", { class: "muted" }, "The balance, the bill's status and the overdue list follow the corrected payments. The original entry stays on record."),
    h("div", { class: "actions" }, yes, h("button", { type: "button", class: "secondary", onclick: () => paymentForm(ctx, n, c, p, work, problem) }, "Go back"))));
  yes.focus();
}

function showProblem(problem, message) {
  problem.textContent = message;
  problem.classList.add("show");
}

function confirmStep(ctx, n, step, work, problem) {
  const { api, h, toast, route } = ctx;
  problem.classList.remove("show");
  // The bill's receipt is often recorded after the day (a mailed bill): when it was received.
  const when = step.kind === "bill_received"
    ? h("input", { id: "step-at", name: "at", type: "datetime-local", "aria-describedby": "step-at-help" }) : null;
  const yes = h("button", { type: "button", id: "confirm-yes", onclick: async () => {
    yes.disabled = true;
    try {
      const body = { kind: step.kind };
      if (when && when.value) body.at = when.value; // the village's local time
      const result = await api(`/api/notices/${encodeURIComponent(n.number)}/actions`, { method: "POST", body });
      toast(result.message);
      await route();
    } catch (err) { showProblem(problem, err.message); yes.disabled = false; }
  } }, "Yes, record it");
  work.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": "Confirm" },
    h("p", {}, `Record “${step.label}” for notice ${n.number} at ${n.address}${when ? "?" : ", as of now?"}`),
    when ? h("label", { for: "step-at" }, "When the owner received it") : "", when || "",
    when ? h("div", { id: "step-at-help", class: "muted" }, "Leave empty for now. The days to pay run from this receipt.") : "",
    h("div", { class: "actions" }, yes, h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Cancel"))));
  yes.focus();
}

// "Village crew finished the work": who worked how many hours and which equipment ran how
// long (the bill prices them at the profile's rates), and when, then a confirmation.
async function crewDoneForm(ctx, n, step, work, problem) {
  const { api, h } = ctx;
  problem.classList.remove("show");
  let order;
  try { order = (await api("/api/abatements")).find((a) => a.frontage === n.frontage && a.status === "ordered"); } catch { order = undefined; }
  const form = h("form", { class: "service crew-form", id: "crew-form", novalidate: "", onsubmit: (e) => {
    e.preventDefault();
    const crew = readCrew(form);
    if (crew.problem) { showProblem(problem, crew.problem); return; }
    problem.classList.remove("show");
    confirmCrewDone(ctx, n, step, work, problem, { ...crew, at: form.elements.at.value }, () => work.replaceChildren(form));
  } },
    h("p", {}, `${n.address}: ${order ? order.reason_words : "the Village's work"}.`),
    crewFields(h, "done", order?.rates || [], null),
    h("label", { for: "done-at" }, "When the crew finished"),
    h("input", { id: "done-at", name: "at", type: "datetime-local", "aria-describedby": "done-at-help" }),
    h("div", { id: "done-at-help", class: "muted" }, "Leave empty for now."),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Continue"),
      h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Cancel")));
  work.replaceChildren(form);
  form.querySelector("input")?.focus();
}

function confirmCrewDone(ctx, n, step, work, problem, crew, back) {
  const { api, h, toast, route } = ctx;
  const yes = h("button", { type: "button", id: "confirm-yes", onclick: async () => {
    yes.disabled = true;
    try {
      const body = { kind: step.kind, workers: crew.workers, equipment: crew.equipment };
      if (crew.at) body.at = crew.at; // the village's local time
      const result = await api(`/api/notices/${encodeURIComponent(n.number)}/actions`, { method: "POST", body });
      toast(result.message);
      await route();
    } catch (err) { showProblem(problem, err.message); yes.disabled = false; }
  } }, "Yes, record it");
  work.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": "Confirm the crew's work" },
    h("p", {}, h("strong", {}, `${step.label}: ${n.address}`), `, ${crew.at ? localWords(crew.at) : "now"}.`),
    h("p", { id: "crew-confirm-text" }, `Crew's hours: ${crewWords(crew)}.`),
    h("p", { class: "muted" }, "The costs are incurred when the work was done; the clerk bills these hours at the Village's rates."),
    h("div", { class: "actions" }, yes, h("button", { type: "button", class: "secondary", onclick: back }, "Go back"))));
  yes.focus();
}

function serviceForm(ctx, n, c, work, problem) {
  const { h, state } = ctx;
  problem.classList.remove("show");
  const methods = n.service_methods.map((m, i) => h("label", { class: "choice" },
    h("input", { type: "radio", name: "method", value: m.value, required: "", ...(i === 0 ? { checked: "" } : {}) }), ` ${m.label}`));
  const form = h("form", { class: "service", id: "service-form", novalidate: "", onsubmit: (e) => {
    e.preventDefault();
    const method = form.querySelector("input[name=method]:checked");
    const by = form.elements.served_by.value.trim();
    if (!method) { showProblem(problem, "How it was served: choose one."); return; }
    if (!by) { showProblem(problem, "Served by: write the name of the person who served it."); form.elements.served_by.focus(); return; }
    problem.classList.remove("show");
    confirmService(ctx, n, c, work, problem, { method: method.value, label: method.parentElement.textContent.trim(), served_by: by, at: form.elements.at.value });
  } },
    h("fieldset", {}, h("legend", {}, "How was it served?"), ...methods),
    h("label", { for: "served-by" }, "Served by"),
    h("input", { id: "served-by", name: "served_by", autocomplete: "name", value: state.session.username, required: "" }),
    h("label", { for: "served-at" }, "When (mail: the day it was received)"),
    h("input", { id: "served-at", name: "at", type: "datetime-local", "aria-describedby": "served-at-help" }),
    h("div", { id: "served-at-help", class: "muted" }, "Leave empty for now."),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Continue"),
      h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Cancel")));
  work.replaceChildren(form);
  form.querySelector("input[name=method]")?.focus();
}

// A datetime-local value ("2026-12-12T09:30") is the village's time: said as written.
function localWords(value) {
  const [day, time] = value.split("T");
  const [hh, mm] = time.split(":").map(Number);
  return `${when(day)}, ${((hh + 11) % 12) + 1}:${String(mm).padStart(2, "0")} ${hh < 12 ? "AM" : "PM"}`;
}

function confirmService(ctx, n, c, work, problem, s) {
  const { api, h, toast, route } = ctx;
  const atWords = s.at ? localWords(s.at) : "now";
  const yes = h("button", { type: "button", id: "confirm-yes", onclick: async () => {
    yes.disabled = true;
    try {
      const body = { method: s.method, served_by: s.served_by };
      if (s.at) body.at = s.at; // the village's local time; the server reads it in the village's zone
      const result = await api(`/api/notices/${encodeURIComponent(n.number)}/service`, { method: "POST", body });
      toast(result.message);
      await route();
    } catch (err) { showProblem(problem, err.message); yes.disabled = false; }
  } }, "Yes, record the service");
  work.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": "Confirm the service" },
    h("p", {}, h("strong", {}, `Notice ${n.number}, ${n.address}`)),
    h("p", { id: "confirm-text" }, `Served: ${s.label.split(" (")[0].toLowerCase()}, by ${s.served_by}, ${atWords}.`),
    h("p", { class: "muted" }, "The owner's deadline starts from this service. Check it before you record it."),
    h("div", { class: "actions" }, yes, h("button", { type: "button", class: "secondary", onclick: () => serviceForm(ctx, n, c, work, problem) }, "Go back"))));
  yes.focus();
}
