import { afterEach, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllowList } from "../../lib/http/ssrf.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import { failure, type RenderTemplates } from "../../lib/webhooks/rendering/render-process.ts";
import { createWorkerSend } from "../../lib/worker/worker-send.ts";
import { change } from "../fakes/change.ts";
import { startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The app's renders, starved of CPU: every delivery is left for the worker to render. */
const starved: RenderTemplates = async (_webhook, body) => ({
  ...failure("rendering took longer than 200 ms (the machine was busy) and was stopped", body),
  busy: true,
});

/**
 * A delivery left to render is rendered by the worker after the claim's last look at its
 * webhook (up to 5 s while the machine is busy): what the webhook became meanwhile must still
 * reach the request, as for any claim (docs/webhooks.md, "Webhook changes reach claims already
 * held within 0.5 s").
 */
async function setUp() {
  const dir = mkdtempSync(join(tmpdir(), "render-at-send-fresh-"));
  const store = openSqliteStore(join(dir, "app.db"), { renderTemplates: starved });
  const endpoint = startFakeEndpoint();
  cleanups.push(
    () => rmSync(dir, { recursive: true, force: true }),
    () => store.close(),
    () => endpoint.stop(),
  );
  const webhook = await store.webhooks.create({
    name: "chat",
    url: `${endpoint.url}/in`,
    bodyTemplate: "{{ data.sku }}",
  });
  await store.queue.enqueue(change());
  const [queued] = await store.queue.list();
  expect(queued).toMatchObject({ renderPending: true, state: "queued" });
  const config = {
    timeoutMs: 5000,
    maxAttempts: 3,
    allowList: parseAllowList("127.0.0.1"),
    retryBaseMs: 1000,
    retryMaxMs: 1000,
    proxy: null,
  };
  /** The worker's send, rendering with `render`; the claim it makes. */
  async function sendWith(render: RenderTemplates) {
    const send = createWorkerSend({
      config,
      limits: { timeoutMs: 5000, leaseMs: 30_000 },
      now: Date.now,
      keepRendered: (claim, rendered) => store.queue.keepRendered(claim, rendered),
      webhook: (id) => store.webhooks.get(id),
      render,
    });
    const [claim] = await store.queue.claim({
      workerId: "w1",
      limit: 1,
      leaseMs: 30_000,
      now: Date.now(),
    });
    if (claim === undefined) throw new Error("Nothing claimed");
    return send(claim, new AbortController().signal);
  }
  return { store, endpoint, webhook, sendWith };
}

/** The worker's render of `{{ data.sku }}`, during which `meanwhile` happens. */
function renderingWhile(meanwhile: () => Promise<unknown>): RenderTemplates {
  return async (_webhook, body) => {
    await meanwhile();
    const rendered = { payload: "A-1", url: null, headers: null, context: body };
    return { ...rendered, templateError: null, matched: true, spentMs: 1 };
  };
}

test("a webhook disabled while the worker renders its delivery is not sent: the claim is given back", async () => {
  const { store, endpoint, webhook, sendWith } = await setUp();
  const delivered = await sendWith(
    renderingWhile(() => store.webhooks.update(webhook.id, { enabled: false })),
  );
  expect(delivered).toBeNull();
  expect(endpoint.requests).toEqual([]);
});

test("a webhook's URL changed while the worker renders its delivery: the request goes to the new one", async () => {
  const { store, endpoint, webhook, sendWith } = await setUp();
  const delivered = await sendWith(
    renderingWhile(() => store.webhooks.update(webhook.id, { url: `${endpoint.url}/moved` })),
  );
  expect(delivered?.outcome.state).toBe("successful");
  expect(endpoint.requests.map((r) => [r.path, r.body])).toEqual([["/moved", "A-1"]]);
});
