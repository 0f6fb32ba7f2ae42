// Rounds: the inspector's stops on a phone (GET /api/rounds), one tap per finding, a photo
// from the phone's camera (POST …/photos, the JPEG itself; one with the survey marker is
// measured for defects and the result shown here and on the property page).
//
// No signal: every tap goes first into an outbox on the phone (IndexedDB, photo included)
// with its own time and a random key, then is sent; what cannot be sent waits and goes when
// the connection returns (the browser's "online" event, every 20 s, or "Send now"). The
// server records a key once, so a tap whose answer was lost and is sent again counts once.
// The page says how many findings wait; a finding the server refuses is shown with why.
//
// At /rounds/ (rounds.js) a service worker keeps the page itself, so it also reloads with
// no signal: who was logged in (name, role; never the CSRF token) and the round as last
// read are kept here under the user's name. Logging out forgets both and the worker's
// cache; another account's kept round is dropped when someone else logs in. The outbox
// stays: its findings go when their inspector is logged in again.
import { clockTime, left, when } from "./when.js";

const DB_NAME = "sidewalk-rounds";
const STORE = "outbox";
const CACHE = "sidewalk-rounds-list";
const SESSION = "sidewalk-rounds-session";
const WORKER_CACHES = "sidewalk-rounds-";
const RETRY_MS = 20000;
const answers = new Map(); // key → what the server said (or why it refused)
let flushing = null;
let loginNeeded = false; // the session ended while findings waited: they go after a new log-in
let ctxRef = null;
const el = (ctx, ...args) => ctx.h(...args);

// ---------------------------------------------------------------- the outbox (IndexedDB)

function openDb() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE, { keyPath: "key" });
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function store(mode, work) {
  const db = await openDb();
  return new Promise((resolve, reject) => {
    const tx = db.transaction(STORE, mode);
    const result = work(tx.objectStore(STORE));
    tx.oncomplete = () => { db.close(); resolve(result.result); };
    tx.onerror = () => { db.close(); reject(tx.error); };
  });
}

const putEntry = (entry) => store("readwrite", (s) => s.put(entry));
const dropEntry = (key) => store("readwrite", (s) => s.delete(key));
async function entries(user) {
  const all = (await store("readonly", (s) => s.getAll())) || [];
  return all.filter((e) => e.user === user).sort((a, b) => a.at.localeCompare(b.at));
}

// A key no other tap will have: random (crypto.randomUUID needs HTTPS; this does not).
function newKey() {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("").replace(/(.{8})(.{4})(.{4})(.{4})/, "$1-$2-$3-$4-");
}

// The dashboard's time now (the phone's clock corrected by the last answer from the server).
function serverNow(ctx) {
  return new Date(Date.now() + (ctx.state.roundsOffsetMs || 0)).toISOString();
}

// ---------------------------------------------------------------- kept for a reload offline

export function keepSession(session) {
  const { username, role, permissions } = session;
  localStorage.setItem(SESSION, JSON.stringify({ username, role, permissions }));
}

export function keptSession() {
  return JSON.parse(localStorage.getItem(SESSION) || "null");
}

// Logging out: the kept round and session, the worker's cache and the worker itself.
export async function forgetRounds() {
  localStorage.removeItem(CACHE);
  localStorage.removeItem(SESSION);
  try {
    if (window.caches) {
      for (const key of await caches.keys()) if (key.startsWith(WORKER_CACHES)) await caches.delete(key);
    }
    for (const r of (await navigator.serviceWorker?.getRegistrations()) || []) {
      if (new URL(r.scope).pathname === "/rounds/") await r.unregister();
    }
  } catch { /* nothing kept, or no storage in this browser */ }
}

// Someone else is logged in on this phone: what was kept under another name goes.
function forgetOthers(username) {
  const list = JSON.parse(localStorage.getItem(CACHE) || "null");
  if (list && list.user !== username) localStorage.removeItem(CACHE);
  const session = keptSession();
  if (session && session.username !== username) localStorage.removeItem(SESSION);
}

// ---------------------------------------------------------------- sending

class Offline extends Error {}
class Refused extends Error {
  constructor(message, status) { super(message); this.status = status; }
}

async function post(ctx, path, body, headers) {
  let response;
  try {
    response = await fetch(path, {
      method: "POST", credentials: "same-origin", body,
      headers: { Accept: "application/json", "X-CSRF-Token": ctx.state.session.csrf_token, ...headers },
    });
  } catch {
    throw new Offline("no connection");
  }
  const data = await response.json().catch(() => ({}));
  // Server trouble or a lost session: keep the finding and try again later.
  loginNeeded = response.status === 401;
  if (loginNeeded || response.status >= 500 || response.status === 408 || response.status === 429) throw new Offline(`not sent (${response.status})`);
  if (!response.ok) {
    const said = typeof data.detail === "string" ? data.detail : Array.isArray(data.detail) ? data.detail.map((d) => `${(d.loc || []).slice(-1)[0]}: ${d.msg}`).join("; ") : "";
    throw new Refused(said || "The dashboard refused it.", response.status);
  }
  return data;
}

function postPhoto(ctx, frontage, blob, at) {
  const query = at ? `?at=${encodeURIComponent(at)}` : "";
  return post(ctx, `/api/rounds/${encodeURIComponent(frontage)}/photos${query}`, blob, { "Content-Type": blob.type || "image/jpeg" });
}

async function sendEntry(ctx, e) {
  if (e.photo && !e.photoSha) {
    try {
      const stored = await postPhoto(ctx, e.frontage, e.photo, e.immediate ? null : e.photoAt);
      e.photoSha = stored.sha256;
      e.photoSurvey = stored.survey || "";
    } catch (err) {
      if (err instanceof Offline) throw err;
      e.photoProblem = err.message; // a refused photo does not cost the finding
    }
    e.photo = null;
    await putEntry(e).catch(() => {}); // the photo is sent: the finding no longer needs its bytes
  }
  const body = { tap: e.tap, key: e.key };
  if (!e.immediate) body.at = e.at; // sent later: the tap's own time
  if (e.photoSha) body.photo = e.photoSha;
  const result = await post(ctx, `/api/rounds/${encodeURIComponent(e.frontage)}/taps`, JSON.stringify(body), { "Content-Type": "application/json" });
  const extra = [e.photoSurvey ? `Photo survey: ${e.photoSurvey}` : "", e.photoProblem ? `The photo was not kept: ${e.photoProblem}` : ""].filter(Boolean).join(" ");
  return extra ? `${result.message} ${extra}` : result.message;
}

// Send what waits, oldest first; stop at the first that cannot go (order is kept).
// Returns how many of those sent had waited (a tap sent at once is its stop's to report).
// The page opened with no signal knows who, not the CSRF token: ask the server first.
async function ensureSession(ctx) {
  if (ctx.state.session.csrf_token) return;
  let response;
  try {
    response = await fetch("/api/session", { credentials: "same-origin", headers: { Accept: "application/json" } });
  } catch {
    throw new Offline("no connection");
  }
  loginNeeded = response.status === 401;
  const session = response.ok ? await response.json().catch(() => null) : null;
  if (!session || session.username !== ctx.state.session.username) {
    loginNeeded = true; // logged out meanwhile, or someone else is: the findings wait for theirs
    throw new Offline(`not sent (${response.status})`);
  }
  ctx.state.session = session;
  keepSession(session);
}

async function sendWaiting(ctx) {
  let sent = 0;
  for (const e of await entries(ctx.state.session.username)) {
    if (e.state !== "waiting") continue;
    try {
      await ensureSession(ctx);
      answers.set(e.key, { ok: true, text: await sendEntry(ctx, e) });
      await dropEntry(e.key);
      if (!e.immediate) sent += 1;
    } catch (err) {
      if (err instanceof Offline) {
        if (e.immediate) { e.immediate = false; await putEntry(e); }
        break;
      }
      answers.set(e.key, { ok: false, text: err.message });
      // Refused at once: said on the stop. Refused later: kept on the list until read.
      if (e.immediate) await dropEntry(e.key);
      else await putEntry(Object.assign(e, { state: "refused", reason: err.message, photo: null }));
    }
  }
  return sent;
}

export function flush(ctx) {
  if (!flushing) {
    flushing = sendWaiting(ctx).finally(() => { flushing = null; });
    flushing.then(async (sent) => {
      // Sent in the background while the list is open (no tap waiting for its answer):
      // read it again, saying what went.
      const reread = sent && document.getElementById("outbox") && !ctx.state.roundsBusy;
      await showOutbox(ctx);
      if (reread) {
        ctx.state.roundsNote = `Connection back: ${sent === 1 ? "1 finding kept on this phone was" : `${sent} findings kept on this phone were`} sent and recorded.`;
        await ctx.route();
      }
    }).catch(() => {});
  }
  return flushing;
}

// ---------------------------------------------------------------- what waits, on screen

async function showOutbox(ctx) {
  const { h } = ctx;
  const mine = await entries(ctx.state.session.username).catch(() => []);
  const waiting = mine.filter((e) => e.state === "waiting");
  const refused = mine.filter((e) => e.state === "refused");
  const link = document.querySelector('nav a[data-page="rounds"]');
  if (link) link.textContent = waiting.length ? `Rounds (${waiting.length} to send)` : "Rounds";
  const box = document.getElementById("outbox");
  if (!box) return;
  const zone = ctx.state.zone;
  const now = serverNow(ctx);
  const line = (e) => h("li", {}, `${e.label} at ${e.address}, ${when(e.at, now, zone)}`);
  const count = waiting.length === 1 ? "1 finding is" : `${waiting.length} findings are`;
  box.replaceChildren(
    waiting.length ? h("div", { class: "outbox-waiting" },
      h("p", { id: "outbox-count", class: "outbox-count" }, `${count} waiting to send. `,
        h("span", { class: "outbox-how" }, loginNeeded
          ? "They are kept on this phone. Your session has ended: log out and in again, and they go, each with the time you tapped."
          : "They are kept on this phone and go by themselves when the connection returns, each with the time you tapped.")),
      h("ul", {}, ...waiting.map(line)),
      h("button", { type: "button", class: "secondary", onclick: () => flush(ctx) }, "Send now")) : "",
    ...refused.map((e) => h("div", { class: "outbox-refused", role: "alert" },
      h("p", {}, h("strong", {}, `Not recorded: ${e.label} at ${e.address} (${clockTime(e.at, zone)}). `), e.reason),
      h("button", { type: "button", class: "secondary", onclick: async () => { await dropEntry(e.key); await showOutbox(ctx); } }, "Understood, remove"))));
  box.hidden = !waiting.length && !refused.length;
}

// Called once at start: send what an earlier visit left, whenever the connection returns.
export function startOutbox(ctx) {
  forgetOthers(ctx.state.session.username);
  if (ctxRef || !("indexedDB" in window)) return;
  ctxRef = ctx;
  window.addEventListener("online", () => flush(ctx));
  setInterval(async () => {
    const mine = await entries(ctx.state.session.username).catch(() => []);
    if (mine.some((e) => e.state === "waiting")) flush(ctx);
  }, RETRY_MS);
  flush(ctx);
}

// ---------------------------------------------------------------- the page

async function roundsList(ctx) {
  // The list as last read, for a page opened again with no signal.
  try {
    const r = await ctx.api("/api/rounds");
    localStorage.setItem(CACHE, JSON.stringify({ user: ctx.state.session.username, r }));
    return { r, stale: false };
  } catch (err) {
    const kept = JSON.parse(localStorage.getItem(CACHE) || "null");
    if (!kept || kept.user !== ctx.state.session.username) throw err;
    return { r: kept.r, stale: true };
  }
}

export async function roundsPage(ctx) {
  const { h, main, state } = ctx;
  const { r, stale } = await roundsList(ctx);
  state.zone = r.zone;
  if (!stale) state.roundsOffsetMs = Date.parse(r.now) - Date.now();
  const stop = (s) => {
    const card = h("li", { class: "stop", "data-frontage": s.frontage });
    const status = h("p", { class: "stop-status", role: "status" });
    const photoId = `photo-${s.frontage}`;
    // The phone's camera (capture), behind one big button: the native picker stays hidden
    // (still focusable, its label is the button) and a photo is optional.
    const photo = s.taps.length ? h("div", { class: "photo" },
      h("input", { id: photoId, type: "file", accept: "image/*", capture: "environment", class: "photo-input",
        onchange: (e) => takePhoto(ctx, s, e.target, card, status) }),
      h("label", { for: photoId, class: "photo-button" }, "Take photo"),
      h("span", { class: "photo-hint" }, "optional; it goes with your next tap")) : "";
    const taps = s.taps.length
      ? h("div", { class: "taps" }, ...s.taps.map((t) => h("button", {
          type: "button", class: `tap tap-${t.tap}`, "data-tap": t.tap,
          onclick: (e) => tap(ctx, s, t, card, status, e.currentTarget),
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
  const outbox = h("section", { id: "outbox", class: "outbox", "aria-label": "Findings not yet sent", hidden: "" });
  main.replaceChildren(note, outbox,
    stale ? h("p", { class: "offline-note", role: "status" }, `No connection: the list as it was at ${clockTime(serverNow(ctx), r.zone)} or before. Your taps are kept on this phone.`) : "",
    h("h1", {}, "Rounds", h("span", { class: "sub" }, ` · ${r.stops.length} ${r.stops.length === 1 ? "stop" : "stops"}`)),
    r.stops.length ? h("ol", { class: "stops" }, ...r.stops.map(stop)) : h("p", { class: "muted" }, "No property needs a look now."));
  await showOutbox(ctx);
  if (!stale) flush(ctx);
}

async function takePhoto(ctx, s, input, card, status) {
  const file = input.files?.[0];
  if (!file) return;
  status.classList.remove("error");
  card.photo = { blob: file, at: serverNow(ctx), sha: null, survey: "" };
  status.textContent = "Sending the photo…";
  try {
    const stored = await postPhoto(ctx, s.frontage, file, null);
    Object.assign(card.photo, { sha: stored.sha256, survey: stored.survey || "" });
    status.replaceChildren("Photo ready: it goes with your next tap.",
      ...(stored.survey ? [" ", el(ctx, "span", { class: "photo-survey" }, `Survey marker in the photo. ${stored.survey} `),
        el(ctx, "a", { href: `/#property/${encodeURIComponent(s.frontage)}` }, "See it on the property page")] : []));
  } catch (err) {
    if (err instanceof Offline) {
      status.textContent = "Photo kept on this phone: it goes with your next tap when the connection returns.";
    } else {
      card.photo = null;
      status.textContent = err.message;
      status.classList.add("error");
    }
  }
}


async function tap(ctx, s, t, card, status, button) {
  const photo = card.photo;
  const entry = {
    key: newKey(), user: ctx.state.session.username, state: "waiting", immediate: true,
    frontage: s.frontage, address: s.address, tap: t.tap, label: t.label, at: serverNow(ctx),
    photo: photo && !photo.sha ? photo.blob : null, photoAt: photo?.at || null,
    photoSha: photo?.sha || null, photoSurvey: photo?.survey || "",
  };
  card.photo = null;
  const input = card.querySelector("input[type=file]");
  if (input) input.value = "";
  status.classList.remove("error");
  status.textContent = "Recording…";
  button.classList.add("chosen");
  ctx.state.roundsBusy = true;
  try {
    try {
      await putEntry(entry); // on the phone first: nothing is lost if the send fails
    } catch {
      // No storage on this phone (a private window): send it straight away, say if it failed.
      try { answers.set(entry.key, { ok: true, text: await sendEntry(ctx, entry) }); } catch (err) {
        answers.set(entry.key, { ok: false, text: err instanceof Offline ? "Not sent: no connection, and this browser cannot keep it (a private window?). Tap again when the connection is back." : err.message });
      }
    }
    await flush(ctx);
    if (answers.get(entry.key) === undefined && (await entries(entry.user)).some((e) => e.key === entry.key && e.state === "waiting")) {
      await flush(ctx); // an earlier send was under way: this one's turn
    }
  } finally {
    ctx.state.roundsBusy = false;
  }
  const answer = answers.get(entry.key);
  if (answer?.ok) {
    ctx.toast(answer.text);
    // The stop as it stands now (a posted notice's deadline, the taps that still mean something).
    ctx.state.roundsNote = answer.text;
    await ctx.route();
  } else if (answer) {
    status.textContent = answer.text;
    status.classList.add("error");
    button.classList.remove("chosen");
  } else {
    status.textContent = `${t.label}: saved on this phone at ${clockTime(entry.at, ctx.state.zone)}; it is sent when the connection returns.`;
    await showOutbox(ctx);
  }
}
