import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { serveApp } from "../app/serve.ts";
import { listenUrl } from "../http/listen.ts";
import type { Logger } from "../log.ts";
import { createReceiver } from "../receiver/app.ts";
import { openSqliteStore } from "../store/sqlite/store.ts";
import { VERSION } from "../version.ts";
import type { WorkerHooks } from "../webhooks/delivery/loop.ts";
import { RETRY_SLOWLY_STATUSES, retrySchedule, shortAttempts } from "../webhooks/policy/retry.ts";
import { generateSecret } from "../webhooks/sending/signing.ts";
import { attemptLogEntry, describeAttempt } from "../worker/attempt-log.ts";
import { createDeliveryWorker } from "../worker/bind.ts";
import { loadWorkerConfig, type WorkerConfig } from "../worker/config.ts";
import { startHeartbeat, workerSnapshot } from "../worker/heartbeat.ts";
import { loggingHooks } from "../worker/log-hooks.ts";
import { retryPolicyOf } from "../worker/worker-send.ts";

const HOST = "127.0.0.1";

/**
 * What the demo's worker may send to: this machine's loopback on any port, so the receiver and
 * any webhook a person adds to a local port (a closed one, to watch a failure) are sent to.
 */
export const DEMO_ALLOWED_HOSTS = "127.0.0.0/8,::1,localhost";

/**
 * The demo's retry schedule: its webhook (on `short`) fails (a closed port, a 500) and reaches
 * "failed" in about 8 s instead of a worker's 2.5 minutes (5 attempts, 10 s doubling); a
 * webhook added in the demo on `day` makes at most 4 attempts.
 */
export const DEMO_RETRIES = {
  WEBHOOK_MAX_ATTEMPTS: "4",
  WEBHOOK_RETRY_BASE_MS: "1000",
  WEBHOOK_RETRY_MAX_MS: "4000",
  WEBHOOK_TIMEOUT_MS: "3000",
} as const;

export interface DemoOptions {
  /** Preferred ports; when one is taken a free one is used instead (the URLs are printed). */
  appPort: number;
  receiverPort: number;
  /** Resolves when the demo should stop: Ctrl-C or SIGTERM (lib/cli/signals.ts). */
  untilStopped: () => Promise<unknown>;
  /** Lines for the person watching: the URLs, the receiver's output, each delivery. */
  print: (text: string) => void;
  logger: Logger;
}

/**
 * `bun run demo`: the receiver, the app and a worker in one process, on a throwaway SQLite
 * database, with a webhook to the receiver; makes one change so a delivery flows end to end.
 *
 * One process rather than three children: Ctrl-C then stops everything in order with nothing
 * left orphaned, and ports can be chosen freely. The worker still works as a separate process
 * would: it has its own database connection and learns of new work through the database
 * (`PRAGMA data_version`), not through any in-process call from the app.
 */
export async function runDemo(options: DemoOptions): Promise<void> {
  const { print, logger } = options;
  const dir = mkdtempSync(join(tmpdir(), "inventory-demo-"));
  const databasePath = join(dir, "app.db");
  const cleanups: Array<() => unknown> = [() => rmSync(dir, { recursive: true, force: true })];
  try {
    const secret = generateSecret();
    const receiver = tryPorts(options.receiverPort, (port) =>
      Bun.serve({
        hostname: HOST,
        port,
        fetch: createReceiver({ print, showHeaders: true, pretty: true, secrets: [secret] }).fetch,
      }),
    );
    cleanups.unshift(() => receiver.stop(true));
    const receiverUrl = `${listenUrl(HOST, receiver.port ?? options.receiverPort)}/webhook`;

    const appStore = openSqliteStore(databasePath);
    cleanups.unshift(() => appStore.close());
    await appStore.webhooks.create({
      name: "demo receiver",
      url: receiverUrl,
      events: ["*"],
      secret,
      // A failure reaches "failed" in seconds, not over a day (DEMO_RETRIES shape it).
      retrySchedule: "short",
    });
    const config = loadWorkerConfig({
      DATABASE_URL: databasePath,
      WEBHOOK_ALLOWED_HOSTS: DEMO_ALLOWED_HOSTS,
      ...DEMO_RETRIES,
    });
    const app = tryPorts(options.appPort, (port) =>
      serveApp({
        host: HOST,
        port,
        store: appStore,
        adminToken: null,
        webhookAllowList: config.allowList,
        maxAttempts: config.maxAttempts,
        // A webhook added in the demo's admin fails in seconds too, as its own webhook does.
        newWebhookRetrySchedule: "short",
        logger,
      }),
    );
    cleanups.unshift(() => app.stop());

    const workerStore = openSqliteStore(databasePath);
    cleanups.unshift(() => workerStore.close());
    const worker = createDeliveryWorker({
      store: workerStore,
      config,
      logger,
      logAttempts: false,
      hooks: demoWorkerHooks(print, logger, config),
    });
    const stopWorker = new AbortController();
    const workerDone = worker.run({ signal: stopWorker.signal });
    // So that Background Tasks shows the demo's worker as live, as it would a `bun run worker`.
    const startedAt = Date.now();
    const heartbeat = startHeartbeat({
      registry: workerStore.workers,
      info: workerSnapshot(worker, {
        concurrency: config.concurrency,
        startedAt,
        version: VERSION,
      }),
      logger,
    });
    cleanups.unshift(async () => {
      stopWorker.abort();
      await workerDone;
      await heartbeat.stop();
    });

    print(`Database:  ${databasePath} (deleted on exit)`);
    print(`Receiver:  ${receiverUrl} (signatures checked)`);
    print(`Allowed:   WEBHOOK_ALLOWED_HOSTS=${DEMO_ALLOWED_HOSTS} (loopback, any port)`);
    print(`Retries:   ${retriesText(config)}`);
    print(`Admin UI:  ${app.url}/admin`);
    print(`API:       ${app.url}/api/items`);
    print("Making one change: POST /api/items …");
    const response = await fetch(`${app.url}/api/items`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ sku: "DEMO-1", name: "Demo widget", quantity: 5, location: "Bin 1" }),
    });
    print(`app: POST /api/items → ${response.status} ${await response.text()}`);
    print("Edit the item in the Admin UI to send more; Ctrl-C stops the demo.");
    await options.untilStopped();
    print("Stopping the worker, the app and the receiver …");
  } finally {
    for (const cleanup of cleanups) await cleanup();
  }
  print("Demo stopped.");
}

/**
 * One printed line per attempt, successes included, beside the receiver's output, and not
 * logged as well: the worker's own attempt log is replaced, its other lines (errors, releases)
 * kept.
 */
export function demoWorkerHooks(
  print: (text: string) => void,
  logger: Logger,
  config: Pick<WorkerConfig, "maxAttempts">,
): WorkerHooks {
  return {
    ...loggingHooks(logger, config),
    onFinished(claim, delivered) {
      print(`worker: ${describeAttempt(attemptLogEntry(claim, delivered, config.maxAttempts))}`);
    },
  };
}

/**
 * `4 attempts, 1 s, 2 s, 4 s apart (±20 %), then failed; a timeout, 429, 502, 503 or 504 waits
 * at least 60 s` (the statuses retried slowly, as retry.ts has them).
 */
export function retriesText(config: WorkerConfig): string {
  const policy = retryPolicyOf(config);
  const gaps = retrySchedule(policy).map((ms) => `${ms / 1000} s`);
  const slow = ["a timeout", ...[...RETRY_SLOWLY_STATUSES].map(String)];
  const slowly = `${slow.slice(0, -1).join(", ")} or ${slow.at(-1)}`;
  return `${shortAttempts(policy)} attempts, ${gaps.join(", ")} apart (±${policy.jitter * 100} %), then failed; ${slowly} waits at least ${policy.slowDownMs / 1000} s`;
}

/** Listens on `preferred`, or on a free port when it is taken (port 0 picks one anyway). */
function tryPorts<T>(preferred: number, listen: (port: number) => T): T {
  try {
    return listen(preferred);
  } catch (error) {
    if (preferred === 0) throw error;
    return listen(0);
  }
}
