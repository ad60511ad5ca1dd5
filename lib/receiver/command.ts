import { type CommandDef, defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { helpMeta } from "../cli/help.ts";
import { type StopSignalsOptions, stopSignals } from "../cli/signals.ts";
import type { Env } from "../config/env.ts";
import { listenUrl, serveOn } from "../http/listen.ts";
import { VERSION } from "../version.ts";
import { createReceiver } from "./app.ts";
import { parseReceiverFlags, receiverArgs } from "./flags.ts";

/** Where the receiver prints: stdout, whose "error" event says the reader went away. */
export interface ReceiverOutput {
  write(text: string): unknown;
  on(event: "error", listener: (error: Error) => void): unknown;
  off(event: "error", listener: (error: Error) => void): unknown;
}

export interface ReceiverCommandOptions {
  out: ReceiverOutput;
  /** RECEIVER_SECRET: the secrets, so they need not sit in `ps` as --secret does. */
  env?: Env;
  /** Where SIGINT/SIGTERM come from (default: the process); see lib/cli/signals.ts. */
  signals?: StopSignalsOptions;
}

/**
 * `bun run receiver`: NetBox's webhook_receiver. Prints every request it gets and answers 200,
 * until Ctrl-C, SIGTERM, or its output goes away (`bun run receiver | head`): the output is the
 * product, so there is no point going on without a reader.
 */
export function createReceiverCommand(options: ReceiverCommandOptions): CommandDef {
  const { out } = options;
  return defineCommand({
    meta: helpMeta({
      name: "receiver",
      version: VERSION,
      description: "Print every HTTP request received, as NetBox's webhook_receiver does",
      notes: ["Exit codes: 0 stopped, 1 failed, 2 bad flag or address."],
    }),
    args: receiverArgs,
    async run({ args, rawArgs }) {
      rejectUnknown(rawArgs, receiverArgs);
      const flags = parseReceiverFlags(args, { env: options.env, rawArgs });
      const app = createReceiver({
        print: (text) => out.write(`${text}\n`),
        showHeaders: flags.showHeaders,
        pretty: flags.pretty,
        secrets: flags.secrets,
      });
      const server = serveOn({ host: flags.host, port: flags.port, flag: "--port" }, app.fetch);
      const signals = stopSignals(options.signals);
      const closed = Promise.withResolvers<"output closed">();
      const onClosed = () => closed.resolve("output closed");
      out.on("error", onClosed);
      try {
        out.write(
          `Listening on port ${listenUrl(flags.host, server.port ?? flags.port)}. Stop with CONTROL-C.\n`,
        );
        const reason = await Promise.race([signals.stopped, closed.promise]);
        if (reason !== "output closed") out.write("Exiting...\n");
      } finally {
        signals.dispose();
        out.off("error", onClosed);
        await server.stop(true);
      }
    },
  });
}
