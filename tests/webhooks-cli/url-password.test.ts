import { expect, test } from "bun:test";
import { change } from "../fakes/change.ts";
import { useWebhooksCliFile } from "../fakes/webhooks-cli-file.ts";
import { record } from "../store/contract.ts";

const T0 = Date.UTC(2030, 0, 1);
const URL_WITH_PASSWORD = "https://user:s3cret-pw@hook.example/in/{{ data.id }}";
const MASKED = "https://user:***@hook.example/in/{{ data.id }}";

const { files, cli } = useWebhooksCliFile("webhooks-cli-mask-", {
  now: () => T0,
  generateSecret: () => "whsec_dGVzdHRlc3R0ZXN0dGVzdHRlc3R0ZXN0",
});

test("webhooks add, list and list --json show the URL's password as ***; it is stored as given", async () => {
  const added = await cli("add", "--name", "erp", "--url", URL_WITH_PASSWORD);
  expect(added).toContain(`POST ${MASKED}, events *`);
  const list = await cli("list");
  expect(list).toContain(MASKED);
  const listed = JSON.parse(await cli("list", "--json")) as Array<{ url: string }>;
  expect(listed.map((w) => w.url)).toEqual([MASKED]);
  for (const output of [added, list]) expect(output).not.toContain("s3cret-pw");
  expect((await files.store.webhooks.get(1))?.url).toBe(URL_WITH_PASSWORD);
});

test("webhooks update --url with *** keeps the stored password for the same host, not for another", async () => {
  await files.store.webhooks.create({ name: "erp", url: URL_WITH_PASSWORD });
  const updated = await cli("update", "erp", "--url", "https://user:***@hook.example/v2");
  expect(updated).toContain("POST https://user:***@hook.example/v2,");
  expect((await files.store.webhooks.get(1))?.url).toBe("https://user:s3cret-pw@hook.example/v2");
  await cli("update", "erp", "--url", "https://user:***@elsewhere.example/v2");
  expect((await files.store.webhooks.get(1))?.url).toBe("https://user:***@elsewhere.example/v2");
});

test("webhooks show (text and --json) masks the delivery's and each attempt's URL and error", async () => {
  const webhook = await files.store.webhooks.create({ name: "erp", url: URL_WITH_PASSWORD });
  await files.store.queue.enqueue(change());
  const [claim] = await files.store.queue.claim({
    workerId: "w",
    limit: 1,
    leaseMs: 1000,
    now: T0,
  });
  if (!claim) throw new Error("nothing to claim");
  expect(claim.delivery.url).toBe("https://user:s3cret-pw@hook.example/in/1");
  await files.store.queue.finish(
    claim,
    record({
      statusCode: null,
      outcome: "network_error",
      url: claim.delivery.url,
      error: "fetch https://user:s3cret-pw@hook.example/in/1 failed",
    }),
    { state: "failed" },
  );
  const shown = await cli("show", String(claim.delivery.id));
  expect(shown).toContain("url         https://user:***@hook.example/in/1");
  expect(shown).toContain("to https://user:***@hook.example/in/1");
  expect(shown).toContain("fetch https://user:***@hook.example/in/1 failed");
  expect(shown).not.toContain("s3cret-pw");
  const json = await cli("show", String(claim.delivery.id), "--json");
  expect(json).not.toContain("s3cret-pw");
  expect(JSON.parse(json)).toMatchObject({
    webhookId: webhook.id,
    url: "https://user:***@hook.example/in/1",
    attempts: [{ url: "https://user:***@hook.example/in/1" }],
  });
});
