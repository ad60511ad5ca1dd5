import type { ChangeEvent, ConditionSet, PlannedDelivery, RenderedDelivery } from "../model.ts";
import { conditionsMatch, hasRegex } from "../rendering/conditions.ts";
import { usesTemplates } from "../rendering/render.ts";
import {
  CHANGE_WALL_CEILING_MS,
  OWN_BUDGET_SPENT,
  overranOwnBudget,
  RENDER_DEADLINE_MS,
  type RenderResult,
  type RenderTemplates,
  sharedTemplateRenderer,
  WALL_CEILING_MS,
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
 * (render-process.ts). Each webhook's renders have a CPU budget of their own
 * (RENDER_DEADLINE_MS): a template past it fails that webhook's delivery, saying so, and costs no
 * other webhook anything. Time is the change's: its renders together take at most
 * CHANGE_WALL_CEILING_MS of wall-clock time, one render at most WALL_CEILING_MS. A render
 * stopped for want of CPU (a busy machine), and the webhooks whose turn comes after the change's
 * time ran out, are no failure: their deliveries are queued to be rendered by the worker before
 * the send (renderLater). Ascending by webhook id, as they are inserted.
 */
export async function planDeliveries(
  candidates: readonly FanOutCandidate[],
  change: ChangeEvent,
  options: { only?: number; render?: RenderTemplates; wallMs?: number } = {},
): Promise<PlannedDelivery[]> {
  return (await planChange(candidates, change, options)).planned;
}

/**
 * planDeliveries, and the wall-clock time the change's renders took. `spentMs`: what an earlier
 * plan of the same change already took of its time (a re-plan at insert has only the rest).
 */
export async function planChange(
  candidates: readonly FanOutCandidate[],
  change: ChangeEvent,
  options: { only?: number; render?: RenderTemplates; wallMs?: number; spentMs?: number } = {},
): Promise<{ planned: PlannedDelivery[]; spentMs: number }> {
  const wanted = new Set(
    receivers(candidates, change.event, { only: options.only, except: change.notFor }),
  );
  const before = options.spentMs ?? 0;
  if (wanted.size === 0) return { planned: [], spentMs: before };
  const render = options.render ?? sharedTemplateRenderer().render;
  const body = buildPayload(change);
  const subject = {
    data: change.data ?? null,
    prechange: change.prechange ?? null,
    postchange: change.postchange ?? null,
  };
  const wallMs = (options.wallMs ?? CHANGE_WALL_CEILING_MS) - before;
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
    const wallLeft = wallMs - (performance.now() - started);
    if (offThread && wallLeft <= 0) {
      planned.push(renderLater(candidate.id, body));
      continue;
    }
    const result = await render(candidate, body, {
      deadlineMs: RENDER_DEADLINE_MS,
      wallMs: Math.max(1, Math.min(WALL_CEILING_MS, wallLeft)),
      conditions: conditions !== undefined && hasRegex(conditions) ? conditions : undefined,
      subject,
    });
    if (result.busy) {
      planned.push(renderLater(candidate.id, body));
      continue;
    }
    if (!result.matched) continue;
    planned.push({ webhookId: candidate.id, ...ownBudgetWorded(result) });
  }
  return { planned, spentMs: before + (performance.now() - started) };
}

/** Left for the worker to render before the send: the change's body kept as its context. */
function renderLater(webhookId: number, body: string): PlannedDelivery {
  return {
    webhookId,
    payload: body,
    url: null,
    headers: null,
    context: body,
    templateError: null,
    renderLater: true,
  };
}

/** A render stopped at its CPU deadline says whose budget it was: its own webhook's. */
function ownBudgetWorded(result: RenderResult): RenderedDelivery {
  const { payload, url, headers, context, templateError } = result;
  const worded = overranOwnBudget(result) ? OWN_BUDGET_SPENT : templateError;
  return { payload, url, headers, context, templateError: worded };
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
