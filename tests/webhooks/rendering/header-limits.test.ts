import { afterEach, describe, expect, setDefaultTimeout, test } from "bun:test";
import { checkHeaderLines, MAX_HEADER_BYTES } from "../../../lib/webhooks/definition/validate.ts";
import { buildPayload } from "../../../lib/webhooks/events/payload.ts";
import { renderDelivery } from "../../../lib/webhooks/rendering/render.ts";
import {
  createTemplateRenderer,
  type TemplateRenderer,
} from "../../../lib/webhooks/rendering/render-process.ts";
import { unboundedTemplate } from "../../../lib/webhooks/rendering/template-trial.ts";
import { createClient, testApp } from "../../app/harness.ts";
import { change } from "../../fakes/change.ts";

// The checks at save render in a renderer process: about 0.1 s to start, more under load.
setDefaultTimeout(60_000);

/** Five header templates, each rendering 1 MB: each within the 1 MiB cap of one value. */
const FIVE_MEGABYTE_HEADERS: Array<[string, string]> = Array.from({ length: 5 }, (_, i) => [
  `X-Big-${i}`,
  '{{ "x" * 1000000 }}',
]);

const renderers: TemplateRenderer[] = [];
afterEach(() => {
  for (const renderer of renderers.splice(0)) renderer.close();
});

describe("all of a delivery's headers together are capped at 64 KiB", () => {
  test("rendered: five 1 MB values are a template error after the one that passes the cap", () => {
    const body = buildPayload(change());
    const rendered = renderDelivery(
      { url: "https://hooks.example/", headers: FIVE_MEGABYTE_HEADERS, bodyTemplate: null },
      body,
    );
    expect(rendered.templateError).toBe(
      `Template error in the headers: they rendered to over ${MAX_HEADER_BYTES} bytes in all (1000011 by header X-Big-0)`,
    );
    expect(rendered).toMatchObject({ payload: "", headers: null, context: body });
  });

  test("rendered: small headers that fit together pass", () => {
    const rendered = renderDelivery(
      {
        url: "https://hooks.example/",
        headers: [
          ["X-Sku", "{{ data.sku }}"],
          ["X-Pad", '{{ "x" * 60000 }}'],
        ],
        bodyTemplate: null,
      },
      buildPayload(change()),
    );
    expect(rendered.templateError).toBeNull();
    expect(rendered.headers?.[0]).toEqual(["X-Sku", "A-1"]);
  });

  test("at save: refused with the sample item, naming the headers", async () => {
    const renderer = createTemplateRenderer({ size: 1 });
    renderers.push(renderer);
    const found = await unboundedTemplate(
      { url: "https://hooks.example/", headers: FIVE_MEGABYTE_HEADERS, bodyTemplate: null },
      renderer.render,
    );
    expect(found?.field).toBe("headers");
    expect(found?.problem).toContain(`rendered to over ${MAX_HEADER_BYTES} bytes in all`);
  });

  test("as typed: header lines over 64 KiB in all are refused, each line alone fine", () => {
    const line = `X-Long: ${"y".repeat(20_000)}`;
    expect(checkHeaderLines([line, line].join("\n")).ok).toBe(true);
    expect(checkHeaderLines([line, line, line, line].join("\n"))).toEqual({
      ok: false,
      problem: `the headers are 80040 bytes in all: at most ${MAX_HEADER_BYTES}`,
    });
  });

  test("through the API: POST /api/webhooks with five 1 MB header templates answers 400 naming headers", async () => {
    const t = testApp({});
    try {
      const api = createClient(t.app);
      const response = await api.json("POST", "/api/webhooks", {
        name: "big headers",
        url: "https://hooks.example/",
        headers: FIVE_MEGABYTE_HEADERS.map(([name, value]) => `${name}: ${value}`),
      });
      expect(response.status).toBe(400);
      const text = await response.text();
      expect(text).toContain("headers");
      expect(text).toContain("bytes in all");
      expect(await t.store.webhooks.list()).toEqual([]);
    } finally {
      await t.store.close();
    }
  });
});
