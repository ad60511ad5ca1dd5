import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "citty";
import { createWebhooksCommand } from "../../lib/webhooks-cli/command.ts";
import { change } from "../fakes/change.ts";
import { databaseFileAndEndpoint, oneHeldDelivery } from "../fakes/database-file.ts";
import { jsonLogLines } from "../fakes/json-log.ts";
import { outputReader } from "../fakes/output-reader.ts";
import { family, parsePrometheusText } from "../fakes/prometheus-text.ts";
import { rawHttp, statusOf } from "../fakes/raw-http.ts";
import { gate, type Responder } from "../fakes/webhook-endpoint.ts";
import { spawnWorker } from "../fakes/worker-process.ts";

// Each test starts bun processes: about a second alone, several on a loaded 2-core machine.
setDefaultTimeout(30_000);

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setup(respond: Responder) {
  return databaseFileAndEndpoint(respond, { cleanups, prefix: "worker-process-" });
}

function startWorker(path: string, env: Record<string, string> = {}, args: string[] = []) {
  return spawnWorker(path, { env, args, cleanups });
}

describe("worker process", () => {
  test("a worker killed with SIGKILL mid-batch loses nothing: a restarted one delivers it all", async () => {
    const total = 60;
    const concurrency = 8;
    const answered = new Set<string>();
    const allAnswered = gate();
    const hold = gate();
    cleanups.push(hold.open);
    let holding = true;
    const { path, store, endpoint } = setup(async (request, index) => {
      // The first worker gets 10 answers, then its next batch hangs until it is killed.
      if (holding && index >= 10) {
        await hold.promise;
        return new Response("too late", { status: 503 });
      }
      answered.add(request.headers["webhook-id"] ?? "");
      if (answered.size === total) allAnswered.open();
      return new Response("ok");
    });
    await store.webhooks.create({ name: "hook", url: `${endpoint.url}/in` });
    for (let i = 0; i < total; i++) await store.queue.enqueue(change({ data: { i } }));

    // Timeout 2 s, lease 3 s: the killed worker's claims come back 3 s after it claimed them.
    const env = {
      WEBHOOK_TIMEOUT_MS: "2000",
      WEBHOOK_LEASE_MS: "3000",
      WEBHOOK_CONCURRENCY: String(concurrency),
    };
    const first = startWorker(path, env);
    await endpoint.waitForRequests(10 + concurrency);
    // Requests start from the prefetched claims before the results before them are written.
    while ((await store.queue.stats()).successful < 10) {
      await store.waitForChange({ timeoutMs: 1000 });
    }
    first.kill("SIGKILL");
    expect(await first.exited).not.toBe(0);
    const afterKill = await store.queue.stats();
    // Leased by the dead worker: its requests in flight, and the claims it held ready
    // (prefetch, by default four times the concurrency) that it never sent.
    expect(afterKill.delivering).toBeGreaterThanOrEqual(concurrency);
    expect(afterKill.delivering).toBeLessThanOrEqual(5 * concurrency);
    expect(afterKill.successful).toBe(10);
    const sentBeforeKill = new Set(endpoint.requests.map((r) => r.headers["webhook-id"]));
    holding = false;
    hold.open();

    const second = startWorker(path, env);
    await allAnswered.promise;
    second.kill("SIGTERM");
    expect(await second.exited).toBe(0);

    expect(await store.queue.stats()).toEqual({
      queued: 0,
      delivering: 0,
      successful: total,
      failed: 0,
    });
    const deliveries = await store.queue.list({ limit: total });
    let lost = 0;
    let lostUnsent = 0;
    for (const { id, messageId } of deliveries) {
      const shown = await store.queue.get(id);
      const attempts = shown?.attempts ?? [];
      expect(attempts.at(-1)?.outcome).toBe("success");
      // One row per attempt number: no attempt was made twice.
      expect(new Set(attempts.map((a) => a.attempt)).size).toBe(attempts.length);
      const expired = attempts.filter((a) => a.outcome === "lease_expired");
      lost += expired.length;
      if (expired.length > 0 && !sentBeforeKill.has(messageId)) lostUnsent++;
      for (const attempt of expired) expect(attempt.error).toContain("may not have been sent");
    }
    // Every delivery the dead worker held comes back once, recorded as a lease_expired attempt,
    // whether or not its request had left: that cannot be known without a write before each
    // request. The prefetched ones are those it never sent.
    expect(lost).toBe(afterKill.delivering);
    expect(lostUnsent).toBe(afterKill.delivering - concurrency);
    expect(answered.size).toBe(total);
  });

  test("SIGTERM lets the in-flight request finish, then the worker exits 0", async () => {
    const { path, store, endpoint, id, hold } = await oneHeldDelivery({ cleanups });
    const child = startWorker(path);
    await endpoint.waitForRequests(1);
    child.kill("SIGTERM");
    // Let the worker see the signal before the answer arrives: its stderr says it is stopping.
    const stderr = outputReader(child.stderr);
    await stderr.until("Stopping");
    stderr.release();
    hold.open();
    expect(await child.exited).toBe(0);
    expect((await store.queue.get(id))?.delivery.state).toBe("successful");
  });

  test("two SIGINTs in quick succession (one Ctrl-C under `bun run`) stop gracefully: the request in flight finishes", async () => {
    const { path, store, endpoint, id, hold } = await oneHeldDelivery({ cleanups });
    const child = startWorker(path, { LOG_LEVEL: "debug" });
    const stderr = outputReader(child.stderr);
    await endpoint.waitForRequests(1);
    // The terminal signals the process group, then `bun run` forwards its copy.
    child.kill("SIGINT");
    await stderr.until("Stopping");
    child.kill("SIGINT");
    await stderr.until("taken as the same Ctrl-C");
    hold.open();
    expect(await child.exited).toBe(0);
    expect(await stderr.rest()).toContain(
      "1 successful, 0 to retry, 0 failed, 0 discarded, 0 released",
    );
    expect((await store.queue.get(id))?.delivery).toMatchObject({
      state: "successful",
      attempts: 1,
    });
    expect(endpoint.requests).toHaveLength(1);
  });

  test("--once delivers what is due and exits 0", async () => {
    const { path, store, endpoint } = setup(() => new Response("ok"));
    await store.webhooks.create({ name: "hook", url: endpoint.url });
    for (let i = 0; i < 5; i++) await store.queue.enqueue(change());
    const child = startWorker(path, {}, ["--once"]);
    expect(await child.exited).toBe(0);
    expect(endpoint.requests).toHaveLength(5);
    expect((await store.queue.stats()).successful).toBe(5);
  });

  test("--once against a PostgreSQL that refuses connections gives up within the 5 s start-up wait: exit 2 and one line naming the server", async () => {
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    const port = server.port;
    await server.stop(true);
    const child = startWorker(`postgres://hooks@127.0.0.1:${port}/inventory`, {}, ["--once"]);
    // Bounded: a worker that waits for the database until stopped fails here instead of hanging.
    const bound = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await child.exited;
    clearTimeout(bound);
    expect(child.signalCode).toBeNull();
    expect(code).toBe(2);
    const lines = (await new Response(child.stderr).text()).trimEnd().split("\n");
    expect(lines.filter((line) => line.startsWith("error:"))).toEqual([
      `error: DATABASE_URL: cannot use PostgreSQL at 127.0.0.1:${port}/inventory as hooks: connection refused or host not reachable`,
    ]);
    expect(lines.at(-1)).toStartWith("error:");
  });

  test("a running worker shows in `webhooks workers`, logs each attempt as a JSON line, serves --metrics-port, and is gone after SIGTERM", async () => {
    const { path, store, endpoint } = setup(() => new Response("ok"));
    await store.webhooks.create({ name: "hook", url: endpoint.url });
    for (let i = 0; i < 3; i++) await store.queue.enqueue(change());
    const child = startWorker(
      path,
      { LOG_FORMAT: "json", LOG_LEVEL: "debug", WORKER_HEARTBEAT_MS: "1000" },
      ["--metrics-port", "0"],
    );
    const log = jsonLogLines(child.stderr, cleanups);
    const metricsUrl = /^Metrics on (\S+)$/.exec(
      (await log.find((l) => l.msg.startsWith("Metrics on"))).msg,
    )?.[1];
    const attempts = [];
    for (let i = 0; i < 3; i++) attempts.push(await log.find((l) => l.deliveryId !== undefined));
    expect(attempts.map((a) => [a.level, a.webhook, a.attempt, a.status, a.outcome])).toEqual([
      ["debug", "hook", 1, 200, "success"],
      ["debug", "hook", 1, 200, "success"],
      ["debug", "hook", 1, 200, "success"],
    ]);
    expect(attempts.map((a) => a.deliveryId).sort()).toEqual([1, 2, 3]);
    expect(typeof attempts[0]?.durationMs).toBe("number");

    const workers = async () => JSON.parse(await webhooksCli(path, ["workers", "--json"]));
    const [running] = await workers();
    expect(running).toMatchObject({ pid: child.pid, stale: false, concurrency: 16 });

    const response = await fetch(metricsUrl ?? "");
    expect(response.status).toBe(200);
    // A name rebound to 127.0.0.1 by someone else's DNS is refused (421).
    const metricsPort = Number(new URL(metricsUrl ?? "").port);
    const rebound = await rawHttp(
      metricsPort,
      "GET /metrics HTTP/1.1\r\nHost: rebound.example\r\nConnection: close\r\n\r\n",
    );
    expect(statusOf(rebound)).toBe(421);
    const samples = parsePrometheusText(await response.text());
    expect(samples.get('webhook_attempts_total{outcome="2xx"}')).toBe(3);
    expect(samples.get('webhook_deliveries{state="successful"}')).toBe(3);
    expect(family(samples, "webhook_workers")).toEqual({
      'webhook_workers{status="live"}': 1,
      'webhook_workers{status="stale"}': 0,
    });

    child.kill("SIGTERM");
    expect(await child.exited).toBe(0);
    expect(await workers()).toEqual([]);
    await expect(fetch(metricsUrl ?? "")).rejects.toThrow();
  });

  test("a bad setting is one line on stderr and exit code 2", async () => {
    const child = startWorker(join(tmpdir(), "never-created", "app.db"), {
      WEBHOOK_TIMEOUT_MS: "soon",
    });
    expect(await child.exited).toBe(2);
    const stderr = await new Response(child.stderr).text();
    expect(stderr).toBe(
      'error: WEBHOOK_TIMEOUT_MS="soon" is invalid: expected a whole number from 100 to 300000\n',
    );
  });
});

/** `bun run webhooks …` in-process on the database at `path`; returns its stdout. */
async function webhooksCli(path: string, args: string[]): Promise<string> {
  const lines: string[] = [];
  await runCommand(
    createWebhooksCommand({ env: { DATABASE_URL: path }, out: (text) => lines.push(text) }),
    { rawArgs: args },
  );
  return lines.join("\n");
}
