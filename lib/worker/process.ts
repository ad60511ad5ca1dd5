import type { Sleep } from "../async/sleep.ts";
import type { OperabilityConfig } from "../config/operability.ts";
import { listenUrl, serveOn } from "../http/listen.ts";
import type { Logger } from "../log.ts";
import { describeDatabase } from "../store/database-url.ts";
import { VERSION } from "../version.ts";
import type { Metrics } from "../webhooks/observe/metrics.ts";
import { DEFAULT_HEARTBEAT_MS } from "../webhooks/observe/staleness.ts";
import { DEFAULT_AUTO_DISABLE } from "../webhooks/policy/webhook-health.ts";
import type { Store } from "../webhooks/ports.ts";
import { createDeliveryWorker, type DeliveryWorkerOptions } from "./bind.ts";
import { METRICS_ALLOWED_HOSTS_VARIABLE, type MetricsListen, type WorkerConfig } from "./config.ts";
import { databaseFileError, watchDatabaseFile } from "./database-file.ts";
import { RELAY_INTERVAL_MS } from "./event-relay.ts";
import { type Heartbeat, startHeartbeat, workerSnapshot } from "./heartbeat.ts";
import { combineHooks } from "./log-hooks.ts";
import { metricsHooks } from "./metrics-hooks.ts";
import { createRetention } from "./retention.ts";

export interface RunWorkerOptions {
  store: Store;
  config: WorkerConfig;
  logger: Logger;
  /** Drain what is due, then return (`--once`). */
  once?: boolean;
  /** First SIGINT/SIGTERM: stop claiming, let in-flight requests finish. */
  stop: AbortSignal;
  /** Second signal: abort in-flight requests now and release them. */
  abortInFlight: AbortSignal;
  fetch?: typeof fetch;
  hooks?: DeliveryWorkerOptions["hooks"];
  /** Log successful attempts too (--verbose, LOG_LEVEL=debug). */
  verbose?: boolean;
  /** Retention, auto-disable and heartbeat settings (lib/config/operability.ts); defaults when absent. */
  operability?: Pick<OperabilityConfig, "retentionDays" | "autoDisable" | "heartbeatIntervalMs">;
  /**
   * Record a heartbeat so that `webhooks workers` and the admin show this worker (default
   * true). Off only to measure what heartbeats cost (bench:webhooks).
   */
  heartbeat?: boolean;
  /** Count attempts and serve GET /metrics there; absent: no metrics are kept. */
  metrics?: MetricsListen;
  /** Told the metrics URL once it listens (the port may have been 0). */
  onMetricsListening?: (url: string) => void;
  workerId?: string;
  /** Clock and sleep for heartbeats, retention, pauses and send slots; tests pass fakes. */
  now?: () => number;
  sleep?: Sleep;
  /** How often to check the SQLite file is still there (default every second). */
  fileCheckMs?: number;
}

const DEFAULT_OPERABILITY: NonNullable<RunWorkerOptions["operability"]> = {
  retentionDays: 30,
  autoDisable: DEFAULT_AUTO_DISABLE,
  heartbeatIntervalMs: DEFAULT_HEARTBEAT_MS,
};

/**
 * The worker process: runs until stopped (or drained with `once`), shutting down gracefully.
 * Around the delivery loop: a heartbeat (removed on a clean exit, after the in-flight requests
 * ended), retention of old deliveries, and, when asked, metrics on their own listener.
 */
export async function runWorker(options: RunWorkerOptions): Promise<void> {
  const { config, logger, store } = options;
  const operability = options.operability ?? DEFAULT_OPERABILITY;
  const now = options.now ?? Date.now;

  // Loaded only when asked for: prom-client alone adds about 50 ms of CPU to every start.
  const { createMetrics } = options.metrics ? await import("../webhooks/observe/metrics.ts") : {};
  const metrics = createMetrics
    ? createMetrics({
        source: {
          stats: () => store.queue.stats(),
          dueSummary: (at) => store.queue.dueSummary(at),
          workers: () => store.workers.list(),
          webhooks: () => store.webhooks.list(),
        },
        now,
        heartbeatIntervalMs: operability.heartbeatIntervalMs,
      })
    : null;
  const retention = createRetention({
    purge: (olderThan, { batchSize }) => store.queue.purgeBatch(olderThan, batchSize),
    retentionDays: operability.retentionDays,
    now,
    signal: options.stop,
    logger,
  });

  const worker = createDeliveryWorker({
    store,
    config,
    logger,
    fetch: options.fetch,
    hooks: metrics ? combineHooks(metricsHooks(metrics), options.hooks) : options.hooks,
    verbose: options.verbose,
    workerId: options.workerId,
    autoDisable: operability.autoDisable,
    onAutoDisabled: metrics ? (kind) => metrics.observeAutoDisable(kind) : undefined,
    now,
    sleep: options.sleep,
    onTurn: () => void retention.maybeRun(),
  });
  const server =
    metrics && options.metrics ? await serveMetrics(metrics, options.metrics, logger) : null;
  const startedAt = now();
  const heartbeat: Heartbeat | null =
    options.heartbeat === false
      ? null
      : startHeartbeat({
          registry: store.workers,
          info: workerSnapshot(worker, {
            concurrency: config.concurrency,
            startedAt,
            version: VERSION,
          }),
          intervalMs: operability.heartbeatIntervalMs,
          now,
          sleep: options.sleep,
          logger,
          isUnreachable: (error) => store.isUnreachable(error),
          onFailed: () => metrics?.observeStoreError("heartbeat"),
        });
  logger.info(
    `Worker ${worker.id} ${options.once ? "draining due deliveries" : "started"}: concurrency ${config.concurrency}${config.prefetch ? ` (+${config.prefetch} prefetched)` : ""}, timeout ${config.timeoutMs} ms, lease ${config.leaseMs} ms, max attempts ${config.maxAttempts ?? "by schedule"}; database ${describeDatabase(config.database)}${config.proxy ? `; proxy ${config.proxy.shown}` : ""}`,
  );
  if (server) {
    logger.info(`Metrics on ${server.url}`);
    options.onMetricsListening?.(server.url);
  }

  // The grace period starts at the first signal; after it, in-flight requests are aborted.
  const hard = new AbortController();
  const forward = () => hard.abort();
  options.abortInFlight.addEventListener("abort", forward, { once: true });
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const onStop = () => {
    if (worker.inFlight > 0) {
      logger.info(
        `Stopping: waiting up to ${config.shutdownGraceMs} ms for ${worker.inFlight} in-flight ${worker.inFlight === 1 ? "delivery" : "deliveries"} (signal again to abort them)`,
      );
    }
    graceTimer = setTimeout(forward, config.shutdownGraceMs);
  };
  // A deleted or replaced SQLite file stops the worker as a signal would, then fails the run.
  const fileLost = new AbortController();
  let lostReason: string | null = null;
  const stop = AbortSignal.any([options.stop, fileLost.signal]);
  stop.addEventListener("abort", onStop, { once: true });
  const watching = new AbortController();
  const fileProblem = store.fileProblem?.bind(store);
  const fileWatch = fileProblem
    ? watchDatabaseFile({
        problem: fileProblem,
        onLost(reason) {
          lostReason = reason;
          logger.error(`${reason}: stopping the worker`);
          fileLost.abort();
        },
        signal: watching.signal,
        intervalMs: options.fileCheckMs,
      })
    : null;

  // Events another process recorded (a webhook disabled by hand in the app) wake no worker:
  // looked for on this timer too, so they go out within RELAY_INTERVAL_MS while the loop idles.
  const relayTimer = setInterval(() => worker.relay.kick(), RELAY_INTERVAL_MS);
  try {
    const signals = { signal: stop, abortInFlight: hard.signal };
    await (options.once ? worker.runOnce(signals) : worker.run(signals));
  } finally {
    clearTimeout(graceTimer);
    stop.removeEventListener("abort", onStop);
    watching.abort();
    await fileWatch;
    options.abortInFlight.removeEventListener("abort", forward);
    // Visible until here, while in-flight requests drained; a clean exit leaves no stale row.
    await heartbeat?.stop();
    await retention.idle();
    clearInterval(relayTimer);
    await worker.relay.idle();
    await server?.stop();
  }
  if (lostReason !== null) throw databaseFileError(lostReason);
  const c = worker.counts;
  if (c.abandoned > 0) {
    logger.warn(
      `Stopped with ${c.abandoned} ${c.abandoned === 1 ? "result" : "results"} not written (the database did not take ${c.abandoned === 1 ? "it" : "them"}): ${c.abandoned === 1 ? "its delivery is" : "their deliveries are"} sent again once the lease runs out`,
    );
  }
  logger.info(
    `Worker ${worker.id} stopped: ${c.successful} successful, ${c.retried} to retry, ${c.failed} failed, ${c.discarded} discarded, ${c.released} released`,
  );
}

/** GET /metrics on its own listener; a taken port is a one-line ConfigError naming the flag. */
async function serveMetrics(
  metrics: Metrics,
  listen: MetricsListen,
  logger: Logger,
): Promise<{ url: string; stop(): Promise<void> }> {
  const { createMetricsApp } = await import("../webhooks/observe/metrics-app.ts");
  const app = createMetricsApp(metrics, {
    // As the app: its own address as a name passes too (serveApp does the same).
    hostNames: {
      allowed: [listen.host.toLowerCase(), ...(listen.allowedHosts ?? [])],
      variable: METRICS_ALLOWED_HOSTS_VARIABLE,
    },
    adminToken: listen.adminToken,
    logger,
  });
  const server = serveOn(
    { host: listen.host, port: listen.port, flag: "--metrics-port", hostFlag: "--metrics-host" },
    app.fetch,
  );
  return {
    url: `${listenUrl(listen.host, server.port ?? listen.port)}/metrics`,
    async stop() {
      await server.stop(true);
    },
  };
}
