import { defineCommand } from "citty";
import { runScript } from "../lib/cli/run.ts";
import { createReceiver } from "../lib/receiver/app.ts";
import { listenUrl, parseReceiverFlags, receiverArgs } from "../lib/receiver/flags.ts";

// NetBox's webhook_receiver: prints every request it gets on stdout, answers 200.
const command = defineCommand({
  meta: {
    name: "receiver",
    description: "Print every HTTP request received, as NetBox's webhook_receiver does",
  },
  args: receiverArgs,
  async run({ args }) {
    const flags = parseReceiverFlags(args);
    const app = createReceiver({
      print: (text) => process.stdout.write(`${text}\n`),
      showHeaders: flags.showHeaders,
      pretty: flags.pretty,
      secret: flags.secret,
    });
    const server = Bun.serve({ hostname: flags.host, port: flags.port, fetch: app.fetch });
    const url = listenUrl(server.hostname ?? flags.host, server.port ?? flags.port);
    process.stdout.write(`Listening on port ${url}. Stop with CONTROL-C.\n`);
    await nextSignal(["SIGINT", "SIGTERM"]);
    process.stdout.write("Exiting...\n");
    await server.stop(true);
  },
});

/** Resolves on the first of `signals`; a second one then gets the default (immediate) exit. */
function nextSignal(signals: NodeJS.Signals[]): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    function handler(signal: NodeJS.Signals) {
      for (const name of signals) process.off(name, handler);
      resolve(signal);
    }
    for (const name of signals) process.on(name, handler);
  });
}

await runScript(command);
