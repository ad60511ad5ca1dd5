import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { join } from "node:path";
import { exitCodeFor } from "../../lib/cli/run.ts";
import { openStore } from "../../lib/store/open.ts";
import { MIGRATIONS } from "../../lib/store/sqlite/schema/migrations.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

const tempDir = tempDirs("schema-version-");

test("a SQLite database migrated past this release is refused at open: one line, exit 2, the file untouched", async () => {
  const path = join(tempDir(), "app.db");
  const store = await openStore({ kind: "sqlite", path });
  await store.webhooks.create({ name: "kept", url: "https://e.example/" });
  await store.close();
  const newer = MIGRATIONS.length + 1;
  const db = new Database(path);
  db.run(`PRAGMA user_version = ${newer}`);
  db.close();

  const refused = await openStore({ kind: "sqlite", path }).catch((error: unknown) => error);
  expect(exitCodeFor(refused)).toBe(2);
  expect((refused as Error).message).toBe(
    `DATABASE_URL=${JSON.stringify(path)}: cannot use the SQLite database: its schema is version ${newer}, newer than this release knows (${MIGRATIONS.length}): run the release that migrated it, or restore the backup taken before the upgrade`,
  );
  const after = new Database(path, { readonly: true });
  expect(after.query("PRAGMA user_version").get()).toEqual({ user_version: newer });
  expect(after.query("SELECT name FROM webhooks").all()).toEqual([{ name: "kept" }]);
  after.close();
});
