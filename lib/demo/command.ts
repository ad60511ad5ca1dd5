import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { type StopSignalsOptions, stopSignals } from "../cli/signals.ts";
import { intInRange } from "../config/env.ts";
import { type Field, fieldArgs, loadFields } from "../config/fields.ts";
import { createLogger, type Logger } from "../log.ts";
import { VERSION } from "../version.ts";
import { runDemo } from "./run.ts";

/** The demo's flags: preferred ports, a free one used instead when taken. */
export const DEMO_FIELDS: readonly Field<"appPort" | "receiverPort">[] = [
  {
    key: "appPort",
    flag: "port",
    schema: intInRange(0, 65535),
    default: 8000,
    hint: "port",
    description: "app port; a free one when taken",
  },
  {
    key: "receiverPort",
    flag: "receiver-port",
    schema: intInRange(0, 65535),
    default: 9000,
    hint: "port",
    description: "receiver port; a free one when taken",
  },
];

const demoArgs: ArgsDef = fieldArgs(DEMO_FIELDS);

export interface DemoCommandOptions {
  /** Lines for the person watching (stdout). */
  print: (text: string) => void;
  logger?: Logger;
  /** Where SIGINT/SIGTERM come from (default: the process); see lib/cli/signals.ts. */
  signals?: StopSignalsOptions;
  /** Resolves when the demo should stop; default: the first stop signal. */
  untilStopped?: () => Promise<unknown>;
}

/** `bun run demo`: receiver, app and worker on a throwaway database; Ctrl-C deletes it and exits 0. */
export function createDemoCommand(options: DemoCommandOptions): CommandDef {
  return defineCommand({
    meta: helpMeta({
      name: "demo",
      version: VERSION,
      description: "Receiver, app and worker together on a throwaway database: watch a change flow",
      notes: ["Ctrl-C stops all three, deletes the database and exits 0."],
    }),
    args: demoArgs,
    async run({ args, rawArgs }) {
      rejectUnknown(rawArgs, demoArgs);
      const { values } = loadFields(DEMO_FIELDS, {}, args);
      const signals = stopSignals(options.signals);
      try {
        await runDemo({
          appPort: values.appPort as number,
          receiverPort: values.receiverPort as number,
          print: options.print,
          logger: options.logger ?? createLogger(),
          untilStopped: options.untilStopped ?? (() => signals.stopped),
        });
      } finally {
        signals.dispose();
      }
    },
  });
}
