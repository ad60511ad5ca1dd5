import { runScript } from "../lib/cli/run.ts";
import { createDigestCommand } from "../lib/digest/command.ts";
import { streamSink } from "../lib/digest/render/output.ts";

await runScript(
  createDigestCommand({
    env: process.env,
    stdout: streamSink(process.stdout),
    stderr: process.stderr,
    // 128 + SIGINT, as a shell reports a command stopped by Ctrl-C.
    onInterrupted: () => {
      process.exitCode = 130;
    },
  }),
  { env: process.env },
);
