import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { change } from "./change.ts";
import { gate, type Responder, startFakeEndpoint } from "./webhook-endpoint.ts";

type Cleanups = Array<() => unknown>;

/**
 * A SQLite database file (`path`) in a temporary folder (`dir`) with the real store on it, for a
 * worker process or command to open by path. `cleanups` gets the store's close, then the
 * folder's removal.
 */
export function databaseFile(options: { cleanups: Cleanups; prefix?: string; now?: () => number }) {
  const dir = mkdtempSync(join(tmpdir(), options.prefix ?? "database-file-"));
  const path = join(dir, "app.db");
  const store = openSqliteStore(path, options.now ? { now: options.now } : {});
  options.cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  options.cleanups.push(() => store.close());
  return { dir, path, store };
}

/** databaseFile() and a fake endpoint answering with `respond`, stopped at cleanup. */
export function databaseFileAndEndpoint(
  respond: Responder | undefined,
  options: { cleanups: Cleanups; prefix?: string; now?: () => number },
) {
  const { path, store } = databaseFile(options);
  const endpoint = startFakeEndpoint(respond);
  options.cleanups.push(() => endpoint.stop());
  return { path, store, endpoint };
}

/**
 * A database file with one webhook and one delivery due, whose request hangs at the endpoint
 * until `hold.open()` (opened at cleanup too): a worker stopped with a request in flight.
 */
export async function oneHeldDelivery(options: { cleanups: Cleanups; prefix?: string }) {
  const hold = gate();
  options.cleanups.push(hold.open);
  const { path, store, endpoint } = databaseFileAndEndpoint(async () => {
    await hold.promise;
    return new Response("ok");
  }, options);
  await store.webhooks.create({ name: "hook", url: endpoint.url });
  const [id] = await store.queue.enqueue(change());
  if (id === undefined) throw new Error("expected a delivery");
  return { path, store, endpoint, id, hold };
}
