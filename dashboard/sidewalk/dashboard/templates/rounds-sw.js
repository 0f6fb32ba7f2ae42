// The Rounds page's service worker (scope /rounds/): the page reloads with no signal.
// It keeps the page's shell and the static files it loads, nothing else: /api requests
// (the round, the findings, the session) go to the network untouched and are never kept
// here, so nothing read under one account is served to another. Filled in by the
// dashboard (rounds_page.py): the version is a hash of the shell and of every file kept.
const VERSION = "__VERSION__";
const CACHE = `sidewalk-rounds-${VERSION}`;
const SHELL = "/rounds/";
const FILES = [
  __FILES__
];

async function keepShell(cache) {
  // Only the page itself: a session that has ended answers with a redirect to log in.
  const response = await fetch(SHELL, { credentials: "same-origin", redirect: "manual" });
  if (response.ok && response.type === "basic") await cache.put(SHELL, response);
}

self.addEventListener("install", (event) => {
  event.waitUntil((async () => {
    const cache = await caches.open(CACHE);
    await cache.addAll(FILES);
    await keepShell(cache);
    await self.skipWaiting();
  })());
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const key of await caches.keys()) {
      if (key.startsWith("sidewalk-rounds-") && key !== CACHE) await caches.delete(key);
    }
    await self.clients.claim();
  })());
});

// The page: from the network when there is one (kept fresh), else as kept.
async function page(request) {
  try {
    const response = await fetch(request);
    if (response.ok && response.type === "basic") {
      const cache = await caches.open(CACHE);
      await cache.put(SHELL, response.clone());
    }
    return response;
  } catch (err) {
    const kept = await caches.match(SHELL, { cacheName: CACHE });
    if (kept) return kept;
    throw err;
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request;
  if (request.method !== "GET") return;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.mode === "navigate" && url.pathname === SHELL) {
    event.respondWith(page(request));
  } else if (FILES.includes(url.pathname)) {
    // The version in the cache's name changes with any file: kept copies are current.
    event.respondWith(caches.match(url.pathname, { cacheName: CACHE }).then((kept) => kept || fetch(request)));
  }
  // Anything else, the API above all, is not handled here: the browser fetches it.
});
