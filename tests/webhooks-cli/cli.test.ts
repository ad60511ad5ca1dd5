import { afterEach, beforeEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "citty";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import { createWebhooksCommand } from "../../lib/webhooks-cli/command.ts";
import { usageRefusal } from "../fakes/webhooks-cli-file.ts";
import { change, record } from "../store/contract.ts";

// Each test starts bun processes: about a second alone, several on a loaded 2-core machine.
setDefaultTimeout(30_000);

const ROOT = join(import.meta.dir, "..", "..");
const T0 = Date.UTC(2030, 0, 1);
const SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const GENERATED = "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0";

let dir: string;
let path: string;
let store: Store;
let lines: string[];
let errors: string[];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "webhooks-cli-"));
  path = join(dir, "app.db");
  store = openSqliteStore(path, { now: () => T0 });
  lines = [];
  errors = [];
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `bun run webhooks …` in-process against the test database; returns what it printed. */
async function cli(...rawArgs: string[]): Promise<string> {
  lines = [];
  errors = [];
  const command = createWebhooksCommand({
    env: { DATABASE_URL: path },
    out: (text) => lines.push(text),
    err: (text) => errors.push(text),
    now: () => T0,
    generateSecret: () => GENERATED,
  });
  await runCommand(command, { rawArgs });
  return lines.join("\n");
}

/** Runs a command that must fail as bad input: exit code 2 and one line of message. */
function refused(...rawArgs: string[]): Promise<string> {
  return usageRefusal(() => cli(...rawArgs));
}

async function snapshot() {
  return {
    webhooks: await store.webhooks.list(),
    deliveries: await store.queue.list({ limit: 1000 }),
  };
}

/** A delivery whose first attempt failed, waiting for its automatic retry 5 minutes later. */
async function retryingDelivery(): Promise<number> {
  const [claim] = await store.queue.claim({ workerId: "w", limit: 1, leaseMs: 1000, now: T0 });
  if (!claim) throw new Error("nothing to claim");
  await store.queue.finish(claim, record({ statusCode: 503, outcome: "http_error" }), {
    state: "queued",
    nextAttemptAt: T0 + 300_000,
  });
  return claim.delivery.id;
}

async function failedDelivery(): Promise<number> {
  const [claim] = await store.queue.claim({ workerId: "w", limit: 1, leaseMs: 1000, now: T0 });
  if (!claim) throw new Error("nothing to claim");
  await store.queue.finish(claim, record({ statusCode: 500, outcome: "http_error" }), {
    state: "failed",
  });
  return claim.delivery.id;
}

describe("webhooks add", () => {
  test("add creates a webhook with NetBox's defaults and shows a generated secret once", async () => {
    const output = await cli("add", "--name", "receiver", "--url", "http://127.0.0.1:9000/");
    expect(output).toContain(
      'Added Webhook 1 "receiver": POST http://127.0.0.1:9000/, events *, enabled',
    );
    expect(output).toContain(GENERATED);
    expect(await store.webhooks.get(1)).toMatchObject({
      name: "receiver",
      method: "POST",
      contentType: "application/json",
      events: ["*"],
      secret: GENERATED,
      enabled: true,
    });
    expect(await cli("list")).not.toContain(GENERATED);
  });

  test("add takes events, method, content type, repeated headers and a given secret", async () => {
    const output = await cli(
      "add",
      "--name=orders",
      "--url",
      "https://hooks.example/in",
      "--events",
      "item.created, item.deleted",
      "--method",
      "put",
      "--content-type",
      "application/x-www-form-urlencoded",
      "--header",
      "Authorization: Bearer abc",
      "--header=X-Team: ops",
      "--secret",
      SECRET,
      "--disabled",
    );
    expect(output).not.toContain(SECRET);
    expect(await store.webhooks.getByName("orders")).toMatchObject({
      method: "PUT",
      contentType: "application/x-www-form-urlencoded",
      events: ["item.created", "item.deleted"],
      headers: [
        ["Authorization", "Bearer abc"],
        ["X-Team", "ops"],
      ],
      secret: SECRET,
      enabled: false,
    });
  });

  test("add --json prints the webhook and the generated secret", async () => {
    const output = JSON.parse(
      await cli("add", "--name", "a", "--url", "http://x.example/", "--json"),
    );
    expect(output.secret).toBe(GENERATED);
    expect(output.webhook).toMatchObject({ id: 1, name: "a", hasSecret: true });
    expect(output.webhook.secret).toBeUndefined();
  });

  test.each([
    [
      ["--name", "a", "--url", "ftp://x.example/"],
      'Invalid --url "ftp://x.example/": must be an http:// or https:// URL',
    ],
    [["--name", "a", "--url", "not a url"], 'Invalid --url "not a url"'],
    [["--name", "a"], "Missing required argument: --url"],
    [["--url", "http://x.example/"], "Missing required argument: --name"],
    [
      ["--name", "a", "--url", "http://x.example/", "--events", "item.moved"],
      'Invalid --events "item.moved": unknown event "item.moved"',
    ],
    [
      ["--name", "a", "--url", "http://x.example/", "--method", "TRACE"],
      'Invalid --method "TRACE": must be one of POST',
    ],
    [
      ["--name", "a", "--url", "http://x.example/", "--header", "NoColon"],
      'Invalid --header "NoColon": expected Name: Value',
    ],
    [
      ["--name", "a", "--url", "http://x.example/", "--header", "Content-Type: text/plain"],
      "Content-Type is set by the sender",
    ],
    [
      ["--name", "a", "--url", "http://x.example/", "--header", "X-A: b\u001bc"],
      "control characters",
    ],
    [
      ["--name", "a", "--url", "http://x.example/", "--secret", "hunter2"],
      "Invalid --secret: must be whsec_",
    ],
    [
      ["--name", "a", "--url", "http://x.example/", "--content-type", "json"],
      'Invalid --content-type "json": must be a media type',
    ],
    [["--name", "a", "--url", "http://x.example/", "--evnts", "*"], "Unknown option --evnts"],
    [["--name", "", "--url", "http://x.example/"], 'Invalid --name "": required'],
  ])("add %j is refused: %s", async (args, message) => {
    expect(await refused("add", ...args)).toContain(message);
    expect(await store.webhooks.list()).toEqual([]);
  });

  test("add refuses a taken name and writes nothing", async () => {
    await cli("add", "--name", "a", "--url", "http://x.example/1");
    const before = await snapshot();
    expect(await refused("add", "--name", "a", "--url", "http://x.example/2")).toBe(
      'A webhook named "a" already exists',
    );
    expect(await snapshot()).toEqual(before);
  });
});

describe("webhooks add and update warn about a URL workers will refuse", () => {
  const WARNING =
    "warning: Workers will refuse 127.0.0.1 (loopback) unless their WEBHOOK_ALLOWED_HOSTS allows it, e.g. WEBHOOK_ALLOWED_HOSTS=127.0.0.1:9000";

  /** Like cli(), with extra variables; resolves with stdout and stderr lines. */
  async function run(env: Record<string, string>, ...rawArgs: string[]) {
    const out: string[] = [];
    const err: string[] = [];
    const command = createWebhooksCommand({
      env: { DATABASE_URL: path, ...env },
      out: (text) => out.push(text),
      err: (text) => err.push(text),
      generateSecret: () => GENERATED,
    });
    await runCommand(command, { rawArgs });
    return { out, err };
  }

  test("add saves a loopback URL (the README's own example) and says on stderr, once, what to set", async () => {
    const { out, err } = await run({}, "add", "--name", "r", "--url", "http://127.0.0.1:9000/");
    expect(out.at(-1)).toStartWith('Added Webhook 1 "r"');
    expect(err).toEqual([WARNING]);
    expect((await store.webhooks.get(1))?.url).toBe("http://127.0.0.1:9000/");
  });

  test("no warning when WEBHOOK_ALLOWED_HOSTS allows it, for a global address, or when update leaves the URL", async () => {
    const allowed = { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1:9000" };
    expect(
      (await run(allowed, "add", "--name", "r", "--url", "http://127.0.0.1:9000/")).err,
    ).toEqual([]);
    expect((await run({}, "add", "--name", "g", "--url", "http://93.184.216.34/hook")).err).toEqual(
      [],
    );
    expect((await run({}, "update", "r", "--method", "PUT")).err).toEqual([]);
  });

  test("update to a refused URL saves it, exits normally and warns in one line", async () => {
    await run({}, "add", "--name", "g", "--url", "http://93.184.216.34/hook");
    const { out, err } = await run({}, "update", "g", "--url", "http://127.0.0.1:9000/");
    expect(out).toEqual(['Updated Webhook 1 "g": POST http://127.0.0.1:9000/, events *, enabled']);
    expect(err).toEqual([WARNING]);
  });
});

describe("webhooks list, update, enable, disable, remove", () => {
  beforeEach(async () => {
    await store.webhooks.create({ name: "alpha", url: "http://a.example/", secret: SECRET });
    await store.webhooks.create({
      name: "beta",
      url: "http://b.example/",
      events: ["item.deleted"],
    });
  });

  test("list prints a table; --json prints every webhook without secrets", async () => {
    expect(await cli("list")).toBe(
      [
        "ID  NAME   ENABLED  HEALTH (24 H)  EVENTS        METHOD  SIGNED  MAX/S  URL",
        "1   alpha  yes      idle           *             POST    yes     -      http://a.example/",
        "2   beta   yes      idle           item.deleted  POST    no      -      http://b.example/",
      ].join("\n"),
    );
    const listed = JSON.parse(await cli("list", "--json"));
    expect(listed.map((w: { name: string }) => w.name)).toEqual(["alpha", "beta"]);
    expect(JSON.stringify(listed)).not.toContain(SECRET);
  });

  test("list shows why and when a webhook was disabled, or since when it is failing", async () => {
    await store.health.recordFailure(2, { now: T0 - 60_000, deliveryFailed: true });
    await store.health.disable(1, {
      reason: "Disabled automatically: the endpoint answered 410 Gone",
      now: T0 - 5000,
    });
    expect(await cli("list")).toBe(
      [
        "ID  NAME   ENABLED  HEALTH (24 H)  EVENTS        METHOD  SIGNED  MAX/S  URL",
        "1   alpha  no       disabled       *             POST    yes     -      http://a.example/",
        "    disabled 2029-12-31T23:59:55.000Z: Disabled automatically: the endpoint answered 410 Gone",
        "2   beta   yes      idle           item.deleted  POST    no      -      http://b.example/",
        "    every attempt failed since 2029-12-31T23:59:00.000Z",
      ].join("\n"),
    );
    const listed = JSON.parse(await cli("list", "--json"));
    expect(listed[0]).toMatchObject({
      enabled: false,
      disabledReason: "Disabled automatically: the endpoint answered 410 Gone",
      disabledAt: T0 - 5000,
    });
    expect(listed[1]).toMatchObject({ enabled: true, failingSince: T0 - 60_000 });
  });

  test("add and update --max-per-second set and clear the webhook's rate limit", async () => {
    expect(
      await cli("add", "--name", "slow", "--url", "http://s.example/", "--max-per-second", "2.5"),
    ).toContain("at most 2.5/s");
    expect((await store.webhooks.getByName("slow"))?.maxPerSecond).toBe(2.5);
    expect(await cli("list")).toContain("2.5    http://s.example/");
    await cli("update", "slow", "--max-per-second", "40");
    expect((await store.webhooks.getByName("slow"))?.maxPerSecond).toBe(40);
    await cli("update", "slow", "--max-per-second", "0");
    expect((await store.webhooks.getByName("slow"))?.maxPerSecond).toBeNull();
    for (const bad of ["-1", "fast", "10001", ""]) {
      expect(await refused("update", "slow", "--max-per-second", bad)).toContain(
        "--max-per-second",
      );
    }
  });

  test("list escapes control characters in names and URLs", async () => {
    await store.webhooks.create({ name: "evil\u001b[2J", url: "http://c.example/" });
    const output = await cli("list");
    expect(output).toContain("evil\\x1b[2J");
    expect(output).not.toContain("\u001b");
  });

  test("update changes only the given fields, by id or by name", async () => {
    await cli(
      "update",
      "beta",
      "--url",
      "https://b2.example/",
      "--events",
      "*",
      "--header",
      "X-K: v",
    );
    expect(await store.webhooks.get(2)).toMatchObject({
      name: "beta",
      url: "https://b2.example/",
      events: ["*"],
      headers: [["X-K", "v"]],
      method: "POST",
    });
    await cli("update", "2", "--clear-headers", "--name", "gamma");
    expect(await store.webhooks.get(2)).toMatchObject({ name: "gamma", headers: [] });
  });

  test("update --rotate-secret shows the new secret once; --remove-secret removes it", async () => {
    expect(await cli("update", "alpha", "--rotate-secret")).toContain(GENERATED);
    expect((await store.webhooks.get(1))?.secret).toBe(GENERATED);
    await cli("update", "alpha", "--remove-secret");
    expect((await store.webhooks.get(1))?.secret).toBeNull();
  });

  test("update --rotate-secret keeps the old secret signing for --grace-seconds (default 24 h)", async () => {
    const printed = await cli("update", "alpha", "--rotate-secret", "--grace-seconds", "600");
    expect(printed.split("\n")[0]).toBe(`New signing secret (shown only now): ${GENERATED}`);
    expect(printed).toContain(
      `The previous secret signs too until ${new Date(T0 + 600_000).toISOString()}`,
    );
    expect(await store.webhooks.get(1)).toMatchObject({
      secret: GENERATED,
      previousSecret: SECRET,
      previousSecretUntil: T0 + 600_000,
    });
    // --secret or --remove-secret replaces it outright: no overlap.
    await cli("update", "alpha", "--secret", SECRET);
    expect(await store.webhooks.get(1)).toMatchObject({ previousSecret: null });
  });

  test.each([
    [["alpha", "--grace-seconds", "60"], "--grace-seconds goes with --rotate-secret"],
    [["alpha", "--rotate-secret", "--grace-seconds", "-5"], 'Invalid --grace-seconds "-5"'],
    [["alpha", "--rotate-secret", "--grace-seconds", "604801"], "from 0 (no overlap) to 604800"],
    [["nobody", "--url", "http://x.example/"], 'No webhook with id or name "nobody"'],
    [["alpha"], "Nothing to change"],
    [["alpha", "--url", "gopher://x"], 'Invalid --url "gopher://x"'],
    [["alpha", "--name", "beta"], 'A webhook named "beta" already exists'],
    [["alpha", "--secret", SECRET, "--remove-secret"], "only one of --secret"],
    [["alpha", "--clear-headers", "--header", "X: y"], "either --clear-headers or --header"],
    [["alpha", "beta", "--url", "http://x.example/"], "Too many arguments"],
  ])("update %j is refused: %s", async (args, message) => {
    const before = await snapshot();
    expect(await refused("update", ...args)).toContain(message);
    expect(await snapshot()).toEqual(before);
  });

  test("disable records a reason; enable clears it", async () => {
    expect(await cli("disable", "alpha", "--reason", "receiver down")).toContain(
      "disabled (receiver down)",
    );
    expect(await store.webhooks.get(1)).toMatchObject({
      enabled: false,
      disabledReason: "receiver down",
    });
    await cli("enable", "1");
    expect(await store.webhooks.get(1)).toMatchObject({ enabled: true, disabledReason: null });
    expect(await refused("enable", "zeta")).toContain('No webhook with id or name "zeta"');
  });

  test("remove deletes the webhook and its deliveries", async () => {
    await store.queue.enqueue(change());
    expect(await cli("remove", "alpha")).toBe('Removed webhook 1 "alpha" and its deliveries');
    expect((await store.webhooks.list()).map((w) => w.name)).toEqual(["beta"]);
    expect(await store.queue.list()).toEqual([]);
    expect(await refused("remove", "alpha")).toContain("No webhook");
  });
});

describe("webhooks emit", () => {
  beforeEach(async () => {
    await store.webhooks.create({ name: "all", url: "http://a.example/" });
    await store.webhooks.create({
      name: "deletes",
      url: "http://b.example/",
      events: ["item.deleted"],
    });
  });

  test("emit queues one delivery per subscribed webhook with NetBox's payload", async () => {
    const output = await cli("emit", "item.created", "--data", '{"id": 7, "name": "Bolt"}');
    expect(output).toBe("Queued 1 delivery for 1 item.created change: 1");
    const [delivery] = await store.queue.list();
    expect(JSON.parse(delivery?.payload ?? "")).toMatchObject({
      event: "created",
      model: "item",
      username: "cli",
      timestamp: "2030-01-01 00:00:00.000000+00:00",
      data: { id: 7, name: "Bolt" },
      snapshots: { prechange: null, postchange: { id: 7, name: "Bolt" } },
    });
    await cli("emit", "item.deleted", "--data", '{"id": 7}');
    expect(await store.queue.stats()).toMatchObject({ queued: 3 });
  });

  test("emit --count N queues N changes; --json lists the delivery ids", async () => {
    const output = JSON.parse(await cli("emit", "item.deleted", "--count", "3", "--json"));
    expect(output).toEqual({ event: "item.deleted", changes: 3, deliveries: [1, 2, 3, 4, 5, 6] });
  });

  test("emit ping goes only to the webhook named", async () => {
    await cli("emit", "ping", "--webhook", "deletes");
    const deliveries = await store.queue.list();
    expect(deliveries.map((d) => [d.webhookName, d.event])).toEqual([["deletes", "ping"]]);
  });

  test("emit says so when no webhook is subscribed", async () => {
    await store.webhooks.update(1, { enabled: false });
    expect(await cli("emit", "item.updated")).toBe(
      "Queued 0 deliveries for 1 item.updated change (no enabled webhook is subscribed to it, or no conditions matched)",
    );
  });

  test.each([
    [["item.moved"], 'Unknown event "item.moved"'],
    [["item.created", "--data", "{not json"], "Invalid --data: not JSON"],
    [["item.created", "--data", "[1, 2]"], "expected a JSON object"],
    [["item.created", "--count", "0"], 'Invalid --count "0"'],
    [["item.created", "--count", "many"], 'Invalid --count "many"'],
    [["ping"], "ping goes to one webhook: add --webhook ID"],
    [["ping", "--webhook", "ghost"], 'No webhook with id or name "ghost"'],
    [[], "Missing required positional argument: EVENT"],
  ])("emit %j is refused and queues nothing: %s", async (args, message) => {
    expect(await refused("emit", ...args)).toContain(message);
    expect(await store.queue.list()).toEqual([]);
  });
});

describe("webhooks deliveries, show, retry, stats, purge", () => {
  beforeEach(async () => {
    await store.webhooks.create({ name: "hook", url: "http://a.example/" });
    await store.webhooks.create({ name: "other", url: "http://b.example/" });
    await store.queue.enqueue(change(), { webhookId: 1 });
    await store.queue.enqueue(change(), { webhookId: 1 });
    await store.queue.enqueue(change(), { webhookId: 2 });
  });

  test("deliveries lists newest first with each attempt under its delivery", async () => {
    const failed = await failedDelivery();
    const output = await cli("deliveries");
    const rows = output.split("\n");
    expect(rows[0]).toBe("ID  STATE   WEBHOOK  EVENT         ATTEMPTS  WHEN");
    expect(rows[1]).toStartWith(
      "3   queued  other    item.created  0         next 2030-01-01T00:00:00.000Z",
    );
    expect(output).toContain(`${failed}   failed  hook`);
    expect(output).toContain("    #1  2023-11-14T22:13:20.000Z");
    expect(output).toContain("  500  13 ms  http_error");
  });

  test("deliveries filters by state and webhook, with a limit, and prints JSON", async () => {
    await failedDelivery();
    const failed = JSON.parse(await cli("deliveries", "--state", "failed", "--json"));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({
      state: "failed",
      attempts: [{ attempt: 1, statusCode: 500 }],
    });
    expect(failed[0].payload.event).toBe("created");
    const ofHook = JSON.parse(await cli("deliveries", "--webhook", "hook", "--json"));
    expect(ofHook.map((d: { webhookName: string }) => d.webhookName)).toEqual(["hook", "hook"]);
    expect(JSON.parse(await cli("deliveries", "--limit", "1", "--json"))).toHaveLength(1);
  });

  test("deliveries --message-id finds the delivery a receiver logged; --object-id an object's", async () => {
    const failed = await failedDelivery();
    const found = await store.queue.get(failed);
    const messageId = found?.delivery.messageId ?? "";
    const listed = JSON.parse(await cli("deliveries", "--message-id", messageId, "--json"));
    expect(listed.map((d: { id: number; messageId: string }) => [d.id, d.messageId])).toEqual([
      [failed, messageId],
    ]);
    expect(await cli("deliveries", "--message-id", messageId, "--state", "successful")).toBe(
      "No deliveries.",
    );
    expect(await cli("deliveries", "--message-id", "msg_unknown")).toBe("No deliveries.");
    const objectId = String(found?.delivery.objectId);
    const ofObject = JSON.parse(await cli("deliveries", "--object-id", objectId, "--json"));
    expect(ofObject.map((d: { id: number }) => d.id)).toContain(failed);
    expect(await refused("deliveries", "--object-model", "item")).toContain("--object-id");
  });

  test("deliveries --state failed lists one waiting for an automatic retry too, saying when", async () => {
    const failed = await failedDelivery();
    const waiting = await retryingDelivery();
    const output = await cli("deliveries", "--state", "failed");
    expect(output).toContain(`${failed}   failed  hook`);
    expect(output).toMatch(
      new RegExp(
        `${waiting} +queued +\\S+ +item.created +1 +retrying automatically at 00:05 UTC \\(attempt 2 of 8\\)`,
      ),
    );
    const listed = JSON.parse(await cli("deliveries", "--state", "failed", "--json"));
    expect(listed.map((d: { id: number }) => d.id).sort()).toEqual([waiting, failed].sort());
  });

  test("retry --all-failed also sends now the deliveries waiting for an automatic retry", async () => {
    const failed = await failedDelivery();
    const waiting = await retryingDelivery();
    expect(await cli("retry", "--all-failed")).toBe("Queued 2 deliveries again");
    const after = await store.queue.list({ limit: 10 });
    const byId = new Map(after.map((d) => [d.id, d]));
    for (const id of [failed, waiting]) {
      expect(byId.get(id)).toMatchObject({ state: "queued", nextAttemptAt: T0 });
    }
    // Untouched: the one never attempted.
    expect(after.filter((d) => d.attempts === 0)).toHaveLength(1);
  });

  test("deliveries says attempt N of WEBHOOK_MAX_ATTEMPTS when the workers' cap is lower", async () => {
    const [claim] = await store.queue.claim({ workerId: "w", limit: 1, leaseMs: 1000, now: T0 });
    if (!claim) throw new Error("nothing to claim");
    await store.queue.finish(claim, record({ statusCode: 500, outcome: "http_error" }), {
      state: "queued",
      nextAttemptAt: T0 + 300_000,
    });
    lines = [];
    const command = createWebhooksCommand({
      env: { DATABASE_URL: path, WEBHOOK_MAX_ATTEMPTS: "3" },
      out: (text) => lines.push(text),
      now: () => T0,
    });
    await runCommand(command, { rawArgs: ["deliveries", "--state", "failed"] });
    expect(lines.join("\n")).toContain("(attempt 2 of 3)");
  });

  test.each([
    [["--state", "lost"], 'Unknown state "lost"'],
    [["--limit", "0"], 'Invalid --limit "0"'],
    [["--webhook", "ghost"], 'No webhook with id or name "ghost"'],
  ])("deliveries %j is refused: %s", async (args, message) => {
    expect(await refused("deliveries", ...args)).toContain(message);
  });

  test("show prints the payload and every attempt, response included, escaped", async () => {
    const [claim] = await store.queue.claim({ workerId: "w", limit: 1, leaseMs: 1000, now: T0 });
    if (!claim) throw new Error("nothing to claim");
    await store.queue.finish(
      claim,
      record({ statusCode: 502, outcome: "http_error", responseBody: "bad \u001b[31mgateway" }),
      { state: "queued", nextAttemptAt: T0 + 60_000 },
    );
    const output = await cli("show", String(claim.delivery.id));
    expect(output).toContain(`Delivery ${claim.delivery.id}: queued, 1 attempt`);
    expect(output).toContain(`webhook-id  ${claim.delivery.messageId}`);
    expect(output).toContain('"event": "created"');
    expect(output).toContain("#1  2023-");
    expect(output).toContain("  502  13 ms  http_error  to https://e.example/1");
    expect(output).toContain("bad \\x1b[31mgateway");
    expect(output).not.toContain("\u001b");
    const shown = JSON.parse(await cli("show", String(claim.delivery.id), "--json"));
    expect(shown.attempts[0].responseBody).toBe("bad \u001b[31mgateway");
  });

  test("show says a failed ordered delivery's later changes went on without it", async () => {
    const hook = await store.webhooks.create({
      name: "fifo",
      url: "http://c.example/",
      ordered: true,
    });
    const item = change({ data: { id: 9 } });
    const [first] = await store.queue.enqueue(item, { webhookId: hook.id });
    const claims = await store.queue.claim({ workerId: "w", limit: 9, leaseMs: 1000, now: T0 });
    const claim = claims.find((c) => c.delivery.id === first);
    if (!claim) throw new Error("the first change was not claimed");
    expect(claims.filter((c) => c.webhook.id === hook.id)).toHaveLength(1);
    await store.queue.finish(claim, record({ statusCode: 500, outcome: "http_error" }), {
      state: "failed",
    });
    expect(await cli("show", String(first))).toContain(
      "  (Ordered webhook: changes of item 9 queued after this one will go on without it.)",
    );
    await store.queue.enqueue(item, { webhookId: hook.id });
    expect(await cli("show", String(first))).toContain(
      "  (Ordered webhook: 1 later change of item 9 goes on without this one; the receiver may lack this change.)",
    );
  });

  test("show refuses an unknown or malformed id", async () => {
    expect(await refused("show", "999")).toBe("No delivery with id 999");
    expect(await refused("show", "abc")).toContain('Invalid delivery id "abc"');
  });

  test("retry moves failed deliveries back to the queue, keeping their attempts", async () => {
    const id = await failedDelivery();
    expect(await cli("retry", String(id))).toBe("Queued 1 delivery again");
    const shown = await store.queue.get(id);
    expect(shown?.delivery.state).toBe("queued");
    expect(shown?.attempts).toHaveLength(1);
  });

  test("retry <id> of a delivery waiting for an automatic retry makes it due now", async () => {
    const [claim] = await store.queue.claim({ workerId: "w", limit: 1, leaseMs: 1000, now: T0 });
    if (!claim) throw new Error("nothing to claim");
    await store.queue.finish(claim, record({ statusCode: 503, outcome: "http_error" }), {
      state: "queued",
      nextAttemptAt: T0 + 3_600_000,
    });
    expect(await cli("retry", String(claim.delivery.id))).toBe("Queued 1 delivery again");
    expect((await store.queue.get(claim.delivery.id))?.delivery).toMatchObject({
      state: "queued",
      attempts: 1,
      nextAttemptAt: T0,
    });
  });

  test("retry --all-failed retries every failed delivery", async () => {
    await failedDelivery();
    await failedDelivery();
    expect(JSON.parse(await cli("retry", "--all-failed", "--json"))).toEqual({ retried: 2 });
    expect(await store.queue.stats()).toMatchObject({ failed: 0, queued: 3 });
  });

  // FAILED stands for the id of a failed delivery: one bad id among good ones changes nothing.
  test.each([
    [[], "Give delivery ids or --all-failed"],
    [["FAILED", "999"], "Nothing retried: only failed deliveries"],
    [["FAILED", "x"], 'Invalid delivery id "x"'],
    [["FAILED", "3", "999"], "; not 3 (already queued), 999 (unknown)"],
    [["--all-failed", "FAILED"], "Give delivery ids or --all-failed"],
  ])("retry %j is refused and changes nothing: %s", async (args, message) => {
    const failed = await failedDelivery();
    const before = await snapshot();
    const withIds = args.map((arg) => (arg === "FAILED" ? String(failed) : arg));
    expect(await refused("retry", ...withIds)).toContain(message);
    expect(await snapshot()).toEqual(before);
  });

  test("replay <ids> sends those deliveries again and says why of each left", async () => {
    const failed = await failedDelivery();
    expect(await cli("replay", String(failed), "3", "999")).toBe(
      `Replayed 1 of 3 deliveries; not replayed: 3 (already queued), 999 (unknown)`,
    );
    expect((await store.queue.get(failed))?.delivery.state).toBe("queued");
    const again = JSON.parse(await cli("replay", String(failed), "--json"));
    expect(again).toMatchObject({
      replayed: 0,
      skipped: [{ id: failed, reason: "already queued" }],
    });
    expect(await refused("replay", String(failed), "--webhook", "hook")).toContain(
      "Give delivery ids or filter flags, not both",
    );
  });

  test("stats --webhook shows its health; list its status and the day's success rate", async () => {
    const [claim] = await store.queue.claim({ workerId: "w", limit: 1, leaseMs: 1000, now: T0 });
    if (!claim) throw new Error("nothing to claim");
    // A minute ago, by the CLI's clock: in every window.
    const failing = record({ startedAt: T0 - 60_000, statusCode: 500, outcome: "http_error" });
    await store.queue.finish(claim, failing, { state: "failed" });
    const webhook = claim.delivery.webhookName;
    const output = await cli("stats", "--webhook", webhook);
    expect(output).toContain("  status        failing");
    expect(output).toContain("  last success  never");
    expect(output).toMatch(/failing since \S+ \(1 attempt failed in a row\)/);
    expect(output).toContain("  latency       p50 13 ms, p95 13 ms (newest 1 answered attempts");
    expect(output).toMatch(/\n {2}day +1 +0% +1 /);
    const health = JSON.parse(await cli("stats", "--webhook", webhook, "--json"));
    expect(health).toMatchObject({ status: "failing", consecutiveFailures: 1 });
    expect(health.windows.week.outcomes.http_error).toBe(1);
    expect(await cli("list")).toMatch(new RegExp(`${webhook} +yes +failing 0% of 1 `));
    expect(await refused("stats", "--webhook", "nobody")).toContain("No webhook");
  });

  test("stats prints counts per state; --json is exactly one object keyed by state", async () => {
    await failedDelivery();
    expect(await cli("stats")).toBe(
      [
        "STATE       COUNT",
        "queued      2",
        "delivering  0",
        "successful  0",
        "failed      1",
      ].join("\n"),
    );
    expect(await cli("stats", "--json")).toBe(
      '{"queued":2,"delivering":0,"successful":0,"failed":1}',
    );
  });

  test("stats --json on an empty database is all zeros", async () => {
    await store.webhooks.remove(1);
    await store.webhooks.remove(2);
    expect(await cli("stats", "--json")).toBe(
      '{"queued":0,"delivering":0,"successful":0,"failed":0}',
    );
  });

  test("purge --older-than deletes only terminal deliveries completed before the cutoff", async () => {
    await failedDelivery(); // completed at T0
    expect(await cli("purge", "--older-than", "30d")).toBe(
      "Purged 0 deliveries completed before 2029-12-02T00:00:00.000Z",
    );
    const later = createWebhooksCommand({
      env: { DATABASE_URL: path },
      out: (text) => lines.push(text),
      now: () => T0 + 31 * 86_400_000,
    });
    lines = [];
    await runCommand(later, { rawArgs: ["purge", "--older-than", "30d", "--json"] });
    expect(JSON.parse(lines[0] ?? "")).toMatchObject({ purged: 1 });
    expect(await store.queue.stats()).toEqual({
      queued: 2,
      delivering: 0,
      successful: 0,
      failed: 0,
    });
  });

  test.each([
    [[], "Missing required argument: --older-than"],
    [["--older-than", "30"], 'Invalid --older-than "30"'],
    [["--older-than", "soon"], 'Invalid --older-than "soon"'],
  ])("purge %j is refused: %s", async (args, message) => {
    expect(await refused("purge", ...args)).toContain(message);
  });
});

describe("webhooks workers", () => {
  const worker = {
    host: "box",
    pid: 41,
    version: "0.1.0",
    startedAt: T0 - 3_600_000,
    inFlight: 2,
    concurrency: 16,
  };

  test("lists workers with their age: live when seen within 3 heartbeats, stale after", async () => {
    expect(await cli("workers")).toBe("No worker has reported a heartbeat.");
    await store.workers.heartbeat({ ...worker, id: "box:41:aa", lastSeenAt: T0 - 4000 });
    await store.workers.heartbeat({
      ...worker,
      id: "box:42:bb",
      pid: 42,
      startedAt: T0 - 60_000,
      lastSeenAt: T0 - 15_001,
    });
    expect((await cli("workers")).split("\n")).toEqual([
      "ID         HOST  PID  VERSION  IN FLIGHT  UP     LAST SEEN  STATUS",
      "box:41:aa  box   41   0.1.0    2/16       1 h    4 s ago    live",
      "box:42:bb  box   42   0.1.0    2/16       1 min  15 s ago   stale",
    ]);
    const rows = JSON.parse(await cli("workers", "--json"));
    expect(
      rows.map((r: { id: string; stale: boolean; ageMs: number }) => [r.id, r.stale, r.ageMs]),
    ).toEqual([
      ["box:41:aa", false, 4000],
      ["box:42:bb", true, 15_001],
    ]);
    expect(errors).toEqual([]);
  });

  test("WORKER_HEARTBEAT_MS sets what counts as stale", async () => {
    await store.workers.heartbeat({ ...worker, id: "box:41:aa", lastSeenAt: T0 - 15_001 });
    const command = createWebhooksCommand({
      env: { DATABASE_URL: path, WORKER_HEARTBEAT_MS: "10000" },
      out: (text) => lines.push(text),
      now: () => T0,
    });
    lines = [];
    await runCommand(command, { rawArgs: ["workers", "--json"] });
    expect(JSON.parse(lines.join("\n"))[0].stale).toBe(false);
  });

  test("warns on stderr when deliveries are due and no worker is live", async () => {
    await store.webhooks.create({ name: "a", url: "http://a.example/" });
    await store.queue.enqueue(change());
    await store.workers.heartbeat({ ...worker, id: "box:41:aa", lastSeenAt: T0 - 60_000 });
    await cli("workers");
    expect(errors).toEqual([
      "warning: No worker is running: start one with `bun run worker` (1 delivery is due)",
    ]);
    await store.workers.heartbeat({ ...worker, id: "box:41:aa", lastSeenAt: T0 });
    await cli("workers");
    expect(errors).toEqual([]);
  });

  test("escapes control characters a worker wrote", async () => {
    await store.workers.heartbeat({
      ...worker,
      id: "evil\u001b[2J",
      host: "h\nost",
      lastSeenAt: T0,
    });
    const output = await cli("workers");
    expect(output).not.toContain("\u001b");
    expect(output.split("\n")).toHaveLength(2);
  });
});

describe("bun run webhooks (subprocess)", () => {
  function run(args: string[]) {
    return Bun.spawnSync(["bun", "scripts/webhooks.ts", ...args], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: path },
    });
  }

  test("a good command exits 0 and prints to stdout", () => {
    const result = run(["stats", "--json"]);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.toString()).toBe(
      '{"queued":0,"delivering":0,"successful":0,"failed":0}\n',
    );
  });

  test("bad input exits 2 with one line on stderr and nothing on stdout", () => {
    const result = run(["add", "--name", "x", "--url", "javascript:alert(1)"]);
    expect(result.exitCode).toBe(2);
    expect(result.stdout.toString()).toBe("");
    expect(result.stderr.toString()).toBe(
      'error: Invalid --url "javascript:alert(1)": must be an http:// or https:// URL, e.g. http://127.0.0.1:9000/\n',
    );
  });

  test("an unknown command exits 2", () => {
    const result = run(["frobnicate"]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr.toString()).toBe("error: Unknown command frobnicate\n");
  });
});
