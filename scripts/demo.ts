import { runScript } from "../lib/cli/run.ts";
import { createDemoCommand } from "../lib/demo/command.ts";

await runScript(createDemoCommand({ print: (text) => process.stdout.write(`${text}\n`) }), {
  env: process.env,
});
