import { afterAll, describe, expect, test } from "bun:test";
import { generateApiToken, hashApiToken } from "../../../lib/app/auth/api-tokens.ts";
import { createApp } from "../../../lib/app/create-app.ts";
import { createLoginThrottle } from "../../../lib/http/token-throttle.ts";
import { createMemoryLogger } from "../../../lib/log.ts";
import { openSqliteStore } from "../../../lib/store/sqlite/store.ts";
import type { Store } from "../../../lib/webhooks/ports.ts";

/**
 * Every /api route (read from the app itself, so a route added later is covered) against every
 * kind of credential, with and without ADMIN_TOKEN, with API tokens existing or not.
 */

const ADMIN = "access-table-admin-token-0123";
const T0 = Date.UTC(2030, 0, 1);
const DAY = 86_400_000;

type Credential = "none" | "made-up" | "revoked" | "expired" | "read" | "write" | "admin";
type Outcome = "admitted" | 401 | 403;

interface World {
  store: Store;
  app: ReturnType<typeof createApp>;
  tokens: Partial<Record<Credential, string>>;
}

const stores: Store[] = [];
afterAll(async () => {
  for (const store of stores) await store.close();
});

async function world(options: { adminToken: string | null; tokensExist: boolean }) {
  const store = openSqliteStore(":memory:", { now: () => T0 });
  stores.push(store);
  const app = createApp({
    store,
    config: { adminToken: options.adminToken },
    now: () => new Date(T0),
    logger: createMemoryLogger(),
    // The table sends hundreds of wrong tokens: the throttle has its own tests (login.test.ts).
    loginThrottle: createLoginThrottle({ freeFailures: Number.MAX_SAFE_INTEGER }),
  });
  const tokens: World["tokens"] = { "made-up": generateApiToken() };
  const add = async (name: string, write: boolean, expiresAt: number | null = null) => {
    const token = generateApiToken();
    await store.tokens.create({ name, hash: hashApiToken(token), write, expiresAt });
    return token;
  };
  tokens.revoked = await add("revoked", true);
  await store.tokens.revoke("revoked");
  if (options.tokensExist) {
    tokens.expired = await add("expired", true, T0 - DAY);
    tokens.read = await add("read", false);
    tokens.write = await add("write", true);
  }
  if (options.adminToken !== null) tokens.admin = options.adminToken;
  tokens.none = "";
  return { store, app, tokens } satisfies World;
}

/** Every method and path the app answers under /api but its public description, and /metrics. */
function apiRoutes(app: World["app"]): Array<{ method: string; path: string }> {
  const seen = new Set<string>();
  return app.routes
    .filter(
      (r) =>
        r.method !== "ALL" &&
        ((r.path.startsWith("/api/") && !r.path.endsWith(".json")) || r.path === "/metrics"),
    )
    .map((r) => ({ method: r.method, path: r.path.replaceAll(/:\w+/g, "1") }))
    .filter(({ method, path }) => {
      const key = `${method} ${path}`;
      return !seen.has(key) && seen.add(key) !== undefined;
    });
}

function expected(
  credential: Credential,
  method: string,
  mode: { adminToken: boolean; tokensExist: boolean },
): Outcome {
  switch (credential) {
    case "none":
      return mode.adminToken || mode.tokensExist ? 401 : "admitted";
    case "made-up":
    case "revoked":
    case "expired":
      return 401;
    case "read":
      return method === "GET" ? "admitted" : 403;
    case "write":
    case "admin":
      return "admitted";
  }
}

const modes = [
  { adminToken: true, tokensExist: true },
  { adminToken: true, tokensExist: false },
  { adminToken: false, tokensExist: true },
  { adminToken: false, tokensExist: false },
];

describe("every /api route and /metrics by credential", () => {
  for (const mode of modes) {
    const title = `${mode.adminToken ? "with" : "without"} ADMIN_TOKEN, ${mode.tokensExist ? "API tokens existing" : "no API token"}`;
    test(title, async () => {
      const w = await world({ ...mode, adminToken: mode.adminToken ? ADMIN : null });
      const routes = apiRoutes(w.app);
      // The routes the app has: items, webhooks (rotate-secret too) and deliveries, reads and writes.
      expect(routes.length).toBeGreaterThanOrEqual(13);
      const rows: string[] = [];
      const wrong: string[] = [];
      for (const [credential, token] of Object.entries(w.tokens) as Array<[Credential, string]>) {
        for (const { method, path } of routes) {
          const headers: Record<string, string> = { "content-type": "application/json" };
          if (token !== "") headers.authorization = `Bearer ${token}`;
          const body = method === "GET" ? undefined : "{}";
          const status = (await w.app.request(path, { method, headers, body })).status;
          const outcome: Outcome = status === 401 || status === 403 ? status : "admitted";
          const want = expected(credential, method, mode);
          rows.push(`${credential} ${method} ${path}`);
          if (outcome !== want)
            wrong.push(`${credential} ${method} ${path}: ${status}, expected ${want}`);
          expect(status).not.toBe(429);
          expect(status).not.toBe(500);
        }
      }
      expect(wrong).toEqual([]);
      expect(rows.length).toBe(routes.length * Object.keys(w.tokens).length);
    });
  }
});
