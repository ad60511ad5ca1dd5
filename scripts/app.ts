import { createAppCommand } from "../lib/app/command.ts";
import { runScript } from "../lib/cli/run.ts";

await runScript(createAppCommand({ env: process.env }), { env: process.env });
