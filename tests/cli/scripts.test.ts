import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { outputOf } from "../fakes/process-output.ts";
import { change } from "../store/contract.ts";

// Each test starts bun processes: about a second alone, several on a loaded 2-core machine.
setDefaultTimeout(30_000);

const ROOT = join(import.meta.dir, "..", "..");

async function run(script: string, args: string[], env: Record<string, string> = {}) {
  const child = Bun.spawn(["bun", `scripts/${script}.ts`, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "", FORCE_COLOR: "", DATABASE_URL: ":memory:", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  return outputOf(child);
}

describe("every command", () => {
  test.each([
    ["worker", ["--onec"], "Unknown option --onec: did you mean --once?"],
    ["worker", ["now"], 'Unexpected argument "now"'],
    [
      "worker",
      ["--metrics-port", "http"],
      '--metrics-port="http" is invalid: expected a whole number from 0 to 65535',
    ],
    [
      "worker",
      ["--metrics-port", "0", "--metrics-host", "a b"],
      '--metrics-host="a b" is invalid: expected an address such as 127.0.0.1 or ::1',
    ],
    ["app", ["--prot", "8001"], "Unknown option --prot: did you mean --port?"],
    ["receiver", ["--secert", "x"], "Unknown option --secert: did you mean --secret?"],
    [
      "demo",
      ["--receiver-prot=0"],
      "Unknown option --receiver-prot: did you mean --receiver-port?",
    ],
    ["digest", ["--formt", "json"], "Unknown option --formt"],
    ["webhooks", ["list", "--jsno"], "Unknown option --jsno: did you mean --json?"],
    ["webhooks", ["stats", "extra"], 'Unexpected argument "extra"'],
    ["webhooks", ["--jsno", "stats"], "Unknown option --jsno before the command"],
    ["webhooks", [], "Give a command: add, list,"],
  ])("%s %p exits 2 at once with one line naming the mistake", async (script, args, message) => {
    const { stdout, stderr, code } = await run(script, args);
    expect(code).toBe(2);
    expect(stderr).toStartWith(`error: ${message}`);
    expect(stderr.trimEnd().split("\n")).toHaveLength(1);
    expect(stdout).toBe("");
  });
});

describe("help", () => {
  test("`webhooks add --help` and `webhooks help add` print the help of add, not the top level", async () => {
    const viaFlag = await run("webhooks", ["add", "--help"]);
    const viaHelp = await run("webhooks", ["help", "add"]);
    expect(viaFlag.code).toBe(0);
    expect(viaFlag.stdout).toContain("Usage: webhooks add [options]");
    expect(viaFlag.stdout).toContain("--url=<url>");
    expect(viaFlag.stdout).not.toContain("Commands:");
    expect(viaHelp).toEqual(viaFlag);
  });

  test("`webhooks help nope` names the unknown command and exits 2", async () => {
    const { code, stderr } = await run("webhooks", ["help", "nope"]);
    expect(code).toBe(2);
    expect(stderr).toBe('error: Unknown command "nope" (see --help)\n');
  });

  test.each([
    ["worker", ["--help"]],
    ["app", ["--help"]],
    ["receiver", ["--help"]],
    ["demo", ["--help"]],
    ["webhooks", ["--help"]],
    ["webhooks", ["deliveries", "--help"]],
  ])("%s %p written to a pipe has no escape codes", async (script, args) => {
    const { stdout, code } = await run(script, args);
    expect(code).toBe(0);
    expect(stdout).toContain("Usage:");
    expect(stdout).not.toContain("\u001b");
  });

  test("the worker's help names each flag's variable and default, and the variables it reads", async () => {
    const { stdout } = await run("worker", ["--help"]);
    expect(stdout).toMatch(
      /--timeout-ms=<ms> +timeout of one HTTP attempt \(ms\) \[env WEBHOOK_TIMEOUT_MS, default 10000\]/,
    );
    expect(stdout).toContain("[env WEBHOOK_PREFETCH, default four times the concurrency]");
    expect(stdout).toMatch(/\n {2}WEBHOOK_ALLOWED_HOSTS +/);
    expect(stdout).toMatch(/\n {2}WEBHOOK_RETRY_BASE_MS +.*\[default 10000\]/);
    expect(stdout).toMatch(/\n {2}LOG_FORMAT +/);
    expect(stdout).toMatch(/--metrics-host=<address> +.*\[default 127\.0\.0\.1\]/);
    expect(stdout).toMatch(/\n {2}WORKER_METRICS_ALLOWED_HOSTS +/);
  });

  test("the app's help names ADMIN_TOKEN and DATABASE_URL", async () => {
    const { stdout } = await run("app", ["--help"]);
    expect(stdout).toMatch(/\n {2}ADMIN_TOKEN +/);
    expect(stdout).toMatch(/\n {2}DATABASE_URL +.*\[default data\/app\.db\]/);
    expect(stdout).toContain("[default 8000]");
  });
});

describe("start-up failures", () => {
  test("a taken port is exit 2 naming --port and the address, for the app and the receiver alike", async () => {
    using taken = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response() });
    for (const script of ["app", "receiver"]) {
      const { code, stderr } = await run(script, ["--port", String(taken.port)]);
      expect(code).toBe(2);
      expect(stderr).toBe(
        `error: --port=${taken.port} is in use on 127.0.0.1 (http://127.0.0.1:${taken.port}): stop what listens there or pick another port\n`,
      );
    }
  });

  test("an address this machine does not have is exit 2 naming --host", async () => {
    const { code, stderr } = await run("receiver", ["--host", "192.0.2.1", "--port", "0"]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      "error: --host=192.0.2.1 is not an address of this machine: cannot listen on http://192.0.2.1:0\n",
    );
  });

  test("a host name that cannot be listened on is exit 2 naming --host, not a stray errno", async () => {
    const { code, stderr } = await run("receiver", ["--host", "nosuch.invalid", "--port", "0"]);
    expect(code).toBe(2);
    expect(stderr).toBe(
      "error: --host=nosuch.invalid is not an address this machine can listen on: cannot listen on http://nosuch.invalid:0\n",
    );
  });

  test("an invalid ADMIN_TOKEN says what is wrong with it without echoing it", async () => {
    const { code, stderr } = await run("app", [], { ADMIN_TOKEN: "hunter2 hunter2 hunter2" });
    expect(code).toBe(2);
    expect(stderr).toBe(
      "error: ADMIN_TOKEN is invalid: it contains whitespace: expected at least 16 characters without spaces, e.g. `openssl rand -hex 32`\n",
    );
  });

  test("a database that cannot be opened is exit 2 naming the variable and the path", async () => {
    const { code, stderr } = await run("worker", ["--once"], { DATABASE_URL: ROOT });
    expect(code).toBe(2);
    // (A warning that the folder is readable by others may come first.)
    expect(stderr.trimEnd().split("\n").at(-1)).toStartWith(
      `error: DATABASE_URL=${JSON.stringify(ROOT)}: cannot open the SQLite database:`,
    );
  });
});

describe("a closed stdout (EPIPE)", () => {
  test.each([
    [
      "whose log reader went away (`2>&1 | true`)",
      `bun scripts/worker.ts --once 2>&1 | true; echo "status=\${PIPESTATUS[0]}" >&2`,
    ],
    [
      "whose log disk is full (stderr on /dev/full: ENOSPC)",
      `bun scripts/worker.ts --once 2>/dev/full; echo "status=$?" >&2`,
    ],
  ])("a worker %s still makes every attempt and exits 0", async (_, command) => {
    const dir = mkdtempSync(join(tmpdir(), "log-failure-worker-"));
    try {
      const database = join(dir, "app.db");
      const store = openSqliteStore(database);
      await store.webhooks.create({ name: "refused", url: "http://127.0.0.1:1/" });
      for (let i = 0; i < 20; i++) await store.queue.enqueue(change());
      const child = Bun.spawn(["bash", "-c", command], {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: database, WEBHOOK_ALLOWED_HOSTS: "127.0.0.1" },
        stderr: "pipe",
      });
      expect(await new Response(child.stderr).text()).toBe("status=0\n");
      const deliveries = await store.queue.list({ limit: 20 });
      expect(deliveries.map((d) => d.attempts)).toEqual(Array(20).fill(1));
      await store.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** Runs `bun scripts/webhooks.ts <args> | <reader>` in bash; returns what the reader printed and bun's status. */
  async function piped(args: string, reader: string, databaseUrl: string) {
    const child = Bun.spawn(
      [
        "bash",
        "-c",
        `bun scripts/webhooks.ts ${args} | ${reader}; echo "status=\${PIPESTATUS[0]}" >&2`,
      ],
      {
        cwd: ROOT,
        env: { ...process.env, DATABASE_URL: databaseUrl },
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    const { stdout, stderr } = await outputOf(child);
    return { stdout, stderr };
  }

  test("`webhooks add … | head -1` keeps the one-time secret line and exits 0 without a stack trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "epipe-"));
    try {
      const database = join(dir, "app.db");
      const { stdout, stderr } = await piped(
        "add --name a --url http://example.com/",
        "head -1",
        database,
      );
      expect(stdout).toMatch(
        /^Signing secret \(shown only now; receivers verify with it\): whsec_\S+\n$/,
      );
      expect(stderr).toBe("status=0\n");
      // A reader gone before anything was written: the writes fail with EPIPE, quietly.
      const closed = await piped("add --name b --url http://example.com/", "true", database);
      expect(closed.stderr).toBe("status=0\n");
      const listed = await piped("list", "true", database);
      expect(listed.stderr).toBe("status=0\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
