import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { gate, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";
import { change } from "../store/contract.ts";

const ROOT = join(import.meta.dir, "..", "..");
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What a tmux pane shows, read as it comes through a FIFO (pipe-pane): no polling. */
function paneOutput(session: string, fifo: string) {
  Bun.spawnSync(["mkfifo", fifo]);
  const reader = Bun.spawn(["cat", fifo], { stdout: "pipe" });
  cleanups.push(() => reader.kill());
  Bun.spawnSync(["tmux", "pipe-pane", "-t", session, "-o", `cat > ${fifo}`]);
  const stream = reader.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    async until(pattern: RegExp): Promise<string> {
      while (!pattern.test(text)) {
        const { done, value } = await stream.read();
        if (done) throw new Error(`the pane closed without ${pattern}:\n${text}`);
        text = (text + decoder.decode(value, { stream: true })).replaceAll("\r", "");
      }
      return text;
    },
  };
}

test.skipIf(Bun.which("tmux") === null)(
  "`bun run worker` in a real terminal: one Ctrl-C keypress lets the request in flight finish, nothing is released",
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "worker-terminal-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, "app.db");
    const store = openSqliteStore(path);
    cleanups.push(() => store.close());
    const hold = gate();
    cleanups.push(hold.open);
    const endpoint = startFakeEndpoint(async () => {
      await hold.promise;
      return new Response("ok");
    });
    cleanups.push(() => endpoint.stop());
    await store.webhooks.create({ name: "hook", url: endpoint.url });
    const [id] = await store.queue.enqueue(change());

    const session = `worker-terminal-${process.pid}-${Date.now()}`;
    // The command waits for Enter, so the pane's output is piped from its first byte.
    const command = `read _; env DATABASE_URL='${path}' WEBHOOK_ALLOWED_HOSTS=127.0.0.1 NO_COLOR=1 bun run worker; echo "EXIT=$?"`;
    Bun.spawnSync([
      "tmux",
      "new-session",
      "-d",
      "-s",
      session,
      "-x",
      "200",
      "-y",
      "50",
      "-c",
      ROOT,
      command,
    ]);
    cleanups.push(() => Bun.spawnSync(["tmux", "kill-session", "-t", session]));
    const pane = paneOutput(session, join(dir, "pane.fifo"));
    Bun.spawnSync(["tmux", "send-keys", "-t", session, "Enter"]);

    await endpoint.waitForRequests(1);
    Bun.spawnSync(["tmux", "send-keys", "-t", session, "C-c"]);
    await pane.until(/Stopping: waiting up to \d+ ms for 1 in-flight delivery/);
    hold.open();
    const text = await pane.until(/EXIT=\d+/);
    expect(text).toMatch(/stopped: 1 successful, 0 to retry, 0 failed, 0 discarded, 0 released/);
    expect(text).toContain("EXIT=0");
    expect((await store.queue.get(id ?? 0))?.delivery).toMatchObject({
      state: "successful",
      attempts: 1,
    });
    expect(endpoint.requests).toHaveLength(1);
  },
  20_000,
);
