import { describe, expect, test } from "bun:test";
import { WEBHOOK_FIELDS } from "../../../lib/webhooks/definition/field-table.ts";
import { CLIENT_CERT_FILE, CLIENT_KEY_FILE, OTHER_KEY_FILE } from "../../fakes/tls-hook-server.ts";
import { createClient, useTokenApp } from "../harness.ts";

const TOKEN = "webhooks-api-test-token-0123";
const HOOK = { name: "erp", url: "https://erp.example.com/hooks/inventory" };

const ctx = useTokenApp(TOKEN);

async function created(fields: Record<string, unknown> = {}) {
  const response = await ctx.api.json("POST", "/api/webhooks", { ...HOOK, ...fields });
  expect(response.status).toBe(201);
  return (await response.json()) as Record<string, unknown> & { id: number };
}

describe("/api/webhooks round trip", () => {
  test("POST creates with the defaults of webhooks add, answers 201 with the generated secret once", async () => {
    const response = await ctx.api.json("POST", "/api/webhooks", HOOK);
    expect(response.status).toBe(201);
    const body = (await response.json()) as Record<string, unknown>;
    expect(response.headers.get("location")).toBe(`/api/webhooks/${body.id}`);
    expect(body).toMatchObject({
      name: "erp",
      url: HOOK.url,
      events: ["*"],
      method: "POST",
      content_type: "application/json",
      headers: [],
      body_template: null,
      condition: null,
      ssl_verify: true,
      ca_file: null,
      timeout_ms: null,
      max_per_second: null,
      retry_schedule: "day",
      enabled: true,
      has_secret: true,
      created_at: "2025-03-04T05:06:07.000Z",
    });
    expect(body.secret).toMatch(/^whsec_/);
    const stored = await ctx.t.store.webhooks.get(Number(body.id));
    expect(stored?.secret).toBe(body.secret as string);
    // Never shown again: not by GET, not in the list, not after a PATCH.
    for (const answer of [
      await ctx.api.request(`/api/webhooks/${body.id}`),
      await ctx.api.request("/api/webhooks"),
      await ctx.api.json("PATCH", `/api/webhooks/${body.id}`, { method: "PUT" }),
    ]) {
      expect(answer.status).toBe(200);
      const text = await answer.text();
      expect(text).not.toContain(String(body.secret));
      expect(text).not.toContain('"secret"');
    }
  });

  test("a secret given is stored and not echoed; null sends unsigned requests", async () => {
    const secret = `whsec_${Buffer.alloc(32, 7).toString("base64")}`;
    const hook = await created({ secret });
    expect(hook.secret).toBeUndefined();
    expect((await ctx.t.store.webhooks.get(hook.id))?.secret).toBe(secret);
    const unsigned = await ctx.api.json("PATCH", `/api/webhooks/${hook.id}`, { secret: null });
    expect(((await unsigned.json()) as { has_secret: boolean }).has_secret).toBe(false);
    expect((await ctx.t.store.webhooks.get(hook.id))?.secret).toBeNull();
  });

  test("every field of webhooks add/update is set by POST, read by GET and changed by PATCH", async () => {
    const fields = {
      name: "chat",
      url: "https://chat.example.com/hook/{{ data.sku }}",
      events: ["item.created", "item.deleted"],
      method: "put",
      content_type: "application/x-www-form-urlencoded",
      headers: ["X-Team: stock", "Authorization: Bearer {{ username }}"],
      body_template: "sku={{ data.sku }}",
      condition: { and: [{ attr: "quantity", op: "lt", value: 5 }] },
      ssl_verify: false,
      ca_file: null,
      client_cert_file: CLIENT_CERT_FILE,
      client_key_file: CLIENT_KEY_FILE,
      timeout_ms: 2500,
      max_per_second: 2.5,
      ordered: true,
      retry_schedule: "5s,5m,30m,2h",
      failing_notice_after: 2,
      enabled: false,
    };
    // Every field of the table is in this request, so a field added there is tested here.
    expect(Object.keys(fields).sort()).toEqual(
      WEBHOOK_FIELDS.map((f) => f.name)
        .filter((name) => name !== "secret")
        .sort(),
    );
    const hook = await created(fields);
    const read = (await (await ctx.api.request(`/api/webhooks/${hook.id}`)).json()) as object;
    expect(read).toMatchObject({
      ...fields,
      method: "PUT",
      disabled_reason: null,
    });
    const patch = {
      name: "chat-2",
      url: "https://chat.example.com/v2",
      events: ["*"],
      method: "POST",
      content_type: "application/json",
      headers: [],
      body_template: null,
      condition: null,
      ssl_verify: true,
      client_cert_file: null,
      client_key_file: null,
      timeout_ms: null,
      max_per_second: null,
      ordered: false,
      retry_schedule: "none",
      failing_notice_after: 0,
      enabled: true,
    };
    const changed = await ctx.api.json("PATCH", `/api/webhooks/${hook.id}`, patch);
    expect(changed.status).toBe(200);
    expect(await changed.json()).toMatchObject({
      ...patch,
      disabled_reason: null,
      disabled_at: null,
    });
    const stored = await ctx.t.store.webhooks.get(hook.id);
    expect(stored).toMatchObject({
      name: "chat-2",
      bodyTemplate: null,
      conditions: null,
      enabled: true,
    });
  });

  test("PATCH changes only the fields given", async () => {
    const hook = await created({ events: ["item.updated"], max_per_second: 3 });
    const response = await ctx.api.json("PATCH", `/api/webhooks/${hook.id}`, { name: "renamed" });
    expect(await response.json()).toMatchObject({
      name: "renamed",
      url: HOOK.url,
      events: ["item.updated"],
      max_per_second: 3,
    });
  });

  test("GET lists every webhook; DELETE removes one (204), then 404", async () => {
    const first = await created();
    const second = await created({ name: "second" });
    const list = (await (await ctx.api.request("/api/webhooks")).json()) as {
      webhooks: Array<{ id: number }>;
      total: number;
    };
    expect(list.total).toBe(2);
    expect(list.webhooks.map((w) => w.id).sort()).toEqual([first.id, second.id].sort());
    expect((await ctx.api.request(`/api/webhooks/${first.id}`, { method: "DELETE" })).status).toBe(
      204,
    );
    expect((await ctx.api.request(`/api/webhooks/${first.id}`)).status).toBe(404);
    expect((await ctx.api.request(`/api/webhooks/${first.id}`, { method: "DELETE" })).status).toBe(
      404,
    );
    expect((await ctx.api.json("PATCH", `/api/webhooks/${first.id}`, { name: "x" })).status).toBe(
      404,
    );
    expect(await ctx.t.store.webhooks.list()).toHaveLength(1);
  });

  test("the API needs the token as /api/items does", async () => {
    const anonymous = createClient(ctx.t.app);
    expect((await anonymous.request("/api/webhooks")).status).toBe(401);
    expect((await anonymous.json("POST", "/api/webhooks", HOOK)).status).toBe(401);
    expect(await ctx.t.store.webhooks.list()).toHaveLength(0);
  });
});

describe("/api/webhooks retry_schedule", () => {
  test("takes none, short, day or delays; answers it in the CLI's form", async () => {
    const hook = await created({ retry_schedule: "5s, 5m,2h" });
    expect(hook.retry_schedule).toBe("5s,5m,2h");
    expect((await ctx.t.store.webhooks.get(hook.id))?.retrySchedule).toEqual([
      5_000, 300_000, 7_200_000,
    ]);
    for (const schedule of ["none", "short", "day"]) {
      const patched = await ctx.api.json("PATCH", `/api/webhooks/${hook.id}`, {
        retry_schedule: schedule,
      });
      expect(((await patched.json()) as { retry_schedule: string }).retry_schedule).toBe(schedule);
    }
    const bad = await ctx.api.json("PATCH", `/api/webhooks/${hook.id}`, {
      retry_schedule: "often",
    });
    expect(((await bad.json()) as { fieldErrors: Record<string, string[]> }).fieldErrors).toEqual({
      retry_schedule: [
        '"often" is not a delay: expected none, short, day or a comma list of delays such as 5s,5m,30m,2h (each 1s to 7d, at most 99)',
      ],
    });
  });
});

describe("/api/webhooks bad input: 400 naming the field", () => {
  const bad: Record<string, unknown[]> = {
    name: ["", 7, "x".repeat(101), "tab\there"],
    url: ["ftp://example.com/", "", null, "https://{{ broken"],
    events: [[], ["item.exploded"], "item.created", [1]],
    method: ["YELL", 1],
    content_type: ["not a type", null],
    headers: [["no colon"], ["Content-Length: 5"], "X-A: b", ["X-A: caf\u00e9"]],
    secret: ["whsec_short", 12],
    body_template: ["{% if %}", 5],
    condition: [{ and: [{ attr: "quantity", op: "near", value: 5 }] }, "quantity < 5", { or: 1 }],
    ssl_verify: ["no", 0],
    ca_file: ["relative/ca.pem", "/nonexistent/ca.pem", 3],
    // Alone (the other file not given), each is refused too: the two go together.
    client_cert_file: ["relative/client.crt", CLIENT_CERT_FILE, 3],
    client_key_file: ["relative/client.key", CLIENT_KEY_FILE, OTHER_KEY_FILE, 3],
    timeout_ms: [50, 300_001, "1000", 1.5],
    max_per_second: [-1, 10_001, "5"],
    ordered: ["true", 1, null],
    retry_schedule: ["weekly", "5", "5s,30d", 5, null],
    failing_notice_after: [-1, 101, "4", 1.5, null],
    enabled: ["yes", null],
  };

  test("covers every field of the table", () => {
    expect(Object.keys(bad).sort()).toEqual(WEBHOOK_FIELDS.map((f) => f.name).sort());
  });

  for (const [name, values] of Object.entries(bad)) {
    test(`${name}: each bad value is refused on POST and PATCH, nothing saved`, async () => {
      const hook = await created();
      for (const value of values) {
        const post = await ctx.api.json("POST", "/api/webhooks", {
          ...HOOK,
          name: "new",
          [name]: value,
        });
        const patch = await ctx.api.json("PATCH", `/api/webhooks/${hook.id}`, { [name]: value });
        for (const response of [post, patch]) {
          expect(response.status).toBe(400);
          const body = (await response.json()) as { fieldErrors: Record<string, string[]> };
          expect(Object.keys(body.fieldErrors)).toEqual([name]);
          expect(body.fieldErrors[name]?.[0]).toBeString();
        }
      }
      expect((await ctx.t.store.webhooks.list()).map((w) => w.name)).toEqual(["erp"]);
      expect(await ctx.t.store.webhooks.get(hook.id)).toMatchObject({ name: "erp", url: HOOK.url });
    });
  }

  test("unknown fields, missing name and url, an empty PATCH and a body not an object", async () => {
    const unknown = await ctx.api.json("POST", "/api/webhooks", { ...HOOK, retries: 3 });
    expect(((await unknown.json()) as { fieldErrors: object }).fieldErrors).toEqual({
      retries: ["Unknown field"],
    });
    const answerOnly = await ctx.api.json("POST", "/api/webhooks", {
      ...HOOK,
      id: 7,
      has_secret: false,
    });
    expect(((await answerOnly.json()) as { fieldErrors: object }).fieldErrors).toEqual({
      id: ["Set by the app, not by a request"],
      has_secret: ["Set by the app, not by a request"],
    });
    const missing = await ctx.api.json("POST", "/api/webhooks", {});
    expect(((await missing.json()) as { fieldErrors: object }).fieldErrors).toEqual({
      name: ["Required"],
      url: ["Required"],
    });
    const hook = await created();
    const empty = await ctx.api.json("PATCH", `/api/webhooks/${hook.id}`, {});
    expect(empty.status).toBe(400);
    const list = await ctx.api.json("POST", "/api/webhooks", [HOOK]);
    expect(list.status).toBe(400);
    const notJson = await ctx.api.request("/api/webhooks", { method: "POST", body: "name=x" });
    expect(notJson.status).toBe(415);
    const broken = await ctx.api.request("/api/webhooks", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{",
    });
    expect(broken.status).toBe(400);
  });

  test("a taken name is 409 naming the field", async () => {
    await created();
    const again = await ctx.api.json("POST", "/api/webhooks", HOOK);
    expect(again.status).toBe(409);
    expect(((await again.json()) as { fieldErrors: object }).fieldErrors).toEqual({
      name: ["Already taken"],
    });
  });

  test("a template past the render limits with a sample item is refused at save", async () => {
    const bomb =
      "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}";
    const response = await ctx.api.json("POST", "/api/webhooks", { ...HOOK, body_template: bomb });
    expect(response.status).toBe(400);
    const body = (await response.json()) as { fieldErrors: object };
    expect(Object.keys(body.fieldErrors)).toEqual(["body_template"]);
  });
});
