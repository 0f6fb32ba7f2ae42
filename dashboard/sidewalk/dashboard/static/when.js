// Instants in the village's own words: "today 5:00 PM", "tomorrow 12:00 PM", "Sat, Dec 19, 9:30 AM",
// with how long is left ("in 3 h 20 min", "4 h ago"). The village's zone, never the browser's.
const ZONE_DEFAULT = "America/Chicago";

// One Intl formatter per kind and zone: toLocale*String builds a new one at every call, which
// cost seconds on Today with 2,000 lines.
const formatters = new Map();
function formatter(kind, zone, locale, options) {
  const key = `${kind} ${zone}`;
  let f = formatters.get(key);
  if (!f) { f = new Intl.DateTimeFormat(locale, { timeZone: zone, ...options }); formatters.set(key, f); }
  return f;
}

function dayKey(date, zone) {
  return formatter("day", zone, "en-CA", { year: "numeric", month: "2-digit", day: "2-digit" }).format(date); // YYYY-MM-DD
}

export function clockTime(iso, zone = ZONE_DEFAULT) {
  return formatter("time", zone, "en-US", { hour: "numeric", minute: "2-digit" }).format(new Date(iso));
}

export function dayWords(iso, nowIso, zone = ZONE_DEFAULT) {
  const at = new Date(iso);
  const now = new Date(nowIso);
  const day = dayKey(at, zone);
  const tomorrow = new Date(now.getTime() + 86400000);
  const yesterday = new Date(now.getTime() - 86400000);
  if (day === dayKey(now, zone)) return "today";
  if (day === dayKey(tomorrow, zone)) return "tomorrow";
  if (day === dayKey(yesterday, zone)) return "yesterday";
  return formatter("date", zone, "en-US", { weekday: "short", month: "short", day: "numeric" }).format(at);
}

export function when(iso, nowIso, zone = ZONE_DEFAULT) {
  if (!iso) return "";
  if (/^\d{4}-\d{2}-\d{2}$/.test(iso)) {  // a date (a bill's due date)
    const [y, m, d] = iso.split("-").map(Number);
    return formatter("date", "UTC", "en-US", { weekday: "short", month: "short", day: "numeric" }).format(new Date(Date.UTC(y, m - 1, d, 12)));
  }
  return `${dayWords(iso, nowIso, zone)} ${clockTime(iso, zone)}`;
}

export function left(iso, nowIso) {
  if (!iso || /^\d{4}-\d{2}-\d{2}$/.test(iso)) return "";
  const ms = Date.parse(iso) - Date.parse(nowIso);
  const minutes = Math.round(Math.abs(ms) / 60000);
  const hours = Math.floor(minutes / 60);
  const text = hours >= 48 ? `${Math.round(hours / 24)} days` : hours ? `${hours} h${minutes % 60 ? ` ${minutes % 60} min` : ""}` : `${minutes} min`;
  return ms >= 0 ? `in ${text}` : `${text} ago`;
}

export function longDate(nowIso, zone = ZONE_DEFAULT) {
  return new Date(nowIso).toLocaleDateString("en-US", { timeZone: zone, weekday: "long", month: "long", day: "numeric", year: "numeric" });
}
