import { dieWithParent } from "../../lib/webhooks/rendering/render-parent.ts";

/**
 * A renderer child that starts as the real one does (dieWithParent first), says its pid on
 * stderr, then spins on its thread forever without answering: a render that never ends, whose
 * JavaScript can neither notice nor be told that its parent died.
 */
dieWithParent(Number(process.argv[2]));
process.stderr.write(`spinning ${process.pid}\n`);
for (;;) {
  // spin
}
