import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import type { Env } from "../config/env.ts";
import { loadOpsConfig } from "../config/ops.ts";
import type { Logger } from "../log.ts";
import { createOpsLogger } from "../log-format.ts";
import { openStore } from "../store/open.ts";
import { VERSION } from "../version.ts";
import {
  DEFAULT_METRICS_HOST,
  loadWorkerConfig,
  loadWorkerMetrics,
  WORKER_FIELDS,
} from "./config.ts";
import { runWorker } from "./process.ts";

export function workerArgs(): ArgsDef {
  const args: ArgsDef = {
    once: { type: "boolean", description: "deliver what is due now, then exit" },
    "database-url": {
      type: "string",
      description: "database: file path, sqlite:PATH or postgres://… [DATABASE_URL]",
      valueHint: "url",
    },
  };
  for (const field of WORKER_FIELDS) {
    if (!field.flag) continue;
    args[field.flag] = {
      type: "string",
      description: `${field.description} [${field.env}]`,
      valueHint: "n",
    };
  }
  args["metrics-port"] = {
    type: "string",
    description: "serve GET /metrics (Prometheus) on this port; 0 picks a free one",
    valueHint: "port",
  };
  args["metrics-host"] = {
    type: "string",
    description: `address for --metrics-port (default ${DEFAULT_METRICS_HOST}; others need ADMIN_TOKEN)`,
    valueHint: "host",
  };
  args.verbose = {
    type: "boolean",
    description: "log every attempt, successes included (as LOG_LEVEL=debug)",
  };
  return args;
}

export interface WorkerCommandOptions {
  env: Env;
  /** First call: stop claiming; second: abort in-flight requests. Scripts bind SIGINT/SIGTERM. */
  onStopSignal(handler: () => void): () => void;
  logger?: (verbose: boolean) => Logger;
  fetch?: typeof fetch;
}

/** `bun run worker`: sends queued deliveries until SIGINT/SIGTERM, or drains them with --once. */
export function createWorkerCommand(options: WorkerCommandOptions): CommandDef {
  return defineCommand({
    meta: {
      name: "worker",
      version: VERSION,
      description: "Send queued webhook deliveries (SIGINT/SIGTERM: finish in-flight, then exit)",
    },
    args: workerArgs(),
    async run({ args }) {
      const config = loadWorkerConfig(options.env, args);
      const ops = loadOpsConfig(options.env);
      const metrics = loadWorkerMetrics(options.env, args);
      const verbose = args.verbose === true || ops.log.level >= 4;
      const logger =
        options.logger?.(verbose) ??
        createOpsLogger({ format: ops.log.format, level: verbose ? 4 : ops.log.level });
      // The logger also tells when a PostgreSQL LISTEN connection is lost and back.
      const store = await openStore(config.database, { pollMs: config.pollMs, logger });
      const stop = new AbortController();
      const abortInFlight = new AbortController();
      const unsubscribe = options.onStopSignal(() =>
        stop.signal.aborted ? abortInFlight.abort() : stop.abort(),
      );
      try {
        await runWorker({
          store,
          config,
          logger,
          once: args.once === true,
          stop: stop.signal,
          abortInFlight: abortInFlight.signal,
          fetch: options.fetch,
          verbose,
          ops,
          metrics: metrics ?? undefined,
        });
      } finally {
        unsubscribe();
        await store.close();
      }
    },
  });
}
