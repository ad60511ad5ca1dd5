import { describe, expect, test } from "bun:test";
import { checkNewUrl, checkUrl } from "../../lib/webhooks/definition/validate.ts";
import { useWebhooksCliFile } from "../fakes/webhooks-cli-file.ts";
import { testApp, useTokenApp, webhookForm } from "./harness.ts";

const TOKEN = "url-sanity-test-token-0123456";
const T0 = Date.UTC(2030, 0, 1);

describe("checkUrl() refuses control and invisible characters, naming the first one's position", () => {
  test.each([
    ["http://a.example/x\r\nX-Injected: 1", "U+000D at character 19"],
    ["http://a.example/\nx", "U+000A at character 18"],
    ["http://a.exa\tmple/", "U+0009 at character 13"],
    ["http://a.example/\u0000", "U+0000 at character 18"],
    ["http://a.example/{{ data.id }}\u007f", "U+007F at character 31"],
    ["http://a.example/\u202egpj.exe", "U+202E at character 18"],
    // Counted in the text as given, leading spaces included.
    ["  http://a.example/\rx", "U+000D at character 20"],
  ])("%j", (url, where) => {
    expect(checkUrl(url)).toEqual({
      ok: false,
      problem: `must not contain control or invisible characters (${where})`,
    });
  });

  test("a line break at either end is trimmed, not refused", () => {
    expect(checkUrl("http://a.example/\r\n")).toEqual({ ok: true, value: "http://a.example/" });
  });

  test("checkNewUrl() refuses *** as a new URL's password, which is the mask", () => {
    expect(checkNewUrl("https://user:***@a.example/")).toEqual({
      ok: false,
      problem:
        "must not have *** as its password: that is how a stored password is shown; type the password itself",
    });
    expect(checkNewUrl("https://user:pw@a.example/***")).toEqual({
      ok: true,
      value: "https://user:pw@a.example/***",
    });
  });
});

describe("the API, the admin form and the CLI refuse them alike", () => {
  const ctx = useTokenApp(TOKEN);

  test("the API: CR/LF in a URL on POST and PATCH, *** on POST: 400 naming the field", async () => {
    const created = await ctx.api.json("POST", "/api/webhooks", {
      name: "erp",
      url: "https://e.example/in\r\nX-Evil: 1",
    });
    expect(created.status).toBe(400);
    expect(((await created.json()) as { fieldErrors: unknown }).fieldErrors).toEqual({
      url: ["Must not contain control or invisible characters (U+000D at character 21)"],
    });
    const masked = await ctx.api.json("POST", "/api/webhooks", {
      name: "erp",
      url: "https://user:***@e.example/in",
    });
    expect(masked.status).toBe(400);
    expect(JSON.stringify(await masked.json())).toContain("Must not have *** as its password");

    const webhook = await ctx.t.store.webhooks.create({ name: "erp", url: "https://e.example/in" });
    const patched = await ctx.api.json("PATCH", `/api/webhooks/${webhook.id}`, {
      url: "https://e.example/\nin",
    });
    expect(patched.status).toBe(400);
    expect((await ctx.t.store.webhooks.list()).map((w) => w.url)).toEqual(["https://e.example/in"]);
  });

  test("the admin form: a URL with a line feed or *** as its password is shown again with the problem", async () => {
    const admin = testApp();
    const created = (url: string) =>
      admin.client.submit("/admin/webhooks", webhookForm({ url }), { from: "/admin/webhooks/new" });
    try {
      const lf = await created("http://127.0.0.1:9000/\nhook");
      expect(lf.status).toBe(400);
      expect(await lf.text()).toContain("(U+000A at character 23)");
      const masked = await created("http://user:***@127.0.0.1:9000/hook");
      expect(masked.status).toBe(400);
      expect(await masked.text()).toContain("Must not have *** as its password");
      expect(await admin.store.webhooks.list()).toEqual([]);
    } finally {
      await admin.store.close();
    }
  });
});

describe("bun run webhooks", () => {
  const { files, cli } = useWebhooksCliFile("url-sanity-", { now: () => T0 });

  test("add and update refuse a URL with CR/LF; add refuses *** as its password", async () => {
    const failure = (...args: string[]) =>
      cli(...args).then(
        () => "",
        (error: Error) => error.message,
      );
    expect(await failure("add", "--name", "erp", "--url", "https://e.example/\r\nx")).toBe(
      'Invalid --url "https://e.example/\\r\\nx": must not contain control or invisible characters (U+000D at character 19)',
    );
    expect(await failure("add", "--name", "erp", "--url", "https://u:***@e.example/")).toContain(
      "must not have *** as its password",
    );
    await files.store.webhooks.create({ name: "erp", url: "https://e.example/" });
    expect(await failure("update", "erp", "--url", "https://e.example/\nx")).toContain(
      "(U+000A at character 19)",
    );
    expect((await files.store.webhooks.list()).map((w) => w.url)).toEqual(["https://e.example/"]);
  });
});
