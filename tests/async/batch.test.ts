import { describe, expect, test } from "bun:test";
import { batch } from "../../lib/async/batch.ts";
import { createFakeClock } from "../fakes/fake-clock.ts";

/** A write that records each group and answers when the test says so. */
function recordingWrite() {
  const groups: number[][] = [];
  const answers: Array<() => void> = [];
  const write = (items: number[]) => {
    groups.push(items);
    return new Promise<Array<number | Error>>((resolve) => {
      answers.push(() => resolve(items.map((n) => (n < 0 ? new Error(`bad ${n}`) : n * 10))));
    });
  };
  return { groups, answers, write };
}

/** Lets promise callbacks run (no time passes on the fake clock). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await Promise.resolve();
}

describe("batch()", () => {
  test("a group is written once its first call has waited the window, not before", async () => {
    const clock = createFakeClock();
    const { groups, answers, write } = recordingWrite();
    const add = batch(write, { maxSize: 64, windowMs: 5, sleep: clock.sleep });
    const results = [add(1), add(2), add(3)];
    await clock.sleeping();
    clock.advance(4);
    await settle();
    expect(groups).toEqual([]);
    clock.advance(1);
    await settle();
    expect(groups).toEqual([[1, 2, 3]]);
    answers.shift()?.();
    expect(await Promise.all(results)).toEqual([10, 20, 30]);
  });

  test("a group is written at once when it reaches maxSize, without waiting for the window", async () => {
    const clock = createFakeClock();
    const { groups, answers, write } = recordingWrite();
    const add = batch(write, { maxSize: 4, windowMs: 5, sleep: clock.sleep });
    const results = [1, 2, 3, 4].map((n) => add(n));
    await settle();
    expect(groups).toEqual([[1, 2, 3, 4]]);
    answers.shift()?.();
    expect(await Promise.all(results)).toEqual([10, 20, 30, 40]);
  });

  test("calls made while a group is written form the next one, written when it ends if full or due", async () => {
    const clock = createFakeClock();
    const { groups, answers, write } = recordingWrite();
    const add = batch(write, { maxSize: 3, windowMs: 5, sleep: clock.sleep });
    const first = [1, 2, 3].map((n) => add(n));
    await settle();
    // Five more while the first group is written: one full group and two left over.
    const more = [4, 5, 6, 7, 8].map((n) => add(n));
    clock.advance(5); // the leftovers' window ends while the write is still going
    await settle();
    expect(groups).toEqual([[1, 2, 3]]);
    answers.shift()?.();
    await settle();
    expect(groups).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    answers.shift()?.();
    await settle();
    // The rest had waited its window already: written as soon as the previous write ended.
    expect(groups.at(-1)).toEqual([7, 8]);
    answers.shift()?.();
    expect(await Promise.all([...first, ...more])).toEqual([10, 20, 30, 40, 50, 60, 70, 80]);
  });

  test("an Error in a result rejects that call only; a rejected write rejects its whole group", async () => {
    const clock = createFakeClock();
    const { answers, write } = recordingWrite();
    const add = batch(write, { maxSize: 2, windowMs: 5, sleep: clock.sleep });
    const [ok, bad] = [add(1), add(-1)];
    await settle();
    answers.shift()?.();
    expect(await ok).toBe(10);
    await expect(bad).rejects.toThrow("bad -1");

    const failing = batch(async () => Promise.reject(new Error("database is locked")), {
      maxSize: 2,
      windowMs: 5,
      sleep: clock.sleep,
    });
    const both = await Promise.allSettled([failing(1), failing(2)]);
    expect(both.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(String((both[0] as PromiseRejectedResult).reason)).toContain("database is locked");
  });

  test("calls with the same key never share a group", async () => {
    const clock = createFakeClock();
    const { groups, answers, write } = recordingWrite();
    const add = batch(write, { maxSize: 64, windowMs: 5, sleep: clock.sleep, key: (n) => n % 10 });
    const results = [add(1), add(11), add(2)];
    await clock.sleeping();
    clock.advance(5);
    await settle();
    expect(groups).toEqual([[1, 2]]);
    answers.shift()?.();
    await settle();
    // It had waited its window with the others: written as soon as their write ended.
    expect(groups).toEqual([[1, 2], [11]]);
    answers.shift()?.();
    expect(await Promise.all(results)).toEqual([10, 110, 20]);
  });
});
