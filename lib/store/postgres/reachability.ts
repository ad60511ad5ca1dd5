import { abortableSleep } from "../../async/sleep.ts";
import type { Logger } from "../../log.ts";
import { errorMessage } from "../../text/error-message.ts";
import { isConnectionError } from "./db.ts";

/**
 * Whether the database answers, as this process last saw it. Every store call reports its
 * outcome. After a connection error a probe asks the server at once, then every second or so;
 * if it does not answer, "unreachable" is logged once, and "back after N s" once when it does.
 * Whoever waits in `untilReachable` resumes right after the database returns rather than at the
 * end of its own backoff.
 */
export interface Reachability {
  readonly reachable: boolean;
  /** A call got an answer (a query, or the LISTEN connection re-established). */
  answered(): void;
  /** A call failed; only connection errors mark the database unreachable. */
  failed(error: unknown): void;
  /** Resolves at once while reachable; otherwise when the database answers again, or on abort. */
  untilReachable(signal: AbortSignal): Promise<void>;
  close(): void;
}

export interface ReachabilityOptions {
  /** One cheap round trip (`SELECT 1`), run while unreachable. */
  probe: () => Promise<unknown>;
  logger?: Pick<Logger, "warn" | "info">;
  /** Told when the database answers again after a failed call (the end of an outage). */
  onBack?: () => void;
  /** Probe backoff: doubles from `minMs` up to `maxMs`. */
  probeMinMs?: number;
  probeMaxMs?: number;
}

export function createReachability(options: ReachabilityOptions): Reachability {
  const minMs = options.probeMinMs ?? 100;
  const maxMs = options.probeMaxMs ?? 1000;
  const closing = new AbortController();
  let downSince: number | null = null;
  /** Whether "unreachable" was logged for this outage (so "back" is logged too). */
  let reported = false;
  let probing = false;
  let waiters: Array<() => void> = [];

  function answered(): void {
    if (downSince === null) return;
    if (reported) {
      const seconds = ((performance.now() - downSince) / 1000).toFixed(1);
      options.logger?.info(`Database back after ${seconds} s`);
    }
    downSince = null;
    reported = false;
    options.onBack?.();
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  }

  function failed(error: unknown): void {
    if (downSince !== null || closing.signal.aborted || !isConnectionError(error)) return;
    downSince = performance.now();
    void probe();
  }

  // The first probe goes at once: a cut connection (a restarted pooler, pg_terminate_backend)
  // with the server still answering is no outage, and is not logged as one.
  async function probe(): Promise<void> {
    if (probing) return;
    probing = true;
    let delay = 0;
    while (downSince !== null && !closing.signal.aborted) {
      if (delay > 0) await abortableSleep(delay, closing.signal);
      if (downSince === null || closing.signal.aborted) break;
      try {
        await options.probe();
        answered();
      } catch (error) {
        if (!reported && downSince !== null && !closing.signal.aborted) {
          reported = true;
          const reason = errorMessage(error);
          options.logger?.warn(`Database unreachable (${reason}): retrying until it answers`);
        }
        delay = delay === 0 ? minMs : Math.min(delay * 2, maxMs);
      }
    }
    probing = false;
  }

  return {
    get reachable() {
      return downSince === null;
    },
    answered,
    failed,
    untilReachable(signal) {
      if (downSince === null || signal.aborted || closing.signal.aborted) {
        return Promise.resolve();
      }
      return new Promise((resolve) => {
        const done = () => {
          signal.removeEventListener("abort", done);
          waiters = waiters.filter((waiter) => waiter !== done);
          resolve();
        };
        waiters.push(done);
        signal.addEventListener("abort", done, { once: true });
      });
    },
    close() {
      closing.abort();
      const woken = waiters;
      waiters = [];
      for (const wake of woken) wake();
    },
  };
}
