import { afterEach, describe, expect, setSystemTime, test } from "bun:test";
import { Webhook as StandardWebhook } from "standardwebhooks";
import { netboxSignature } from "../../../lib/webhooks/sending/signing.ts";
import { change } from "../../fakes/change.ts";
import { appWorker } from "../../fakes/test-worker.ts";
import { type ReceivedRequest, useFakeEndpoint } from "../../fakes/webhook-endpoint.ts";
import { useTokenApp } from "../harness.ts";

const TOKEN = "rotate-secret-test-token-0123";
const OLD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const HOUR = 3_600_000;

const ctx = useTokenApp(TOKEN);
const endpoint = useFakeEndpoint();
afterEach(() => setSystemTime());

/** A real worker on the app's store and clock, sending to the fake endpoint over HTTP. */
function send() {
  return appWorker(ctx.t, { config: { retryBaseMs: 10_000, retryMaxMs: HOUR } }).runOnce();
}

async function webhook(): Promise<number> {
  const created = await ctx.t.store.webhooks.create({
    name: "erp",
    url: `${endpoint.url}/in`,
    secret: OLD,
  });
  return created.id;
}

async function rotate(id: number, body?: unknown): Promise<Response> {
  if (body === undefined)
    return ctx.api.request(`/api/webhooks/${id}/rotate-secret`, { method: "POST" });
  return ctx.api.json("POST", `/api/webhooks/${id}/rotate-secret`, body);
}

/** Whether the reference library accepts the request with `secret`, at the request's own time. */
function verifies(secret: string, request: ReceivedRequest): boolean {
  setSystemTime(new Date(Number(request.headers["webhook-timestamp"]) * 1000));
  try {
    new StandardWebhook(secret).verify(request.body, request.headers);
    return true;
  } catch {
    return false;
  } finally {
    setSystemTime();
  }
}

describe("POST /api/webhooks/{id}/rotate-secret", () => {
  test("signs with both secrets during the grace, the new one only after (reference library)", async () => {
    const id = await webhook();
    // Queued before the rotation, sent during the grace: signed when sent, so with both.
    await ctx.t.store.queue.enqueue(change());
    const response = await rotate(id, { grace_seconds: 3600 });
    expect(response.status).toBe(200);
    const rotated = (await response.json()) as { secret: string; previous_valid_until: string };
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(OLD);
    expect(rotated.previous_valid_until).toBe(
      new Date(ctx.t.clock.now.getTime() + HOUR).toISOString(),
    );

    ctx.t.clock.now = new Date(ctx.t.clock.now.getTime() + HOUR - 1000);
    await send();
    const during = endpoint.requests[0];
    if (!during) throw new Error("Nothing was sent during the grace");
    expect(during.headers["webhook-signature"]?.split(" ")).toHaveLength(2);
    expect(verifies(rotated.secret, during)).toBe(true);
    expect(verifies(OLD, during)).toBe(true);
    // NetBox's header has one value: the new secret's.
    expect(during.headers["x-hook-signature"]).toBe(netboxSignature(rotated.secret, during.body));

    ctx.t.clock.now = new Date(ctx.t.clock.now.getTime() + 1000);
    await ctx.t.store.queue.enqueue(change());
    await send();
    const after = endpoint.requests[1];
    if (!after) throw new Error("Nothing was sent after the grace");
    expect(after.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(verifies(rotated.secret, after)).toBe(true);
    expect(verifies(OLD, after)).toBe(false);

    // The answer to GET says until when; the secrets themselves are never shown.
    const shown = await (await ctx.api.request(`/api/webhooks/${id}`)).text();
    expect(JSON.parse(shown)).toMatchObject({
      previous_secret_valid_until: rotated.previous_valid_until,
    });
    expect(shown).not.toContain(OLD.slice(6));
    expect(shown).not.toContain(rotated.secret.slice(6));
  });

  test("no body: 24 hours of grace; grace 0: only the new secret at once", async () => {
    const id = await webhook();
    const rotated = (await (await rotate(id)).json()) as { previous_valid_until: string };
    expect(rotated.previous_valid_until).toBe(
      new Date(ctx.t.clock.now.getTime() + 24 * HOUR).toISOString(),
    );
    const again = (await (await rotate(id, { grace_seconds: 0 })).json()) as {
      secret: string;
      previous_valid_until: string | null;
    };
    expect(again.previous_valid_until).toBeNull();
    await ctx.t.store.queue.enqueue(change());
    await send();
    const request = endpoint.requests[0];
    if (!request) throw new Error("Nothing was sent");
    expect(request.headers["webhook-signature"]?.split(" ")).toHaveLength(1);
    expect(verifies(again.secret, request)).toBe(true);
  });

  test("a second rotation within the grace keeps only the secret it replaced beside the new", async () => {
    const id = await webhook();
    const first = (await (await rotate(id)).json()) as { secret: string };
    const second = (await (await rotate(id)).json()) as { secret: string };
    await ctx.t.store.queue.enqueue(change());
    await send();
    const request = endpoint.requests[0];
    if (!request) throw new Error("Nothing was sent");
    expect(verifies(second.secret, request)).toBe(true);
    expect(verifies(first.secret, request)).toBe(true);
    expect(verifies(OLD, request)).toBe(false);
  });

  test("a webhook without a secret gets one, with nothing to overlap", async () => {
    const { id } = await ctx.t.store.webhooks.create({ name: "open", url: `${endpoint.url}/in` });
    const rotated = (await (await rotate(id)).json()) as { previous_valid_until: unknown };
    expect(rotated.previous_valid_until).toBeNull();
    expect((await ctx.t.store.webhooks.get(id))?.secret).toMatch(/^whsec_/);
  });

  test("bad grace_seconds or another field: 400 naming it; an unknown webhook: 404", async () => {
    const id = await webhook();
    for (const grace of [-1, 1.5, 604_801, "3600", null]) {
      const response = await rotate(id, { grace_seconds: grace });
      expect(response.status).toBe(400);
      const body = (await response.json()) as { fieldErrors: Record<string, string[]> };
      expect(Object.keys(body.fieldErrors)).toEqual(["grace_seconds"]);
    }
    const unknown = await rotate(id, { grace: 60 });
    expect(((await unknown.json()) as { fieldErrors: object }).fieldErrors).toEqual({
      grace: ["Unknown field"],
    });
    expect((await rotate(999)).status).toBe(404);
    expect((await ctx.t.store.webhooks.get(id))?.secret).toBe(OLD);
  });
});
