export type Limiter = <T>(task: () => Promise<T>, priority?: number) => Promise<T>;

/**
 * Runs at most `max` tasks at once. A waiting task with a lower `priority` starts first (ties
 * in submission order), so the digest works on the earliest story first and can stream.
 */
export function createLimiter(max: number): Limiter {
  let active = 0;
  let sequence = 0;
  const waiting: { priority: number; sequence: number; start: () => void }[] = [];

  const next = () => {
    if (active >= max || waiting.length === 0) return;
    let best = 0;
    for (let i = 1; i < waiting.length; i++) {
      const a = waiting[i];
      const b = waiting[best];
      if (
        a &&
        b &&
        (a.priority < b.priority || (a.priority === b.priority && a.sequence < b.sequence))
      ) {
        best = i;
      }
    }
    const [entry] = waiting.splice(best, 1);
    active++;
    entry?.start();
  };

  return function limit<T>(task: () => Promise<T>, priority = 0): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      waiting.push({
        priority,
        sequence: sequence++,
        start: () => {
          Promise.resolve()
            .then(task)
            .then(resolve, reject)
            .finally(() => {
              active--;
              next();
            });
        },
      });
      next();
    });
  };
}
