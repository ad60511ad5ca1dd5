import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { outputReader } from "../fakes/output-reader.ts";

// Each test starts bun processes: about a second alone, several on a loaded 2-core machine.
setDefaultTimeout(30_000);

test("`bun run demo` delivers one change to the receiver, serves the admin, and a Ctrl-C (two SIGINTs) deletes its database and exits 0", async () => {
  const child = Bun.spawn(["bun", "scripts/demo.ts", "--port", "0", "--receiver-port", "0"], {
    cwd: join(import.meta.dir, "..", ".."),
    stdout: "pipe",
    stderr: "pipe",
  });
  try {
    const out = outputReader(child.stdout);
    const [, adminUrl] = await out.until(/Admin UI: +(http:\/\/127\.0\.0\.1:\d+\/admin)\n/);
    const [, databasePath] = await out.until(/Database: +(\S+)/);
    await out.until(/"POST \/webhook HTTP\/1\.1" 200 -/);
    await out.until(/Signature: valid/);
    await out.until(
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
