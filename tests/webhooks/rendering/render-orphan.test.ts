import { afterEach, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

// Processes start in about 0.1 s alone, seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);

const ROOT = join(import.meta.dir, "..", "..", "..");
const SPINNING = join(import.meta.dir, "..", "..", "fakes", "spinning-render-child.ts");
const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/** Whether `pid` is still a live process (a zombie counts as gone). */
function alive(pid: number): boolean {
  if (!existsSync(`/proc/${pid}/stat`)) return false;
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
}

/** Polls until `pid` is gone or `withinMs` passed; the time it took, or null. */
async function goneWithin(pid: number, withinMs: number): Promise<number | null> {
  const started = performance.now();
  while (performance.now() - started < withinMs) {
    if (!alive(pid)) return performance.now() - started;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}

test.if(process.platform === "linux")(
  "a renderer child busy on its thread dies with its parent's kill -9, not when its render ends",
  async () => {
    // The parent starts a renderer whose child spins at once; 30 s pass before it would give up.
    const parent = Bun.spawn(
      [
        process.execPath,
        "-e",
        `import { createTemplateRenderer } from "${join(ROOT, "lib/webhooks/rendering/render-process.ts")}";
         createTemplateRenderer({ child: ${JSON.stringify(SPINNING)} }).prepare();
         setInterval(() => {}, 1000);`,
      ],
      { stdout: "ignore", stderr: "pipe" },
    );
    leftovers.push(parent.pid);
    let text = "";
    const decoder = new TextDecoder();
    for await (const chunk of parent.stderr) {
      text += decoder.decode(chunk, { stream: true });
      if (/spinning \d+\n/.test(text)) break;
    }
    const child = Number(text.match(/spinning (\d+)/)?.[1]);
    leftovers.push(child);
    expect(alive(child)).toBe(true);
    parent.kill("SIGKILL");
    await parent.exited;
    // The kernel's parent-death signal: well under a second, busy loop or not.
    expect(await goneWithin(child, 10_000)).not.toBeNull();
  },
);
