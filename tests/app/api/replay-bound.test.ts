import { Database } from "bun:sqlite";
import { afterEach, beforeEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createApp } from "../../../lib/app/create-app.ts";
import { openSqliteStore } from "../../../lib/store/sqlite/store.ts";
import { MAX_REPLAY } from "../../../lib/webhooks/delivery/replay.ts";
import type { Store } from "../../../lib/webhooks/ports.ts";

const T0 = Date.UTC(2030, 0, 1);
const COUNT = MAX_REPLAY + 5;

let dir: string;
let store: Store;

/** COUNT successful deliveries of webhook 1, one a millisecond from T0, written by hand in bulk. */
function seed(path: string): void {
  const db = new Database(path);
  db.run(
    "INSERT INTO webhooks (id, name, url, created_at, updated_at) VALUES (1, 'erp', 'https://erp.example/h', 0, 0)",
  );
  const insert = db.prepare(
    `INSERT INTO deliveries (webhook_id, message_id, event, state, attempts, next_attempt_at,
       created_at, updated_at, completed_at)
     VALUES (1, ?1, 'item.created', 'successful', 1, ?2, ?2, ?2, ?2)`,
  );
  db.transaction(() => {
    for (let i = 0; i < COUNT; i++) insert.run(`msg_bulk${i}`, T0 + i);
  })();
  db.close();
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "replay-bound-"));
  const path = join(dir, "app.db");
  store = openSqliteStore(path, { now: () => T0 + 3_600_000 });
  seed(path);
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test("one replay takes at most 100,000 deliveries, the oldest, and says where the rest start", async () => {
  const app = createApp({ store, now: () => new Date(T0 + 3_600_000) });
  const response = await app.request("/api/deliveries/replay", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ webhook: 1 }),
  });
  expect(response.status).toBe(200);
  const nextSince = new Date(T0 + MAX_REPLAY).toISOString();
  expect(await response.json()).toEqual({
    replayed: MAX_REPLAY,
    matched: MAX_REPLAY,
    cut: true,
    limit: MAX_REPLAY,
    next_since: nextSince,
    message: `Replayed 100000 of 100000 matching deliveries: cut at 100,000, the oldest first; for the rest, again with since ${nextSince}`,
  });
  const stats = await store.queue.stats();
  expect(stats).toMatchObject({ queued: MAX_REPLAY, successful: COUNT - MAX_REPLAY });
  // The next call, from next_since, takes the rest: those already queued are not taken again.
  const rest = await app.request("/api/deliveries/replay", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ webhook: 1, since: nextSince }),
  });
  expect(await rest.json()).toMatchObject({ replayed: COUNT - MAX_REPLAY, cut: false });
  expect((await store.queue.stats()).queued).toBe(COUNT);
}, 30_000); // 100,005 rows written and read back: seconds on a loaded machine
