import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type CommandDef, runCommand } from "citty";
import { z } from "zod";
import { renderHelp, resolveForHelp } from "../../../lib/cli/help.ts";
import { openSqliteStore } from "../../../lib/store/sqlite/store.ts";
import {
  field,
  formText,
  jsonAs,
  orBlank,
  type WebhookFields,
} from "../../../lib/webhooks/definition/field-faces.ts";
import { WEBHOOK_FIELDS } from "../../../lib/webhooks/definition/field-table.ts";
import { checkTimeoutMs } from "../../../lib/webhooks/definition/validate.ts";
import { createWebhooksCommand } from "../../../lib/webhooks-cli/command.ts";
import { testApp, webhookForm } from "../../app/harness.ts";

/**
 * A field is one row: a test build of the table without the real `timeout_ms` row and with a
 * row of its own over the same storage column (`attempt_timeout_ms`, `--attempt-timeout`,
 * "Attempt timeout") finds its field in every face, the API, the OpenAPI document, the CLI's
 * flags, help and listing, the admin form and list, and the real table's field in none.
 */

const attemptTimeout = field({
  name: "attempt_timeout_ms",
  key: "timeoutMs",
  schema: z.int().min(100).max(300_000).nullable().describe("the test row's attempt timeout"),
  toRule: jsonAs.numberOrNull,
  expected: "a number or null",
  rule: checkTimeoutMs,
  show: (w) => w.timeoutMs,
  cli: {
    flag: "attempt-timeout",
    type: "string",
    description: "the test row's attempt timeout",
    valueHint: "ms",
  },
  form: {
    label: "Attempt timeout (the test row)",
    input: { kind: "text", inputmode: "numeric" },
    initial: "",
    value: (w) => orBlank(w.timeoutMs),
    toRule: formText,
  },
  note: {
    short: (w) => (w.timeoutMs === null ? null : `attempt within ${w.timeoutMs} ms`),
    long: (w) => (w.timeoutMs === null ? null : `attempt within ${w.timeoutMs} ms (cli)`),
  },
});

const TEST_FIELDS: WebhookFields = [
  ...WEBHOOK_FIELDS.filter((f) => f.name !== "timeout_ms"),
  attemptTimeout,
];

describe("the webhook field table", () => {
  test("has one row per JSON name, stored key, flag and form input", () => {
    const unique = (values: unknown[]) => expect(new Set(values).size).toBe(values.length);
    unique(WEBHOOK_FIELDS.map((f) => f.name));
    unique(WEBHOOK_FIELDS.map((f) => f.key));
    unique(WEBHOOK_FIELDS.map((f) => f.cli?.flag));
    unique(WEBHOOK_FIELDS.map((f) => f.form?.label));
  });
});

describe("a field added as one row, in a test build", () => {
  let app: ReturnType<typeof testApp>;
  beforeEach(() => {
    app = testApp({ webhookFields: TEST_FIELDS });
  });
  afterEach(() => app.store.close());

  test("the API reads, checks and answers it", async () => {
    const hook = { name: "erp", url: "https://erp.example/in", attempt_timeout_ms: 2500 };
    const created = await app.client.json("POST", "/api/webhooks", hook);
    expect(created.status).toBe(201);
    const { id, ...answer } = (await created.json()) as Record<string, unknown>;
    expect(answer).toMatchObject({ attempt_timeout_ms: 2500 });
    expect(answer).not.toHaveProperty("timeout_ms");
    expect((await app.store.webhooks.get(Number(id)))?.timeoutMs).toBe(2500);
    const refused = await app.client.json("PATCH", `/api/webhooks/${id}`, {
      attempt_timeout_ms: 50,
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      fieldErrors: { attempt_timeout_ms: [expect.stringContaining("from 100 to 300000")] },
    });
    const old = await app.client.json("PATCH", `/api/webhooks/${id}`, { timeout_ms: 3000 });
    expect(await old.json()).toMatchObject({ fieldErrors: { timeout_ms: ["Unknown field"] } });
  });

  test("the OpenAPI document shows its schema in the bodies and the answer", async () => {
    const document = (await (await app.client.request("/api/openapi.json")).json()) as {
      components: { schemas: Record<string, { properties: Record<string, unknown> }> };
    };
    for (const name of ["NewWebhook", "WebhookPatch", "Webhook"]) {
      const properties = document.components.schemas[name]?.properties ?? {};
      expect(properties.attempt_timeout_ms).toMatchObject({
        description: "the test row's attempt timeout",
      });
      expect(properties).not.toHaveProperty("timeout_ms");
    }
  });

  test("the admin form has its input and label, saves it, and the list notes it", async () => {
    const page = await (await app.client.request("/admin/webhooks/new")).text();
    expect(page).toContain("Attempt timeout (the test row)");
    expect(page).not.toContain("Timeout (ms)");
    const saved = await app.client.submit("/admin/webhooks", webhookForm({ timeoutMs: "4000" }), {
      from: "/admin/webhooks/new",
    });
    expect(saved.status).toBe(200);
    const [webhook] = await app.store.webhooks.list();
    expect(webhook?.timeoutMs).toBe(4000);
    const list = await (await app.client.request("/admin/webhooks")).text();
    expect(list).toContain("attempt within 4000 ms");
    expect(list).not.toContain("timeout 4000 ms");
  });
});

describe("a field added as one row, in the CLI of a test build", () => {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "field-rows-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function command(lines: string[]): CommandDef {
    const out = (text: string) => lines.push(text);
    const env = { DATABASE_URL: join(dir, "app.db") };
    return createWebhooksCommand({ env, out, err: out, webhookFields: TEST_FIELDS });
  }

  test("add and update have its flag and help; add stores it; list notes it", async () => {
    const lines: string[] = [];
    const cli = command(lines);
    for (const name of ["add", "update"]) {
      const target = await resolveForHelp(cli, [name, "--help"]);
      const help = await renderHelp(target.command, { parents: target.parents });
      expect(help).toContain("--attempt-timeout=<ms>");
      expect(help).toContain("the test row's attempt timeout");
      expect(help).not.toContain("--timeout-ms");
    }
    const rawArgs = ["add", "--name", "erp", "--url", "https://erp.example/"];
    await runCommand(cli, { rawArgs: [...rawArgs, "--attempt-timeout", "3000"] });
    await runCommand(cli, { rawArgs: ["list"] });
    expect(lines.join("\n")).toContain("attempt within 3000 ms (cli)");
    await expect(
      runCommand(cli, { rawArgs: ["update", "erp", "--attempt-timeout", "5"] }),
    ).rejects.toThrow('Invalid --attempt-timeout "5": must be a whole number of milliseconds');
    const store = openSqliteStore(join(dir, "app.db"));
    try {
      expect((await store.webhooks.getByName("erp"))?.timeoutMs).toBe(3000);
    } finally {
      await store.close();
    }
  });
});
