import { abortableSleep, type Sleep } from "./sleep.ts";

export interface BatchOptions<I> {
  /** A group is written as soon as it holds this many calls (graphile-worker's batch size). */
  maxSize: number;
  /** …or once its first call has waited this long, whichever comes first. */
  windowMs: number;
  /** Calls with the same key never share a group (the later one waits for the next). */
  key?: (item: I) => unknown;
  /** The window's timer; tests pass a fake clock's. */
  sleep?: Sleep;
}

interface Pending<I, R> {
  item: I;
  resolve(value: R): void;
  reject(error: unknown): void;
}

/**
 * Groups calls into one write, as graphile-worker's `batch()` does for `completeJob`: a group is
 * written when it holds `maxSize` calls or its first call has waited `windowMs`. One group is
 * written at a time; calls made meanwhile form the next, so under load groups fill up to
 * `maxSize` by themselves. `write` resolves with one result per item, in order (an Error in a
 * place rejects that call only); if it rejects, every call of the group rejects.
 */
export function batch<I, R>(
  write: (items: I[]) => Promise<Array<R | Error>>,
  options: BatchOptions<I>,
): (item: I) => Promise<R> {
  const { maxSize, windowMs } = options;
  const key = options.key ?? ((item: I) => item);
  const sleep = options.sleep ?? abortableSleep;
  let pending: Array<Pending<I, R>> = [];
  let writing = false;
  /** The running window of the oldest pending call, and whether it has ended. */
  let window: AbortController | null = null;
  let windowEnded = false;

  function startWindow(): void {
    const timer = new AbortController();
    window = timer;
    windowEnded = false;
    void sleep(windowMs, timer.signal).then(() => {
      if (window !== timer || timer.signal.aborted) return;
      windowEnded = true;
      flushIfDue();
    });
  }

  function flushIfDue(): void {
    if (writing || pending.length === 0) return;
    if (pending.length < maxSize && !windowEnded) return;
    flush();
  }

  function flush(): void {
    const group: Array<Pending<I, R>> = [];
    const later: Array<Pending<I, R>> = [];
    const keys = new Set<unknown>();
    for (const entry of pending) {
      const k = key(entry.item);
      if (group.length < maxSize && !keys.has(k)) {
        keys.add(k);
        group.push(entry);
      } else {
        later.push(entry);
      }
    }
    pending = later;
    writing = true;
    // Calls left behind keep the window they are in (written when this write ends if it is
    // over); with none left, the next call starts a new one.
    if (pending.length === 0) {
      window?.abort();
      window = null;
      windowEnded = false;
    }
    write(group.map((entry) => entry.item))
      .then(
        (results) => {
          for (const [i, entry] of group.entries()) {
            const result = results[i];
            if (result === undefined) entry.reject(new Error("A batched write returned no result"));
            else if (result instanceof Error) entry.reject(result);
            else entry.resolve(result);
          }
        },
        (error: unknown) => {
          for (const entry of group) entry.reject(error);
        },
      )
      .finally(() => {
        writing = false;
        flushIfDue();
      });
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      if (window === null) startWindow();
      flushIfDue();
    });
}
