import { describe, expect, test } from "bun:test";
import type { Outcome } from "../../../lib/webhooks/model.ts";
import { useAppWithWebhook } from "../harness.ts";

const ctx = useAppWithWebhook();

/** Creates an item through the admin (queuing its item.created) and returns its id. */
async function createItem(sku: string): Promise<number> {
  await ctx.t.client.submit(
    "/admin/items",
    { sku, name: `Widget ${sku}`, quantity: "1", location: "" },
    { from: "/admin/items/new" },
  );
  const item = (await ctx.t.store.items.list({ limit: 100, offset: 0 })).find((i) => i.sku === sku);
  if (!item) throw new Error(`item ${sku} was not created`);
  return item.id;
}

/** What a worker does: claim everything due and finish it as `outcome`. */
async function attemptAll(outcome: Outcome) {
  const claims = await ctx.t.store.queue.claim({
    workerId: "w1",
    limit: 100,
    leaseMs: 60_000,
    now: ctx.t.clock.now.getTime(),
  });
  for (const claim of claims) {
    await ctx.t.store.queue.finish(
      claim,
      {
        startedAt: ctx.t.clock.now.getTime(),
        durationMs: 5,
        statusCode: 500,
        outcome: "http_error",
        error: "HTTP 500",
        responseHeaders: "",
        responseBody: "boom",
      },
      outcome,
    );
  }
}

const notice = (html: string) => html.match(/<p class="notice" role="status">([^<]*)<\/p>/)?.[1];

describe("after Retry", () => {
  test("the notice tells the delivery's state when the page is drawn, not 'queued again' beside 'failed'", async () => {
    await createItem("A");
    await attemptAll({ state: "failed" });
    const [failed] = await ctx.t.store.queue.list({ state: "failed" });
    if (!failed) throw new Error("a failed delivery");
    const page = `/admin/background-tasks/deliveries/${failed.id}`;
    const retry = await ctx.t.client.submit(`${page}/retry`, { return_to: page }, { from: page });
    const location = retry.headers.get("location") ?? "";

    // Still queued when the browser follows the redirect.
    expect(notice((await ctx.t.client.open(location)).html)).toBe(
      `Delivery #${failed.id} is queued again; a worker will pick it up.`,
    );
    // A worker takes it and it fails again before the page is drawn (or on a reload).
    await attemptAll({ state: "failed" });
    const { html } = await ctx.t.client.open(location);
    expect(notice(html)).toBe(
      `Delivery #${failed.id} was retried and failed again: see its newest attempt.`,
    );
    expect(html).toContain('<span class="badge failed">failed</span>');
    expect(html).not.toContain("queued again");
  });

  test("the notice says delivered once the retry succeeded", async () => {
    await createItem("A");
    await attemptAll({ state: "failed" });
    const [failed] = await ctx.t.store.queue.list({ state: "failed" });
    if (!failed) throw new Error("a failed delivery");
    const list = "/admin/background-tasks/deliveries?state=failed";
    const retry = await ctx.t.client.submit(
      `/admin/background-tasks/deliveries/${failed.id}/retry`,
      { return_to: list },
      { from: list },
    );
    await attemptAll({ state: "successful" });
    const { html } = await ctx.t.client.open(retry.headers.get("location") ?? "");
    expect(notice(html)).toBe(`Delivery #${failed.id} was retried and delivered.`);
  });
});

describe("the failed list", () => {
  test("has Retry all failed, which queues them all and comes back to the list", async () => {
    await createItem("A");
    await createItem("B");
    await attemptAll({ state: "failed" });
    const list = "/admin/background-tasks/deliveries?state=failed";
    const { html } = await ctx.t.client.open(list);
    expect(html).toContain("Retry all failed");
    const response = await ctx.t.client.submit(
      "/admin/background-tasks/retry-failed",
      { return_to: list },
      { from: list },
    );
    expect(response.headers.get("location")).toBe(`${list}&notice=retried-all&n=2`);
    expect((await ctx.t.store.queue.stats()).queued).toBe(2);
    const after = await ctx.t.client.open(response.headers.get("location") ?? "");
    expect(notice(after.html)).toBe("2 failed deliveries queued again.");
    // Nothing failed left: no button.
    expect(after.html).not.toContain("Retry all failed");
  });

  test("other lists have no Retry all failed button", async () => {
    await createItem("A");
    const { html } = await ctx.t.client.open("/admin/background-tasks/deliveries?state=queued");
    expect(html).not.toContain("Retry all failed");
  });
});

describe("an item's deliveries", () => {
  test("its page shows its deliveries and links to all of them; the list holds only its own", async () => {
    const a = await createItem("A");
    const b = await createItem("B");
    await ctx.t.client.submit(
      `/admin/items/${a}`,
      { sku: "A", name: "Renamed", quantity: "2", location: "" },
      { from: `/admin/items/${a}` },
    );
    const { html } = await ctx.t.client.open(`/admin/items/${a}`);
    expect(html).toContain("Deliveries of this item");
    expect(html).toContain(`href="/admin/background-tasks/deliveries?item=${a}"`);
    const section = html.slice(html.indexOf("Deliveries of this item"));
    expect(
      [...section.matchAll(/<td data-label="Event">(item\.\w+)<\/td>/g)].map((m) => m[1]),
    ).toEqual(["item.updated", "item.created"]);

    const list = await ctx.t.client.open(`/admin/background-tasks/deliveries?item=${b}`);
    expect(list.html).toContain("All deliveries of item B");
    const ids = [...list.html.matchAll(/id="delivery-(\d+)"/g)].map((m) => Number(m[1]));
    const ofB = (await ctx.t.store.queue.list({})).filter(
      (d) => JSON.parse(d.payload).data.id === b,
    );
    expect(ids).toEqual(ofB.map((d) => d.id));
    expect(ids).toHaveLength(1);
  });

  test("the list of an item's deliveries pages through all of them, older pages by link", async () => {
    const a = await createItem("A");
    const b = await createItem("B");
    for (let n = 0; n < 30; n++) {
      const id = n % 3 === 0 ? b : a;
      await ctx.t.client.submit(
        `/admin/items/${id}`,
        { sku: id === a ? "A" : "B", name: `Name ${n}`, quantity: String(n), location: "" },
        { from: `/admin/items/${id}` },
      );
    }
    const seen: number[] = [];
    let path = `/admin/background-tasks/deliveries?item=${a}`;
    for (let page = 0; page < 5 && path; page++) {
      const { html } = await ctx.t.client.open(path);
      seen.push(...[...html.matchAll(/id="delivery-(\d+)"/g)].map((m) => Number(m[1])));
      const older = html.match(/href="([^"]+)">Older/)?.[1]?.replaceAll("&amp;", "&");
      path = older ?? "";
    }
    const ofA = (await ctx.t.store.queue.list({ limit: 1000 }))
      .filter((d) => JSON.parse(d.payload).data.id === a)
      .map((d) => d.id);
    expect(ofA).toHaveLength(21);
    expect(seen).toEqual(ofA);
  });
});

describe("a webhook's page", () => {
  test("shows its recent deliveries with a link to all of them", async () => {
    await createItem("A");
    const other = await ctx.t.store.webhooks.create({ name: "other", url: "http://o.example/" });
    const { html } = await ctx.t.client.open(`/admin/webhooks/${ctx.webhookId}`);
    expect(html).toContain("Recent deliveries");
    expect(html).toContain(`href="/admin/background-tasks/deliveries?webhook=${ctx.webhookId}"`);
    expect(html).toContain("item.created");
    const empty = await ctx.t.client.open(`/admin/webhooks/${other.id}`);
    expect(empty.html.slice(empty.html.indexOf("Recent deliveries"))).toContain("None.");
  });
});
