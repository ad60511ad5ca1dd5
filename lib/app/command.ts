import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { type StopSignalsOptions, stopSignals } from "../cli/signals.ts";
import type { Env } from "../config/env.ts";
import { type EnvVarHelp, fieldEnvironment } from "../config/fields.ts";
import { loadOpsConfig, OPS_FIELDS } from "../config/ops.ts";
import type { Logger } from "../log.ts";
import { createOpsLogger } from "../log-format.ts";
import { DEFAULT_DATABASE_URL } from "../store/database-url.ts";
import { openStore } from "../store/open.ts";
import { poolMaxHelp } from "../store/postgres/budget.ts";
import { VERSION } from "../version.ts";
import { DEFAULT_HOST, DEFAULT_PORT, loadAppConfig } from "./config.ts";
import { serveApp } from "./serve.ts";

const appArgs: ArgsDef = {
  host: {
    type: "string",
    description: `address to listen on; other than loopback needs ADMIN_TOKEN [default ${DEFAULT_HOST}]`,
    valueHint: "address",
  },
  port: {
    type: "string",
    description: `port to listen on; 0 picks a free one [default ${DEFAULT_PORT}]`,
    valueHint: "port",
  },
};

/** The variables the app reads. */
export const APP_ENVIRONMENT: readonly EnvVarHelp[] = [
  {
    name: "ADMIN_TOKEN",
    description:
      "token for the admin and the API, 16+ characters without spaces (e.g. `openssl rand -hex 32`); required on a non-loopback --host [default none: open on loopback]",
  },
  {
    name: "APP_ALLOWED_HOSTS",
    description:
      "comma list of host names a reverse proxy forwards with (`.example.com` for subdomains too); localhost, IP addresses and --host always pass [default none]",
  },
  {
    name: "DATABASE_URL",
    description: `database: file path, sqlite:PATH or postgres://… [default ${DEFAULT_DATABASE_URL}]`,
  },
  poolMaxHelp("app"),
  ...fieldEnvironment(OPS_FIELDS).filter(
    (v) => v.name.startsWith("LOG_") || v.name === "WORKER_HEARTBEAT_MS",
  ),
];

export interface AppCommandOptions {
  env: Env;
  /** Where SIGINT/SIGTERM come from (default: the process); see lib/cli/signals.ts. */
  signals?: StopSignalsOptions;
  /** Resolves when the app should stop; default: the first stop signal. Tests run requests here. */
  untilStopped?: () => Promise<unknown>;
  logger?: Logger;
}

/** `bun run app`: serves the API and the admin until stopped. */
export function createAppCommand(options: AppCommandOptions): CommandDef {
  return defineCommand({
    meta: helpMeta({
      name: "app",
      version: VERSION,
      description: "The inventory application: JSON API at /api/items, admin at /admin",
      environment: APP_ENVIRONMENT,
      notes: ["Exit codes: 0 stopped, 1 failed, 2 bad flag, variable or start-up setting."],
    }),
    args: appArgs,
    async run({ args, rawArgs }) {
      rejectUnknown(rawArgs, appArgs);
      const config = loadAppConfig(options.env, {
        host: typeof args.host === "string" ? args.host : undefined,
        port: typeof args.port === "string" ? args.port : undefined,
      });
      const ops = loadOpsConfig(options.env);
      const logger = options.logger ?? createOpsLogger(ops.log);
      const store = await openStore(config.database, { logger, role: "app" });
      const signals = stopSignals(options.signals);
      try {
        const serving = serveApp({
          ...config,
          store,
          logger,
          heartbeatIntervalMs: ops.heartbeatIntervalMs,
        });
        logger.info(
          `Inventory app on ${serving.url}; admin: ${serving.url}/admin; metrics: ${serving.url}/metrics`,
        );
        if (config.adminToken === null) {
          logger.info("No ADMIN_TOKEN: open to anyone who can reach this loopback address");
        }
        await (options.untilStopped?.() ?? signals.stopped);
        logger.info("Stopping");
        await serving.stop();
      } finally {
        signals.dispose();
        await store.close();
      }
    },
  });
}
