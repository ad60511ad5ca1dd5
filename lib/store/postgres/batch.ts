/**
 * Groups calls into one write: the calls made in the same turn of the event loop, and those made
 * while the previous group is being written. One group is in flight at a time, so under load the
 * groups grow by themselves, while a lone call waits for nobody but its own turn.
 *
 * `key`: calls with the same key never share a group (the later one waits for the next).
 * `write` resolves with one result per item, in order; if it rejects, every call of the group
 * rejects with that error.
 */
export function createBatcher<I, R>(
  write: (items: I[]) => Promise<R[]>,
  options: { maxSize?: number; key?: (item: I) => unknown } = {},
): (item: I) => Promise<R> {
  const maxSize = options.maxSize ?? 500;
  const key = options.key ?? ((item: I) => item);
  let pending: Array<{ item: I; resolve(value: R): void; reject(error: unknown): void }> = [];
  let writing = false;
  let scheduled = false;

  function schedule(): void {
    if (scheduled || writing || pending.length === 0) return;
    scheduled = true;
    setImmediate(flush);
  }

  function flush(): void {
    scheduled = false;
    const group: typeof pending = [];
    const later: typeof pending = [];
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
    write(group.map((entry) => entry.item))
      .then(
        (results) => {
          for (const [i, entry] of group.entries()) {
            const result = results[i];
            if (result === undefined) entry.reject(new Error("A grouped write returned no result"));
            else entry.resolve(result);
          }
        },
        (error: unknown) => {
          for (const entry of group) entry.reject(error);
        },
      )
      .finally(() => {
        writing = false;
        schedule();
      });
  }

  return (item) =>
    new Promise<R>((resolve, reject) => {
      pending.push({ item, resolve, reject });
      schedule();
    });
}
