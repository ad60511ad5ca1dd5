/**
 * bench:webhooks section: what NetBox's webhook options cost where they run, at enqueue, inside
 * the change's transaction (SQLite): changes/s with one plain webhook, with one whose body, URL
 * and a header are templates, with one whose condition matches nothing, and one render alone.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import type { ConditionSet, NewWebhook } from "../lib/webhooks/model.ts";
import { compileRegex, MAX_REGEX_CONDITIONS } from "../lib/webhooks/rendering/condition-regex.ts";
import { conditionsMatch } from "../lib/webhooks/rendering/conditions.ts";
import { renderTemplate } from "../lib/webhooks/rendering/template.ts";
import { benchChange } from "./shared.ts";

export const TEMPLATES_SECTION_TITLE =
  "Templates and conditions at enqueue (SQLite, one change per transaction)";

const SLACK = `{
  "text": {{ ("Item " ~ data.sku ~ " " ~ event ~ " by " ~ username) | tojson }},
  "blocks": [{"type": "section", "text": {"type": "mrkdwn",
    "text": {{ ("*" ~ data.name ~ "*: " ~ data.quantity ~ " left") | tojson }}}}]
}`;

export async function templatesSection(options: {
  report: (label: string, value: string, note?: string) => void;
  changes?: number;
}): Promise<void> {
  const changes = options.changes ?? 5000;
  const dir = mkdtempSync(join(tmpdir(), "bench-templates-"));
  const setups: Array<[string, Partial<NewWebhook>]> = [
    ["plain webhook (default body)", {}],
    [
      "templated body, URL and header",
      {
        url: "http://127.0.0.1:9/{{ model }}/{{ data.id }}",
        headers: [["X-Sku", "{{ data.sku }}"]],
        bodyTemplate: SLACK,
      },
    ],
    ["condition that matches nothing", { conditions: { and: [{ attr: "id", value: -1 }] } }],
  ];
  try {
    for (const [index, [label, fields]] of setups.entries()) {
      const store = openSqliteStore(join(dir, `t${index}.db`));
      await store.webhooks.create({ name: "bench", url: "http://127.0.0.1:9/", ...fields });
      for (let i = 0; i < 200; i++) await store.queue.enqueue(benchChange(i)); // warm-up
      const started = performance.now();
      for (let i = 0; i < changes; i++) await store.queue.enqueue(benchChange(i));
      const ms = performance.now() - started;
      options.report(
        label,
        `${Math.round((changes / ms) * 1000).toLocaleString("en")}/s`,
        "changes/s",
      );
      await store.close();
    }
    const text = JSON.stringify({ ...benchChange(1), event: "created" });
    const contexts = Array.from({ length: 100 }, () => JSON.parse(text));
    const renders = 20_000;
    let started = performance.now();
    // A new change each time: its context is handed to the engine, then rendered.
    for (let i = 0; i < renders; i++) renderTemplate(SLACK, contexts[i % 100]);
    let perRender = ((performance.now() - started) / renders) * 1000;
    options.report("one render, a new change's context", `${perRender.toFixed(1)} µs`);
    started = performance.now();
    // Another template of the same change (its URL, a header, another webhook).
    for (let i = 0; i < renders; i++) renderTemplate(SLACK, contexts[0]);
    perRender = ((performance.now() - started) / renders) * 1000;
    options.report("one more render of the same change", `${perRender.toFixed(1)} µs`);
    regexChecks(options.report);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Regex conditions at their bounds (lib/webhooks/rendering/condition-regex.ts), on a 1,000-character
 * value: the slowest patterns found near the 5,000-instruction cap, a set of 16 of them, and a
 * pattern of the kind the cap refuses (compiled, run without the check), for comparison.
 */
function regexChecks(report: (label: string, value: string, note?: string) => void): void {
  const value = "a".repeat(1000);
  const atCap = ["((.|a|aa){1,25}){1,25}b", "(.?){1,999}b", "((.|a){1,30}){1,30}b"];
  for (const pattern of atCap) {
    const size = compileRegex(pattern).programSize;
    const ms = bestOf(5, () => conditionsMatch(regexSet([pattern]), { name: value }));
    report(`regex ${pattern} (${size} instructions)`, `${ms.toFixed(1)} ms`, "1,000 characters");
  }
  const sixteen = regexSet(Array.from({ length: MAX_REGEX_CONDITIONS }, () => atCap[0] ?? ""));
  const setMs = bestOf(3, () => conditionsMatch(sixteen, { name: value }));
  report(`a set of ${MAX_REGEX_CONDITIONS} such regexes (or)`, `${setMs.toFixed(1)} ms`);
  const refused = "((.|a){1,30}){1,30}".repeat(52);
  const compiled = compileRegex(refused);
  const refusedMs = bestOf(1, () => compiled.lookingAt(value));
  report(
    `a ${refused.length}-character pattern the cap refuses (${compiled.programSize.toLocaleString("en")} instructions)`,
    `${refusedMs.toFixed(0)} ms`,
    "run without the check",
  );
}

/** A set whose regex conditions all fail on the value, so every one of them runs. */
function regexSet(patterns: string[]): ConditionSet {
  return { or: patterns.map((value) => ({ attr: "name", op: "regex" as const, value })) };
}

function bestOf(runs: number, run: () => unknown): number {
  let best = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    run();
    best = Math.min(best, performance.now() - started);
  }
  return best;
}
