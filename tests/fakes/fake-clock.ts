/**
 * A fake clock for loops that sleep: `now()` only moves on advance(), sleep() resolves when the
 * clock passes its deadline (or its signal aborts), and sleeping() resolves once a loop has
 * gone to sleep, so a test can wait for the loop itself instead of for real time.
 */
export interface FakeClock {
  now(): number;
  sleep(ms: number, signal: AbortSignal): Promise<void>;
  /** Moves time forward, waking every sleeper whose deadline has passed. */
  advance(ms: number): void;
  /** Resolves when at least `count` sleepers are waiting. */
  sleeping(count?: number): Promise<void>;
  /** Deadlines of the sleepers now waiting. */
  readonly pending: number[];
}

interface Sleeper {
  until: number;
  wake: () => void;
}

export function createFakeClock(start = 1_700_000_000_000): FakeClock {
  let current = start;
  const sleepers = new Set<Sleeper>();
  let watchers: Array<() => void> = [];

  function notify() {
    const waiting = watchers;
    watchers = [];
    for (const check of waiting) check();
  }

  return {
    now: () => current,
    sleep(ms, signal) {
      return new Promise<void>((resolve) => {
        if (signal.aborted) return resolve();
        const sleeper: Sleeper = {
          until: current + ms,
          wake: () => {
            sleepers.delete(sleeper);
            signal.removeEventListener("abort", sleeper.wake);
            resolve();
          },
        };
        sleepers.add(sleeper);
        signal.addEventListener("abort", sleeper.wake, { once: true });
        notify();
      });
    },
    advance(ms) {
      current += ms;
      for (const sleeper of [...sleepers]) if (sleeper.until <= current) sleeper.wake();
    },
    sleeping(count = 1) {
      return new Promise<void>((resolve) => {
        const check = () => {
          if (sleepers.size >= count) resolve();
          else watchers.push(check);
        };
        check();
      });
    },
    get pending() {
      return [...sleepers].map((s) => s.until);
    },
  };
}
