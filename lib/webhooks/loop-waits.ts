import { abortableSleep } from "../async/sleep.ts";

/**
 * The pause after a failed store call: `delayMs` (the caller doubles it with each failure in a
 * row), ended early by `untilReachable` (the database answering again after an outage), so
 * delivery resumes when the database is back rather than when the backoff runs out.
 */
export async function pauseAfterFailure(options: {
  delayMs: number;
  signal: AbortSignal;
  untilReachable?: (signal: AbortSignal) => Promise<void>;
}): Promise<void> {
  const pause = new AbortController();
  const stop = () => pause.abort();
  options.signal.addEventListener("abort", stop, { once: true });
  const waits = [abortableSleep(options.delayMs, pause.signal)];
  if (options.untilReachable) waits.push(options.untilReachable(pause.signal).catch(() => {}));
  await Promise.race(waits);
  options.signal.removeEventListener("abort", stop);
  pause.abort();
}

/** Resolves with `promise`, or earlier when `signal` aborts. */
export function untilAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      signal.removeEventListener("abort", done);
      resolve();
    };
    signal.addEventListener("abort", done, { once: true });
    promise.then(done);
  });
}
