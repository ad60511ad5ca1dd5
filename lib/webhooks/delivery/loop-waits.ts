import { abortableSleep } from "../../async/sleep.ts";

/**
 * The pause after a failed store call: `baseDelayMs` doubled with each failure in a row, up to
 * 30 s, and after an outage ended early by `untilReachable` (the database answering again), so
 * delivery resumes when the database is back rather than when the backoff runs out.
 */
export async function pauseAfterFailure(options: {
  error: unknown;
  failures: number;
  baseDelayMs: number;
  signal: AbortSignal;
  store: {
    isUnreachable?(error: unknown): boolean;
    untilReachable?(signal: AbortSignal): Promise<void>;
  };
}): Promise<void> {
  const { store } = options;
  const pause = new AbortController();
  const stop = () => pause.abort();
  options.signal.addEventListener("abort", stop, { once: true });
  const delayMs = Math.min(30_000, options.baseDelayMs * 2 ** options.failures);
  const waits = [abortableSleep(delayMs, pause.signal)];
  if (store.untilReachable && store.isUnreachable?.(options.error) === true) {
    waits.push(store.untilReachable(pause.signal).catch(() => {}));
  }
  await Promise.race(waits);
  options.signal.removeEventListener("abort", stop);
  pause.abort();
}

/**
 * The loop's wake-ups. `progress()` resolves at the next `wake()` (a request ended, a result
 * was written); `room()` only at a wake-up that finds `wantsClaims()` true, so a full worker
 * waits once per claim rather than once per request that ends.
 */
export function createWakeups(wantsClaims: () => boolean) {
  const waiting = { progress: [] as Array<() => void>, room: [] as Array<() => void> };
  /** A waiter in one of the lists, with `drop()` to forget it unresolved (its race is over). */
  function droppable(list: keyof typeof waiting): { promise: Promise<void>; drop(): void } {
    let waiter: () => void = () => {};
    const promise = new Promise<void>((resolve) => {
      waiter = resolve;
      waiting[list].push(waiter);
    });
    const drop = () => {
      waiting[list] = waiting[list].filter((each) => each !== waiter);
    };
    return { promise, drop };
  }
  return {
    progress(): Promise<void> {
      return new Promise((resolve) => waiting.progress.push(resolve));
    },
    room(): Promise<void> {
      return new Promise((resolve) => waiting.room.push(resolve));
    },
    /** progress(), with `drop()` to forget it unresolved (the race it was in is over). */
    progressUnlessDropped: () => droppable("progress"),
    /** room(), likewise. */
    roomUnlessDropped: () => droppable("room"),
    wake(): void {
      const woken = waiting.progress;
      waiting.progress = [];
      for (const resolve of woken) resolve();
      if (waiting.room.length > 0 && wantsClaims()) {
        const roomy = waiting.room;
        waiting.room = [];
        for (const resolve of roomy) resolve();
      }
    },
  };
}
