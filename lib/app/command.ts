import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { type StopSignalsOptions, stopSignals } from "../cli/signals.ts";
import type { Env } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";
import { type EnvVarHelp, fieldArgs, fieldEnvironment } from "../config/fields.ts";
import { loadOperabilityConfig, OPERABILITY_FIELDS } from "../config/operability.ts";
import type { Logger } from "../log.ts";
import { createFormattedLogger } from "../log-format.ts";
import { type DatabaseTarget, describeDatabase } from "../store/database-url.ts";
import { openStore } from "../store/open.ts";
import { poolMaxHelp } from "../store/postgres/budget.ts";
import { VERSION } from "../version.ts";
import type { Store } from "../webhooks/ports.ts";
import {
  previewTemplateRenderer,
  sharedTemplateRenderer,
} from "../webhooks/rendering/render-process.ts";
import { accessMode, accessModeLine } from "./auth/access-mode.ts";
import { createTokensCommand } from "./auth/tokens-command.ts";
import { createBackupCommand } from "./backup-command.ts";
import { APP_FIELDS, loadAppConfig } from "./config.ts";
import { serveApp } from "./serve.ts";

const appArgs: ArgsDef = fieldArgs(APP_FIELDS);

/** The variables the app reads besides its flags. */
export const APP_ENVIRONMENT: readonly EnvVarHelp[] = [
  ...fieldEnvironment(APP_FIELDS),
  poolMaxHelp("app"),
  ...fieldEnvironment(OPERABILITY_FIELDS).filter(
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

/**
 * `bun run app`: serves the API and the admin until stopped (`serve`, the default), or runs one
 * of its upkeep commands (`backup FILE`, `tokens add|list|revoke`).
 */
export function createAppCommand(options: AppCommandOptions): CommandDef {
  return defineCommand({
    meta: helpMeta({
      name: "app",
      version: VERSION,
      description:
        "The inventory application: JSON API at /api/items, admin at /admin (serve, the default), and its upkeep",
      environment: APP_ENVIRONMENT,
      notes: ["Exit codes: 0 stopped, 1 failed, 2 bad flag, variable or start-up setting."],
    }),
    // The serve flags, so that `app --port 0` is read as serve's flag and value, not a command.
    args: appArgs,
    subCommands: {
      serve: createServeCommand(options),
      backup: createBackupCommand({ env: options.env }),
      tokens: createTokensCommand({ env: options.env }),
    },
    default: "serve",
    // Flags without a command are serve's: a typo there is named as serve names it, not taken
    // for a command (`app --prot 1` is "Unknown option --prot", not "Unknown command 1").
    setup({ rawArgs }) {
      const first = rawArgs.find((arg) => !arg.startsWith("-"));
      if (first !== "serve" && first !== "backup" && first !== "tokens") {
        rejectUnknown(rawArgs, appArgs);
      }
    },
  });
}

/** `bun run app [serve]`: serves the API and the admin until stopped. */
function createServeCommand(options: AppCommandOptions): CommandDef {
  return defineCommand({
    meta: helpMeta({
      name: "serve",
      version: VERSION,
      description: "Serve the JSON API at /api/items and the admin at /admin (the default command)",
      environment: APP_ENVIRONMENT,
      notes: ["Exit codes: 0 stopped, 1 failed, 2 bad flag, variable or start-up setting."],
    }),
    args: appArgs,
    async run({ args, rawArgs }) {
      rejectUnknown(rawArgs, appArgs);
      const config = loadAppConfig(options.env, args);
      const operability = loadOperabilityConfig(options.env);
      const logger = options.logger ?? createFormattedLogger(operability.log);
      const store = await openStore(config.database, { logger, role: "app" });
      await refuseUnwritable(store, config.database);
      // At start, the renderer processes: the pool renders changes, the one for people compiles
      // and tries what is typed in a save or a Preview. The app's thread never loads the engine.
      void sharedTemplateRenderer().prepare();
      void previewTemplateRenderer().prepare();
      const signals = stopSignals(options.signals);
      try {
        const serving = serveApp({
          ...config,
          store,
          logger,
          heartbeatIntervalMs: operability.heartbeatIntervalMs,
        });
        logger.info(
          `Inventory app on ${serving.url}; admin: ${serving.url}/admin; metrics: ${serving.url}/metrics; database ${describeDatabase(config.database)}`,
        );
        const tokenCount = (await store.tokens.list()).length;
        logger.info(accessModeLine(accessMode(config.adminToken, tokenCount), serving.url));
        await (options.untilStopped?.() ?? signals.stopped);
        // The database closes only after the requests in flight are answered (finally below).
        const inFlight = serving.inFlight;
        const stopped = serving.stop({ signal: signals.abort });
        logger.info(
          inFlight === 0
            ? "Stopping"
            : `Stopping: no new requests; answering the ${inFlight} in flight first (a second Ctrl-C cuts them off)`,
        );
        await stopped;
      } finally {
        signals.dispose();
        await store.close();
      }
    },
  });
}

/**
 * The app checks at start that its database takes writes: SQLite opens a file this user may only
 * read without a word, and every change would then fail. One line naming it, exit 2.
 */
async function refuseUnwritable(store: Store, target: DatabaseTarget): Promise<void> {
  const problem = await store.readiness();
  if (problem === null) return;
  await store.close();
  const where =
    target.kind === "sqlite" ? `DATABASE_URL=${JSON.stringify(target.path)}` : "DATABASE_URL";
  throw new ConfigError(
    `${where}: cannot write the ${describeDatabase(target)} database: ${problem}`,
  );
}
