// The Rounds page at its own address (/rounds/), for the inspector's phone. Its service
// worker (/rounds/sw.js) keeps this page and its files, so a reload with no signal still
// opens it: the round as last read and the findings waiting on the phone (inspector.js),
// sent when the connection returns. The other pages are the dashboard's (/#today, …).
import { h } from "./draw.js";
import { jsonApi } from "./http.js";
import { forgetRounds, keepSession, keptSession, roundsPage, startOutbox } from "./inspector.js";
import { installSearch } from "./search.js";

const main = document.getElementById("main");
const state = { session: null };

const api = jsonApi(() => state.session);

const may = (permission) => state.session.permissions.includes(permission);

function toast(text) {
  const el = document.getElementById("toast");
  el.textContent = text;
  el.classList.add("show");
  setTimeout(() => el.classList.remove("show"), 3000);
}

const ctx = { api, h, main, may, toast, state, route: () => route() };

async function route() {
  try { await roundsPage(ctx); } catch (err) { main.replaceChildren(h("p", { class: "error" }, err.message)); }
  document.body.dataset.ready = "rounds";
}

// Who is logged in: the server's answer, or with no signal the one kept on this phone
// (no CSRF token kept: the page asks the server again before it sends anything).
async function whoIsIn() {
  try {
    const session = await api("/api/session");
    keepSession(session);
    return session;
  } catch (err) {
    const kept = keptSession();
    if (!kept && navigator.onLine) throw err;
    return kept;
  }
}

function connection() {
  const status = document.getElementById("live-status");
  const show = () => {
    status.textContent = navigator.onLine ? "connected" : "no connection";
    status.classList.toggle("on", navigator.onLine);
  };
  window.addEventListener("online", show);
  window.addEventListener("offline", show);
  show();
}

async function start() {
  for (const a of document.querySelectorAll("nav a")) {
    if (a.dataset.page === "rounds") a.setAttribute("aria-current", "page");
  }
  connection();
  try {
    state.session = await whoIsIn();
  } catch (err) {
    main.replaceChildren(h("p", { class: "error" }, err.message));
    document.body.dataset.ready = "rounds";
    return;
  }
  if (!state.session) {
    main.replaceChildren(h("h1", {}, "Rounds"), h("p", { class: "offline-note", role: "status" },
      "No connection, and no round is kept on this phone: open Rounds once with a connection."));
    document.body.dataset.ready = "rounds";
    return;
  }
  document.getElementById("who").replaceChildren(state.session.username, h("span", { class: "role" }, ` (${state.session.role})`));
  document.getElementById("logout").addEventListener("click", async () => {
    // What this phone kept of the round goes first, connection or not.
    await forgetRounds();
    try {
      const token = state.session.csrf_token || (await api("/api/session")).csrf_token;
      await api("/api/session", { method: "DELETE", headers: { "X-CSRF-Token": token } });
    } catch { /* no connection: the session ends by itself; this phone keeps nothing */ }
    window.location.assign("/login");
  });
  document.querySelector('nav a[data-page="poles"]').hidden = !may("users");
  document.querySelector('nav a[data-page="admin"]').hidden = !may("users");
  document.querySelector('nav a[data-page="exports"]').hidden = !may("owner_details");
  installSearch(ctx);
  startOutbox(ctx);
  await route();
  // After the page is drawn: keep this page for a reload with no signal (HTTPS or localhost).
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/rounds/sw.js", { scope: "/rounds/" }).catch(() => {});
}

start();
