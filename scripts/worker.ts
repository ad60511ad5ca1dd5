import { runScript } from "../lib/cli/run.ts";
import { createWorkerCommand } from "../lib/worker/command.ts";

await runScript(
  createWorkerCommand({
    env: process.env,
    onStopSignal(handler) {
      process.on("SIGINT", handler);
      process.on("SIGTERM", handler);
      return () => {
        process.off("SIGINT", handler);
        process.off("SIGTERM", handler);
      };
    },
  }),
);
