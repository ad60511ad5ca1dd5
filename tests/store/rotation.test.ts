import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { rotateSecret } from "../../lib/webhooks/rotation.ts";
import {
  describePostgres,
  type PostgresCluster,
  startPostgresCluster,
} from "../fakes/postgres-cluster.ts";

const T0 = Date.UTC(2030, 0, 1);
const OLD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const NEW = `whsec_${Buffer.alloc(24, 7).toString("base64")}`;

/** A rotation's columns and the retry schedule's, as each store keeps them. */
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
  let cluster: PostgresCluster;
  beforeAll(async () => {
    cluster = await startPostgresCluster();
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  describeRotation("PostgreSQL", async () =>
    openPostgresStore(await cluster.createDatabase(), { now: () => T0 }),
  );
});
