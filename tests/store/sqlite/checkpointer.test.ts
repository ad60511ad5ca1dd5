import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkpointInBackground } from "../../../lib/store/sqlite/checkpointer.ts";
import { openSqlite } from "../../../lib/store/sqlite/connection.ts";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

test("the thread copies the WAL back, and the connection's commits no longer checkpoint themselves", async () => {
  const dir = mkdtempSync(join(tmpdir(), "checkpointer-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, "app.db");
  const db = openSqlite(path);
  cleanups.push(() => db.close());
  expect(db.query("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 1000 });

  db.run("CREATE TABLE t (x)");
  for (let i = 0; i < 50; i++) db.run("INSERT INTO t VALUES (?)", [i]);
  const copied = Promise.withResolvers<{ log: number; checkpointed: number }>();
  const stop = checkpointInBackground(db, path, {
    intervalMs: 10,
    onCheckpoint: (result) => {
      if (result.checkpointed > 0) copied.resolve(result);
    },
  });
  cleanups.push(stop);
  expect(db.query("PRAGMA wal_autocheckpoint").get()).toEqual({ wal_autocheckpoint: 0 });
  const result = await copied.promise;
  // Everything written before the thread started (51 commits, a frame or more each) is copied.
  expect(result.checkpointed).toBe(result.log);
  expect(result.log).toBeGreaterThanOrEqual(51);
}, 5000);
