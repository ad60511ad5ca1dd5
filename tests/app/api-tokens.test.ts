import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runCommand } from "citty";
import { generateApiToken } from "../../lib/app/auth/api-tokens.ts";
import { createTokensCommand } from "../../lib/app/auth/tokens-command.ts";
import { createApp } from "../../lib/app/create-app.ts";
import { exitCodeFor } from "../../lib/cli/run.ts";
import { createMemoryLogger } from "../../lib/log.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { outputOf } from "../fakes/process-output.ts";
import { tempDirs } from "../fakes/temp-dirs.ts";

const temporaryDirectory = tempDirs("api-tokens-");

const ADMIN = "test-admin-token-0123456789";
const DAY = 86_400_000;
const T0 = Date.UTC(2030, 0, 1);

let path: string;
let clock: { t: number };
let store: Store;
let server: ReturnType<typeof Bun.serve>;
let logger: ReturnType<typeof createMemoryLogger>;

beforeEach(() => {
  path = join(temporaryDirectory(), "app.db");
  clock = { t: T0 };
  store = openSqliteStore(path, { now: () => clock.t });
  logger = createMemoryLogger();
  const app = createApp({
    store,
    config: { adminToken: ADMIN },
    now: () => new Date(clock.t),
    logger,
  });
  server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: app.fetch });
});
afterEach(async () => {
  await server.stop(true);
  await store.close();
});

/** `bun run app tokens …` in-process on the test database; its stdout lines. */
async function tokens(...args: string[]): Promise<string[]> {
  const lines: string[] = [];
  const command = createTokensCommand({
    env: { DATABASE_URL: path },
    out: (text) => lines.push(...text.split("\n")),
    now: () => clock.t,
  });
  await runCommand(command, { rawArgs: args });
  return lines;
}

/** A new token's value: the last line of `tokens add`. */
async function addToken(...args: string[]): Promise<string> {
  return (await tokens("add", ...args)).at(-1) ?? "";
}

function call(method: string, route: string, token: string, body?: unknown) {
  return fetch(`${server.url}${route.slice(1)}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

const item = { sku: "W-1", name: "Widget", quantity: 1 };

describe("API tokens over HTTP", () => {
  test("a read token may GET and HEAD anything but gets 403 on every write", async () => {
    const read = await addToken("--name", "monitor");
    expect(read).toMatch(/^inv_[A-Za-z0-9_-]{43}$/);
    expect((await call("POST", "/api/items", ADMIN, item)).status).toBe(201);

    expect((await call("GET", "/api/items", read)).status).toBe(200);
    expect((await call("HEAD", "/api/items/1", read)).status).toBe(200);
    expect((await call("GET", "/metrics", read)).status).toBe(200);
    const refused = await call("POST", "/api/items", read, { ...item, sku: "W-2" });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      error: 'The API token "monitor" may only read (GET, HEAD)',
    });
    expect((await call("PATCH", "/api/items/1", read, { quantity: 9 })).status).toBe(403);
    expect((await call("DELETE", "/api/items/1", read)).status).toBe(403);
    expect((await store.items.get(1))?.quantity).toBe(1);
  });

  test("a write token changes things, under its own name in the payload; ADMIN_TOKEN keeps full access", async () => {
    const write = await addToken("--name", "deploy", "--write");
    await store.webhooks.create({ name: "h", url: "https://e.example/h" });
    expect((await call("POST", "/api/items", write, item)).status).toBe(201);
    expect((await call("DELETE", "/api/items/1", ADMIN)).status).toBe(204);
    const usernames = (await store.queue.list())
      .reverse()
      .map((d) => JSON.parse(d.payload).username);
    expect(usernames).toEqual(["token:deploy", "admin"]);
  });

  test("an expired token and a revoked one get 401; list shows the last use", async () => {
    const soon = await addToken("--name", "soon", "--expires-days", "1");
    const gone = await addToken("--name", "gone");
    expect((await call("GET", "/api/items", soon)).status).toBe(200);
    expect((await call("GET", "/api/items", gone)).status).toBe(200);
    // name, access, created (the CLI's store keeps real time), last used, expiry
    expect((await tokens("list")).join("\n")).toMatch(
      /^soon {2}read {4}\S+ {2}2030-01-01T00:00:00\.000Z {2}2030-01-02T00:00:00\.000Z$/m,
    );

    expect(await tokens("revoke", "gone")).toEqual(['Revoked API token "gone"']);
    const revoked = await call("GET", "/api/items", gone);
    expect(revoked.status).toBe(401);
    expect(await revoked.json()).toEqual({
      error: "The bearer token is neither ADMIN_TOKEN nor an API token",
    });

    clock.t = T0 + DAY;
    const expired = await call("GET", "/api/items", soon);
    expect(expired.status).toBe(401);
    expect(await expired.json()).toEqual({
      error: 'The API token "soon" expired at 2030-01-02T00:00:00.000Z',
    });
    expect((await tokens("list")).join("\n")).toContain("2030-01-02T00:00:00.000Z (expired)");
  });

  test("the last use is written at most once a minute, so reads stay reads", async () => {
    const read = await addToken("--name", "monitor");
    const lastUsed = async () => (await store.tokens.list())[0]?.lastUsedAt;
    expect(await lastUsed()).toBeNull();
    expect((await call("GET", "/api/items", read)).status).toBe(200);
    expect(await lastUsed()).toBe(T0);
    clock.t = T0 + 59_999;
    expect((await call("GET", "/api/items", read)).status).toBe(200);
    expect(await lastUsed()).toBe(T0);
    clock.t = T0 + 60_000;
    expect((await call("GET", "/api/items", read)).status).toBe(200);
    expect(await lastUsed()).toBe(T0 + 60_000);
  });

  test("a neighbour's wrong tokens lock out guesses from the address, not the valid tokens behind it", async () => {
    const read = await addToken("--name", "monitor");
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++)
      statuses.push((await call("GET", "/api/items", generateApiToken())).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 401]);
    expect(logger.lines.at(-1)).toBe(
      "warn Wrong admin bearer token from 127.0.0.1 (6 in a row; further tries refused for 1 s)",
    );
    // A valid API token (256 random bits: no rate of guessing finds one) is looked up and let in,
    // though never used before; another made-up one gets the lockout's 429.
    expect((await call("GET", "/api/items", read)).status).toBe(200);
    const guess = await call("GET", "/api/items", generateApiToken());
    expect(guess.status).toBe(429);
    expect(guess.headers.get("retry-after")).toBe("1");
    // ADMIN_TOKEN can be guessed at: a first try waits out the lockout, and so does a wrong one.
    expect((await call("GET", "/api/items", "not-the-admin-token")).status).toBe(429);
    expect((await call("GET", "/api/items", ADMIN)).status).toBe(429);
    clock.t += 1000;
    expect((await call("GET", "/api/items", ADMIN)).status).toBe(200);
    // Right once, it is looked at through the next lockout too.
    for (let i = 0; i < 2; i++) await call("GET", "/api/items", generateApiToken());
    expect((await call("GET", "/api/items", "not-the-admin-token")).status).toBe(429);
    expect((await call("GET", "/api/items", ADMIN)).status).toBe(200);
  });

  test("a token is never stored in plain text: the database files hold only its hash", async () => {
    const read = await addToken("--name", "monitor");
    const write = await addToken("--name", "deploy", "--write");
    expect((await call("GET", "/api/items", read)).status).toBe(200);
    await store.close();
    const folder = join(path, "..");
    const files = readdirSync(folder).filter((name) => name.startsWith("app.db"));
    expect(files).toContain("app.db");
    const bytes = files.map((name) => readFileSync(join(folder, name)).toString("latin1")).join("");
    for (const token of [read, write]) {
      expect(bytes).not.toContain(token);
      expect(bytes).not.toContain(token.slice(4)); // nor its random part
      expect(bytes).toContain(new Bun.CryptoHasher("sha256").update(token).digest("hex"));
    }
    store = openSqliteStore(path, { now: () => clock.t });
  });
});

describe("bun run app tokens: bad input is one line and exit code 2", () => {
  const cases: Array<[string[], string]> = [
    [["add"], "--name is required: tokens add --name NAME"],
    [
      ["add", "--name", "two words"],
      'Invalid --name "two words": expected 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit',
    ],
    [
      ["add", "--name", "a", "--expires-days", "0"],
      'Invalid --expires-days "0": expected a whole number from 1 to 3650',
    ],
    [
      ["add", "--name", "a", "--expires-days", "1.5"],
      'Invalid --expires-days "1.5": expected a whole number from 1 to 3650',
    ],
    [["add", "--name", "a", "--writ"], "Unknown option --writ: did you mean --write? (see --help)"],
    [["revoke"], "Give the token's name: tokens revoke NAME"],
    [["revoke", "nobody"], 'No API token named "nobody"'],
    [
      ["list", "extra"],
      'Unexpected argument "extra": this command takes only options (see --help)',
    ],
  ];
  for (const [args, message] of cases) {
    test(`tokens ${args.join(" ")}`, async () => {
      const error = await tokens(...args).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(exitCodeFor(error)).toBe(2);
      expect((error as Error).message).toBe(message);
    });
  }

  test("add without ADMIN_TOKEN in its environment says what a token means to an open app", async () => {
    const lines = await tokens("add", "--name", "monitor");
    expect(lines[0]).toStartWith(
      "Note: ADMIN_TOKEN is not set here. An app on this database without it refuses API requests that carry no token",
    );
    expect(lines.at(-1)).toMatch(/^inv_/);
    const quiet: string[] = [];
    const command = createTokensCommand({
      env: { DATABASE_URL: path, ADMIN_TOKEN: ADMIN },
      out: (text) => quiet.push(...text.split("\n")),
    });
    await runCommand(command, { rawArgs: ["add", "--name", "deploy"] });
    expect(quiet.join("\n")).not.toContain("Note:");
  });

  test("a name taken is refused", async () => {
    await addToken("--name", "a");
    const error = await tokens("add", "--name", "a").catch((caught: unknown) => caught);
    expect(exitCodeFor(error)).toBe(2);
    expect((error as Error).message).toBe('An API token named "a" already exists');
  });
});

describe("scripts/app.ts tokens", () => {
  const script = join(import.meta.dir, "..", "..", "scripts", "app.ts");
  const run = (...args: string[]) =>
    outputOf(
      Bun.spawn([process.execPath, script, ...args], {
        env: { PATH: process.env.PATH ?? "", DATABASE_URL: path },
        stdout: "pipe",
        stderr: "pipe",
      }),
    );

  test("add prints the token alone on the last line of stdout; a bad flag is one line, exit 2", async () => {
    const added = await run("tokens", "add", "--name", "monitor");
    expect(added.code).toBe(0);
    expect(added.stdout.trimEnd().split("\n").at(-1)).toMatch(/^inv_[A-Za-z0-9_-]{43}$/);
    const bad = await run("tokens", "add", "--name", "monitor", "--expires-days", "x");
    expect(bad).toEqual({
      stdout: "",
      stderr: 'error: Invalid --expires-days "x": expected a whole number from 1 to 3650\n',
      code: 2,
    });
  });
});
