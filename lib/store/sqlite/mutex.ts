/**
 * A FIFO async mutex. One SQLite connection serves a whole process, so a transaction that awaits
 * between statements must keep every other caller out until it commits or rolls back.
 */
export interface Mutex {
  readonly locked: boolean;
  run<T>(fn: () => Promise<T> | T): Promise<T>;
}

export function createMutex(): Mutex {
  let locked = false;
  const waiters: Array<() => void> = [];

  function release(): void {
    const next = waiters.shift();
    if (next) next();
    else locked = false;
  }

  async function run<T>(fn: () => Promise<T> | T): Promise<T> {
    if (locked) await new Promise<void>((resolve) => waiters.push(resolve));
    else locked = true;
    try {
      return await fn();
    } finally {
      release();
    }
  }

  return {
    get locked() {
      return locked;
    },
    run,
  };
}
