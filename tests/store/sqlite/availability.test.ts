import { describe, expect, test } from "bun:test";
import {
  clockUnderLock,
  createAvailabilityWatch,
  STALL_MS,
} from "../../../lib/store/sqlite/queue/availability.ts";

function sqliteError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

describe("createAvailabilityWatch()", () => {
  test.each([
    ["SQLITE_FULL", "an outage (until a claim notes its end)", true],
    ["SQLITE_CONSTRAINT_UNIQUE", "no outage: the statement failed for its own reason", false],
  ])("a write refused with %s notes %s", (code, _, outage) => {
    const clock = { t: 0 };
    const watch = createAvailabilityWatch(() => clock.t);
    expect(() =>
      watch.write(() => {
        throw sqliteError(code);
      }),
    ).toThrow(code);
    expect(watch.returned(clock.t)).toBe(outage);
    watch.noted();
    expect(watch.returned(clock.t)).toBe(false);
  });

  test("notes an outage after a write that waited longer than STALL_MS", () => {
    const clock = { t: 0 };
    const watch = createAvailabilityWatch(() => clock.t);
    watch.write(() => {
      clock.t += STALL_MS + 1;
    });
    expect(watch.returned(clock.t)).toBe(true);
  });

  test("watch() notes an async write the database refused, and one that stalled", async () => {
    const clock = { t: 0 };
    const watch = createAvailabilityWatch(() => clock.t);
    await expect(
      watch.watch(async () => {
        throw sqliteError("SQLITE_BUSY");
      }),
    ).rejects.toThrow("SQLITE_BUSY");
    expect(watch.returned(clock.t)).toBe(true);
    watch.noted();
    expect(await watch.watch(async () => 1)).toBe(1);
    expect(watch.returned(clock.t)).toBe(false);
    await watch.watch(async () => {
      clock.t += STALL_MS + 1;
    });
    expect(watch.returned(clock.t)).toBe(true);
  });

  test("clockUnderLock(): the wall clock read under the lock, or a test clock's reading as the caller took it", () => {
    const before = Date.now();
    expect(clockUnderLock()(before - 6000)).toBeGreaterThanOrEqual(before);
    expect(clockUnderLock(() => 5)(1000)).toBe(1000);
  });
});
