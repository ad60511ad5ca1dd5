import type { Logger } from "../log.ts";
import { errorMessage } from "../text/error-message.ts";

const DAY_MS = 86_400_000;
export const DEFAULT_RETENTION_INTERVAL_MS = 3_600_000;
export const DEFAULT_PURGE_BATCH = 500;

export interface RetentionOptions {
  /**
   * Deletes at most `batchSize` terminal deliveries (and their attempts) completed before
   * `olderThan`, in one short transaction; returns how many it deleted.
   */
  purge: (olderThan: number, options: { batchSize: number }) => Promise<number>;
  /** WEBHOOK_RETENTION_DAYS; 0 keeps everything. */
  retentionDays: number;
  now?: () => number;
  /** At most one purge per this interval (per process). */
  minIntervalMs?: number;
  batchSize?: number;
  /** Runs between batches so deliveries go on; defaults to yielding to the event loop. */
  pause?: () => Promise<void>;
  /** Aborting stops a running purge after its current batch. */
  signal?: AbortSignal;
  logger?: Pick<Logger, "info" | "warn">;
}

export interface Retention {
  /**
   * Purges when retention is on, no purge is running and none started within the interval;
   * resolves with how many deliveries were deleted, or null when it did not run. Never rejects:
   * a failure is logged and retried after the interval.
   */
  maybeRun(): Promise<number | null>;
  /** Resolves when no purge is running; await it before closing the store. */
  idle(): Promise<void>;
}

/** Retention for the worker loop: call maybeRun() on every turn; it is a no-op most of the time. */
export function createRetention(options: RetentionOptions): Retention {
  const {
    purge,
    retentionDays,
    now = Date.now,
    minIntervalMs = DEFAULT_RETENTION_INTERVAL_MS,
    batchSize = DEFAULT_PURGE_BATCH,
    pause = yieldToEventLoop,
    signal,
    logger,
  } = options;
  let lastStartedAt: number | null = null;
  let running: Promise<number | null> | null = null;

  async function run(startedAt: number): Promise<number | null> {
    const olderThan = startedAt - retentionDays * DAY_MS;
    let total = 0;
    try {
      for (;;) {
        const deleted = await purge(olderThan, { batchSize });
        total += deleted;
        if (deleted < batchSize || signal?.aborted) break;
        await pause();
        if (signal?.aborted) break;
      }
      if (total > 0) {
        logger?.info(`Purged ${total} deliveries completed more than ${retentionDays} days ago`);
      }
      return total;
    } catch (error) {
      const message = errorMessage(error);
      logger?.warn(`Purging old deliveries failed (${total} deleted): ${message}`);
      return null;
    }
  }

  return {
    maybeRun() {
      if (retentionDays <= 0 || running || signal?.aborted) return Promise.resolve(null);
      const t = now();
      if (lastStartedAt !== null && t - lastStartedAt < minIntervalMs) return Promise.resolve(null);
      lastStartedAt = t;
      const current = run(t).finally(() => {
        running = null;
      });
      running = current;
      return current;
    },
    async idle() {
      await running;
    },
  };
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
