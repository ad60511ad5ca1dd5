import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { hasTool } from "../fakes/system-tools.ts";
import { startInTerminal } from "../fakes/terminal.ts";

const ROOT = join(import.meta.dir, "..", "..");
// A shell, `bun run` and the command in a tmux pane: seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);
const HAS_TMUX = hasTool("tmux", "help in a real terminal");
const cleanups: Array<() => unknown> = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

/** The text between two marker lines the shell echoed. */
function between(text: string, start: string, end: string): string {
  const from = text.indexOf(`${start}\n`);
  const to = text.indexOf(`${end}\n`, from);
  if (from === -1 || to === -1) throw new Error(`no ${start} … ${end} in:\n${text}`);
  return text.slice(from + start.length + 1, to);
}

test.skipIf(!HAS_TMUX)(
  "`bun run worker --help` is coloured in a real terminal, plain with NO_COLOR=1 or when piped",
  async () => {
    // --silent keeps bun's own coloured "$ bun scripts/worker.ts" line out; NO_COLOR is unset
    // explicitly so the colour case does not depend on the environment the tests run in.
    const help = "bun run --silent worker --help";
    const terminal = startInTerminal(
      [
        `echo @TTY; env -u NO_COLOR ${help}`,
        `echo @NO_COLOR; NO_COLOR=1 ${help}`,
        `echo @PIPED; env -u NO_COLOR ${help} | cat`,
        `echo @END`,
      ].join("; "),
      ROOT,
    );
    cleanups.push(() => terminal.close());
    const text = await terminal.until(/@END\n/);

    const tty = between(text, "@TTY", "@NO_COLOR");
    expect(tty).toContain("\u001b[1mUsage:\u001b[22m worker [options]");
    expect(tty).toContain("\u001b[36m--once\u001b[39m");

    for (const plain of [between(text, "@NO_COLOR", "@PIPED"), between(text, "@PIPED", "@END")]) {
      expect(plain).toContain("Usage: worker [options]");
      expect(plain).toContain("  --once  ");
      expect(plain).not.toContain("\u001b");
    }
  },
);
