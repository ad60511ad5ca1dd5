import { describe, expect, test } from "bun:test";
import { T0, useApp } from "../harness.ts";

const OLD = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

const t = useApp();

/** Webhook "erp", signing with OLD, and its page. */
async function erp(): Promise<{ id: number; page: string }> {
  const { id } = await t.store.webhooks.create({
    name: "erp",
    url: "https://erp.example/in",
    secret: OLD,
  });
  return { id, page: `/admin/webhooks/${id}` };
}

describe("Rotate secret on a webhook's page", () => {
  test("shows the new secret once and keeps the old one signing for the grace given", async () => {
    const { id, page } = await erp();
    expect((await t.client.open(page)).html).toContain(
      'name="graceSeconds" inputmode="numeric" value="86400"',
    );
    const response = await t.client.submit(
      `${page}/rotate-secret`,
      { graceSeconds: "600" },
      { from: page },
    );
    expect(response.status).toBe(200);
    const html = await response.text();
    const stored = await t.store.webhooks.get(id);
    expect(stored).toMatchObject({
      previousSecret: OLD,
      previousSecretUntil: T0.getTime() + 600_000,
    });
    expect(html).toContain(`<code id="generated-secret">${stored?.secret}</code>`);
    expect(html).toContain("The previous secret signs too until 2025-03-04 05:16:07 UTC.");
    // The webhook's page says until when, and never shows either secret.
    const after = (await t.client.open(page)).html;
    expect(after).toContain("The previous secret signs too until 2025-03-04 05:16:07 UTC.");
    expect(after).not.toContain(OLD);
    expect(after).not.toContain(String(stored?.secret));
  });

  test("a bad grace is refused under its field, nothing changed; no secret: no form", async () => {
    const { id, page } = await erp();
    const response = await t.client.submit(
      `${page}/rotate-secret`,
      { graceSeconds: "a day" },
      { from: page },
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(
      "Must be a whole number of seconds from 0 (no overlap) to 604800 (a week)",
    );
    expect((await t.store.webhooks.get(id))?.secret).toBe(OLD);
    const open = await t.store.webhooks.create({ name: "open", url: "https://o.example/" });
    expect((await t.client.open(`/admin/webhooks/${open.id}`)).html).not.toContain("Rotate secret");
  });
});
