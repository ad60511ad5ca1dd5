import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { SAME_KEYPRESS_MS, type StopSignalsOptions, stopSignals } from "../cli/signals.ts";
import type { Env } from "../config/env.ts";
import { type EnvVarHelp, fieldArgs, fieldEnvironment } from "../config/fields.ts";
import { loadOperabilityConfig, OPERABILITY_FIELDS } from "../config/operability.ts";
import { withoutEnvironmentProxies } from "../http/proxy.ts";
import type { Logger } from "../log.ts";
import { createFormattedLogger } from "../log-format.ts";
import { DEFAULT_DATABASE_URL } from "../store/database-url.ts";
import { openStore } from "../store/open.ts";
import { poolMaxHelp } from "../store/postgres/budget.ts";
import { VERSION } from "../version.ts";
import type { Store } from "../webhooks/ports.ts";
import {
  databaseSource,
  loadWorkerConfig,
  loadWorkerMetrics,
  WORKER_FIELDS,
  WORKER_METRICS_FIELDS,
} from "./config.ts";
import { runWorker } from "./process.ts";

export function workerArgs(): ArgsDef {
  return {
    once: { type: "boolean", description: "deliver what is due now, then exit" },
    "database-url": {
      type: "string",
      description: `database: file path, sqlite:PATH or postgres://… [env DATABASE_URL, default ${DEFAULT_DATABASE_URL}]`,
      valueHint: "url",
    },
    ...fieldArgs(WORKER_FIELDS),
    ...fieldArgs(WORKER_METRICS_FIELDS),
    verbose: {
      type: "boolean",
      description: "log every attempt, successes included (as LOG_LEVEL=debug)",
    },
  };
}

/** The variables the worker reads besides those its flags name. */
export const WORKER_ENVIRONMENT: readonly EnvVarHelp[] = [
  {
    name: "WEBHOOK_ALLOWED_HOSTS",
    description:
      "comma list of hosts, host:port or CIDR the worker may send to although private or loopback [default none]",
  },
  {
    name: "WEBHOOK_PROXY_URL",
    description:
      "http:// or https:// proxy deliveries go through (user:password@ allowed, never shown); HTTP_PROXY, HTTPS_PROXY and NO_PROXY are not used [default none]",
  },
  {
    name: "WEBHOOK_NO_PROXY",
    description:
      "comma list of host names (with their subdomains), IPs or CIDR sent to directly; loopback always is [default none]",
  },
  ...fieldEnvironment(WORKER_FIELDS),
  poolMaxHelp("worker"),
  {
    name: "ADMIN_TOKEN",
    description: "bearer token a scrape of --metrics-port on a non-loopback address must carry",
  },
  ...fieldEnvironment(WORKER_METRICS_FIELDS),
  ...fieldEnvironment(OPERABILITY_FIELDS),
];

export interface WorkerCommandOptions {
  env: Env;
  /** SIGINT/SIGTERM come from here (default: the process); see lib/cli/signals.ts. */
  signals?: StopSignalsOptions;
  logger?: (verbose: boolean) => Logger;
  fetch?: typeof fetch;
}

/** `bun run worker`: sends queued deliveries until SIGINT/SIGTERM, or drains them with --once. */
export function createWorkerCommand(options: WorkerCommandOptions): CommandDef {
  const args = workerArgs();
  return defineCommand({
    meta: helpMeta({
      name: "worker",
      version: VERSION,
      description: "Send queued webhook deliveries (SIGINT/SIGTERM: finish in-flight, then exit)",
      environment: WORKER_ENVIRONMENT,
      notes: [
        "Flags override the variables named in brackets. A second Ctrl-C or SIGTERM aborts the requests in flight.",
        "Exit codes: 0 stopped or drained, 1 failed, 2 bad flag, variable or start-up setting.",
      ],
    }),
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      // Bun's fetch would read these on every request by itself: only WEBHOOK_PROXY_URL counts.
      const ignoredProxies = withoutEnvironmentProxies(options.env);
      const config = loadWorkerConfig(options.env, flags);
      const operability = loadOperabilityConfig(options.env);
      const metrics = loadWorkerMetrics(options.env, flags);
      const verbose = flags.verbose === true || operability.log.level >= 4;
      const logger =
        options.logger?.(verbose) ??
        createFormattedLogger({
          format: operability.log.format,
          level: verbose ? 4 : operability.log.level,
        });
      if (ignoredProxies.length > 0) {
        logger.info(
          `${ignoredProxies.join(", ")} set in the environment: not used by the worker (deliveries go through WEBHOOK_PROXY_URL only${config.proxy ? "" : ", which is not set"})`,
        );
      }
      // First signal: stop claiming; a later one: abort the requests in flight.
      const signals = stopSignals({
        ...options.signals,
        onRepeat: (name) =>
          logger.debug(
            `${name} again within ${options.signals?.windowMs ?? SAME_KEYPRESS_MS} ms: taken as the same Ctrl-C (signal again later to abort)`,
          ),
      });
      let store: Store;
      try {
        // The logger also tells when a PostgreSQL LISTEN connection is lost and back; a stop
        // signal ends the wait for a full or unreachable server at start-up, and so does its
        // end with --once (a cron run must not hang there).
        store = await openStore(config.database, {
          pollMs: config.pollMs,
          logger,
          role: "worker",
          oneShot: flags.once === true,
          signal: signals.stop,
          source: databaseSource(flags),
        });
      } catch (error) {
        signals.dispose();
        if (signals.stop.aborted) return; // stopped while waiting for the database
        throw error;
      }
      try {
        await runWorker({
          store,
          config,
          logger,
          once: flags.once === true,
          stop: signals.stop,
          abortInFlight: signals.abort,
          fetch: options.fetch,
          verbose,
          operability,
          metrics: metrics ?? undefined,
        });
      } finally {
        signals.dispose();
        await store.close();
      }
    },
  });
}
