import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { describeStoreContract } from "./contract.ts";

describeStoreContract("SQLite", async ({ now, renderTemplates }) => {
  const dir = mkdtempSync(join(tmpdir(), "store-contract-"));
  const path = join(dir, "app.db");
  const store = openSqliteStore(path, { now, renderTemplates });
  return {
    store,
    openAnother: async () => openSqliteStore(path, { now }),
    async cleanup() {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
