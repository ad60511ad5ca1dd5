import { describe, expect, test } from "bun:test";
import type { AttemptOutcome, Claim, Outcome } from "../../lib/webhooks/model.ts";
import { webhookStats } from "../../lib/webhooks/observe/webhook-stats.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change } from "../fakes/change.ts";

/**
 * A webhook's health from its attempts, part of the store contract (tests/store/contract.ts runs
 * it on each store): the tally against attempts counted by hand.
 */
export interface StatsContext {
  store(): Store;
  clock: { t: number };
  claim(): Promise<Claim[]>;
  record(overrides?: object): Parameters<Store["queue"]["finish"]>[1];
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;

export function describeWebhookStats(ctx: StatsContext): void {
  describe("attemptTally", () => {
    test("counts attempts by outcome per window, the streak since the last success, latency and the next retry", async () => {
      const store = ctx.store();
      const now = ctx.clock.t;
      const a = await store.webhooks.create({ name: "a", url: "https://e.example/a" });
      const b = await store.webhooks.create({ name: "b", url: "https://e.example/b" });
      /** One delivery to `webhookId` with one attempt `ago` ms before now. */
      async function attempt(
        webhookId: number,
        ago: number,
        outcome: AttemptOutcome,
        durationMs: number,
        ends: Outcome = outcome === "success" ? { state: "successful" } : { state: "failed" },
      ) {
        await store.queue.enqueue(change(), { webhookId });
        const [claim] = await ctx.claim();
        if (!claim) throw new Error("nothing to claim");
        const statusCode = outcome === "success" ? 200 : outcome === "http_error" ? 500 : null;
        const record = ctx.record({ startedAt: now - ago, durationMs, outcome, statusCode });
        expect(await store.queue.finish(claim, record, ends)).toBe(true);
      }
      // By hand: outside the week; the week; the day; the hour (the last one waits for a retry).
      await attempt(a.id, 8 * DAY, "success", 100);
      await attempt(a.id, 3 * DAY, "success", 200);
      await attempt(a.id, 2 * DAY, "http_error", 300);
      await attempt(a.id, 5 * HOUR, "success", 10);
      await attempt(a.id, 4 * HOUR, "timeout", 1000);
      await attempt(a.id, 30 * MIN, "http_error", 50);
      await attempt(a.id, 20 * MIN, "network_error", 5);
      await attempt(a.id, 10 * MIN, "http_error", 30, {
        state: "queued",
        nextAttemptAt: now + 5 * MIN,
      });
      // Another webhook's success counts for it alone.
      await attempt(b.id, 1 * MIN, "success", 7);

      const stats = webhookStats(a, await store.queue.attemptTally(a.id, now), now);
      expect(stats.status).toBe("failing");
      expect(stats.windows.hour).toMatchObject({
        since: now - HOUR,
        attempts: 3,
        successRate: 0,
        outcomes: { success: 0, http_error: 2, network_error: 1, timeout: 0 },
      });
      expect(stats.windows.day).toMatchObject({
        attempts: 5,
        successRate: 0.2,
        outcomes: { success: 1, http_error: 2, network_error: 1, timeout: 1 },
      });
      expect(stats.windows.week).toMatchObject({
        attempts: 7,
        successRate: 2 / 7,
        outcomes: { success: 2, http_error: 3, network_error: 1, timeout: 1, blocked: 0 },
      });
      expect(stats.lastSuccessAt).toBe(now - 5 * HOUR);
      expect(stats.consecutiveFailures).toBe(4);
      expect(stats.failingSince).toBe(now - 4 * HOUR);
      // Answered attempts of the day: 10, 30, 50, 1000 ms (nearest rank: the 2nd and the 4th).
      expect(stats.latency).toEqual({ p50: 30, p95: 1000, sample: 4 });
      expect(stats.nextRetryAt).toBe(now + 5 * MIN);

      const other = webhookStats(b, await store.queue.attemptTally(b.id, now), now);
      expect(other).toMatchObject({
        status: "healthy",
        consecutiveFailures: 0,
        failingSince: null,
        lastSuccessAt: now - MIN,
        nextRetryAt: null,
        latency: { p50: 7, p95: 7, sample: 1 },
      });
      expect(other.windows.hour).toMatchObject({ attempts: 1, successRate: 1 });

      // A list's summaries: the day's counts, the last success, whether failing.
      const none = await store.webhooks.create({ name: "c", url: "https://e.example/c" });
      const summaries = await store.queue.attemptSummaries([a.id, b.id, none.id], now);
      expect(summaries.get(a.id)).toEqual({
        dayAttempts: 5,
        daySuccesses: 1,
        lastSuccessAt: now - 5 * HOUR,
        failing: true,
      });
      expect(summaries.get(b.id)).toEqual({
        dayAttempts: 1,
        daySuccesses: 1,
        lastSuccessAt: now - MIN,
        failing: false,
      });
      expect(summaries.get(none.id)).toEqual({
        dayAttempts: 0,
        daySuccesses: 0,
        lastSuccessAt: null,
        failing: false,
      });
      const idle = webhookStats(none, await store.queue.attemptTally(none.id, now), now);
      expect(idle).toMatchObject({ status: "idle", latency: null, lastSuccessAt: null });
      expect(idle.windows.week).toMatchObject({ attempts: 0, successRate: null });
    });
  });
}
