import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCommand } from "citty";
import { exitCodeFor } from "../../lib/cli/run.ts";
import { invisibleCharacter } from "../../lib/text/control.ts";
import { headerValueProblem } from "../../lib/webhooks/definition/validate.ts";
import { createWebhooksCommand } from "../../lib/webhooks-cli/command.ts";
import { testApp, webhookForm } from "./harness.ts";

const RLO = "\u202e";

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function app() {
  const t = testApp();
  cleanups.push(() => t.store.close());
  return t;
}

describe("invisibleCharacter()", () => {
  test("finds BiDi overrides, isolates and marks, zero-width spaces, BOM, separators and controls", () => {
    for (const [text, found] of [
      [`invoice${RLO}fdp.exe`, "U+202E"],
      ["a\u2066b", "U+2066"],
      ["a\u200fb", "U+200F"],
      ["a\u061cb", "U+061C"],
      ["zero\u200bwidth", "U+200B"],
      ["\ufeffbom", "U+FEFF"],
      ["soft\u00adhyphen", "U+00AD"],
      ["line\u2028sep", "U+2028"],
      ["tab\there", "U+0009"],
      ["c1\u009bx", "U+009B"],
    ]) {
      expect(invisibleCharacter(text as string), text).toBe(found as string);
    }
  });

  test("lets through accents, other scripts, emoji sequences and zero-width joiners", () => {
    for (const text of ["Zoë's café", "日本の倉庫", "می‌خواهم", "👩‍👩‍👧 family", "Ünïcödé"]) {
      expect(invisibleCharacter(text), text).toBeNull();
    }
  });
});

describe("item and webhook names with invisible characters are refused", () => {
  test("by the API, naming the character", async () => {
    const t = app();
    const response = await t.client.json("POST", "/api/items", {
      sku: "S-1",
      name: `Widget ${RLO}gnp.exe`,
      quantity: 1,
    });
    expect(response.status).toBe(400);
    expect((await response.json()).fieldErrors.name).toEqual([
      "Must not contain control or invisible characters (U+202E found)",
    ]);
    expect(await t.store.items.count()).toBe(0);
  });

  test("by the admin's item and webhook forms", async () => {
    const t = app();
    const item = await t.client.submit(
      "/admin/items",
      { sku: "S-1", name: "ok", quantity: "1", location: `Shelf\u2066 1` },
      { from: "/admin/items/new" },
    );
    expect(item.status).toBe(400);
    expect(await item.text()).toContain("(U+2066 found)");
    const webhook = await t.client.submit("/admin/webhooks", webhookForm({ name: `hook${RLO}` }), {
      from: "/admin/webhooks/new",
    });
    expect(webhook.status).toBe(400);
    expect(await webhook.text()).toContain(
      "Must not contain control or invisible characters (U+202E found)",
    );
    expect(await t.store.items.count()).toBe(0);
    expect(await t.store.webhooks.list()).toEqual([]);
  });
});

describe("header values that can never be sent are refused when a webhook is saved", () => {
  test("headerValueProblem() accepts printable ASCII and tabs only", () => {
    expect(headerValueProblem("Bearer abc-123 ~!")).toBeNull();
    expect(headerValueProblem("a\tb")).toBeNull();
    expect(headerValueProblem("日本")).toBe(
      'the value can not be sent in an HTTP header: only ASCII is allowed (U+65E5 "日" found); percent-encode or base64 such text',
    );
    expect(headerValueProblem("caf\u00e9")).toContain('(U+00E9 "é" found)');
    expect(headerValueProblem("a\rb")).toBe("the value contains control characters");
  });

  test("in the admin form, with the line named", async () => {
    const t = app();
    const response = await t.client.submit(
      "/admin/webhooks",
      webhookForm({ headers: "X-Env: test\nX-Unicode: 日本" }),
      { from: "/admin/webhooks/new" },
    );
    expect(response.status).toBe(400);
    expect(await response.text()).toContain(
      "Line 2: the value can not be sent in an HTTP header: only ASCII is allowed (U+65E5",
    );
    expect(await t.store.webhooks.list()).toEqual([]);
  });

  test("by bun run webhooks add, exit code 2", async () => {
    const dir = mkdtempSync(join(tmpdir(), "input-checks-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const command = createWebhooksCommand({
      env: { DATABASE_URL: join(dir, "app.db") },
      out: () => {},
      err: () => {},
    });
    for (const [args, message] of [
      [
        ["--header", "X-Unicode: 日本"],
        'Invalid --header "X-Unicode: 日本": the value can not be sent in an HTTP header: only ASCII is allowed (U+65E5',
      ],
      [["--name", `hook${RLO}`], "must not contain control or invisible characters (U+202E found)"],
    ] as const) {
      const rawArgs = ["add", "--name", "hook", "--url", "http://x.example/", ...args];
      const error = await runCommand(command, { rawArgs }).then(
        () => null,
        (caught: unknown) => caught,
      );
      expect(exitCodeFor(error)).toBe(2);
      expect((error as Error).message).toContain(message);
    }
  });
});

describe("invisible characters already stored", () => {
  test("are shown escaped on admin pages, never raw", async () => {
    const t = app();
    // Written straight to the store, as a row from before the check (or a payload) may be.
    const item = await t.store.items.create(
      { sku: "OLD-1", name: `invoice${RLO}fdp.exe`, quantity: 1, location: "a\u200bb" },
      new Date(),
    );
    for (const path of ["/admin/items", `/admin/items/${item.id}`]) {
      const { html } = await t.client.open(path);
      expect(html, path).toContain("invoice\\u202efdp.exe");
      expect(html, path).not.toContain(RLO);
      expect(html, path).not.toContain("\u200b");
    }
    // Letters, accents and emoji joiners are left alone.
    await t.store.items.create(
      { sku: "OK-1", name: "Zoë 👩‍👩‍👧", quantity: 1, location: "" },
      new Date(),
    );
    expect((await t.client.open("/admin/items")).html).toContain("Zoë 👩‍👩‍👧");
  });
});
