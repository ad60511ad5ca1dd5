import { describe, expect, test } from "bun:test";
import { createMemoryLogger } from "../../../lib/log.ts";
import { createReachability } from "../../../lib/store/postgres/reachability.ts";

/** An error as Bun's client reports a refused connection. */
const refused = Object.assign(new Error("Failed to connect"), {
  code: "ERR_POSTGRES_CONNECTION_REFUSED",
});

/** A probe the test answers by hand: each call waits for `answer()` or `fail()`. */
function manualProbe() {
  const pending: Array<{ resolve: () => void; reject: (e: unknown) => void }> = [];
  const waiters: Array<() => void> = [];
  return {
    probe: () =>
      new Promise<void>((resolve, reject) => {
        pending.push({ resolve, reject });
        for (const wake of waiters.splice(0)) wake();
      }),
    async next(): Promise<{ resolve: () => void; reject: (e: unknown) => void }> {
      while (pending.length === 0) await new Promise<void>((resolve) => waiters.push(resolve));
      return pending.shift() as { resolve: () => void; reject: (e: unknown) => void };
    },
  };
}

describe("createReachability()", () => {
  test("a dropped connection the server answers at once is no outage: nothing is logged", async () => {
    const logger = createMemoryLogger();
    const probe = manualProbe();
    const reach = createReachability({ probe: probe.probe, logger, probeMinMs: 1 });
    reach.failed(refused);
    expect(reach.reachable).toBe(false);
    (await probe.next()).resolve();
    await reach.untilReachable(new AbortController().signal);
    expect(reach.reachable).toBe(true);
    expect(logger.lines).toEqual([]);
    reach.close();
  });

  test("an outage is logged once when it starts and once when the database answers", async () => {
    const logger = createMemoryLogger();
    const probe = manualProbe();
    const reach = createReachability({ probe: probe.probe, logger, probeMinMs: 1, probeMaxMs: 2 });
    reach.failed(refused);
    for (let i = 0; i < 5; i++) {
      (await probe.next()).reject(refused);
      reach.failed(refused); // other calls keep failing meanwhile
    }
    const back = reach.untilReachable(new AbortController().signal);
    (await probe.next()).resolve();
    await back;
    expect(logger.lines).toHaveLength(2);
    expect(logger.lines[0]).toBe(
      "warn Database unreachable (Failed to connect): retrying until it answers",
    );
    expect(logger.lines[1]).toMatch(/^info Database back after \d+\.\d s$/);
    reach.close();
  });

  test("a failed statement is not an outage, and any answer ends one", async () => {
    const probe = manualProbe();
    const reach = createReachability({ probe: probe.probe, probeMinMs: 1 });
    reach.failed(Object.assign(new Error("syntax error"), { errno: "42601" }));
    expect(reach.reachable).toBe(true);
    reach.failed(refused);
    expect(reach.reachable).toBe(false);
    reach.answered(); // e.g. the LISTEN connection came back
    expect(reach.reachable).toBe(true);
    reach.close();
  });
});
