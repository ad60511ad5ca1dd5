import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";

// Each test starts bun processes: about a second alone, several on a loaded 2-core machine.
setDefaultTimeout(30_000);

/** Reads a child's stdout as it comes, so a test can await a line instead of sleeping. */
function outputReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let text = "";
  return {
    get text() {
      return text;
    },
    async waitFor(pattern: RegExp): Promise<RegExpMatchArray> {
      for (;;) {
        const match = text.match(pattern);
        if (match) return match;
        const { done, value } = await reader.read();
        if (done) throw new Error(`Output ended without ${pattern}:\n${text}`);
        text += decoder.decode(value, { stream: true });
      }
    },
    async rest(): Promise<string> {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return text;
        text += decoder.decode(value, { stream: true });
      }
    },
  };
}

test("`bun run demo` delivers one change to the receiver, serves the admin, and a Ctrl-C (two SIGINTs) deletes its database and exits 0", async () => {
  const child = Bun.spawn(["bun", "scripts/demo.ts", "--port", "0", "--receiver-port", "0"], {
    cwd: join(import.meta.dir, "..", ".."),
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const out = outputReader(child.stdout);
    const [, adminUrl] = await out.waitFor(/Admin UI: +(http:\/\/127\.0\.0\.1:\d+\/admin)\n/);
    const [, databasePath] = await out.waitFor(/Database: +(\S+)/);
    await out.waitFor(/"POST \/webhook HTTP\/1\.1" 200 -/);
    await out.waitFor(/Signature: valid/);
    await out.waitFor(
      /worker: Delivery 1 \(item\.created\) to "demo receiver", attempt 1\/4 \(\d+ ms\): HTTP 200\n/,
    );

    const page = await (await fetch(`${adminUrl}/background-tasks`)).text();
    expect(page).toMatch(/<strong>1<\/strong>successful/);
    expect(existsSync(databasePath ?? "")).toBe(true);

    // One Ctrl-C under `bun run` arrives twice: from the terminal and forwarded by bun run.
    child.kill("SIGINT");
    child.kill("SIGINT");
    expect(await child.exited).toBe(0);
    expect(await out.rest()).toContain("Demo stopped.");
    expect(existsSync(databasePath ?? "")).toBe(false);
  } finally {
    child.kill("SIGKILL");
  }
});
