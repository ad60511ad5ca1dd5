/**
 * The list routes' query strings against the document: the parameters /api/openapi.json shows
 * are the ones the handler validates with (hono-openapi's validator, one schema), so a value of
 * the documented form is taken and one that is not is a 400 naming the parameter.
 */
import { afterEach, beforeEach, expect, test } from "bun:test";
import { testApp } from "../harness.ts";

let t: ReturnType<typeof testApp>;
beforeEach(() => {
  t = testApp();
});
afterEach(() => t.store.close());

type Parameter = { name: string; in: string; schema: { type?: string; pattern?: string } };

async function documented(path: string): Promise<Parameter[]> {
  const doc = (await (await t.app.request("/api/openapi.json")).json()) as {
    paths: Record<string, { get: { parameters?: Parameter[] } }>;
  };
  return (doc.paths[path]?.get.parameters ?? []).filter((p) => p.in === "query");
}

/** A value of each documented parameter's form (and within the ranges the descriptions state). */
const GOOD: Record<string, string> = {
  limit: "5",
  offset: "0",
  cursor: "1",
  webhook: "1",
  message_id: "msg_abc",
  state: "failed",
  states: "failed,queued",
  event: "item.created",
  object_model: "item",
  object_id: "1",
  since: "2026-11-27T21:00:00Z",
  until: "2026-11-28T21:00:00Z",
};

test.each(["/api/items", "/api/webhooks", "/api/deliveries"])(
  "%s: each documented query parameter, given alone in its form, is taken; out of its form, a 400 naming it",
  async (path) => {
    const parameters = await documented(path);
    expect(parameters.length).toBeGreaterThan(0);
    for (const { name, schema } of parameters) {
      const good = GOOD[name];
      expect({ name, known: good !== undefined }).toEqual({ name, known: true });
      if (schema.pattern !== undefined) expect(good).toMatch(new RegExp(schema.pattern));
      // state and states may not come together; each alone is fine.
      const ok = await t.app.request(`${path}?${name}=${encodeURIComponent(good ?? "")}`);
      expect({ name, status: ok.status }).toEqual({ name, status: 200 });
      const bad = await t.app.request(`${path}?${name}=${encodeURIComponent("not\u0001ok")}`);
      expect({ name, status: bad.status }).toEqual({ name, status: 400 });
      const body = (await bad.json()) as { fieldErrors?: Record<string, string[]> };
      expect(Object.keys(body.fieldErrors ?? {})).toEqual([name]);
    }
  },
);

test("/api/deliveries refuses a parameter the document does not show, naming it", async () => {
  const answer = await t.app.request("/api/deliveries?colour=blue");
  expect(answer.status).toBe(400);
  expect(await answer.json()).toMatchObject({ fieldErrors: { colour: ["Unknown field"] } });
});

test("/api/deliveries: the rules between parameters the descriptions state are kept", async () => {
  const cases: Array<[string, string]> = [
    ["since=2026-11-28T00:00:00Z&until=2026-11-27T00:00:00Z", "until"],
    ["state=failed&states=queued", "states"],
    ["cursor=5&offset=3", "offset"],
  ];
  for (const [query, field] of cases) {
    const answer = await t.app.request(`/api/deliveries?${query}`);
    expect({ query, status: answer.status }).toEqual({ query, status: 400 });
    const body = (await answer.json()) as { fieldErrors: Record<string, string[]> };
    expect(Object.keys(body.fieldErrors)).toContain(field);
  }
});
