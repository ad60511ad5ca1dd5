/** Waits `ms`, or less when `signal` aborts; never rejects. Tests inject a fake-clock version. */
export type Sleep = (ms: number, signal: AbortSignal) => Promise<void>;

export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, Math.max(0, ms));
    signal.addEventListener("abort", done, { once: true });
  });
}
