import type { ArgsDef } from "citty";
import { defineCommand } from "citty";
import { runScript } from "../lib/cli/run.ts";
import { runDemo } from "../lib/demo/run.ts";
import { parsePort } from "../lib/http/listen.ts";
import { createLogger } from "../lib/log.ts";

const args: ArgsDef = {
  port: { type: "string", description: "app port; a free one when taken (default 8000)" },
  "receiver-port": {
    type: "string",
    description: "receiver port; a free one when taken (default 9000)",
  },
};

const command = defineCommand({
  meta: {
    name: "demo",
    description: "Receiver, app and worker together on a throwaway database: watch a change flow",
  },
  args,
  async run({ args }) {
    await runDemo({
      appPort: parsePort(args.port as string | undefined, "--port", 8000),
      receiverPort: parsePort(args["receiver-port"] as string | undefined, "--receiver-port", 9000),
      print: (text) => process.stdout.write(`${text}\n`),
      logger: createLogger(),
      untilStopped: () =>
        new Promise((resolve) => {
          process.once("SIGINT", resolve);
          process.once("SIGTERM", resolve);
        }),
    });
  },
});

await runScript(command);
