import { type CommandDef, defineCommand } from "citty";
import { helpMeta } from "../cli/help.ts";
import { DEFAULT_DATABASE_URL, describeDatabase } from "../store/database-url.ts";
import { poolMaxHelp } from "../store/postgres/budget.ts";
import { VERSION } from "../version.ts";
import { loadDatabaseTarget } from "../worker/config.ts";
import type { CliDeps } from "./context.ts";
import { deliveriesCommand, showCommand } from "./deliveries-command.ts";
import { emitCommand, purgeCommand, retryCommand, statsCommand } from "./delivery-commands.ts";
import { replayCommand } from "./replay-command.ts";
import {
  addCommand,
  disableCommand,
  enableCommand,
  listCommand,
  removeCommand,
  updateCommand,
} from "./webhook-commands.ts";
import { workersCommand } from "./workers-command.ts";

export type { CliDeps } from "./context.ts";

/** `bun run webhooks <command>`: manage webhooks and deliveries. */
export function createWebhooksCommand(deps: CliDeps): CommandDef {
  return defineCommand({
    meta: helpMeta({
      name: "webhooks",
      version: VERSION,
      description: "Manage webhooks and their deliveries (DATABASE_URL names the database)",
      environment: [
        {
          name: "DATABASE_URL",
          description: `database: file path, sqlite:PATH or postgres://… (--database-url overrides it) [default ${DEFAULT_DATABASE_URL}]`,
        },
        poolMaxHelp("command"),
      ],
      notes: [
        `Database now: ${databaseNow(deps)}; --verbose says which one each command uses.`,
        "Exit codes: 0 done, 1 failed, 2 bad flag, argument, id or variable.",
      ],
    }),
    subCommands: {
      add: addCommand(deps),
      list: listCommand(deps),
      update: updateCommand(deps),
      enable: enableCommand(deps),
      disable: disableCommand(deps),
      remove: removeCommand(deps),
      emit: emitCommand(deps),
      deliveries: deliveriesCommand(deps),
      show: showCommand(deps),
      retry: retryCommand(deps),
      replay: replayCommand(deps),
      stats: statsCommand(deps),
      purge: purgeCommand(deps),
      workers: workersCommand(deps),
    },
  });
}

/** The database DATABASE_URL names from here (the help's note), or why it names none. */
function databaseNow(deps: CliDeps): string {
  try {
    return describeDatabase(loadDatabaseTarget(deps.env));
  } catch (error) {
    return `none: ${error instanceof Error ? error.message : String(error)}`;
  }
}
