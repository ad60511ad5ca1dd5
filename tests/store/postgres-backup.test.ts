import { expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openPostgresStore } from "../../lib/store/postgres/store.ts";
import { itemChange } from "../fakes/change.ts";
import {
  describePostgres,
  findPostgresBin,
  usePostgresCluster,
} from "../fakes/postgres-cluster.ts";
import { outputOf } from "../fakes/process-output.ts";

/** The recipe of docs/operations.md ("Backup and restore"), command for command. */
async function run(tool: string, args: string[]): Promise<void> {
  const bin = findPostgresBin() ?? "";
  const child = Bun.spawn([join(bin, tool), ...args], { stdout: "pipe", stderr: "pipe" });
  const { code, stderr } = await outputOf(child);
  expect(stderr).toBe("");
  expect(code).toBe(0);
}

describePostgres("PostgreSQL backup and restore with pg_dump and pg_restore", () => {
  const pg = usePostgresCluster();

  test("the documented recipe restores webhooks, secrets and the queue into an empty database", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pg-backup-"));
    pg.cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const source = await pg.cluster.createDatabase();
    const store = await openPostgresStore(source);
    pg.cleanups.push(() => store.close());
    const hook = await store.webhooks.create({ name: "hook", url: "https://example.test/in" });
    await store.queue.enqueueMany(Array.from({ length: 50 }, (_, i) => itemChange(i + 1)));
    const before = await store.queue.list({ limit: 1000 });

    const dump = join(dir, "inventory.dump");
    await run("pg_dump", ["--format=custom", `--file=${dump}`, source]);
    const target = await pg.cluster.createDatabase();
    await run("pg_restore", ["--exit-on-error", "--no-owner", `--dbname=${target}`, dump]);

    const restored = await openPostgresStore(target);
    pg.cleanups.push(() => restored.close());
    expect(await restored.webhooks.list()).toEqual(await store.webhooks.list());
    expect((await restored.webhooks.get(hook.id))?.secret).toBe(hook.secret);
    expect(await restored.queue.list({ limit: 1000 })).toEqual(before);
    // Sequences come back too: a new delivery takes a new id, not one of the restored ones.
    await restored.queue.enqueueMany([itemChange(51)]);
    const ids = (await restored.queue.list({ limit: 1000 })).map((delivery) => delivery.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
