// Rounds: the inspector's stops on a phone (GET /api/rounds), one tap per finding, a photo
// from the phone's camera sent first (POST …/photos, the JPEG itself) and linked to the tap.
import { left, when } from "./when.js";

export async function roundsPage(ctx) {
  const { api, h, main, state } = ctx;
  const r = await api("/api/rounds");
  state.zone = r.zone;
  const stop = (s) => {
    const card = h("li", { class: "stop", "data-frontage": s.frontage });
    const status = h("p", { class: "stop-status", role: "status" });
    const photoId = `photo-${s.frontage}`;
    const photo = s.taps.length ? h("div", { class: "photo" },
      h("label", { for: photoId, class: "photo-label" }, "Add a photo (optional)"),
      h("input", { id: photoId, type: "file", accept: "image/*", capture: "environment", class: "photo-input",
        onchange: (e) => sendPhoto(ctx, s, e.target, card, status) })) : "";
    const taps = s.taps.length
      ? h("div", { class: "taps" }, ...s.taps.map((t) => h("button", {
          type: "button", class: `tap tap-${t.tap}`, "data-tap": t.tap,
          onclick: (e) => sendTap(ctx, s, t, card, status, e.currentTarget),
        }, t.label)))
      : h("p", { class: "muted" }, "View only: your account does not record findings.");
    card.append(
      h("h2", {}, s.address),
      h("p", { class: "why" }, s.why),
      s.deadline ? h("p", { class: "stop-deadline" }, `Deadline ${when(s.deadline, r.now, r.zone)} (${left(s.deadline, r.now)})`) : "",
      s.notice ? h("p", { class: "post-this" }, `Hazard notice ${s.notice} to post on the door.`) : "",
      photo, taps, status);
    return card;
  };
  // What the last tap recorded stays on top after the list is read again.
  const note = state.roundsNote ? h("p", { id: "rounds-note", class: "rounds-note", role: "status" }, state.roundsNote) : "";
  state.roundsNote = "";
  main.replaceChildren(note,
    h("h1", {}, "Rounds", h("span", { class: "sub" }, ` · ${r.stops.length} ${r.stops.length === 1 ? "stop" : "stops"}`)),
    r.stops.length ? h("ol", { class: "stops" }, ...r.stops.map(stop)) : h("p", { class: "muted" }, "No property needs a look now."));
}

async function sendPhoto(ctx, s, input, card, status) {
  const file = input.files?.[0];
  if (!file) return;
  status.textContent = "Sending the photo…";
  try {
    const response = await fetch(`/api/rounds/${encodeURIComponent(s.frontage)}/photos`, {
      method: "POST", credentials: "same-origin", body: file,
      headers: { "Content-Type": file.type || "image/jpeg", "X-CSRF-Token": ctx.state.session.csrf_token, Accept: "application/json" },
    });
    const data = await response.json().catch(() => ({}));
    if (!response.ok) throw new Error(typeof data.detail === "string" ? data.detail : "The photo could not be sent.");
    card.dataset.photo = data.sha256;
    status.textContent = "Photo ready: it goes with your next tap.";
  } catch (err) {
    status.textContent = err.message;
    status.classList.add("error");
  }
}

async function sendTap(ctx, s, t, card, status, button) {
  const { api, toast } = ctx;
  const body = { tap: t.tap };
  if (card.dataset.photo) body.photo = card.dataset.photo;
  for (const b of card.querySelectorAll("button.tap")) b.disabled = true;
  status.classList.remove("error");
  status.textContent = "Recording…";
  try {
    const result = await api(`/api/rounds/${encodeURIComponent(s.frontage)}/taps`, { method: "POST", body });
    delete card.dataset.photo;
    status.textContent = result.message;
    button.classList.add("chosen");
    toast(result.message);
    // The stop as it stands now (a posted notice's deadline, the taps that still mean something).
    ctx.state.roundsNote = result.message;
    await ctx.route();
  } catch (err) {
    status.textContent = err.message;
    status.classList.add("error");
    for (const b of card.querySelectorAll("button.tap")) b.disabled = false;
  }
}
