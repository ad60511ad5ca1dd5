import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { oneHeldDelivery } from "../fakes/database-file.ts";
import { hasTool } from "../fakes/system-tools.ts";
import { startInTerminal } from "../fakes/terminal.ts";

const ROOT = join(import.meta.dir, "..", "..");
// A shell, `bun run` and a worker or the demo in a tmux pane: seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);
const HAS_TMUX = hasTool("tmux", "worker and demo in a real terminal");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

test.skipIf(!HAS_TMUX)(
  "`bun run worker` in a real terminal: one Ctrl-C keypress lets the request in flight finish, nothing is released",
  async () => {
    const { path, store, endpoint, id, hold } = await oneHeldDelivery({
      cleanups,
      prefix: "worker-terminal-",
    });

    const terminal = startInTerminal(
      `env DATABASE_URL='${path}' WEBHOOK_ALLOWED_HOSTS=127.0.0.1 NO_COLOR=1 bun run worker; echo "EXIT=$?"`,
      ROOT,
    );
    cleanups.push(() => terminal.close());
    await endpoint.waitForRequests(1);
    terminal.press("C-c");
    await terminal.until(/Stopping: waiting up to \d+ ms for 1 in-flight delivery/);
    hold.open();
    const text = await terminal.until(/EXIT=\d+/);
    expect(text).toMatch(/stopped: 1 successful, 0 to retry, 0 failed, 0 discarded, 0 released/);
    expect(text).toContain("EXIT=0");
    expect((await store.queue.get(id))?.delivery).toMatchObject({
      state: "successful",
      attempts: 1,
    });
    expect(endpoint.requests).toHaveLength(1);
  },
);

test.skipIf(!HAS_TMUX)(
  "`bun run demo` in a real terminal: Ctrl-C stops it, deletes its database and exits 0",
  async () => {
    const terminal = startInTerminal(
      `NO_COLOR=1 bun run demo --port 0 --receiver-port 0; echo "EXIT=$?"`,
      ROOT,
    );
    cleanups.push(() => terminal.close());
    const shown = await terminal.until(/worker: Delivery 1 \(item\.created\)[^\n]*HTTP 200/);
    const database = /Database: +(\S+)/.exec(shown)?.[1] ?? "";
    expect(existsSync(database)).toBe(true);
    terminal.press("C-c");
    const text = await terminal.until(/EXIT=\d+/);
    expect(text).toContain("Demo stopped.");
    expect(text).toContain("EXIT=0");
    expect(existsSync(database)).toBe(false);
  },
);
