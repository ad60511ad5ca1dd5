import type { WorkerInfo } from "../model.ts";

/** How often a worker records its heartbeat unless WORKER_HEARTBEAT_MS says otherwise. */
export const DEFAULT_HEARTBEAT_MS = 5_000;

/** A worker not seen for this many heartbeat intervals is stale (probably dead). */
export const STALE_AFTER_BEATS = 3;

export const NO_WORKER_WARNING = "No worker is running: start one with `bun run worker`";

export interface WorkerStatus extends WorkerInfo {
  /** Time since the last heartbeat (0 if the worker's clock is ahead of ours). */
  ageMs: number;
  stale: boolean;
}

/** Each worker with the age of its last heartbeat and whether it is stale, oldest start first. */
export function classifyWorkers(
  workers: readonly WorkerInfo[],
  now: number,
  intervalMs: number,
): WorkerStatus[] {
  return workers
    .map((worker) => {
      const ageMs = Math.max(0, now - worker.lastSeenAt);
      return { ...worker, ageMs, stale: ageMs > STALE_AFTER_BEATS * intervalMs };
    })
    .sort((a, b) => a.startedAt - b.startedAt || a.id.localeCompare(b.id));
}

/**
 * The warning for the Background Tasks page (and the CLI): deliveries are due but no worker is
 * live to send them. `dueCount` counts queued deliveries of enabled webhooks that are due now.
 */
export function noLiveWorkerWarning(input: {
  dueCount: number;
  workers: readonly WorkerInfo[];
  now: number;
  intervalMs: number;
}): string | null {
  if (input.dueCount <= 0) return null;
  const live = classifyWorkers(input.workers, input.now, input.intervalMs).some((w) => !w.stale);
  return live ? null : NO_WORKER_WARNING;
}
