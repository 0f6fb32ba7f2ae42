// Admin (the administrator only; the API refuses everyone else): accounts, the
// Village's letterhead and issuing officer as the settings file holds them, and
// confirming the profile values the code text leaves open. Every change asks
// for a confirmation first and is audited by the server (routes/accounts.py,
// routes/admin.py).
const ROLES = [
  ["viewer", "Viewer (reads everything but owners' details)"],
  ["inspector", "Inspector (rounds, findings, service)"],
  ["clerk", "Clerk (notices, bills, payments, exports)"],
  ["admin", "Administrator (also accounts and settings)"],
];
const roleWords = (role) => (ROLES.find(([r]) => r === role) || [role, role])[1].split(" (")[0];

function when(iso, withTime = true) {
  if (!iso) return "–";
  const opts = { month: "short", day: "numeric", year: "numeric" };
  if (withTime) Object.assign(opts, { hour: "numeric", minute: "2-digit" });
  return new Date(iso).toLocaleString("en-US", opts);
}

// One in-page confirmation: what will happen in words, then Yes or Go back.
function askFirst(ctx, place, text, yesLabel, act) {
  const { h } = ctx;
  const problem = h("p", { class: "error", role: "alert" });
  const back = h("button", { type: "button", class: "secondary", onclick: () => place.replaceChildren() }, "Go back");
  const yes = h("button", { type: "button", class: "confirm-yes", onclick: async () => {
    yes.disabled = true;
    try { await act(); } catch (err) { problem.textContent = err.message; yes.disabled = false; }
  } }, yesLabel);
  place.replaceChildren(h("div", { class: "confirm", role: "group", "aria-label": "Confirm" },
    h("p", {}, text), h("div", { class: "actions" }, yes, back), problem));
  yes.focus();
}

export function stylesheet() {
  // The pages' own rules, loaded once (the CSP allows same-origin stylesheets only).
  if (document.getElementById("desk-css")) return;
  const link = document.createElement("link");
  Object.assign(link, { id: "desk-css", rel: "stylesheet", href: "/static/admin.css" });
  document.head.append(link);
}

function field(h, id, text, input, hint = "") {
  return h("div", { class: "field" }, h("label", { for: id }, text), input,
    hint ? h("p", { class: "muted hint", id: `${id}-hint` }, hint) : "");
}

export async function adminPage(ctx) {
  const { api, h, main } = ctx;
  stylesheet();
  const [users, letterhead, values] = await Promise.all([
    api("/api/users"), api("/api/admin/letterhead"), api("/api/admin/confirmations")]);
  main.replaceChildren(h("div", { class: "desk" },
    h("h1", {}, "Admin"),
    accountsSection(ctx, users),
    letterheadSection(ctx, letterhead),
    confirmationsSection(ctx, values)));
}

function accountsSection(ctx, users) {
  const { api, h, toast, state } = ctx;
  const again = () => adminPage(ctx);
  const work = h("div", { id: "account-work", "aria-live": "polite" });
  const rows = users.map((u) => {
    const self = u.username === state.session.username;
    const role = h("select", { id: `role-${u.username}`, "aria-label": `Role of ${u.username}` },
      ...ROLES.map(([r]) => h("option", { value: r, ...(r === u.role ? { selected: "" } : {}) }, roleWords(r))));
    if (self) role.disabled = true;
    const changeRole = h("button", { type: "button", class: "secondary", ...(self ? { disabled: "" } : {}), onclick: () => {
      if (role.value === u.role) { toast(`${u.username} is already ${roleWords(u.role).toLowerCase()}`); return; }
      askFirst(ctx, work, `Make ${u.username} ${roleWords(role.value).toLowerCase()} (now ${roleWords(u.role).toLowerCase()})? Their sessions end; they log in again.`, "Change role", async () => {
        await api(`/api/users/${encodeURIComponent(u.username)}`, { method: "PATCH", body: { role: role.value } });
        toast(`${u.username} is now ${roleWords(role.value).toLowerCase()}`); await again();
      });
    } }, "Change role");
    const toggle = h("button", { type: "button", class: "secondary", ...(self ? { disabled: "" } : {}), onclick: () => {
      const disable = !u.disabled;
      askFirst(ctx, work, disable ? `Disable ${u.username}? They are logged out and cannot log in until enabled again.` : `Enable ${u.username} again?`,
        disable ? "Disable account" : "Enable account", async () => {
          await api(`/api/users/${encodeURIComponent(u.username)}`, { method: "PATCH", body: { disabled: disable } });
          toast(`${u.username} ${disable ? "disabled" : "enabled"}`); await again();
        });
    } }, u.disabled ? "Enable" : "Disable");
    const reset = h("button", { type: "button", class: "secondary", onclick: () => resetForm(ctx, work, u.username) }, "Reset password");
    return h("tr", {},
      h("th", { scope: "row" }, u.username, self ? h("span", { class: "muted" }, " (you)") : ""),
      h("td", { "data-label": "Role" }, role, " ", changeRole),
      h("td", { "data-label": "Status" }, u.disabled ? h("span", { class: "error-text" }, "Disabled") : "Active"),
      h("td", { "data-label": "Added" }, when(u.created_at, false)),
      h("td", {}, h("div", { class: "actions" }, toggle, reset)));
  });
  const add = h("form", { class: "entry", id: "add-user", onsubmit: (e) => {
    e.preventDefault();
    const f = e.target;
    const body = { username: f.username.value.trim(), role: f.role.value, password: f.password.value };
    if (!/^[A-Za-z0-9_.@-]{1,64}$/.test(body.username)) { toast("User name: letters, digits and . _ @ - only"); f.username.focus(); return; }
    if (body.password.length < 8) { toast("Password: at least 8 characters"); f.password.focus(); return; }
    askFirst(ctx, work, `Add ${body.username} as ${roleWords(body.role).toLowerCase()}?`, "Add account", async () => {
      await api("/api/users", { method: "POST", body });
      toast(`${body.username} added`); await again();
    });
  } },
    field(h, "new-username", "User name", h("input", { id: "new-username", name: "username", required: "", autocomplete: "off", maxlength: "64" })),
    field(h, "new-role", "Role", h("select", { id: "new-role", name: "role" }, ...ROLES.map(([r, words]) => h("option", { value: r }, words)))),
    field(h, "new-password", "Password", h("input", { id: "new-password", name: "password", type: "password", required: "", minlength: "8", autocomplete: "new-password", "aria-describedby": "new-password-hint" }), "At least 8 characters; give it to the person directly."),
    h("button", { type: "submit" }, "Add account"));
  return h("section", { class: "panel", "aria-labelledby": "accounts-h" },
    h("h2", { id: "accounts-h" }, "Accounts"),
    h("table", { class: "accounts stack" },
      h("thead", {}, h("tr", {}, ...["User", "Role", "Status", "Added", "Account"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...rows)),
    work,
    h("h3", {}, "Add an account"), add);
}

function resetForm(ctx, work, username) {
  const { api, h } = ctx;
  const id = "reset-password";
  const input = h("input", { id, type: "password", minlength: "8", autocomplete: "new-password", "aria-describedby": `${id}-hint` });
  const form = h("form", { class: "entry", onsubmit: (e) => {
    e.preventDefault();
    const typed = input.value;
    if (typed && typed.length < 8) { input.focus(); input.setAttribute("aria-invalid", "true"); return; }
    askFirst(ctx, work, typed ? `Set the password you typed for ${username}? Their sessions end.` : `Make a one-time password for ${username}? Their sessions end; it is shown once.`, "Reset password", async () => {
      const r = await api(`/api/users/${encodeURIComponent(username)}/password`, { method: "POST", body: typed ? { password: typed } : {} });
      const said = r.one_time_password
        ? [h("p", {}, `One-time password for ${username} (shown only now; give it to them and ask them to keep it private):`), h("p", {}, h("code", { class: "otp" }, r.one_time_password))]
        : [h("p", {}, `Password for ${username} changed.`)];
      work.replaceChildren(h("div", { class: "panel", role: "status" }, ...said));
    });
  } },
    h("h3", {}, `Reset the password of ${username}`),
    field(h, id, "New password", input, "Type one (at least 8 characters), or leave it blank to make a one-time password."),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Reset password"),
      h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Cancel")));
  work.replaceChildren(form);
  input.focus();
}

function letterheadSection(ctx, lh) {
  const { h } = ctx;
  return h("section", { class: "panel", "aria-labelledby": "letterhead-h" },
    h("h2", { id: "letterhead-h" }, "Letterhead and issuing officer"),
    h("p", { class: "muted" }, `What every letter from the ${lh.village} carries. These come from the settings file; change them there and restart the dashboard.`),
    lh.problems.length ? h("ul", { class: "problems" }, ...lh.problems.map((p) => h("li", { class: "error-text" }, p))) : h("p", {}, "Nothing missing."),
    h("dl", { class: "letterhead" }, ...lh.lines.flatMap((l) => [
      h("dt", {}, l.label),
      h("dd", {}, l.value ?? h("span", { class: "error-text" }, "Not set"), " ", h("span", { class: "muted" }, `(setting ${l.setting})`)),
    ])));
}

function confirmationsSection(ctx, values) {
  const { api, h, toast } = ctx;
  const work = h("div", { id: "confirm-work", "aria-live": "polite" });
  // What still waits comes first.
  const ordered = [...values.filter((v) => !v.confirmed_by), ...values.filter((v) => v.confirmed_by)];
  const rows = ordered.map((v) => h("tr", {},
    h("th", { scope: "row" }, v.label),
    h("td", { "data-label": "As set" }, v.shown ?? v.value),
    h("td", { "data-label": "Why it is open" }, v.note || "–"),
    h("td", { "data-label": "Confirmed" }, v.confirmed_by ? `${v.confirmed_by}, ${when(v.confirmed_at, false)} (${v.reference})` : h("span", { class: "unconfirmed" }, "Not confirmed")),
    h("td", { "data-label": "Notices held" }, String(v.held_notices)),
    h("td", {}, v.confirmed_by ? "" : h("button", { type: "button", class: "secondary", "aria-label": `Confirm ${v.label}`, onclick: () => confirmForm(ctx, work, v) }, "Confirm…"))));
  return h("section", { class: "panel", "aria-labelledby": "confirm-h" },
    h("h2", { id: "confirm-h" }, "Values awaiting the Village's confirmation"),
    h("p", { class: "muted" }, "The ordinance leaves these open; no notice relying on one is sent until the Village confirms the value."),
    values.length ? h("table", { class: "stack" },
      h("thead", {}, h("tr", {}, ...["Value", "As set", "Why it is open", "Confirmed", "Notices held", ""].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, ...rows)) : h("p", {}, "Every value is settled by the code text."),
    work);
}

function confirmForm(ctx, work, v) {
  const { api, h, toast } = ctx;
  const today = new Date().toISOString().slice(0, 10);
  const form = h("form", { class: "entry", id: "confirm-form", onsubmit: (e) => {
    e.preventDefault();
    const f = e.target;
    const body = { name: v.name, confirmed_by: f.by.value.trim(), confirmed_on: f.on.value, reference: f.reference.value.trim() };
    if (body.confirmed_by.length < 2) { toast("Confirmed by: name the person or board"); f.by.focus(); return; }
    if (!body.confirmed_on) { toast("Confirmed on: give the date"); f.on.focus(); return; }
    if (body.reference.length < 3) { toast("Board action or ordinance: give the reference"); f.reference.focus(); return; }
    askFirst(ctx, work, `Record that ${body.confirmed_by} confirmed ${v.label.toLowerCase()} = ${v.shown ?? v.value} on ${body.confirmed_on} (${body.reference})? Notices held for it go out.`, "Record confirmation", async () => {
      const r = await api("/api/admin/confirmations", { method: "POST", body });
      toast(r.released.length ? `Confirmed; ${r.released.length} held notice(s) released` : "Confirmed");
      await adminPage(ctx);
    });
  } },
    h("h3", {}, `Confirm ${v.label.toLowerCase()} (${v.shown ?? v.value})`),
    field(h, "confirm-by", "Confirmed by", h("input", { id: "confirm-by", name: "by", required: "", maxlength: "120", placeholder: "Village Board" })),
    field(h, "confirm-on", "Confirmed on", h("input", { id: "confirm-on", name: "on", type: "date", required: "", max: today })),
    field(h, "confirm-ref", "Board action or ordinance", h("input", { id: "confirm-ref", name: "reference", required: "", maxlength: "200", placeholder: "Board motion 2026-14, Nov 10 2026" })),
    h("div", { class: "actions" }, h("button", { type: "submit" }, "Confirm…"),
      h("button", { type: "button", class: "secondary", onclick: () => work.replaceChildren() }, "Cancel")));
  work.replaceChildren(form);
  form.elements.by.focus();
}
