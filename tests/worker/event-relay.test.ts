import { expect, test } from "bun:test";
import { createMemoryLogger } from "../../lib/log.ts";
import type { DeliveryQueue, Repos } from "../../lib/webhooks/ports.ts";
import { createEventRelay } from "../../lib/worker/event-relay.ts";

/** A store whose pending check fails while `down` is set, counting the checks. */
function flakyStore() {
  const state = { down: false, checks: 0 };
  const store = {
    state,
    events: {
      async hasPending() {
        state.checks += 1;
        if (state.down) throw new Error("database is locked");
        return false;
      },
      async peek() {
        return [];
      },
      async take() {
        return [];
      },
    },
    // Never reached: nothing is ever pending.
    queue: {} as DeliveryQueue,
    transaction<T>(fn: (tx: Repos) => Promise<T>): Promise<T> {
      return fn({} as Repos);
    },
  };
  return store;
}

test("a failing relay is logged once per run of failures, and once when it works again", async () => {
  const store = flakyStore();
  const logger = createMemoryLogger();
  const relay = createEventRelay({ store, logger });
  store.state.down = true;
  for (let i = 0; i < 3; i++) {
    relay.kick();
    await relay.idle();
  }
  store.state.down = false;
  relay.kick();
  await relay.idle();
  expect(store.state.checks).toBe(4);
  expect(logger.lines).toEqual([
    "warn Could not fan out operational events (tried again later): database is locked",
    "info Operational events are fanned out again",
  ]);
});

test("maybeRun() looks at most once per interval; a kick during a run runs once more", async () => {
  const store = flakyStore();
  const clock = { t: 0 };
  const relay = createEventRelay({ store, now: () => clock.t, intervalMs: 5000 });
  relay.maybeRun();
  await relay.idle();
  relay.maybeRun();
  await relay.idle();
  expect(store.state.checks).toBe(1);
  clock.t = 5000;
  relay.maybeRun();
  relay.kick(); // while that run is in progress
  await relay.idle();
  expect(store.state.checks).toBe(3);
});
