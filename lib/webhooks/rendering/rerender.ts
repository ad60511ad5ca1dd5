import type { ConditionSet } from "../model.ts";
import { conditionsMatch, hasRegex } from "./conditions.ts";
import type { RenderedDelivery, Templates } from "./render.ts";
import type { RenderTemplates } from "./render-process.ts";

/** A delivery failed by its template (or a condition that could not run), as a store reads it. */
export interface TemplateFailure {
  id: number;
  /** The change's default body, kept when the template failed: the context to render again. */
  context: string;
  /** The webhook's templates and conditions as they are now. */
  webhook: Templates & { conditions: ConditionSet | null };
}

export type Rerendered = { id: number; rendered: RenderedDelivery } | { id: number; error: string };

/**
 * A retry of deliveries their template failed: each rendered again from its kept context with
 * the webhook's templates and conditions as they are now (a fixed template then renders), one
 * after the other, each within the render deadline. One that fails again says why; one whose
 * conditions no longer match is not sent.
 */
export async function rerenderFailures(
  failures: readonly TemplateFailure[],
  render: RenderTemplates,
  options: { withinMs?: number; now?: () => number } = {},
): Promise<Rerendered[]> {
  const now = options.now ?? (() => performance.now());
  const until = now() + (options.withinMs ?? RERENDER_WITHIN_MS);
  const results: Rerendered[] = [];
  for (const failure of failures) {
    // A retry of thousands whose template still overruns must not hold its caller for minutes:
    // the rest stay failed as they were, for the next retry.
    if (now() >= until) break;
    results.push(await rerender(failure, render));
  }
  return results;
}

/** How long one retry renders template failures again, at most, before leaving the rest. */
export const RERENDER_WITHIN_MS = 5_000;

async function rerender(failure: TemplateFailure, render: RenderTemplates): Promise<Rerendered> {
  const { id, context, webhook } = failure;
  let change: { event?: unknown; data?: unknown; snapshots?: Record<string, unknown> };
  try {
    change = JSON.parse(context);
  } catch {
    return { id, error: "Template error: the change kept for this delivery cannot be read" };
  }
  const subject = {
    data: change.data ?? null,
    prechange: change.snapshots?.prechange ?? null,
    postchange: change.snapshots?.postchange ?? null,
  };
  const conditions = change.event === "ping" ? null : webhook.conditions;
  if (
    conditions !== null &&
    !hasRegex(conditions) &&
    !conditionsMatch(conditions, subject.data, subject)
  ) {
    return { id, error: NO_LONGER_MATCHES };
  }
  const result = await render(webhook, context, {
    conditions: conditions !== null && hasRegex(conditions) ? conditions : undefined,
    subject,
  });
  if (!result.matched) return { id, error: NO_LONGER_MATCHES };
  if (result.templateError !== null) return { id, error: result.templateError };
  const { payload, url, headers, context: kept, templateError } = result;
  return { id, rendered: { payload, url, headers, context: kept, templateError } };
}

const NO_LONGER_MATCHES = "Condition error: the webhook's conditions no longer match this change";
