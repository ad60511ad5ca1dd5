import { beforeEach, expect, test } from "bun:test";
import { itemChange } from "../fakes/change.ts";
import { usageRefusal, useWebhooksCliFile } from "../fakes/webhooks-cli-file.ts";
import { record } from "../store/contract.ts";

const T0 = Date.UTC(2030, 0, 1);
const HOUR = 3_600_000;
const clock = { t: T0 };

const { files, cli } = useWebhooksCliFile("webhooks-replay-", { now: () => clock.t });
beforeEach(() => {
  clock.t = T0;
});

/** Runs a command that must fail as bad input: exit code 2 and one line of message. */
function refused(...rawArgs: string[]): Promise<string> {
  return usageRefusal(() => cli(...rawArgs));
}

/** Webhook "erp": a successful delivery queued at each of hours 0..3; "other": one at hour 0. */
async function ended() {
  const erp = await files.store.webhooks.create({ name: "erp", url: "https://erp.example/h" });
  const other = await files.store.webhooks.create({
    name: "other",
    url: "https://other.example/h",
  });
  await files.store.queue.enqueue(itemChange(100), { webhookId: other.id });
  for (let hour = 0; hour < 4; hour++) {
    clock.t = T0 + hour * HOUR;
    await files.store.queue.enqueue(itemChange(hour + 1), { webhookId: erp.id });
  }
  for (const claim of await files.store.queue.claim({
    workerId: "w",
    limit: 10,
    leaseMs: 1000,
    now: clock.t,
  })) {
    await files.store.queue.finish(claim, record(), { state: "successful" });
  }
  clock.t = T0 + 10 * HOUR;
  return { erp, other };
}

async function states() {
  const page = await files.store.queue.search({}, { limit: 100, offset: 0 });
  return page.deliveries.map((d) => `${d.webhookName}:${d.objectId}:${d.state}`).reverse();
}

test("replay --webhook NAME --since --until queues that range again, successful ones included", async () => {
  await ended();
  const line = await cli(
    "replay",
    "--webhook",
    "erp",
    "--since",
    new Date(T0 + HOUR).toISOString(),
    "--until",
    new Date(T0 + 3 * HOUR).toISOString(),
  );
  expect(line).toBe("Replayed 2 of 2 matching deliveries");
  expect(await states()).toEqual([
    "other:100:successful",
    "erp:1:successful",
    "erp:2:queued",
    "erp:3:queued",
    "erp:4:successful",
  ]);
});

test("--since takes a time ago; --json says what was done", async () => {
  await ended();
  // 10 h after T0: "8h" ago is hour 2, so hours 2 and 3.
  const out = JSON.parse(await cli("replay", "--webhook", "1", "--since", "8h", "--json"));
  expect(out).toEqual({
    replayed: 2,
    matched: 2,
    cut: false,
    limit: 100_000,
    next_since: null,
    message: "Replayed 2 of 2 matching deliveries",
  });
});

test("--states failed leaves successful deliveries alone", async () => {
  await ended();
  expect(await cli("replay", "--webhook", "erp", "--states", "failed")).toBe(
    "Replayed 0 of 0 matching deliveries",
  );
  expect((await files.store.queue.stats()).queued).toBe(0);
});

test("bad flags are one line naming the flag, exit 2, nothing replayed", async () => {
  await ended();
  expect(await refused("replay", "--since", "yesterday")).toBe(
    'Invalid --since "yesterday": must be an ISO 8601 date and time with its zone, e.g. 2026-11-27T21:00:00Z',
  );
  expect(await refused("replay", "--webhook", "erp", "--states", "queued")).toStartWith(
    'Invalid --states "queued": replay takes successful and failed',
  );
  expect(await refused("replay", "--webhook", "erp", "--states", "done")).toStartWith(
    'Invalid --states "done": must be',
  );
  expect(await refused("replay", "--object-id", "x")).toStartWith('Invalid --object-id "x"');
  expect(await refused("replay", "--since", "1h", "--until", "2h")).toStartWith(
    'Invalid --until "2h": must be after since',
  );
  expect(await refused("replay", "--webhook", "nope")).toBe('No webhook with id or name "nope"');
  expect(await refused("replay")).toStartWith("Nothing to replay");
  expect(await refused("replay", "--states", "failed")).toStartWith("Nothing to replay");
  expect(await refused("replay", "--webhook", "erp", "--colour", "red")).toContain("--colour");
  expect((await files.store.queue.stats()).queued).toBe(0);
});
