import { runScript } from "../lib/cli/run.ts";
import { createWorkerCommand } from "../lib/worker/command.ts";

await runScript(createWorkerCommand({ env: process.env }), { env: process.env });
