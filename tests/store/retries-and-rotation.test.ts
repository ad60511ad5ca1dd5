import { afterEach, describe, expect, test } from "bun:test";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { rotateSecret } from "../../lib/webhooks/definition/rotation.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { change } from "../fakes/change.ts";
import { describePostgres, usePostgresCluster } from "../fakes/postgres-cluster.ts";

const T0 = Date.UTC(2030, 0, 1);
const OLD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NEW = `whsec_${Buffer.alloc(24, 7).toString("base64")}`;

/** A rotation's columns, the retry schedule's and the Failed listing, as each store keeps them. */
function describeRotation(name: string, open: () => Promise<Store>): void {
  describe(`secret rotation and retry schedule columns on ${name}`, () => {
    let store: Store;
    afterEach(() => store.close());

    test("rotateSecret() keeps the old secret until the grace ends; a typed secret ends it", async () => {
      store = await open();
      const { id } = await store.webhooks.create({
        name: "a",
        url: "https://e.example/",
        secret: OLD,
      });
      const rotated = await rotateSecret(store.webhooks, id, {
        graceSeconds: 90,
        now: T0,
        generateSecret: () => NEW,
      });
      expect(rotated?.previousValidUntil).toBe(T0 + 90_000);
      expect(await store.webhooks.get(id)).toMatchObject({
        secret: NEW,
        previousSecret: OLD,
        previousSecretUntil: T0 + 90_000,
      });
      // Other changes keep the overlap; a new secret typed in ends it.
      await store.webhooks.update(id, { url: "https://e.example/2" });
      expect((await store.webhooks.get(id))?.previousSecret).toBe(OLD);
      await store.webhooks.update(id, { secret: OLD });
      expect(await store.webhooks.get(id)).toMatchObject({
        previousSecret: null,
        previousSecretUntil: null,
      });
      expect(
        await rotateSecret(store.webhooks, 999, { now: T0, generateSecret: () => NEW }),
      ).toBeNull();
    });

    test("list({ failing }) holds failed deliveries and those waiting for a retry; retry() hurries those", async () => {
      store = await open();
      await store.webhooks.create({ name: "a", url: "https://e.example/" });
      const ids: number[] = [];
      for (let i = 0; i < 4; i++) ids.push(...(await store.queue.enqueue(change())));
      const [failed = 0, waiting = 0, succeeded = 0] = ids;
      const record = (statusCode: number) => ({
        startedAt: T0,
        durationMs: 1,
        statusCode,
        outcome: statusCode === 200 ? ("success" as const) : ("http_error" as const),
        error: null,
        responseHeaders: null,
        responseBody: null,
      });
      const claims = await store.queue.claim({ workerId: "w", limit: 3, leaseMs: 30_000, now: T0 });
      for (const claim of claims) {
        const id = claim.delivery.id;
        if (id === failed) await store.queue.finish(claim, record(500), { state: "failed" });
        if (id === waiting) {
          await store.queue.finish(claim, record(503), {
            state: "queued",
            nextAttemptAt: T0 + 60_000,
          });
        }
        if (id === succeeded) await store.queue.finish(claim, record(200), { state: "successful" });
      }
      // The fourth is queued, never attempted: not failing.
      const failing = await store.queue.list({ failing: true });
      expect(failing.map((d) => d.id)).toEqual([waiting, failed]);
      expect(await store.queue.list({ failing: true, webhookId: 999 })).toEqual([]);
      expect(await store.queue.retry([waiting], T0 + 1000)).toBe(1);
      expect((await store.queue.get(waiting))?.delivery).toMatchObject({
        state: "queued",
        nextAttemptAt: T0 + 1000,
        attempts: 1,
      });
    });

    test("a schedule is stored and read back; the default is day", async () => {
      store = await open();
      const plain = await store.webhooks.create({ name: "a", url: "https://e.example/" });
      expect(plain.retrySchedule).toBe("day");
      const listed = await store.webhooks.create({
        name: "b",
        url: "https://e.example/",
        retrySchedule: [5_000, 60_000],
      });
      expect((await store.webhooks.get(listed.id))?.retrySchedule).toEqual([5_000, 60_000]);
      await store.webhooks.update(listed.id, { retrySchedule: "none" });
      expect((await store.webhooks.get(listed.id))?.retrySchedule).toBe("none");
    });
  });
}

describeRotation("SQLite", async () => openSqliteStore(":memory:", { now: () => T0 }));

describePostgres("PostgreSQL", () => {
  const pg = usePostgresCluster();
  describeRotation("PostgreSQL", async () =>
    openPostgresStore(await pg.cluster.createDatabase(), { now: () => T0 }),
  );
});
