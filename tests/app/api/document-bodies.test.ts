import { describe, expect, test } from "bun:test";
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { useDocumentedApp } from "../harness.ts";

/**
 * The requests the document describes are the ones the API takes: bodies built from the
 * webhooks' request schemas in /api/openapi.json, each changing one field to a value the schema
 * refuses (a wrong type, out of an enum, past a bound) or allows (each enum member, each bound,
 * null where nullable, both booleans). What the document refuses gets a 400; what it allows of
 * these (values whose whole rule the schema states) is saved.
 */

interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  maxLength?: number;
  minItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  $ref?: string;
}

interface Doc {
  paths: Record<
    string,
    Record<string, { requestBody?: { content: Record<string, { schema: JsonSchema }> } }>
  >;
  components: { schemas: Record<string, JsonSchema> };
}

const app = useDocumentedApp<Doc>();

function bodySchema(path: string, method: string): JsonSchema {
  const schema =
    app.doc.paths[path]?.[method]?.requestBody?.content["application/json"]?.schema ?? {};
  const name = schema.$ref?.split("/").at(-1);
  return name === undefined ? schema : (app.doc.components.schemas[name] ?? {});
}

/** The schemas a property may take (anyOf for a nullable one), null among them or not. */
function variants(schema: JsonSchema): JsonSchema[] {
  if (schema.anyOf) return schema.anyOf;
  if (Array.isArray(schema.type)) return schema.type.map((type) => ({ ...schema, type }));
  return [schema];
}

/** Values of one property that its schema refuses. */
function refusedValues(schema: JsonSchema): unknown[] {
  const out: unknown[] = [];
  const types = variants(schema).map((v) => v.type);
  if (!types.includes("string")) out.push("text");
  if (!types.includes("number") && !types.includes("integer")) out.push(5);
  if (!types.includes("boolean")) out.push(true);
  if (!types.includes("null")) out.push(null);
  for (const v of variants(schema)) {
    if (v.enum)
      out.push(
        `${String(v.enum[0])}-not-one-of-them`,
        `${String(v.enum[0]).replace(/^./, (c) =>
          c === c.toUpperCase() ? c.toLowerCase() : c.toUpperCase(),
        )}X`,
      );
    if (v.minimum !== undefined) out.push(v.minimum - 1);
    if (v.minimum !== undefined && v.minimum > 0) out.push(0);
    if (v.exclusiveMinimum !== undefined) out.push(v.exclusiveMinimum);
    if (v.maximum !== undefined) out.push(v.maximum + 1);
    if (v.type === "integer" && v.minimum !== undefined) out.push(v.minimum + 0.5);
    if (v.maxLength !== undefined) out.push("x".repeat(v.maxLength + 1));
    if (v.minItems !== undefined && v.minItems > 0) out.push([]);
    if (v.items?.enum) out.push(["not-an-event"]);
  }
  return out;
}

/** Values of one property its schema allows and states the whole rule of (no free text). */
function allowedValues(schema: JsonSchema): unknown[] {
  const out: unknown[] = [];
  for (const v of variants(schema)) {
    if (v.type === "null") out.push(null);
    if (v.type === "boolean") out.push(true, false);
    if (v.enum) out.push(...v.enum);
    if (v.items?.enum) out.push(...v.items.enum.map((e) => [e]));
    if (v.minimum !== undefined) out.push(v.minimum);
    if (v.maximum !== undefined) out.push(v.maximum);
    if (v.exclusiveMinimum !== undefined) out.push(v.exclusiveMinimum + 0.5);
  }
  return out;
}

/** 400, or 413 for a body past the app's limit (64 KiB): both rules the document states. */
function refusal(body: unknown): number {
  return JSON.stringify(body).length > 64 * 1024 ? 413 : 400;
}

function compile(schema: JsonSchema) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  return ajv.compile({ ...schema, components: app.doc.components });
}

describe("webhook bodies built from the document", () => {
  test("POST: each body the document refuses gets a 400, each it allows is saved", async () => {
    const schema = bodySchema("/api/webhooks", "post");
    const valid = compile(schema);
    const seen = { refused: 0, allowed: 0 };
    let n = 0;
    const base = () => ({ name: `hook-${++n}`, url: "https://hooks.example/in" });
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      if (name === "name" || name === "url") continue;
      for (const value of refusedValues(property)) {
        const body = { ...base(), [name]: value };
        expect({ name, value, valid: valid(body) }).toEqual({ name, value, valid: false });
        const response = await app.t.client.json("POST", "/api/webhooks", body);
        expect({ name, value, status: response.status }).toEqual({
          name,
          value,
          status: refusal(body),
        });
        seen.refused++;
      }
      for (const value of allowedValues(property)) {
        const body = { ...base(), [name]: value };
        expect({ name, value, valid: valid(body) }).toEqual({ name, value, valid: true });
        const response = await app.t.client.json("POST", "/api/webhooks", body);
        expect({ name, value, status: response.status }).toEqual({ name, value, status: 201 });
        seen.allowed++;
      }
    }
    for (const body of [{ url: "https://hooks.example/" }, { ...base(), retries: 3 }, []]) {
      expect(valid(body)).toBe(false);
      expect((await app.t.client.json("POST", "/api/webhooks", body)).status).toBe(400);
    }
    expect(seen.refused).toBeGreaterThan(40);
    expect(seen.allowed).toBeGreaterThan(20);
  });

  test("PATCH: the same, and an empty body is refused by the rule the document states", async () => {
    const schema = bodySchema("/api/webhooks/{id}", "patch");
    const valid = compile(schema);
    const created = await app.t.client.json("POST", "/api/webhooks", {
      name: "erp",
      url: "https://hooks.example/in",
    });
    const { id } = (await created.json()) as { id: number };
    for (const [name, property] of Object.entries(schema.properties ?? {})) {
      for (const value of refusedValues(property)) {
        expect(valid({ [name]: value })).toBe(false);
        const body = { [name]: value };
        const response = await app.t.client.json("PATCH", `/api/webhooks/${id}`, body);
        expect({ name, value, status: response.status }).toEqual({
          name,
          value,
          status: refusal(body),
        });
      }
      for (const value of allowedValues(property)) {
        expect(valid({ [name]: value })).toBe(true);
        const response = await app.t.client.json("PATCH", `/api/webhooks/${id}`, { [name]: value });
        expect({ name, value, status: response.status }).toEqual({ name, value, status: 200 });
      }
    }
    expect(valid({})).toBe(false);
    const empty = await app.t.client.json("PATCH", `/api/webhooks/${id}`, {});
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ error: "Nothing to change: give at least one field" });
  });
});

describe("item bodies built from the document", () => {
  test("POST and PATCH: each body the document refuses gets a 400, each it allows is saved", async () => {
    const post = bodySchema("/api/items", "post");
    const patch = bodySchema("/api/items/{id}", "patch");
    let n = 0;
    const base = () => ({ sku: `SKU-${++n}`, name: "Bolt", quantity: 1 });
    const first = await app.t.client.json("POST", "/api/items", base());
    const { id } = (await first.json()) as { id: number };
    for (const [schema, send, ok] of [
      [
        post,
        (body: object) => app.t.client.json("POST", "/api/items", { ...base(), ...body }),
        201,
      ],
      [patch, (body: object) => app.t.client.json("PATCH", `/api/items/${id}`, body), 200],
    ] as const) {
      const valid = compile(schema);
      for (const [name, property] of Object.entries(schema.properties ?? {})) {
        for (const value of refusedValues(property)) {
          const body = { ...(schema === post ? base() : {}), [name]: value };
          expect({ name, value, valid: valid(body) }).toEqual({ name, value, valid: false });
          const response = await send({ [name]: value });
          expect({ name, value, status: response.status }).toEqual({
            name,
            value,
            status: refusal(body),
          });
        }
        for (const value of allowedValues(property)) {
          const response = await send({ [name]: value });
          expect({ name, value, status: response.status }).toEqual({ name, value, status: ok });
        }
      }
    }
  });
});
