import { describe, expect, test } from "bun:test";
import { parseAllowList } from "../../../lib/http/ssrf.ts";
import { urlRefusalWarning } from "../../../lib/webhooks/sending/url-refusal.ts";

const none = parseAllowList(undefined);

describe("urlRefusalWarning()", () => {
  test("names what the SSRF guard refuses and the WEBHOOK_ALLOWED_HOSTS entry that allows it", async () => {
    expect(await urlRefusalWarning("http://[::1]:9000/", { allow: none })).toBe(
      "Workers will refuse ::1 (loopback) unless their WEBHOOK_ALLOWED_HOSTS allows it, e.g. WEBHOOK_ALLOWED_HOSTS=[::1]:9000",
    );
    expect(
      await urlRefusalWarning("https://metadata.internal/", {
        allow: none,
        resolve: async () => ["169.254.169.254"],
      }),
    ).toContain("metadata.internal, which resolves to 169.254.169.254 (linkLocal)");
  });

  test("is null when a worker would send, or when this process cannot tell", async () => {
    const global = async () => ["93.184.216.34"];
    expect(
      await urlRefusalWarning("https://hooks.example/", { allow: none, resolve: global }),
    ).toBe(null);
    const allow = parseAllowList("127.0.0.1:9000");
    expect(await urlRefusalWarning("http://127.0.0.1:9000/", { allow })).toBeNull();
    // A template is checked per rendered delivery (the admin's preview checks the rendering).
    expect(await urlRefusalWarning("http://127.0.0.1/{{ data.id }}", { allow: none })).toBeNull();
    // A name that does not resolve here may where the worker runs; a slow answer is not awaited.
    const failing = async () => {
      throw new Error("ENOTFOUND");
    };
    expect(
      await urlRefusalWarning("https://x.example/", { allow: none, resolve: failing }),
    ).toBeNull();
    const never = () => new Promise<string[]>(() => {});
    expect(
      await urlRefusalWarning("https://x.example/", { allow: none, resolve: never, waitMs: 20 }),
    ).toBeNull();
    // A bad URL or scheme is the field check's business, not a warning.
    expect(await urlRefusalWarning("ftp://x.example/", { allow: none })).toBeNull();
  });
});
