import { buildPayload } from "../../../webhooks/events/payload.ts";
import type { Delivery, Webhook } from "../../../webhooks/model.ts";
import type { DeliveryQueue } from "../../../webhooks/ports.ts";
import {
  conditionsMatch,
  type EvaluatedCondition,
  explainConditions,
  hasRegex,
} from "../../../webhooks/rendering/conditions.ts";
import {
  previewTemplateRenderer,
  type RenderTemplates,
} from "../../../webhooks/rendering/render-process.ts";
import { compiledProblem } from "../../../webhooks/rendering/template-trial.ts";

/** What a webhook's templates and conditions make of one change (the form's preview button). */
export interface WebhookPreview {
  /** Which change was used, in a sentence. */
  source: string;
  /** Whether the conditions match it; null when there are none. */
  matches: boolean | null;
  /** Each condition with the value it saw in the change and its result; empty without conditions. */
  evaluation: EvaluatedCondition[];
  url: string;
  headers: Array<[string, string]>;
  body: string;
  error: string | null;
}

type Previewed = Pick<Webhook, "url" | "headers" | "bodyTemplate" | "conditions">;

/** How far back the preview looks for a delivery that shows a change's context. */
const LOOK_BACK = 50;

/**
 * NetBox's default body of the newest change queued for any webhook (a person previews a
 * template with real data), or null when nothing was queued yet. A delivery keeps that body as
 * its payload, or as its context when its payload came from a template.
 */
export async function lastChangeBody(queue: Pick<DeliveryQueue, "list">): Promise<{
  body: string;
  delivery: Delivery;
} | null> {
  for (const delivery of await queue.list({ limit: LOOK_BACK })) {
    if (delivery.event === "ping") continue;
    const body = delivery.context ?? delivery.payload;
    if (isDefaultBody(body)) return { body, delivery };
  }
  return null;
}

/** A change to preview with when none was queued yet. */
export function sampleChangeBody(now: Date, username: string): string {
  const item = { id: 1, sku: "SAMPLE-1", name: "Sample item", quantity: 3, location: "Shelf A" };
  return buildPayload({
    event: "item.created",
    model: "item",
    username,
    requestId: "00000000-0000-4000-8000-000000000000",
    timestamp: now,
    data: item,
    prechange: null,
    postchange: item,
  });
}

/**
 * Rendered as a change's deliveries are (off this thread, within the same deadline), after the
 * checks a save makes first (template-trial.ts: how many templated headers, every template
 * compiled in the renderer): a Preview never compiles on the app's thread.
 */
export async function previewWebhook(
  webhook: Previewed,
  body: string,
  source: string,
  render: RenderTemplates = previewTemplateRenderer().render,
): Promise<WebhookPreview> {
  const compiled = await compiledProblem(webhook, render);
  if (compiled !== null) {
    const error = `Template error: ${compiled.problem}`;
    const { url, headers } = webhook;
    return { source, matches: null, evaluation: [], url, headers, body: "", error };
  }
  const { data, snapshots } = JSON.parse(body) as {
    data?: unknown;
    snapshots?: { prechange?: unknown; postchange?: unknown };
  };
  const before = {
    prechange: snapshots?.prechange ?? null,
    postchange: snapshots?.postchange ?? null,
  };
  const set = webhook.conditions;
  const subject = { data: data ?? null, ...before };
  // A set with a regex is evaluated in the renderer, never on the app's thread.
  if (set !== null && hasRegex(set)) {
    const rendered = await render(webhook, body, { conditions: set, subject, explain: true });
    return {
      source,
      matches: rendered.matched,
      evaluation: rendered.evaluation ?? [],
      url: rendered.url ?? webhook.url,
      headers: rendered.headers ?? webhook.headers,
      body: rendered.payload,
      error: rendered.templateError,
    };
  }
  const matches = set === null ? null : conditionsMatch(set, data, before);
  const evaluation = set === null ? [] : explainConditions(set, data, before);
  const rendered = await render(webhook, body);
  return {
    source,
    matches,
    evaluation,
    url: rendered.url ?? webhook.url,
    headers: rendered.headers ?? webhook.headers,
    body: rendered.payload,
    error: rendered.templateError,
  };
}

function isDefaultBody(text: string): boolean {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    return (
      typeof value === "object" &&
      value !== null &&
      typeof value.event === "string" &&
      "data" in value &&
      "snapshots" in value
    );
  } catch {
    return false;
  }
}
