import { dieWithParent } from "../../lib/webhooks/rendering/render-parent.ts";

/**
 * A renderer child that starts as the real one does and says it is ready, then stops itself
 * (SIGSTOP) at its first job: a render starved of CPU, as on a machine too busy to run it. The
 * parent's wall-clock ceiling is what ends it (SIGKILL reaches a stopped process).
 */
dieWithParent(Number(process.argv[2]));
process.on("message", () => {
  process.kill(process.pid, "SIGSTOP");
});
process.send?.({ ready: true });
