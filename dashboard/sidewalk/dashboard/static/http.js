// The dashboard's JSON API as every page calls it: the session's CSRF token on each change,
// back to the login page when the session is over (expired, revoked, logged out elsewhere),
// and the server's refusal (a sentence, or the fields a form got wrong) as the error's message.
export function jsonApi(session) {
  return async function api(path, options = {}) {
    const headers = { Accept: "application/json", ...(options.headers || {}) };
    if (options.body !== undefined) headers["Content-Type"] = "application/json";
    if (options.method && options.method !== "GET") headers["X-CSRF-Token"] = session().csrf_token;
    const response = await fetch(path, {
      ...options,
      headers,
      credentials: "same-origin",
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    if (response.status === 401) {
      window.location.assign("/login");
      return new Promise(() => {});
    }
    const data = await response.json().catch(() => ({}));
    const said = (d) => (typeof d === "string" ? d : Array.isArray(d) ? d.map((e) => `${(e.loc || []).slice(-1)[0]}: ${e.msg}`).join("; ") : "");
    if (!response.ok) throw new Error(said(data.detail) || response.statusText);
    return data;
  };
}
