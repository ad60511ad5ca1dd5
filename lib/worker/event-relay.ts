import type { Logger } from "../log.ts";
import { escapeControl } from "../text/control.ts";
import { errorMessage } from "../text/error-message.ts";
import { relayOperationalEvents } from "../webhooks/events/operational-events.ts";
import type { Store } from "../webhooks/ports.ts";

/**
 * How often a worker looks for operational events it was not told of: recorded by another
 * process (a webhook disabled by hand in the app), or left by a worker that crashed.
 */
export const RELAY_INTERVAL_MS = 5000;

export interface EventRelay {
  /** Fans out now (after an attempt that may have recorded an event); a run in progress reruns. */
  kick(): void;
  /** Fans out when the last run is RELAY_INTERVAL_MS old: the safety net, once per loop turn. */
  maybeRun(): void;
  /** Resolves when no run is in progress; await it before closing the store. */
  idle(): Promise<void>;
}

/**
 * Fans out the operational events recorded with the state changes that caused them
 * (lib/webhooks/events/operational-events.ts), off the delivery path: a failure is logged once per run
 * of failures and tried again at the next kick or interval, never thrown.
 */
export function createEventRelay(options: {
  store: Pick<Store, "transaction" | "events" | "queue">;
  now?: () => number;
  logger?: Pick<Logger, "warn" | "info">;
  intervalMs?: number;
}): EventRelay {
  const { store, now = Date.now, logger, intervalMs = RELAY_INTERVAL_MS } = options;
  let running: Promise<void> | null = null;
  let again = false;
  let lastRunAt = Number.NEGATIVE_INFINITY;
  let failing = false;

  async function run(): Promise<void> {
    do {
      again = false;
      lastRunAt = now();
      try {
        await relayOperationalEvents(store);
        if (failing) logger?.info("Operational events are fanned out again");
        failing = false;
      } catch (error) {
        if (!failing) {
          logger?.warn(
            `Could not fan out operational events (tried again later): ${escapeControl(errorMessage(error))}`,
          );
        }
        failing = true;
        return;
      }
    } while (again);
  }

  function kick(): void {
    if (running) {
      again = true;
      return;
    }
    running = run().finally(() => {
      running = null;
    });
  }

  return {
    kick,
    maybeRun() {
      if (now() - lastRunAt >= intervalMs) kick();
    },
    async idle() {
      while (running) await running;
    },
  };
}
