import { escapeControl } from "../../text/control.ts";
import type { WorkerStatus } from "./staleness.ts";

/** A duration for people: `0 s`, `42 s`, `3 min`, `2 h 5 min`, `3 d 4 h`. */
export function formatAge(ms: number): string {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d} d ${h % 24} h` : `${d} d`;
}

const HEADERS = ["ID", "HOST", "PID", "VERSION", "IN FLIGHT", "UP", "LAST SEEN", "STATUS"];

/**
 * The `bun run webhooks workers` table: one row per worker with its age and status. Text the
 * workers wrote (id, host, version) is shown with control characters escaped.
 */
export function formatWorkerTable(workers: readonly WorkerStatus[], now: number): string {
  if (workers.length === 0) return "No worker has reported a heartbeat.";
  const rows = workers.map((w) => [
    cell(w.id),
    cell(w.host),
    String(w.pid),
    cell(w.version),
    `${w.inFlight}/${w.concurrency}`,
    formatAge(now - w.startedAt),
    `${formatAge(w.ageMs)} ago`,
    w.stale ? "stale" : "live",
  ]);
  const widths = HEADERS.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]?.length ?? 0)));
  return [HEADERS, ...rows]
    .map((cells) =>
      cells
        .map((cell, i) => (i === cells.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  "),
    )
    .join("\n");
}

/** One table cell: control characters escaped, and tab and newline too, so rows stay rows. */
function cell(text: string): string {
  return escapeControl(text).replace(/\n/g, "\\n").replace(/\t/g, "\\t");
}
