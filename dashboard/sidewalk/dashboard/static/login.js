// Log in through the JSON API, then open the dashboard.
const form = document.getElementById("login-form");
const error = document.getElementById("login-error");

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  error.textContent = "";
  const body = {
    username: form.username.value.trim(),
    password: form.password.value,
  };
  const response = await fetch("/api/session", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
    credentials: "same-origin",
  });
  if (response.ok) {
    window.location.assign("/#today");
    return;
  }
  const detail = (await response.json().catch(() => ({}))).detail;
  error.textContent =
    response.status === 429 ? "Too many failed attempts. Wait a few minutes." : detail || "Log in failed.";
});
