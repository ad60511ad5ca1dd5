import { afterEach, describe, expect, test } from "bun:test";
import { createApp } from "../../../lib/app/create-app.ts";
import { openPostgresStore } from "../../../lib/store/postgres/store.ts";
import { openSqliteStore } from "../../../lib/store/sqlite/store.ts";
import type { Store } from "../../../lib/webhooks/ports.ts";
import { describePostgres, usePostgresCluster } from "../../fakes/postgres-cluster.ts";

/**
 * Cursor paging of GET /api/deliveries and GET /api/webhooks while another client writes
 * between pages (inserts and deletes): no row twice, none skipped among those that existed
 * throughout. Offsets, kept for old clients, do drift under the same writes.
 */
function describePaging(name: string, open: () => Promise<Store>): void {
  describe(`cursor paging on ${name}`, () => {
    let store: Store;
    afterEach(async () => {
      await store?.close();
    });

    async function setup() {
      store = await open();
      const app = createApp({ store, config: { adminToken: null } });
      const headers = { "content-type": "application/json" };
      const send = async (method: string, path: string, body?: unknown) => {
        const init = body === undefined ? {} : { body: JSON.stringify(body) };
        const response = await app.request(path, { method, headers, ...init });
        expect(response.status).toBeLessThan(300);
        return response;
      };
      // biome-ignore lint/suspicious/noExplicitAny: JSON answers, read field by field.
      const get = async (path: string): Promise<{ body: any; link: string | null }> => {
        const response = await send("GET", path);
        return { body: await response.json(), link: response.headers.get("link") };
      };
      let sku = 0;
      /** Another client: an item change, a delivery to each webhook. */
      const change = () =>
        send("POST", "/api/items", { sku: `S-${++sku}`, name: "x", quantity: 1 });
      const webhook = async (name: string) =>
        (await (await send("POST", "/api/webhooks", { name, url: "http://127.0.0.1:9/in" })).json())
          .id as number;
      return { app, get, send, change, webhook };
    }

    /** Follows the Link header from `first`, calling `between` before each next page. */
    async function follow(
      env: Awaited<ReturnType<typeof setup>>,
      first: string,
      rows: string,
      between: (page: number) => Promise<void>,
    ) {
      const seen: number[] = [];
      let path: string | null = first;
      for (let page = 0; path !== null; page++) {
        if (page > 50) throw new Error("Too many pages");
        const { body, link } = await env.get(path);
        seen.push(...body[rows].map((row: { id: number }) => row.id));
        const next = /^<([^>]+)>; rel="next"$/.exec(link ?? "")?.[1] ?? null;
        expect(next === null).toBe(body.next === null);
        if (next !== null)
          expect(new URL(next, "http://x").searchParams.get("cursor")).toBe(body.next);
        path = next;
        if (path !== null) await between(page);
      }
      return seen;
    }

    test("GET /api/deliveries: every row once while others insert and delete between pages", async () => {
      const env = await setup();
      await env.webhook("keep");
      const temp = await env.webhook("temp");
      for (let i = 0; i < 12; i++) await env.change();
      const before = await env.get("/api/deliveries?limit=500");
      const existing = before.body.deliveries as Array<{ id: number; webhook_name: string }>;
      expect(existing).toHaveLength(24);
      const throughout = existing.filter((d) => d.webhook_name === "keep").map((d) => d.id);

      const seen = await follow(env, "/api/deliveries?limit=5", "deliveries", async (page) => {
        await env.change();
        await env.change();
        // The temp webhook's deliveries go with it: rows not yet seen and rows seen.
        if (page === 1) await env.send("DELETE", `/api/webhooks/${temp}`, {});
      });
      expect(new Set(seen).size).toBe(seen.length);
      expect(throughout.filter((id) => !seen.includes(id))).toEqual([]);
      // Newest first, and nothing newer than the first page's start.
      expect(seen).toEqual([...seen].sort((a, b) => b - a));
      expect(Math.max(...seen)).toBe(Math.max(...existing.map((d) => d.id)));

      // The same writes under offsets: the rows pushed down come again.
      const offsets: number[] = [];
      for (let offset = 0; offset < 15; offset += 5) {
        const { body } = await env.get(`/api/deliveries?limit=5&offset=${offset}`);
        offsets.push(...body.deliveries.map((d: { id: number }) => d.id));
        await env.change();
      }
      expect(new Set(offsets).size).toBeLessThan(offsets.length);
    });

    test("GET /api/webhooks: a page with limit, every webhook once while others are added and removed", async () => {
      const env = await setup();
      const ids: number[] = [];
      for (let i = 0; i < 11; i++) ids.push(await env.webhook(`w${i}`));
      const all = await env.get("/api/webhooks");
      expect(all.body.webhooks).toHaveLength(11);
      expect(all.body.next).toBeNull();
      expect(all.link).toBeNull();
      const removed = new Set([ids[1], ids[8]]);
      let added = 0;
      const seen = await follow(env, "/api/webhooks?limit=4", "webhooks", async (page) => {
        await env.webhook(`new${added++}`);
        // One already seen, one not yet.
        if (page === 0) {
          for (const id of removed) await env.send("DELETE", `/api/webhooks/${id}`, {});
        }
      });
      expect(new Set(seen).size).toBe(seen.length);
      expect(ids.filter((id) => !removed.has(id) && !seen.includes(id))).toEqual([]);
      expect(seen).toEqual([...seen].sort((a, b) => a - b));
    });

    test("a bad cursor, or a cursor with an offset, is 400 naming the field", async () => {
      const env = await setup();
      for (const path of ["/api/deliveries", "/api/webhooks"]) {
        for (const [query, field] of [
          ["cursor=abc", "cursor"],
          ["cursor=0", "cursor"],
          ["cursor=5&offset=10", "offset"],
        ] as const) {
          const response = await env
            .send("GET", "/api/items")
            .then(() =>
              createApp({ store, config: { adminToken: null } }).request(`${path}?${query}`),
            );
          expect(response.status).toBe(400);
          const body = (await response.json()) as { fieldErrors: Record<string, string[]> };
          expect(Object.keys(body.fieldErrors)).toEqual([field]);
        }
      }
    });
  });
}

describePaging("SQLite", async () => openSqliteStore(":memory:"));

describePostgres("PostgreSQL", () => {
  const pg = usePostgresCluster();
  describePaging("PostgreSQL", async () => openPostgresStore(await pg.cluster.createDatabase()));
});
