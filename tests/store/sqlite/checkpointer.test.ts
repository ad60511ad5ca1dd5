import { afterEach, expect, test } from "bun:test";
import { join } from "node:path";
import { checkpointInBackground } from "../../../lib/store/sqlite/checkpointer.ts";
import { openSqlite } from "../../../lib/store/sqlite/connection.ts";
import { tempDirs } from "../../fakes/temp-dirs.ts";

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});
const tempDir = tempDirs("checkpointer-");

test("the thread copies the WAL back, and the connection's commits no longer checkpoint themselves", async () => {
  const path = join(tempDir(), "app.db");
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
