import { describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { LOOP_BOMB, STOPPED } from "../../fakes/template-bombs.ts";
import { useApp, webhookForm } from "../harness.ts";

const CA_FILE = join(import.meta.dir, "..", "..", "fakes", "tls", "hook-test.crt");

const t = useApp();

const form = webhookForm({
  name: "chat",
  url: "https://chat.example/hook",
  bodyTemplate: "",
  conditions: "",
  caFile: "",
  timeoutMs: "",
});

function create(fields: Record<string, string | string[]>) {
  return t.client.submit("/admin/webhooks", fields, { from: "/admin/webhooks/new" });
}

describe("the webhook form's NetBox options", () => {
  test("stores a body template, conditions, TLS options and a timeout, shown again on edit", async () => {
    const response = await create({
      ...form,
      bodyTemplate: '{"text": {{ data.name | tojson }}}',
      conditions: '{"and": [{"attr": "quantity", "op": "lt", "value": 5}]}',
      skipSslVerification: "on",
      caFile: CA_FILE,
      timeoutMs: "2500",
    });
    expect(response.status).toBe(200);
    const [webhook] = await t.store.webhooks.list();
    expect(webhook).toMatchObject({
      bodyTemplate: '{"text": {{ data.name | tojson }}}',
      conditions: { and: [{ attr: "quantity", op: "lt", value: 5 }] },
      sslVerification: false,
      caFile: CA_FILE,
      timeoutMs: 2500,
    });
    const { html } = await t.client.open(`/admin/webhooks/${webhook?.id}`);
    expect(html).toContain("{&quot;text&quot;: {{ data.name | tojson }}}");
    expect(html).toContain('name="skipSslVerification" checked');
    expect(html).toContain('value="2500"');
    const list = (await t.client.open("/admin/webhooks")).html;
    expect(list).toContain("body template, conditions, TLS unverified, own CA, timeout 2500 ms");
  });

  test("refuses a CA file that is a FIFO, inline, as the CLI does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "admin-ca-"));
    try {
      const fifo = join(dir, "ca.fifo");
      expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
      const response = await create({ ...form, caFile: fifo });
      expect(response.status).toBe(400);
      expect(await response.text()).toContain(
        `Cannot use &quot;${fifo}&quot;: not a regular file (a FIFO)`,
      );
      expect(await t.store.webhooks.list()).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("takes a client certificate and its key; a key of another is refused inline, nothing saved", async () => {
    const tls = join(import.meta.dir, "..", "..", "fakes", "tls");
    const cert = join(tls, "client.crt");
    const key = join(tls, "client.key");
    const other = join(tls, "other.key");
    const mismatch = await create({ ...form, clientCertFile: cert, clientKeyFile: other });
    expect(mismatch.status).toBe(400);
    expect(await mismatch.text()).toContain("the key does not match the certificate");
    expect(await t.store.webhooks.list()).toEqual([]);
    expect((await create({ ...form, clientCertFile: cert, clientKeyFile: key })).status).toBe(200);
    const [webhook] = await t.store.webhooks.list();
    expect(webhook).toMatchObject({ clientCertFile: cert, clientKeyFile: key });
    const { html } = await t.client.open(`/admin/webhooks/${webhook?.id}`);
    expect(html).toContain("Client certificate file path");
    expect(html).toContain(`value="${key}"`);
    expect((await t.client.open("/admin/webhooks")).html).toContain("client cert");
  });

  test("the Ordered box turns ordering per object on and, left out on edit, off", async () => {
    await create({ ...form, ordered: "on" });
    const [webhook] = await t.store.webhooks.list();
    expect(webhook?.ordered).toBe(true);
    const page = `/admin/webhooks/${webhook?.id}`;
    expect((await t.client.open(page)).html).toContain('name="ordered" checked');
    expect((await t.client.open("/admin/webhooks")).html).toContain(">ordered</div>");
    await t.client.submit(page, form, { from: page });
    expect((await t.store.webhooks.list())[0]?.ordered).toBe(false);
    expect((await t.client.open(page)).html).not.toContain('name="ordered" checked');
  });

  test("verifies TLS unless asked not to (a post without the box keeps it on)", async () => {
    await create(form);
    expect((await t.store.webhooks.list())[0]?.sslVerification).toBe(true);
  });

  test("answers 400 with the template's line and column and the condition's path, inline (templates compiled in the renderer, the first that fails)", async () => {
    const response = await create({
      ...form,
      url: "https://chat.example/{{ data.id",
      headers: "X-Sku: {{ data.sku | }}",
      bodyTemplate: "{\n  {% for x in data %}\n}",
      conditions: '{"or": [{"attr": "sku", "value": "A", "op": "gt"}]}',
      caFile: "ca.pem",
      timeoutMs: "9",
    });
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toContain("At $.or[0].op: gt does not apply to a string value");
    expect(html).toContain("Must be an absolute path to a PEM file");
    expect(html).toContain("Must be a whole number of milliseconds from 100 to 300000");
    // The templates are compiled (in the renderer) once the other fields are right.
    const page = (fields: Record<string, string>) =>
      create({ ...form, ...fields }).then((r) => r.text());
    expect(await page({ bodyTemplate: "{\n  {% for x in data %}\n}" })).toContain(
      "Template error at line 2: syntax error: unexpected end of input",
    );
    expect(await page({ headers: "X-Sku: {{ data.sku | }}" })).toContain(
      "Header X-Sku: template error at line 1",
    );
    expect(await page({ url: "https://chat.example/{{ data.id" })).toContain(
      "Template error at line 1, column 30",
    );
    expect(await t.store.webhooks.list()).toEqual([]);
  });
});

describe("the webhook form's retry schedule", () => {
  test("a new webhook's is day; a list is stored, shown again on edit and in the list", async () => {
    expect((await t.client.open("/admin/webhooks/new")).html).toContain(
      'name="retrySchedule" value="day"',
    );
    await create({ ...form, retrySchedule: "5s,5m,2h" });
    const [webhook] = await t.store.webhooks.list();
    expect(webhook?.retrySchedule).toEqual([5_000, 300_000, 7_200_000]);
    expect((await t.client.open(`/admin/webhooks/${webhook?.id}`)).html).toContain(
      'name="retrySchedule" value="5s,5m,2h"',
    );
    expect((await t.client.open("/admin/webhooks")).html).toContain("retries: 5s,5m,2h");
  });

  test("a bad schedule is refused inline with the form it takes", async () => {
    const response = await create({ ...form, retrySchedule: "often" });
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(
      "&quot;often&quot; is not a delay: expected none, short, day or a comma list of delays",
    );
    expect(await t.store.webhooks.list()).toEqual([]);
  });
});

describe("Preview with the last change", () => {
  async function itemChange() {
    const response = await t.client.json("POST", "/api/items", {
      sku: "A-1",
      name: 'Widget "mk2"',
      quantity: 2,
    });
    expect(response.status).toBe(201);
  }

  test("renders the form's template with the newest change, saving nothing", async () => {
    await create({ ...form, name: "plain", url: "https://plain.example/" });
    await itemChange();
    const response = await t.client.submit(
      "/admin/webhooks/preview",
      {
        ...form,
        url: "https://chat.example/{{ model }}/{{ data.id }}",
        bodyTemplate: '{"text": {{ (data.name ~ " is low") | tojson }}}',
        conditions: '{"and": [{"attr": "quantity", "op": "lt", "value": 5}]}',
      },
      { from: "/admin/webhooks/new" },
    );
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain("With the change of delivery 1 (item.created");
    expect(html).toContain("this change matches, a delivery would be queued");
    expect(html).toContain("https://chat.example/item/1");
    expect(html).toContain("{&quot;text&quot;: &quot;Widget \\&quot;mk2\\&quot; is low&quot;}");
    expect(await t.store.webhooks.list()).toHaveLength(1);
  });

  test("says when the change does not match, and shows a render error instead of a body", async () => {
    await create({ ...form, name: "plain", url: "https://plain.example/" });
    await itemChange();
    const [webhook] = await t.store.webhooks.list();
    const html = await (
      await t.client.submit(
        `/admin/webhooks/${webhook?.id}/preview`,
        {
          ...form,
          bodyTemplate: "{{ data.sku | nosuch }}",
          conditions: '{"and": [{"attr": "quantity", "op": "gt", "value": 5}]}',
        },
        { from: `/admin/webhooks/${webhook?.id}` },
      )
    ).text();
    expect(html).toContain("this change does not match, nothing would be queued");
    expect(html).toContain("Template error in the body: line 1, column 15: unknown filter");
  });

  test("shows a template that overruns its deadline with this change as the error enqueue records", async () => {
    // Cheap with the sample item (quantity 3), a loop of 1 MB strings with the change (30,000).
    const costly =
      '{% for i in range(data.quantity) %}{% set t = "x" * (1000000 + i) %}{% endfor %}ok';
    const saved = await create({ ...form, name: "costly", bodyTemplate: costly });
    expect(saved.status).toBe(200);
    const response = await t.client.json("POST", "/api/items", {
      sku: "A-1",
      name: "Bolt",
      quantity: 30_000,
    });
    expect(response.status).toBe(201);
    const [delivery] = await t.store.queue.list();
    // Stopped at its own CPU budget; on a machine too busy to tell, left to the worker instead.
    if (!delivery?.renderPending)
      expect(delivery?.lastError).toContain("ms of CPU for this change");
    const html = await (
      await t.client.submit(
        "/admin/webhooks/preview",
        { ...form, bodyTemplate: costly },
        { from: "/admin/webhooks/new" },
      )
    ).text();
    expect(html).toMatch(new RegExp(`Template error: ${STOPPED.source}`));
  });

  test("refuses at save a template that overruns its deadline even with a sample item", async () => {
    const response = await create({ ...form, bodyTemplate: LOOP_BOMB });
    expect(response.status).toBe(400);
    const html = await response.text();
    expect(html).toMatch(new RegExp(`With a sample item, ${STOPPED.source}: a template must stay`));
    expect(await t.store.webhooks.list()).toEqual([]);
  });

  test("uses a sample item before any change was queued", async () => {
    const html = await (
      await t.client.submit(
        "/admin/webhooks/preview",
        { ...form, bodyTemplate: "{{ data.name }}" },
        { from: "/admin/webhooks/new" },
      )
    ).text();
    expect(html).toContain("No change has been queued yet: with a sample item.");
    expect(html).toContain("Sample item");
  });

  test("shows the form's errors instead of a preview when it does not validate", async () => {
    const response = await t.client.submit(
      "/admin/webhooks/preview",
      { ...form, bodyTemplate: "{% if %}" },
      { from: "/admin/webhooks/new" },
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("Template error at line 1");
  });
});

describe("a delivery's page with templates", () => {
  test("shows the rendered URL, headers and context; a failed template has no Retry", async () => {
    await t.store.webhooks.create({
      name: "chat",
      url: "https://chat.example/{{ data.sku }}",
      headers: [["X-Who", "{{ username }}"]],
      bodyTemplate: '{"text": {{ data.name | tojson }}}',
    });
    await t.store.webhooks.create({
      name: "broken",
      url: "https://b.example/",
      bodyTemplate: "{{ data | nope }}",
    });
    await t.client.json("POST", "/api/items", { sku: "A-1", name: "Bolt", quantity: 1 });
    const [broken, chat] = await t.store.queue.list();
    const ok = (await t.client.open(`/admin/background-tasks/deliveries/${chat?.id}`)).html;
    expect(ok).toContain("<code>https://chat.example/A-1</code>");
    expect(ok).toContain("X-Who: anonymous");
    expect(ok).toContain("Template context");
    const failed = (await t.client.open(`/admin/background-tasks/deliveries/${broken?.id}`)).html;
    expect(failed).toContain("Its template failed when the change was queued");
    expect(failed).not.toContain(">Retry<");
    expect(failed).toContain("unknown filter: filter nope is unknown");
  });
});
