import { type ArgsDef, type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { type StopSignalsOptions, stopSignals } from "../cli/signals.ts";
import { parsePort } from "../http/listen.ts";
import { createLogger, type Logger } from "../log.ts";
import { VERSION } from "../version.ts";
import { runDemo } from "./run.ts";

const demoArgs: ArgsDef = {
  port: {
    type: "string",
    description: "app port; a free one when taken [default 8000]",
    valueHint: "port",
  },
  "receiver-port": {
    type: "string",
    description: "receiver port; a free one when taken [default 9000]",
    valueHint: "port",
  },
};

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
      const appPort = parsePort(args.port as string | undefined, "--port", 8000);
      const receiverPort = parsePort(
        args["receiver-port"] as string | undefined,
        "--receiver-port",
        9000,
      );
      const signals = stopSignals(options.signals);
      try {
        await runDemo({
          appPort,
          receiverPort,
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
