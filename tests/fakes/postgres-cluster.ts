/**
 * A throwaway PostgreSQL cluster for tests and benchmarks: `initdb` and `pg_ctl` from Debian's
 * `postgresql` package, in a temp directory, on a free loopback port, removed afterwards.
 * PostgreSQL refuses to run as root, so as root the binaries run as the `postgres` user
 * (`runuser -u postgres --`) on a directory that user owns.
 */
import { afterAll, afterEach, beforeAll, describe, setDefaultTimeout, test } from "bun:test";
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";

export interface PostgresCluster {
  readonly port: number;
  readonly dataDir: string;
  /** `postgres://postgres@127.0.0.1:<port>/<database>`. */
  url(database?: string): string;
  /** Creates an empty database and returns its URL: each test owns its own. */
  createDatabase(): Promise<string>;
  /** `pg_ctl restart -m fast`: every open connection is cut. */
  restart(): Promise<void>;
  /** `pg_ctl stop -m fast`, keeping the data: connections are cut and new ones refused. */
  stopServer(): Promise<void>;
  /** Starts the server again after stopServer(), on the same port. */
  startServer(): Promise<void>;
  /** `pg_ctl stop -m immediate` and removes the directory; safe to call twice. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface ClusterOptions {
  /** Extra `-c name=value` server settings, e.g. `{ fsync: "on" }`. */
  settings?: Record<string, string>;
}

/** Durability is pointless for a throwaway cluster; turning it off keeps tests fast. */
const TEST_SETTINGS: Record<string, string> = {
  fsync: "off",
  synchronous_commit: "off",
  full_page_writes: "off",
  max_connections: "200",
};

/** Where Debian's binaries are, newest version first, or null when the package is missing. */
export function findPostgresBin(root = "/usr/lib/postgresql"): string | null {
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((name) => existsSync(join(root, name, "bin", "initdb")))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? null : join(root, versions[0], "bin");
}

/** Why the cluster cannot run here, or null when it can. */
export function postgresUnavailableReason(): string | null {
  if (!findPostgresBin()) {
    return "initdb/pg_ctl not found under /usr/lib/postgresql/*/bin (apt-get install postgresql)";
  }
  // As root the server runs as `postgres` through runuser, which a PATH without sbin can miss.
  if (isRoot() && Bun.which("runuser") === null) {
    return "running as root and runuser is not on PATH (apt-get install util-linux)";
  }
  if (isRoot() && Bun.spawnSync(["id", "-u", "postgres"]).exitCode !== 0) {
    return "running as root and there is no `postgres` user to run the server as (apt-get install postgresql creates it)";
  }
  return null;
}

/**
 * `describe` for PostgreSQL suites: skipped with a visible notice when the binaries are missing,
 * but a failing test under CI=true, where PostgreSQL is required.
 */
export function describePostgres(name: string, fn: () => void): void {
  // Starting a cluster (initdb) on a busy 2-core machine can take seconds: more than Bun's
  // default 5 s per test or hook (bunfig's [test] timeout is not applied by Bun 1.4).
  setDefaultTimeout(30_000);
  const reason = postgresUnavailableReason();
  if (reason === null) {
    describe(name, fn);
    return;
  }
  if (process.env.CI === "true") {
    describe(name, () => {
      test("PostgreSQL is available (required with CI=true)", () => {
        throw new Error(`PostgreSQL tests cannot run: ${reason}`);
      });
    });
    return;
  }
  console.warn(`[skip] ${name}: PostgreSQL tests skipped: ${reason}`);
  describe.skip(name, fn);
}

export async function startPostgresCluster(options: ClusterOptions = {}): Promise<PostgresCluster> {
  const bin = findPostgresBin();
  if (!bin) throw new Error(postgresUnavailableReason() ?? "PostgreSQL binaries not found");
  const dir = mkdtempSync(join(tmpdir(), "pg-cluster-"));
  const owner = isRoot() ? Number(runSync(["id", "-u", "postgres"]).trim()) : undefined;
  if (owner !== undefined) chownSync(dir, owner, owner);
  const dataDir = join(dir, "data");
  const logFile = join(dir, "server.log");
  const settings = { ...TEST_SETTINGS, ...options.settings };
  const pg = (tool: string, args: string[]) => asPostgres([join(bin, tool), ...args]);

  runSync(
    pg("initdb", ["-D", dataDir, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]),
  );
  let port = 0;
  const serverArgs = () =>
    [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses=127.0.0.1",
      ...Object.entries(settings).map(([key, value]) => `-c ${key}=${value}`),
    ].join(" ");
  const start = () =>
    Bun.spawnSync(pg("pg_ctl", ["-D", dataDir, "-l", logFile, "-w", "-o", serverArgs(), "start"]), {
      cwd: tmpdir(),
    });
  // A free port can be taken between our probe and the server's bind: try a few.
  for (let tries = 0; ; tries++) {
    port = freeLoopbackPort();
    const result = start();
    if (result.exitCode === 0) break;
    if (tries >= 3) {
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`pg_ctl start failed: ${result.stderr.toString()}${readLog(logFile)}`);
    }
  }

  let stopped = false;
  const stopNow = () => {
    if (stopped) return;
    stopped = true;
    Bun.spawnSync(pg("pg_ctl", ["-D", dataDir, "-w", "-m", "immediate", "stop"]), {
      cwd: tmpdir(),
    });
    rmSync(dir, { recursive: true, force: true });
  };
  // If the test process ends without calling stop(), do not leave a server behind.
  process.once("exit", stopNow);

  // Asynchronous, so servers in this process (fake endpoints) keep answering meanwhile.
  async function pgCtlAsync(...args: string[]): Promise<void> {
    const child = Bun.spawn(
      pg("pg_ctl", ["-D", dataDir, "-l", logFile, "-w", "-o", serverArgs(), ...args]),
      { cwd: tmpdir(), stdout: "ignore", stderr: "pipe" },
    );
    if ((await child.exited) !== 0) {
      const stderr = await new Response(child.stderr).text();
      throw new Error(`pg_ctl ${args.join(" ")} failed: ${stderr}${readLog(logFile)}`);
    }
  }

  const url = (database = "postgres") => `postgres://postgres@127.0.0.1:${port}/${database}`;
  let databases = 0;

  const cluster: PostgresCluster = {
    port,
    dataDir,
    url,
    async createDatabase() {
      databases += 1;
      const name = `test_${databases}`;
      // A fresh connection each time: a pooled one would be stale after restart().
      const admin = new SQL(url(), { max: 1 });
      try {
        await admin.unsafe(`CREATE DATABASE ${name}`);
      } finally {
        await admin.close();
      }
      return url(name);
    },
    restart: () => pgCtlAsync("-m", "fast", "restart"),
    stopServer: () => pgCtlAsync("-m", "fast", "stop"),
    startServer: () => pgCtlAsync("start"),
    async stop() {
      stopNow();
      process.removeListener("exit", stopNow);
    },
    [Symbol.asyncDispose]() {
      return cluster.stop();
    },
  };
  return cluster;
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function asPostgres(command: string[]): string[] {
  return isRoot() ? ["runuser", "-u", "postgres", "--", ...command] : command;
}

function runSync(command: string[]): string {
  const result = Bun.spawnSync(command, { cwd: tmpdir() });
  if (result.exitCode !== 0) {
    throw new Error(`${command.join(" ")} failed: ${result.stderr.toString()}`);
  }
  return result.stdout.toString();
}

function freeLoopbackPort(): number {
  const listener = Bun.listen({
    hostname: "127.0.0.1",
    port: 0,
    socket: { data() {} },
  });
  const { port } = listener;
  listener.stop(true);
  return port;
}

function readLog(path: string): string {
  try {
    return `\n${readFileSync(path, "utf8").slice(-2000)}`;
  } catch {
    return "";
  }
}

/**
 * For a describePostgres suite: one cluster for the whole suite (stopped after it), and
 * `cleanups` run after each test, last registered first.
 */
export function usePostgresCluster(settings?: ClusterOptions): {
  readonly cluster: PostgresCluster;
  readonly cleanups: Array<() => unknown>;
} {
  let cluster: PostgresCluster | undefined;
  const cleanups: Array<() => unknown> = [];
  beforeAll(async () => {
    cluster = await startPostgresCluster(settings);
  });
  afterAll(async () => {
    await cluster?.stop();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  return {
    get cluster() {
      if (!cluster) throw new Error("The PostgreSQL cluster has not started yet");
      return cluster;
    },
    cleanups,
  };
}
