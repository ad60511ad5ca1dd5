import { describe, expect, test } from "bun:test";
import { createMemoryLogger } from "../../lib/log.ts";
import { createSqliteHealthStore, pauseWebhook } from "../../lib/store/sqlite/health.ts";
import { nextQueuedDueAt } from "../../lib/store/sqlite/queue/due.ts";
import type { AttemptRecord, Claim, Delivered } from "../../lib/webhooks/model.ts";
import { judgeAttempt } from "../../lib/webhooks/policy/judge.ts";
import { DEFAULT_RETRY_POLICY } from "../../lib/webhooks/policy/retry.ts";
import { createWebhookHealth } from "../../lib/webhooks/policy/webhook-health.ts";
import type { WebhookHealthRepo } from "../../lib/webhooks/ports.ts";
import { createAfterAttempt } from "../../lib/worker/after-attempt.ts";
import { itemChange } from "../fakes/change.ts";
import { attemptRecord } from "../fakes/delivery.ts";
import { createFakeClock } from "../fakes/fake-clock.ts";
import { useSqliteDbs } from "../fakes/sqlite-db.ts";

const T0 = Date.UTC(2025, 0, 1);
const openDb = useSqliteDbs();

async function setup() {
  const clock = createFakeClock(T0);
  const { db, store } = openDb({ now: clock.now });
  const hook = await store.webhooks.create({ name: "busy", url: "https://example.com/b" });
  for (let n = 0; n < 3; n++) await store.queue.enqueue(itemChange(n));
  const [claim] = await store.queue.claim({
    workerId: "w1",
    limit: 1,
    leaseMs: 60_000,
    now: clock.now(),
  });
  if (!claim) throw new Error("nothing to claim");
  const logger = createMemoryLogger();
  const afterAttempt = createAfterAttempt({
    health: createWebhookHealth({ store: createSqliteHealthStore(db), now: clock.now }),
    pause: async (id, until) => pauseWebhook(db, id, until),
    logger,
  });
  const pausedUntil = () =>
    db
      .query<{ p: number }, [number]>("SELECT paused_until AS p FROM webhooks WHERE id = ?")
      .get(hook.id)?.p;
  return { clock, db, store, hook, claim, logger, afterAttempt, pausedUntil };
}

/** What the judge makes of an attempt at T0 (Retry-After as sendAttempt parsed it). */
function judged(claim: Claim, record: AttemptRecord, retryAfterMs?: number): Delivered {
  const result = { record, outcome: record.outcome, statusCode: record.statusCode, retryAfterMs };
  return judgeAttempt({ result, claim, policies: { retry: DEFAULT_RETRY_POLICY }, now: T0 });
}

describe("createAfterAttempt()", () => {
  test("a 429 with Retry-After pauses the whole webhook and says so", async () => {
    const { db, store, claim, logger, afterAttempt, pausedUntil } = await setup();
    const delivered = judged(claim, attemptRecord(429), 120_000);
    await store.queue.finish(claim, delivered.record, delivered.outcome);
    await afterAttempt(claim, delivered);
    expect(pausedUntil()).toBe(T0 + 120_000);
    expect(nextQueuedDueAt(db)).toBe(T0 + 119_000);
    expect(logger.lines).toEqual([
      'warn Webhook "busy" paused until 2025-01-01T00:02:00.000Z: the endpoint answered HTTP 429',
    ]);
  });

  test("a 503 without Retry-After pauses for the default 30 s; a 500 does not pause", async () => {
    const { claim, afterAttempt, pausedUntil } = await setup();
    await afterAttempt(claim, judged(claim, attemptRecord(500)));
    expect(pausedUntil()).toBe(0);
    await afterAttempt(claim, judged(claim, attemptRecord(503)));
    expect(pausedUntil()).toBe(T0 + 30_000);
  });

  test("records endpoint health: a 410 disables the webhook", async () => {
    const { store, hook, claim, afterAttempt } = await setup();
    await afterAttempt(claim, judged(claim, attemptRecord(410)));
    expect((await store.webhooks.get(hook.id))?.enabled).toBe(false);
  });

  test("logs a failing health write instead of throwing", async () => {
    const { claim } = await setup();
    const logger = createMemoryLogger();
    const broken: Omit<WebhookHealthRepo, "pause"> = {
      recordSuccess: async () => {},
      recordFailure: async () => {
        throw new Error("database is locked");
      },
      disable: async () => false,
    };
    const afterAttempt = createAfterAttempt({
      health: createWebhookHealth({ store: broken }),
      logger,
    });
    await afterAttempt(claim, judged(claim, attemptRecord(500)));
    expect(logger.lines).toEqual([
      'warn Could not record the health of webhook "busy": database is locked',
    ]);
  });
});

test("createAfterAttempt() writes nothing the judge did not decide: a success with no streak", async () => {
  const { claim, logger, pausedUntil } = await setup();
  let writes = 0;
  const counted = createAfterAttempt({
    health: {
      afterAttempt: async () => {
        writes++;
        return null;
      },
    },
    pause: async () => {
      writes++;
      return true;
    },
    logger,
  });
  const success = judged(
    { ...claim, webhook: { ...claim.webhook, failingSince: null } },
    attemptRecord(200),
  );
  expect(success).toEqual({ record: attemptRecord(200), outcome: { state: "successful" } });
  await counted(claim, success);
  expect(writes).toBe(0);
  expect(pausedUntil()).toBe(0);
});
