import { describe, expect, test } from "bun:test";
import { createLimiter } from "../../lib/digest/limiter.ts";

/** A promise the test resolves by hand. */
function gate<T = void>() {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

describe("createLimiter()", () => {
  test("runs at most `max` tasks at once", async () => {
    const limit = createLimiter(2);
    let running = 0;
    let most = 0;
    const gates = [gate(), gate(), gate(), gate()];
    const tasks = gates.map((g) =>
      limit(async () => {
        running++;
        most = Math.max(most, running);
        await g.promise;
        running--;
      }),
    );
    await Promise.resolve();
    for (const g of gates) g.open();
    await Promise.all(tasks);
    expect(most).toBe(2);
  });

  test("starts the waiting task with the lowest priority first", async () => {
    const limit = createLimiter(1);
    const started: string[] = [];
    const first = gate();
    const blocker = limit(async () => {
      started.push("blocker");
      await first.promise;
    }, 0);
    const tasks = [
      limit(async () => void started.push("p5"), 5),
      limit(async () => void started.push("p1"), 1),
      limit(async () => void started.push("p3a"), 3),
      limit(async () => void started.push("p3b"), 3),
    ];
    first.open();
    await Promise.all([blocker, ...tasks]);
    expect(started).toEqual(["blocker", "p1", "p3a", "p3b", "p5"]);
  });

  test("passes results and errors through and frees the slot after a failure", async () => {
    const limit = createLimiter(1);
    await expect(limit(async () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
    await expect(
      limit(() => {
        throw new Error("sync boom");
      }),
    ).rejects.toThrow("sync boom");
    expect(await limit(async () => 42)).toBe(42);
  });
});
