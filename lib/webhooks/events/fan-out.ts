import type { ChangeEvent, ConditionSet, PlannedDelivery } from "../model.ts";
import { conditionsMatch, hasRegex } from "../rendering/conditions.ts";
import { usesTemplates } from "../rendering/render.ts";
import {
  CHANGE_RENDER_BUDGET_MS,
  CHANGE_WALL_CEILING_MS,
  failure,
  type RenderTemplates,
  sharedTemplateRenderer,
} from "../rendering/render-process.ts";
import { subscribes } from "./events.ts";
import { buildPayload } from "./payload.ts";

/**
 * The webhooks that get a change, from the enabled candidates the store read: those subscribed
 * to the event, or, when the change is meant for one webhook (`only`, "Send test"), that one, a
 * ping included; never `except` (the webhook an operational event is about). Ids come back
 * ascending, as the deliveries are inserted.
 */
export function receivers<T extends { id: number; events: readonly string[] }>(
  candidates: readonly T[],
  event: string,
  options: { only?: number; except?: number } = {},
): number[] {
  const ids: number[] = [];
  for (const candidate of candidates) {
    if (options.only !== undefined && candidate.id !== options.only) continue;
    if (candidate.id === options.except) continue;
    const wanted =
      event === "ping" ? options.only !== undefined : subscribes(candidate.events, event);
    if (wanted) ids.push(candidate.id);
  }
  return ids.sort((a, b) => a - b);
}

/** What a store reads of an enabled webhook to fan a change out to it. */
export interface FanOutCandidate {
  id: number;
  events: readonly string[];
  url: string;
  headers: Array<[string, string]>;
  bodyTemplate: string | null;
  conditions: ConditionSet | null;
}

export type { PlannedDelivery } from "../model.ts";

/**
 * The deliveries of a change: for each webhook that gets it (receivers) and whose conditions
 * match the changed object's data and its snapshots before and after, the body, URL and headers
 * rendered now, so every attempt sends the same bytes. A ping (Send test) is not filtered by
 * conditions. Templates, and condition sets with a regex, are run by `render`, off this thread
 * and within a deadline (render-process.ts); the webhooks of one change share one budget of CPU
 * (CHANGE_RENDER_BUDGET_MS), so a change reaching many costly templates costs that much at most,
 * not a deadline each. A template that fails or overruns, or whose turn comes after the budget
 * ran out, is a delivery with its templateError (retried by hand once fixed: its context is
 * kept), never a lost change. Ascending by webhook id, as they are inserted.
 */
export async function planDeliveries(
  candidates: readonly FanOutCandidate[],
  change: ChangeEvent,
  options: { only?: number; render?: RenderTemplates; budgetMs?: number } = {},
): Promise<PlannedDelivery[]> {
  return (await planChange(candidates, change, options)).planned;
}

/**
 * planDeliveries, and the CPU the change's renders took in all. `spentMs`: what an earlier plan
 * of the same change already took of its budget (a re-plan at insert has only the rest).
 */
export async function planChange(
  candidates: readonly FanOutCandidate[],
  change: ChangeEvent,
  options: { only?: number; render?: RenderTemplates; budgetMs?: number; spentMs?: number } = {},
): Promise<{ planned: PlannedDelivery[]; spentMs: number }> {
  const wanted = new Set(
    receivers(candidates, change.event, { only: options.only, except: change.notFor }),
  );
  if (wanted.size === 0) return { planned: [], spentMs: options.spentMs ?? 0 };
  const render = options.render ?? sharedTemplateRenderer().render;
  const body = buildPayload(change);
  const subject = {
    data: change.data ?? null,
    prechange: change.prechange ?? null,
    postchange: change.postchange ?? null,
  };
  const budget = options.budgetMs ?? CHANGE_RENDER_BUDGET_MS;
  let spentMs = Math.min(budget, options.spentMs ?? 0);
  const wallCeiling = (CHANGE_WALL_CEILING_MS * (budget - spentMs)) / CHANGE_RENDER_BUDGET_MS;
  const started = performance.now();
  const planned: PlannedDelivery[] = [];
  for (const candidate of [...candidates].sort((a, b) => a.id - b.id)) {
    if (!wanted.has(candidate.id)) continue;
    const conditions =
      change.event === "ping" || candidate.conditions === null ? undefined : candidate.conditions;
    // Sets without a regex are cheap and bounded (paths and comparisons): evaluated here.
    if (conditions !== undefined && !hasRegex(conditions)) {
      if (!conditionsMatch(conditions, subject.data, subject)) continue;
    }
    const offThread =
      usesTemplates(candidate) || (conditions !== undefined && hasRegex(conditions));
    const wallLeft = wallCeiling - (performance.now() - started);
    if (offThread && (spentMs >= budget || wallLeft <= 0)) {
      planned.push({ webhookId: candidate.id, ...failure(budgetGone(budget), body) });
      continue;
    }
    const result = await render(candidate, body, {
      deadlineMs: Math.max(1, budget - spentMs),
      wallMs: Math.max(1, wallLeft),
      conditions: conditions !== undefined && hasRegex(conditions) ? conditions : undefined,
      subject,
    });
    spentMs += result.spentMs;
    if (!result.matched) continue;
    const { matched: _matched, spentMs: _spent, ...rendered } = result;
    planned.push({ webhookId: candidate.id, ...rendered });
  }
  return { planned, spentMs };
}

function budgetGone(budgetMs: number): string {
  return `this change's templates had used their ${budgetMs} ms of CPU (for all its webhooks; ${(CHANGE_WALL_CEILING_MS * budgetMs) / CHANGE_RENDER_BUDGET_MS} ms of wall-clock time on a busy machine) before this webhook's turn; retry the delivery to render it again`;
}

/**
 * Sent as NetBox's default body to the webhook's own URL and headers (no template involved):
 * stores insert these in bulk, one payload bound for all.
 */
export function isPlain(delivery: PlannedDelivery): boolean {
  return (
    delivery.context === null &&
    delivery.url === null &&
    delivery.headers === null &&
    delivery.templateError === null
  );
}
