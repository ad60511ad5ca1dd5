import { describe, expect, test } from "bun:test";
import { createAvailabilityWatch, STALL_MS } from "../../../lib/store/sqlite/queue/availability.ts";

function sqliteError(code: string): Error {
  return Object.assign(new Error(code), { code });
}

describe("createAvailabilityWatch()", () => {
  test("notes an outage after a write the database refused, until a claim notes its end", () => {
    const clock = { t: 0 };
    const watch = createAvailabilityWatch(() => clock.t);
    expect(() =>
      watch.write(() => {
        throw sqliteError("SQLITE_FULL");
      }),
    ).toThrow("SQLITE_FULL");
    expect(watch.returned(clock.t)).toBe(true);
    watch.noted();
    expect(watch.returned(clock.t)).toBe(false);
  });

  test("notes no outage after a statement that failed for its own reason", () => {
    const clock = { t: 0 };
    const watch = createAvailabilityWatch(() => clock.t);
    expect(() =>
      watch.write(() => {
        throw sqliteError("SQLITE_CONSTRAINT_UNIQUE");
      }),
    ).toThrow("SQLITE_CONSTRAINT_UNIQUE");
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
});
