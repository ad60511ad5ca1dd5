import { runScript } from "../lib/cli/run.ts";
import { createWebhooksCommand } from "../lib/webhooks-cli/command.ts";

await runScript(
  createWebhooksCommand({
    env: process.env,
    out: (text) => process.stdout.write(`${text}\n`),
    err: (text) => process.stderr.write(`${text}\n`),
  }),
  { env: process.env },
);
