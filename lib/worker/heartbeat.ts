import { hostname } from "node:os";
import { abortableSleep, type Sleep } from "../async/sleep.ts";
import type { Logger } from "../log.ts";
import { errorMessage } from "../text/error-message.ts";
import type { WorkerInfo } from "../webhooks/model.ts";
import { DEFAULT_HEARTBEAT_MS } from "../webhooks/observe/staleness.ts";
import type { WorkerRegistry } from "../webhooks/ports.ts";

/** What a worker reports about itself; `lastSeenAt` is stamped at each beat. */
export type WorkerSnapshot = Omit<WorkerInfo, "lastSeenAt">;

/** What a worker process reports in each beat: who it is, where it runs, how busy it is. */
export function workerSnapshot(
  worker: { readonly id: string; readonly inFlight: number },
  options: { concurrency: number; startedAt: number; version: string },
): () => WorkerSnapshot {
  return () => ({
    id: worker.id,
    host: hostname(),
    pid: process.pid,
    version: options.version,
    startedAt: options.startedAt,
    inFlight: worker.inFlight,
    concurrency: options.concurrency,
  });
}

export interface HeartbeatOptions {
  registry: WorkerRegistry;
  /** Read at every beat, so `inFlight` is current. Its `id` must not change. */
  info: () => WorkerSnapshot;
  intervalMs?: number;
  now?: () => number;
  /** Aborting it stops the heartbeat as stop() does. */
  signal?: AbortSignal;
  sleep?: Sleep;
  logger?: Pick<Logger, "warn" | "info">;
  /** Errors of an outage, logged once by the store: not repeated at every beat. */
  isUnreachable?: (error: unknown) => boolean;
  /** Every failed beat, outages included (the metrics' store errors, phase "heartbeat"). */
  onFailed?: () => void;
}

export interface Heartbeat {
  /** Records a heartbeat now, between scheduled ones; does nothing once stopping. */
  beat(): Promise<void>;
  /** Stops the schedule and removes the worker's row; resolves when removed. Idempotent. */
  stop(): Promise<void>;
  /** Resolves when the heartbeat has stopped and the row is removed (however it was stopped). */
  readonly stopped: Promise<void>;
}

/**
 * Records the worker in the registry at once, then every `intervalMs`, until stop() or the
 * signal; then removes it, so a clean exit leaves no stale row. A failing write is retried at
 * the next beat (the heartbeat never stops the worker) and logged once per run of failures,
 * with a count when a beat succeeds again, as the loop logs its store errors.
 *
 * Stop it after the worker has finished its in-flight deliveries, so it stays visible while
 * it drains.
 */
export function startHeartbeat(options: HeartbeatOptions): Heartbeat {
  const {
    registry,
    info,
    intervalMs = DEFAULT_HEARTBEAT_MS,
    now = Date.now,
    sleep = abortableSleep,
    logger,
  } = options;
  const stopping = new AbortController();
  const stopOnAbort = () => stopping.abort();
  if (options.signal?.aborted) stopping.abort();
  else options.signal?.addEventListener("abort", stopOnAbort, { once: true });

  const id = info().id;
  const pending = new Set<Promise<void>>();

  /** The run of failed beats under way (a full disk fails every one): when, and how many more. */
  let failing: { since: number; more: number } | null = null;

  async function record(): Promise<void> {
    try {
      // The interval tells other workers when this one counts as gone (the takeover rule).
      await registry.heartbeat({ ...info(), lastSeenAt: now(), heartbeatMs: intervalMs });
    } catch (error) {
      options.onFailed?.();
      if (options.isUnreachable?.(error)) return;
      if (failing !== null) {
        failing.more++;
        return;
      }
      failing = { since: now(), more: 0 };
      logger?.warn(`Could not record the worker heartbeat: ${errorMessage(error)}`);
      return;
    }
    const run = failing;
    failing = null;
    if (run === null || run.more === 0) return;
    const seconds = ((now() - run.since) / 1000).toFixed(1);
    logger?.info(
      `Heartbeats recorded again: ${run.more} more failed in ${seconds} s after the one logged`,
    );
  }

  function beat(): Promise<void> {
    if (stopping.signal.aborted) return Promise.resolve();
    const write = record().finally(() => pending.delete(write));
    pending.add(write);
    return write;
  }

  async function run(): Promise<void> {
    await beat();
    while (!stopping.signal.aborted) {
      await sleep(intervalMs, stopping.signal);
      await beat();
    }
    await Promise.all(pending);
    options.signal?.removeEventListener("abort", stopOnAbort);
    try {
      await registry.remove(id);
    } catch (error) {
      logger?.warn(`Could not remove the worker heartbeat: ${errorMessage(error)}`);
    }
  }

  const stopped = run();
  return {
    beat,
    stopped,
    stop() {
      stopping.abort();
      return stopped;
    },
  };
}
