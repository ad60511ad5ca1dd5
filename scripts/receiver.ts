import { runScript } from "../lib/cli/run.ts";
import { createReceiverCommand } from "../lib/receiver/command.ts";

await runScript(createReceiverCommand({ out: process.stdout, env: process.env }), {
  env: process.env,
});
