import { describe, expect, test } from "bun:test";
import { buildPayload } from "../../../lib/webhooks/events/payload.ts";
import { renderDelivery } from "../../../lib/webhooks/rendering/render.ts";
import {
  compileProblem,
  isTemplated,
  renderTemplate,
  TemplateError,
  templateProblem,
} from "../../../lib/webhooks/rendering/template.ts";
import { change } from "../../fakes/change.ts";

const body = buildPayload(
  change({
    data: { id: 1, sku: "A-1", name: 'Widget "mk2"\n<b>', quantity: 3, tags: ["red", "blue"] },
  }),
);
const plain = { url: "https://hooks.example/in", headers: [] as Array<[string, string]> };

function rendered(bodyTemplate: string) {
  const result = renderDelivery({ ...plain, bodyTemplate }, body);
  if (result.templateError !== null) throw new Error(result.templateError);
  return result.payload;
}

describe("renderDelivery() with a body template", () => {
  test("gives the template NetBox's context", () => {
    expect(
      rendered(
        "{{ event }}|{{ model }}|{{ username }}|{{ request_id }}|{{ timestamp }}|{{ data.sku }}|{{ snapshots.prechange }}|{{ snapshots.postchange.sku }}",
      ),
    ).toBe(
      "created|item|alice|3f2a6c1e-0000-4000-8000-000000000001|2021-03-09 17:55:33.968000+00:00|A-1|none|A-1",
    );
  });

  test("renders if, loops and filters", () => {
    expect(
      rendered(
        "{% if data.quantity < 5 %}low{% else %}ok{% endif %}:{% for t in data.tags %}{{ t | upper }}{% if not loop.last %},{% endif %}{% endfor %}:{{ data.tags | length }}:{{ data.missing | default('-') }}",
      ),
    ).toBe("low:RED,BLUE:2:-");
  });

  test("tojson escapes values inserted into a JSON body", () => {
    const payload = rendered('{"text": {{ data.name | tojson }}, "n": {{ data.quantity }}}');
    expect(JSON.parse(payload)).toEqual({ text: 'Widget "mk2"\n<b>', n: 3 });
  });

  test("without tojson a quote in the data breaks the JSON (what the docs warn about)", () => {
    const payload = rendered('{"text": "{{ data.name }}"}');
    expect(() => JSON.parse(payload)).toThrow();
  });

  test("does not escape HTML (a JSON body is not a page)", () => {
    expect(rendered("{{ data.name }}")).toContain("<b>");
  });

  test("keeps the default body and no context when nothing is templated", () => {
    expect(renderDelivery({ ...plain, bodyTemplate: null }, body)).toEqual({
      payload: body,
      url: null,
      headers: null,
      context: null,
      templateError: null,
    });
  });

  test("keeps the default body as the context of a rendered payload", () => {
    const result = renderDelivery({ ...plain, bodyTemplate: "{{ data.sku }}" }, body);
    expect(result.payload).toBe("A-1");
    expect(result.context).toBe(body);
  });

  test("renders a templated URL and header values, not the names", () => {
    const result = renderDelivery(
      {
        bodyTemplate: null,
        url: "https://hooks.example/{{ model }}/{{ data.id }}",
        headers: [
          ["X-Sku", "{{ data.sku }}"],
          ["X-Plain", "yes"],
        ],
      },
      body,
    );
    expect(result.url).toBe("https://hooks.example/item/1");
    expect(result.headers).toEqual([
      ["X-Sku", "A-1"],
      ["X-Plain", "yes"],
    ]);
    expect(result.payload).toBe(body);
  });

  test("reports a render error instead of throwing", () => {
    const result = renderDelivery({ ...plain, bodyTemplate: "x\n{{ data.sku | nosuch }}" }, body);
    expect(result.templateError).toBe(
      "Template error in the body: line 2, column 15: unknown filter: filter nosuch is unknown",
    );
    expect(result.payload).toBe("");
    expect(result.context).toBe(body);
  });

  test("refuses a header value that renders a newline (header injection)", () => {
    const result = renderDelivery(
      { ...plain, bodyTemplate: null, headers: [["X-Name", "{{ data.name }}"]] },
      body,
    );
    expect(result.templateError).toBe(
      "Template error in header X-Name: the value contains control characters",
    );
  });

  test("refuses a URL that renders to something other than http(s)", () => {
    const result = renderDelivery(
      { ...plain, bodyTemplate: null, url: "https://{{ data.missing }}" },
      body,
    );
    expect(result.templateError).toStartWith("Template error in the URL: it rendered to");
  });
});

describe("compileProblem() and templateProblem()", () => {
  test("templateProblem() never compiles: a syntax error or a constant of 10 MB is the renderer's to find", () => {
    expect(templateProblem("line one\n  {% if %}")).toBeNull();
    expect(templateProblem('{% set s = "x" * 10000000 %}')).toBeNull();
    expect(compileProblem("line one\n  {% if %}")).not.toBeNull();
  });

  test("is null for a template that parses", () => {
    expect(compileProblem('{"text": {{ data.name | tojson }}}')).toBeNull();
  });

  test("gives the line and column of a syntax error", () => {
    const problem = compileProblem("line one\n  {% if %}");
    expect(problem).toBeInstanceOf(TemplateError);
    expect(problem?.line).toBe(2);
    expect(problem?.column).toBe(9);
    expect(problem?.message).toBe("line 2, column 9: syntax error: unexpected end of block");
  });

  test("finds an unclosed block", () => {
    expect(compileProblem("{% for x in data %}{{ x }}")?.message).toStartWith("line 1");
  });

  test.each([
    ['{% include "t1" %}', "line 1, column 1: include"],
    ['{%include"t1"%}', "line 1, column 1: include"],
    ['x\n  {%- import "t1" as m %}', "line 2, column 3: import"],
    ['{%+ extends "t1" %}', "line 1, column 1: extends"],
    ['{{ 1 }}{% from "t1" import m %}', "line 1, column 8: from"],
  ])("refuses %j, which would reach another webhook's template", (source, start) => {
    expect(templateProblem(source)?.message).toBe(
      `${start} is not allowed: a webhook's template sees only its own change (copy what it needs into it)`,
    );
    expect(compileProblem(source)?.message).toBe(
      `${start} is not allowed: a webhook's template sees only its own change (copy what it needs into it)`,
    );
  });
});

describe("renderTemplate() limits", () => {
  test("a runaway loop runs out of fuel, recorded as an error", () => {
    expect(() =>
      renderTemplate(
        "{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}",
        {},
      ),
    ).toThrow(/ran out of fuel/);
  });

  test("one string larger than the engine's 64 MiB fails at once instead of growing the process", () => {
    const before = process.memoryUsage().rss;
    const started = performance.now();
    expect(() => renderTemplate('{{ ("x" * 1000000000)|length }}', {})).toThrow(
      "the template engine failed: out of memory (at most 64 MiB) or an internal error",
    );
    // Before the cap: 31 s and 2 GB. Generous bounds: a loaded machine, a fresh engine.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
    expect(renderTemplate("{{ 1 + 1 }}", {})).toBe("2");
  }, 30_000);

  test("a result over the size limit is refused", () => {
    expect(() => renderTemplate("{{ 'x' * 2000000 }}", {})).toThrow(/more than the 1048576/);
  });

  test("an engine panic is an error, and the next render works on a fresh engine", () => {
    // 4 × 2^30 bytes overflows WebAssembly's 32-bit sizes: MiniJinja aborts.
    // Its panic text reaches us only once the instance has installed its panic hook.
    expect(() => renderTemplate("{{ 'xxxx' * n }}", { n: 2 ** 30 })).toThrow(
      /^the template engine failed: (capacity overflow|out of memory)/,
    );
    expect(renderTemplate("{{ 1 + 1 }}", {})).toBe("2");
    // A fresh engine is a new WebAssembly instance: ~0.1 s alone, seconds on a loaded machine.
  }, 30_000);

  test("a template that crashes the engine when parsed is refused when saved", () => {
    expect(compileProblem("{{ 'xxxx' * 1073741824 }}")?.message).toStartWith(
      "the template engine failed",
    );
    expect(compileProblem("{{ data }}")).toBeNull();
  });

  test("there is no way out of the sandbox to JavaScript", () => {
    expect(renderTemplate("[{{ data.constructor }}]", { data: {} })).toBe("[]");
    expect(() => renderTemplate("{{ range.constructor('return 1')() }}", {})).toThrow(
      TemplateError,
    );
  });
});

test("renderTemplate() never sees a value of an earlier context", () => {
  const first = { data: { sku: "A" }, event: "created" };
  expect(renderTemplate("{{ data.sku }} {{ event }}", first)).toBe("A created");
  expect(renderTemplate("{{ event }}", first)).toBe("created");
  expect(renderTemplate("[{{ data }}] {{ x }}", { x: 1 })).toBe("[] 1");
  expect(renderTemplate("{{ data.sku }}", { data: { sku: "B" } })).toBe("B");
});

test("isTemplated() finds expressions, statements and comments", () => {
  expect(isTemplated("https://x/{{ data.id }}")).toBe(true);
  expect(isTemplated("{% if x %}")).toBe(true);
  expect(isTemplated("{# note #}")).toBe(true);
  expect(isTemplated('{"a": {"b": 1}}')).toBe(false);
});
