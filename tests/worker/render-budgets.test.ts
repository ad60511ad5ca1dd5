import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseAllowList } from "../../lib/http/ssrf.ts";
import { openSqliteStore } from "../../lib/store/sqlite/store.ts";
import type { Store } from "../../lib/webhooks/ports.ts";
import {
  createTemplateRenderer,
  RENDER_DEADLINE_MS,
  type TemplateRenderer,
} from "../../lib/webhooks/rendering/render-process.ts";
import { createDeliveryWorker } from "../../lib/worker/bind.ts";
import { change } from "../fakes/change.ts";
import { type FakeEndpoint, startFakeEndpoint } from "../fakes/webhook-endpoint.ts";

// Renderer processes start in about 0.1 s alone, seconds on a loaded 2-core machine.
setDefaultTimeout(60_000);

/** Cheap for a small quantity; for 20,000, far past a webhook's 100 ms of CPU. */
const COSTLY_FOR_BIG =
  '{% set s = "x" * 100000 %}{% for i in range(data.quantity) %}{% set t = s * 10 %}{% endfor %}costly';
const STOPPED_CHILD = join(import.meta.dir, "..", "fakes", "stopped-render-child.ts");

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function setUp(renderer?: TemplateRenderer): { store: Store; endpoint: FakeEndpoint } {
  const dir = mkdtempSync(join(tmpdir(), "render-budgets-"));
  const store = openSqliteStore(join(dir, "app.db"), { renderTemplates: renderer?.render });
  const endpoint = startFakeEndpoint();
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanups.push(() => store.close());
  cleanups.push(() => endpoint.stop());
  if (renderer) cleanups.push(() => renderer.close());
  return { store, endpoint };
}

function workerOf(store: Store) {
  return createDeliveryWorker({
    store,
    config: {
      timeoutMs: 5000,
      maxAttempts: 3,
      allowList: parseAllowList("127.0.0.1"),
      leaseMs: 30_000,
      concurrency: 8,
      retryBaseMs: 1000,
      retryMaxMs: 1000,
    },
  });
}

/** Runs the worker until nothing is due any more. */
async function drain(store: Store): Promise<void> {
  const worker = workerOf(store);
  for (let i = 0; i < 20 && (await store.queue.stats()).queued > 0; i++) await worker.runOnce();
}

describe("a template's cost is its own webhook's; load is never a failed delivery", () => {
  test("40 templated webhooks, one costly for some data: every other webhook is delivered, for that change and a harmless one", async () => {
    const { store, endpoint } = setUp();
    await store.webhooks.create({
      name: "costly",
      url: `${endpoint.url}/costly`,
      bodyTemplate: COSTLY_FOR_BIG,
    });
    for (let n = 2; n <= 40; n++) {
      await store.webhooks.create({
        name: `hook ${n}`,
        url: `${endpoint.url}/${n}`,
        bodyTemplate: "{{ data.sku }}",
      });
    }
    await store.queue.enqueue(
      change({ data: { id: 1, sku: "BIG", name: "Big", quantity: 20_000 } }),
    );
    await store.queue.enqueue(
      change({ data: { id: 2, sku: "SMALL", name: "Small", quantity: 1 } }),
    );
    await drain(store);

    const received = endpoint.requests.map((r) => `${r.path} ${r.body}`).sort();
    const expected = [
      "/costly costly",
      ...Array.from({ length: 39 }, (_, i) => [`/${i + 2} BIG`, `/${i + 2} SMALL`]).flat(),
    ].sort();
    expect(received).toEqual(expected);
    const failed = (await store.queue.list({ limit: 200 })).filter((d) => d.state === "failed");
    expect(failed.map((d) => [d.webhookName, d.lastError])).toEqual([
      [
        "costly",
        `Template error: this webhook's templates took more than their ${RENDER_DEADLINE_MS} ms of CPU for this change (each webhook's own budget; other webhooks' renders do not count against it) and were stopped`,
      ],
    ]);
  });

  test("a render stopped because its renderer process was starved (SIGSTOP) is rendered by the worker and delivered, nobody retrying it", async () => {
    const { store, endpoint } = setUp(createTemplateRenderer({ size: 1, child: STOPPED_CHILD }));
    await store.webhooks.create({
      name: "chat",
      url: `${endpoint.url}/{{ data.sku }}`,
      headers: [["X-Qty", "{{ data.quantity }}"]],
      bodyTemplate: '{"text": {{ data.name | tojson }}}',
    });
    await store.queue.enqueue(change({ data: { id: 3, sku: "A-3", name: "Bolt", quantity: 7 } }));
    const [queued] = await store.queue.list();
    expect(queued).toMatchObject({ state: "queued", renderPending: true, templateFailed: false });

    await drain(store);
    expect(endpoint.requests.map((r) => [r.path, r.headers["x-qty"], r.body])).toEqual([
      ["/A-3", "7", '{"text": "Bolt"}'],
    ]);
    const [sent] = await store.queue.list();
    expect(sent).toMatchObject({
      state: "successful",
      attempts: 1,
      renderPending: false,
      payload: '{"text": "Bolt"}',
      url: `${endpoint.url}/A-3`,
      headers: [["X-Qty", "7"]],
    });
  });
});
