import { describe, expect, test } from "bun:test";
import type { AttemptRecord, Outcome } from "../../../lib/webhooks/model.ts";
import { itemChange } from "../../fakes/change.ts";
import { T0, useAppWithWebhook } from "../harness.ts";

const ctx = useAppWithWebhook();

function change(n: number) {
  return itemChange(n, {
    event: "item.created",
    data: { id: n, name: `item ${n}` },
    timestamp: T0,
  });
}

async function enqueue(count: number): Promise<number[]> {
  const ids: number[] = [];
  for (let n = 1; n <= count; n++) ids.push(...(await ctx.t.store.queue.enqueue(change(n))));
  return ids;
}

/** Claims everything due and finishes it with `outcome`, recording one attempt each. */
async function attemptAll(outcome: Outcome, record: Partial<AttemptRecord> = {}) {
  const claims = await ctx.t.store.queue.claim({
    workerId: "w1",
    limit: 100,
    leaseMs: 60_000,
    now: T0.getTime(),
  });
  for (const claim of claims) {
    await ctx.t.store.queue.finish(
      claim,
      {
        startedAt: T0.getTime(),
        durationMs: 12.5,
        statusCode: 500,
        outcome: "http_error",
        error: "HTTP 500",
        responseHeaders: "content-type: text/plain",
        responseBody: "boom",
        ...record,
      },
      outcome,
    );
  }
  return claims.length;
}

describe("GET /admin/background-tasks", () => {
  test("/admin leads there", async () => {
    const response = await ctx.t.client.request("/admin");
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/admin/background-tasks");
  });

  test("shows the count per state and each state's deliveries newest first", async () => {
    await enqueue(2);
    await attemptAll({ state: "failed" });
    await enqueue(3);
    const { html } = await ctx.t.client.open("/admin/background-tasks");
    expect(html).toMatch(/<strong>3<\/strong>queued/);
    expect(html).toMatch(/<strong>2<\/strong>failed/);
    expect(html).toMatch(/<strong>0<\/strong>successful/);
    const queuedSection = html.slice(html.indexOf("<h2>Queued"), html.indexOf("<h2>Delivering"));
    const ids = [...queuedSection.matchAll(/id="delivery-(\d+)"/g)].map((m) => Number(m[1]));
    expect(ids).toEqual([5, 4, 3]);
    expect(html).toContain("Retry all failed (2)");
  });

  test("Failed counts what it lists: failed deliveries and those waiting for an automatic retry", async () => {
    await enqueue(1);
    await attemptAll({ state: "failed" });
    await enqueue(4);
    await attemptAll({ state: "queued", nextAttemptAt: T0.getTime() + 300_000 });
    const { html } = await ctx.t.client.open("/admin/background-tasks");
    const start = html.indexOf("<h2>Failed");
    const failed = html.slice(start, html.indexOf("<h2>", start + 1));
    expect(failed.match(/id="delivery-\d+"/g)).toHaveLength(5);
    expect(failed).toMatch(/\(all 5\)/);
    expect(html).toMatch(/<strong>5<\/strong>failed<span class="muted"> \(4 waiting for a retry\)/);
    expect(html).toContain("Retry all failed (5)");
    const list = (await ctx.t.client.open("/admin/background-tasks/deliveries?state=failed")).html;
    expect(list.match(/id="delivery-\d+"/g)).toHaveLength(5);
  });

  test("says None for an empty state and offers no Retry all when nothing failed", async () => {
    const { html } = await ctx.t.client.open("/admin/background-tasks");
    expect(html).toContain("None.");
    expect(html).not.toContain("Retry all failed");
  });
});

describe("GET /admin/background-tasks/deliveries", () => {
  test("pages through one state newest first with an Older link", async () => {
    await enqueue(30);
    const first = await ctx.t.client.open("/admin/background-tasks/deliveries?state=queued");
    const ids = [...first.html.matchAll(/id="delivery-(\d+)"/g)].map((m) => Number(m[1]));
    expect(ids).toHaveLength(25);
    expect(ids[0]).toBe(30);
    expect(ids.at(-1)).toBe(6);
    const older = first.html.match(/href="([^"]+)">Older/)?.[1]?.replaceAll("&amp;", "&");
    expect(older).toBe("/admin/background-tasks/deliveries?state=queued&before=6");
    const second = await ctx.t.client.open(older ?? "");
    const rest = [...second.html.matchAll(/id="delivery-(\d+)"/g)].map((m) => Number(m[1]));
    expect(rest).toEqual([5, 4, 3, 2, 1]);
    expect(second.html).not.toContain(">Older");
    expect(second.html).toContain("« Newest");
  });

  test("filters by webhook", async () => {
    const other = await ctx.t.store.webhooks.create({ name: "other", url: "http://o.example/" });
    await enqueue(2);
    const { html } = await ctx.t.client.open(
      `/admin/background-tasks/deliveries?webhook=${other.id}`,
    );
    expect(html).toContain("All deliveries to other");
    expect([...html.matchAll(/>other<\/a><\/td>/g)]).toHaveLength(2);
    expect(html).not.toMatch(/>hook<\/a><\/td>/);
  });
});

describe("GET /admin/background-tasks/deliveries/:id", () => {
  test("shows the pretty payload and every attempt", async () => {
    const [id] = await enqueue(1);
    await attemptAll({ state: "queued", nextAttemptAt: T0.getTime() });
    await attemptAll({ state: "failed" }, { statusCode: 503, responseBody: "try later" });
    const { response, html } = await ctx.t.client.open(`/admin/background-tasks/deliveries/${id}`);
    expect(response.status).toBe(200);
    expect(html).toContain("&quot;request_id&quot;: &quot;req-1&quot;");
    expect(html).toContain('id="attempt-1"');
    expect(html).toContain('id="attempt-2"');
    expect(html).toContain(`<td data-label="Status">503</td>`);
    expect(html).toContain("try later");
    expect(html).toContain("13 ms"); // 12.5 ms, rounded
    expect(html).toContain(">Retry</button>");
  });

  test("shows the URL each attempt went to, so attempts before and after a URL change tell apart", async () => {
    const [id] = await enqueue(1);
    await attemptAll(
      { state: "queued", nextAttemptAt: T0.getTime() },
      { url: "http://h.example/" },
    );
    await attemptAll({ state: "failed" }, { url: "http://new.example/hook?a=1&b=<2>" });
    const { html } = await ctx.t.client.open(`/admin/background-tasks/deliveries/${id}`);
    const row = (n: number) => html.slice(html.indexOf(`id="attempt-${n}"`)).split("</tr>")[0];
    expect(html).toContain("<th>URL</th>");
    expect(row(1)).toContain(`<td class="wrap" data-label="URL">http://h.example/</td>`);
    expect(row(2)).toContain(
      `<td class="wrap" data-label="URL">http://new.example/hook?a=1&amp;b=&lt;2&gt;</td>`,
    );
  });

  test("a failed ordered delivery says the item's later changes went on without it", async () => {
    await ctx.t.store.webhooks.update(ctx.webhookId, { ordered: true });
    const [first] = await ctx.t.store.queue.enqueue(change(4));
    const [second] = await ctx.t.store.queue.enqueue(change(4));
    const page = (id: number | undefined) => `/admin/background-tasks/deliveries/${id}`;
    expect(await attemptAll({ state: "failed" })).toBe(1); // the second waits for the first
    expect((await ctx.t.client.open(page(first))).html).toContain(
      "Ordered webhook: 1 later change of item 4 goes on without this one",
    );
    await ctx.t.store.queue.enqueue(change(4));
    expect(await attemptAll({ state: "successful" })).toBe(1);
    expect((await ctx.t.client.open(page(first))).html).toContain(
      "Ordered webhook: 2 later changes of item 4 go on without this one; the receiver may lack this change.",
    );
    expect((await ctx.t.client.open(page(second))).html).not.toContain("Ordered webhook");
  });

  test("answers 404 for an unknown delivery", async () => {
    const response = await ctx.t.client.request("/admin/background-tasks/deliveries/999");
    expect(response.status).toBe(404);
    expect(await response.text()).toContain("Delivery not found");
  });
});

describe("Retry", () => {
  test("POST retry queues a failed delivery again, keeps its history and says so", async () => {
    const [id] = await enqueue(1);
    await attemptAll({ state: "failed" });
    const response = await ctx.t.client.submit(
      `/admin/background-tasks/deliveries/${id}/retry`,
      { return_to: "/admin/background-tasks" },
      { from: "/admin/background-tasks" },
    );
    expect(response.status).toBe(303);
    expect(response.headers.get("location")).toBe(`/admin/background-tasks?notice=retried&n=${id}`);
    const found = await ctx.t.store.queue.get(id ?? 0);
    expect(found?.delivery.state).toBe("queued");
    expect(found?.attempts).toHaveLength(1);
    const { html } = await ctx.t.client.open(response.headers.get("location") ?? "");
    expect(html).toContain(`Delivery #${id} is queued again`);
  });

  test("retry of a delivery that is not failed changes nothing", async () => {
    const [id] = await enqueue(1);
    const response = await ctx.t.client.submit(
      `/admin/background-tasks/deliveries/${id}/retry`,
      {},
    );
    expect(response.headers.get("location")).toContain("notice=not-retried");
  });

  test("return_to outside the admin falls back to the delivery page", async () => {
    const [id] = await enqueue(1);
    const response = await ctx.t.client.submit(`/admin/background-tasks/deliveries/${id}/retry`, {
      return_to: "//evil.example/admin",
    });
    expect(response.headers.get("location")).toStartWith(
      `/admin/background-tasks/deliveries/${id}?`,
    );
  });

  test("Retry all failed queues every failed delivery", async () => {
    await enqueue(3);
    await attemptAll({ state: "failed" });
    const response = await ctx.t.client.submit("/admin/background-tasks/retry-failed", {});
    expect(response.headers.get("location")).toBe("/admin/background-tasks?notice=retried-all&n=3");
    expect((await ctx.t.store.queue.stats()).queued).toBe(3);
  });

  test("Retry is refused without the CSRF field", async () => {
    const [id] = await enqueue(1);
    await attemptAll({ state: "failed" });
    const response = await ctx.t.client.submit(
      `/admin/background-tasks/deliveries/${id}/retry`,
      {},
      { csrf: "" },
    );
    expect(response.status).toBe(403);
    expect((await ctx.t.store.queue.stats()).failed).toBe(1);
  });
});

test("the Webhook link of a delivery row filters by its webhook", async () => {
  await enqueue(1);
  const { html } = await ctx.t.client.open("/admin/background-tasks");
  expect(html).toContain(`href="/admin/background-tasks/deliveries?webhook=${ctx.webhookId}"`);
});

describe("Background Tasks: workers", () => {
  const worker = {
    host: "box",
    version: "0.1.0",
    startedAt: T0.getTime() - 600_000,
    inFlight: 3,
    concurrency: 16,
  };
  const NO_WORKER = "No worker is running: start one with `bun run worker`";

  test("lists each worker with its age, live within 3 heartbeats and stale after", async () => {
    await ctx.t.store.workers.heartbeat({
      ...worker,
      id: "box:41:aa",
      pid: 41,
      lastSeenAt: T0.getTime() - 4000,
    });
    await ctx.t.store.workers.heartbeat({
      ...worker,
      id: "box:42:bb",
      pid: 42,
      lastSeenAt: T0.getTime() - 16_000,
    });
    const { html } = await ctx.t.client.open("/admin/background-tasks");
    const row = (pid: number) => html.slice(html.indexOf(`id="worker-${pid}"`)).split("</tr>")[0];
    expect(row(41)).toContain("box:41:aa");
    expect(row(41)).toContain("3/16");
    expect(row(41)).toContain("4 s ago");
    expect(row(41)).toContain('<span class="badge live">live</span>');
    expect(row(42)).toContain("16 s ago");
    expect(row(42)).toContain('<span class="badge stale">stale</span>');
    expect(html).toContain("up 10 min");
  });

  test(`warns "${NO_WORKER}" when deliveries are due and no worker is live`, async () => {
    await enqueue(2);
    await ctx.t.store.workers.heartbeat({
      ...worker,
      id: "box:41:aa",
      pid: 41,
      lastSeenAt: T0.getTime() - 60_000,
    });
    ctx.t.clock.now = new Date(T0.getTime() + 90_000);
    const { html } = await ctx.t.client.open("/admin/background-tasks");
    // The command is shown as code, not with the literal backticks of the text.
    expect(html).toContain(
      "<strong>No worker is running: start one with <code>bun run worker</code></strong>",
    );
    expect(html).not.toContain("`");
    expect(html).toContain("(2 deliveries are due, the oldest for 1 min.)");
  });

  test("shows no warning with a live worker, nor when nothing is due", async () => {
    const page = async () => (await ctx.t.client.open("/admin/background-tasks")).html;
    expect(await page()).toContain("No worker has reported a heartbeat.");
    expect(await page()).not.toContain('role="alert"');
    await enqueue(1);
    expect(await page()).toContain('role="alert"');
    await ctx.t.store.workers.heartbeat({ ...worker, id: "w", pid: 7, lastSeenAt: T0.getTime() });
    expect(await page()).not.toContain('role="alert"');
  });

  test("escapes what a worker wrote about itself", async () => {
    await ctx.t.store.workers.heartbeat({
      ...worker,
      id: "<script>alert(1)</script>",
      host: "<b>h</b>",
      pid: 9,
      lastSeenAt: T0.getTime(),
    });
    const { html } = await ctx.t.client.open("/admin/background-tasks");
    expect(html).not.toContain("<script>alert(1)");
    expect(html).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(html).toContain("&lt;b&gt;h&lt;/b&gt;");
  });
});
