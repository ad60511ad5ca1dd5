import { defineCommand } from "citty";
import { runScript } from "../lib/cli/run.ts";
import { listenUrl } from "../lib/http/listen.ts";
import { createReceiver } from "../lib/receiver/app.ts";
import { parseReceiverFlags, receiverArgs } from "../lib/receiver/flags.ts";

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
    const reason = await nextStop(["SIGINT", "SIGTERM"]);
    if (reason !== "stdout closed") process.stdout.write("Exiting...\n");
    await server.stop(true);
  },
});

/**
 * Resolves on the first of `signals`, or when stdout goes away (`bun run receiver | head`): the
 * output is the product, so there is no point going on. A second signal then gets the default
 * (immediate) exit.
 */
function nextStop(signals: NodeJS.Signals[]): Promise<NodeJS.Signals | "stdout closed"> {
  return new Promise((resolve) => {
    function stop(reason: NodeJS.Signals | "stdout closed") {
      for (const name of signals) process.off(name, stop);
      process.stdout.off("error", closed);
      resolve(reason);
    }
    function closed() {
      stop("stdout closed");
    }
    for (const name of signals) process.on(name, stop);
    process.stdout.on("error", closed);
  });
}

await runScript(command);
