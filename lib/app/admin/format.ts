/** Epoch ms as `2025-01-02 03:04:05 UTC`: unambiguous, sortable, the same on every screen. */
export function formatTime(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "–";
  return `${new Date(ms).toISOString().slice(0, 19).replace("T", " ")} UTC`;
}

/** `in 12 s`, `3 min ago`, `now`: for next-attempt times next to the absolute one. */
export function relativeTime(ms: number, nowMs: number): string {
  const delta = ms - nowMs;
  const abs = Math.abs(delta);
  if (abs < 1000) return "now";
  const text =
    abs < 60_000
      ? `${Math.round(abs / 1000)} s`
      : abs < 3_600_000
        ? `${Math.round(abs / 60_000)} min`
        : abs < 86_400_000
          ? `${Math.round(abs / 3_600_000)} h`
          : `${Math.round(abs / 86_400_000)} d`;
  return delta > 0 ? `in ${text}` : `${text} ago`;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

/** The stored payload pretty-printed when it is JSON, as stored otherwise. */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** A positive whole number from a query or path parameter, or null. */
export function positiveInt(value: string | undefined): number | null {
  if (value === undefined || !/^[1-9]\d{0,15}$/.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

/**
 * Where a form may send the user back to: only a path inside the admin, so a crafted form can
 * not turn the redirect into an open redirect (`//evil.example`, `https://…`). Printable ASCII
 * only: a CR or LF (or any non-Latin-1 character) can not go into a Location header.
 */
export function localAdminPath(value: unknown, fallback: string): string {
  if (typeof value !== "string") return fallback;
  return /^\/admin(\/[!-[\]-~]*)?(\?[!-[\]-~]*)?$/.test(value) ? value : fallback;
}
