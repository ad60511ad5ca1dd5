import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { Validator } from "@seriousme/openapi-schema-validator";
import { Hono } from "hono";
import { z } from "zod";
import {
  apiErrorSchema,
  fieldErrorsSchema,
  itemPageSchema,
  itemSchema,
  openApiDocument,
} from "../../lib/app/items/item-schemas.ts";
import { itemPatchSchema, newItemSchema } from "../../lib/inventory/schemas.ts";
import { testApp } from "./harness.ts";

const TOKEN = "openapi-test-admin-token-0123";

interface Operation {
  requestBody?: { content: Record<string, { schema: Record<string, unknown> }> };
  responses: Record<
    string,
    { description?: string; content?: Record<string, { schema: { $ref?: string } }> }
  >;
  parameters?: Array<{ name: string; in: string }>;
}
interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

let t: ReturnType<typeof testApp>;
let doc: OpenApiDocument;

beforeEach(async () => {
  t = testApp({ adminToken: TOKEN });
  const response = await t.app.request("/api/openapi.json");
  expect(response.status).toBe(200);
  doc = (await response.json()) as OpenApiDocument;
});
afterEach(() => t.store.close());

function operation(path: string, method: string): Operation {
  const found = doc.paths[path]?.[method];
  if (!found) throw new Error(`${method.toUpperCase()} ${path} is not in the document`);
  return found;
}

function responseRef(op: Operation, status: number): string | undefined {
  return op.responses[String(status)]?.content?.["application/json"]?.schema.$ref;
}

describe("GET /api/openapi.json", () => {
  test("is served without a token while ADMIN_TOKEN guards the API itself", async () => {
    const response = await t.app.request("/api/openapi.json");
    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect((await t.app.request("/api/items")).status).toBe(401);
  });

  test("is a valid OpenAPI 3.1 document (@seriousme/openapi-schema-validator)", async () => {
    type Spec = Parameters<Validator["validate"]>[0];
    const validator = new Validator();
    const result = await validator.validate(structuredClone(doc) as unknown as Spec);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
    expect(doc.openapi).toStartWith("3.1");
    // The validator does refuse: a response without its required description.
    const broken = structuredClone(doc);
    const answer = operation("/api/items", "get").responses["200"];
    const brokenAnswer = { ...answer };
    delete brokenAnswer.description;
    (broken.paths["/api/items"] as Record<string, Operation>).get = {
      ...operation("/api/items", "get"),
      responses: { "200": brokenAnswer },
    };
    expect((await new Validator().validate(broken as unknown as Spec)).valid).toBe(false);
  });

  test("its bearer scheme says a token is checked in every mode, not only with ADMIN_TOKEN", async () => {
    const schemes = (doc as unknown as { components: { securitySchemes: Record<string, unknown> } })
      .components.securitySchemes;
    expect(schemes.adminToken).toEqual({
      type: "http",
      scheme: "bearer",
      description:
        "ADMIN_TOKEN, or an API token from `bun run app tokens add`, checked whenever one is sent, with or without ADMIN_TOKEN: a made-up, expired or revoked one gets 401, a read token 403 on anything but GET and HEAD. A request without one gets 401 once ADMIN_TOKEN is set or any API token exists; only an app with neither (loopback only, for development) answers it.",
    });
    // As it says: without ADMIN_TOKEN a made-up token is refused, and no token once one exists.
    const open = testApp();
    try {
      const madeUp = { authorization: "Bearer inv_made-up" };
      expect((await open.app.request("/api/items", { headers: madeUp })).status).toBe(401);
      expect((await open.app.request("/api/items")).status).toBe(200);
      await open.store.tokens.create({ name: "m", hash: "h", write: false, expiresAt: null });
      expect((await open.app.request("/api/items")).status).toBe(401);
    } finally {
      open.store.close();
    }
  });

  test("covers every route under /api and the health checks, with every method, and nothing else", () => {
    const health = new Set(["/healthz", "/readyz"]);
    const routes = t.app.routes
      .filter(
        (route) =>
          (route.path.startsWith("/api/") || health.has(route.path)) && route.method !== "ALL",
      )
      .filter((route) => route.path !== "/api/openapi.json")
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, "{$1}")}`);
    const documented = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(new Set(routes).size).toBeGreaterThanOrEqual(5);
    expect([...new Set(documented)].sort()).toEqual([...new Set(routes)].sort());
  });

  test("describes each request body with the zod schema that validates it", () => {
    for (const [path, method, schema] of [
      ["/api/items", "post", newItemSchema],
      ["/api/items/{id}", "patch", itemPatchSchema],
    ] as const) {
      const body = operation(path, method).requestBody?.content["application/json"]?.schema;
      const { $schema: _, ...expected } = z.toJSONSchema(schema, { io: "input" });
      expect(body).toEqual(expected);
      expect(body?.additionalProperties).toBe(false);
    }
  });

  test("describes every answer and error of each method: 400 with field errors, 401, 404, 409", () => {
    const fieldErrors = "#/components/schemas/FieldErrors";
    const error = "#/components/schemas/Error";
    const item = "#/components/schemas/Item";
    const list = operation("/api/items", "get");
    expect(responseRef(list, 200)).toBe("#/components/schemas/ItemPage");
    expect(list.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual([
      "query:limit",
      "query:offset",
    ]);
    const create = operation("/api/items", "post");
    expect([201, 400, 401, 409].map((s) => responseRef(create, s))).toEqual([
      item,
      fieldErrors,
      error,
      fieldErrors,
    ]);
    const read = operation("/api/items/{id}", "get");
    expect([200, 401, 404].map((s) => responseRef(read, s))).toEqual([item, error, error]);
    const update = operation("/api/items/{id}", "patch");
    expect([200, 400, 401, 404, 409].map((s) => responseRef(update, s))).toEqual([
      item,
      fieldErrors,
      error,
      error,
      fieldErrors,
    ]);
    const remove = operation("/api/items/{id}", "delete");
    expect(Object.keys(remove.responses).sort()).toEqual([
      "204",
      "401",
      "403",
      "404",
      "415",
      "429",
    ]);
    for (const op of [read, update, remove]) {
      expect(op.parameters?.map((p) => `${p.in}:${p.name}`)).toEqual(["path:id"]);
    }
    for (const name of ["Item", "ItemPage", "Error", "FieldErrors"]) {
      expect(doc.components.schemas[name]).toBeDefined();
    }
  });

  test("names 403 and 415 on every write, as a read token and a cross-site request get them", async () => {
    const writes = Object.entries(doc.paths).flatMap(([path, methods]) =>
      Object.entries(methods)
        .filter(([method]) => ["post", "put", "patch", "delete"].includes(method))
        .map(([method, op]) => ({ route: `${method} ${path}`, op })),
    );
    expect(writes.length).toBeGreaterThanOrEqual(9);
    for (const { route, op } of writes) {
      expect({ route, refused: [403, 415].map((s) => responseRef(op, s)) }).toEqual({
        route,
        refused: ["#/components/schemas/Error", "#/components/schemas/Error"],
      });
    }
    // What the 403 says happens: a write from another site on the admin session or open mode.
    const open = testApp();
    try {
      const foreign = await open.app.request("/api/items", {
        method: "POST",
        headers: { origin: "https://elsewhere.example", "content-type": "application/json" },
        body: JSON.stringify({ sku: "X", name: "X", quantity: 1 }),
      });
      expect(foreign.status).toBe(403);
      apiErrorSchema.parse(await foreign.json());
    } finally {
      open.store.close();
    }
  });

  test("the API's real answers have the shapes the document names", async () => {
    const headers = { authorization: `Bearer ${TOKEN}`, "content-type": "application/json" };
    const post = (body: unknown) =>
      t.app.request("/api/items", { method: "POST", headers, body: JSON.stringify(body) });
    const created = await post({ sku: "A-1", name: "Widget", quantity: 1 });
    expect(created.status).toBe(201);
    itemSchema.parse(await created.json());
    const invalid = await post({ sku: "", quantity: -1 });
    expect(invalid.status).toBe(400);
    expect(fieldErrorsSchema.parse(await invalid.json()).fieldErrors.quantity).toBeDefined();
    const duplicate = await post({ sku: "A-1", name: "Again", quantity: 1 });
    expect(duplicate.status).toBe(409);
    expect(fieldErrorsSchema.parse(await duplicate.json()).fieldErrors.sku).toBeDefined();
    const page = await t.app.request("/api/items", { headers });
    expect(itemPageSchema.parse(await page.json()).total).toBe(1);
    const missing = await t.app.request("/api/items/999", { headers });
    expect(missing.status).toBe(404);
    apiErrorSchema.parse(await missing.json());
    const refused = await t.app.request("/api/items/1");
    expect(refused.status).toBe(401);
    apiErrorSchema.parse(await refused.json());
  });
});

describe("openApiDocument()", () => {
  test("keeps a generated document, but tries again after a generation that failed", async () => {
    let calls = 0;
    const generate = (async () => {
      calls++;
      if (calls === 1) throw new Error("generation failed");
      return { openapi: "3.1.0", calls };
    }) as unknown as Parameters<typeof openApiDocument>[1];
    const document = openApiDocument(new Hono(), generate);
    await expect(document()).rejects.toThrow("generation failed");
    expect(await document()).toEqual({ openapi: "3.1.0", calls: 2 });
    expect(await document()).toEqual({ openapi: "3.1.0", calls: 2 });
    expect(calls).toBe(2);
  });
});
