import { createAppCommand } from "../lib/app/command.ts";
import { runScript } from "../lib/cli/run.ts";

await runScript(
  createAppCommand({
    env: process.env,
    untilStopped: () =>
      new Promise((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      }),
  }),
);
