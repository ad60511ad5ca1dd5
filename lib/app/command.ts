import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import type { Env } from "../config/env.ts";
import { loadOpsConfig } from "../config/ops.ts";
import type { Logger } from "../log.ts";
import { createOpsLogger } from "../log-format.ts";
import { openStore } from "../store/open.ts";
import { loadAppConfig } from "./config.ts";
import { serveApp } from "./serve.ts";

const appArgs: ArgsDef = {
  host: { type: "string", description: "address to listen on (default 127.0.0.1)" },
  port: { type: "string", description: "port to listen on (default 8000)" },
};

export interface AppCommandOptions {
  env: Env;
  /** Resolves when the app should stop (scripts: the first SIGINT or SIGTERM). */
  untilStopped: () => Promise<unknown>;
  logger?: Logger;
}

/** `bun run app`: serves the API and the admin until stopped. */
export function createAppCommand(options: AppCommandOptions): CommandDef {
  return defineCommand({
    meta: {
      name: "app",
      description: "The inventory application: JSON API at /api/items, admin at /admin",
    },
    args: appArgs,
    async run({ args }) {
      const config = loadAppConfig(options.env, {
        host: typeof args.host === "string" ? args.host : undefined,
        port: typeof args.port === "string" ? args.port : undefined,
      });
      const ops = loadOpsConfig(options.env);
      const logger = options.logger ?? createOpsLogger(ops.log);
      const store = await openStore(config.database, { logger });
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
        await options.untilStopped();
        logger.info("Stopping");
        await serving.stop();
      } finally {
        await store.close();
      }
    },
  });
}
