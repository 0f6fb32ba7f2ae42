// Instants in the village's own words: "today 5:00 PM", "tomorrow 12:00 PM", "Sat, Dec 19, 9:30 AM",
// with how long is left ("in 3 h 20 min", "4 h ago"). The village's zone, never the browser's.
const ZONE_DEFAULT = "America/Chicago";

function dayKey(date, zone) {
  return date.toLocaleDateString("en-CA", { timeZone: zone }); // YYYY-MM-DD
}

export function clockTime(iso, zone = ZONE_DEFAULT) {
  return new Date(iso).toLocaleTimeString("en-US", { timeZone: zone, hour: "numeric", minute: "2-digit" });
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
  return at.toLocaleDateString("en-US", { timeZone: zone, weekday: "short", month: "short", day: "numeric" });
}

export function when(iso, nowIso, zone = ZONE_DEFAULT) {
  if (!iso) return "";
  if (/^\d{4}-\d{2}-\d{2}$/.test(iso)) {  // a date (a bill's due date)
    const [y, m, d] = iso.split("-").map(Number);
    return new Date(Date.UTC(y, m - 1, d, 12)).toLocaleDateString("en-US", { timeZone: "UTC", weekday: "short", month: "short", day: "numeric" });
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
