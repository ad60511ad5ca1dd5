import { describe, expect, test } from "bun:test";
import { createWakeups } from "../../../lib/webhooks/delivery/loop-waits.ts";

/** Whether `promise` has settled, after the microtasks already queued have run. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await Promise.resolve();
  await Promise.resolve();
  return done;
}

describe("createWakeups()", () => {
  test("progress() resolves at the next wake-up", async () => {
    const wakeups = createWakeups(() => false);
    const progress = wakeups.progress();
    expect(await settled(progress)).toBe(false);
    wakeups.wake();
    expect(await settled(progress)).toBe(true);
  });

  test("room() waits through wake-ups until the buffer wants claims", async () => {
    let wants = false;
    const wakeups = createWakeups(() => wants);
    const room = wakeups.room();
    wakeups.wake();
    wakeups.wake();
    expect(await settled(room)).toBe(false);
    wants = true;
    wakeups.wake();
    expect(await settled(room)).toBe(true);
  });

  test("a dropped progress waiter is not resolved by later wake-ups", async () => {
    const wakeups = createWakeups(() => false);
    const dropped = wakeups.progressUnlessDropped();
    const kept = wakeups.progress();
    dropped.drop();
    wakeups.wake();
    expect(await settled(dropped.promise)).toBe(false);
    expect(await settled(kept)).toBe(true);
  });
});
