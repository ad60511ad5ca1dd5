import { expect, setDefaultTimeout, test } from "bun:test";
import { runCommand } from "citty";
import { createDemoCommand } from "../../lib/demo/command.ts";
import { DEMO_ALLOWED_HOSTS, DEMO_RETRIES, retriesText } from "../../lib/demo/run.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { retrySchedule } from "../../lib/webhooks/policy/retry.ts";
import { loadWorkerConfig } from "../../lib/worker/config.ts";
import { retryPolicyOf } from "../../lib/worker/worker-send.ts";

// The demo's servers and worker plus one failing delivery's real retries: seconds, more under load.
setDefaultTimeout(60_000);

const demoConfig = () =>
  loadWorkerConfig({
    DATABASE_URL: ":memory:",
    WEBHOOK_ALLOWED_HOSTS: DEMO_ALLOWED_HOSTS,
    ...DEMO_RETRIES,
  });

test("the demo's retry schedule ends in failed within 10 s even with the longest jitter", () => {
  const policy = retryPolicyOf(demoConfig());
  const longest = retrySchedule(policy).reduce((sum, ms) => sum + ms * (1 + policy.jitter), 0);
  expect(longest).toBeLessThan(10_000);
  expect(retriesText(demoConfig())).toBe(
    "4 attempts, 1 s, 2 s, 4 s apart (±20 %), then failed; a timeout, 429, 502, 503 or 504 waits at least 60 s",
  );
});

/** A loopback port nothing listens on: a webhook to it fails at once, refused. */
function closedPort(): number {
  const listener = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const { port } = listener;
  listener.stop(true);
  return port;
}

test("a webhook the demo's admin adds to a closed local port is sent to, and reaches failed with its Retry button in seconds", async () => {
  const lines: string[] = [];
  const waiters: Array<{ pattern: RegExp; resolve: (line: string) => void }> = [];
  const print = (text: string) => {
    lines.push(text);
    for (const waiter of waiters.filter((w) => w.pattern.test(text))) waiter.resolve(text);
  };
  const printed = (pattern: RegExp) => {
    const seen = lines.find((line) => pattern.test(line));
    if (seen !== undefined) return Promise.resolve(seen);
    return new Promise<string>((resolve) => waiters.push({ pattern, resolve }));
  };
  let measured = { seconds: 0, page: "" };
  const command = createDemoCommand({
    print,
    logger: createMemoryLogger(),
    async untilStopped() {
      await printed(/to "demo receiver", attempt 1\/4 \(\d+ ms\): HTTP 200$/);
      const text = lines.join("\n");
      const database = /^Database: +(\S+)/m.exec(text)?.[1] ?? "";
      const api = /^API: +(\S+)/m.exec(text)?.[1] ?? "";
      const admin = /^Admin UI: +(\S+)/m.exec(text)?.[1] ?? "";
      // As a person would in the admin: a webhook to a port nothing listens on, on the short
      // schedule the demo's form offers (elsewhere day, whose 4 capped attempts take 35 min).
      const form = await (await fetch(`${admin}/webhooks/new`)).text();
      expect(form).toContain('name="retrySchedule" value="short"');
      const store = openSqliteStore(database);
      await store.webhooks.create({
        name: "closed port",
        url: `http://127.0.0.1:${closedPort()}/hook`,
        retrySchedule: "short",
      });
      store.close();
      const started = performance.now();
      const patched = await fetch(`${api}/1`, {
        method: "PATCH",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ quantity: 6 }),
      });
      expect(patched.status).toBe(200);
      const last = await printed(/to "closed port", attempt 4\/4 .*; failed, no more retries$/);
      measured = {
        seconds: (performance.now() - started) / 1000,
        page: await (await fetch(`${admin}/background-tasks`)).text(),
      };
      expect(last).toContain("connection refused by 127.0.0.1:");
    },
  });
  await runCommand(command, { rawArgs: ["--port", "0", "--receiver-port", "0"] });

  expect(lines).toContain(
    `Allowed:   WEBHOOK_ALLOWED_HOSTS=${DEMO_ALLOWED_HOSTS} (loopback, any port)`,
  );
  expect(lines.some((line) => line.startsWith("Retries:   4 attempts, 1 s, 2 s, 4 s apart"))).toBe(
    true,
  );
  const attempts = lines.filter((line) => line.includes('to "closed port"'));
  expect(attempts).toHaveLength(4);
  expect(attempts.some((line) => line.includes("WEBHOOK_ALLOWED_HOSTS"))).toBe(false);
  // The Failed section lists it with its Retry button.
  const failed = measured.page.slice(measured.page.indexOf("<h2>Failed"));
  expect(failed).toContain("closed port");
  expect(failed).toContain(">Retry</button>");
  // A measured bound, not a target: the schedule makes it about 7–8.4 s; a loaded machine adds
  // some, a worker's default schedule would take 150 s.
  expect(measured.seconds).toBeLessThan(30);
  console.log(`demo: failing webhook to failed with Retry in ${measured.seconds.toFixed(1)} s`);
});
