import { conditionsMatch, UnrunnableRegexError } from "./conditions.ts";
import { subscribes } from "./events.ts";
import type { ChangeEvent, ConditionSet } from "./model.ts";
import { buildPayload } from "./payload.ts";
import type { RenderedDelivery } from "./render.ts";
import { type RenderTemplates, sharedTemplateRenderer } from "./render-process.ts";

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

/** One delivery to insert: queued, or failed at once when `templateError` is set. */
export interface PlannedDelivery extends RenderedDelivery {
  webhookId: number;
}

/**
 * The deliveries of a change: for each webhook that gets it (receivers) and whose conditions
 * match the changed object's data and its snapshots before and after, the body, URL and headers rendered now, so every attempt
 * sends the same bytes. A ping (Send test) is not filtered by conditions. Templates are rendered
 * by `render`, off this thread and each within a deadline (render-process.ts); a webhook's
 * template that fails or overruns is a delivery with its templateError, never a lost change.
 * Ascending by webhook id, as they are inserted.
 */
export async function planDeliveries(
  candidates: readonly FanOutCandidate[],
  change: ChangeEvent,
  options: { only?: number; render?: RenderTemplates } = {},
): Promise<PlannedDelivery[]> {
  const wanted = new Set(
    receivers(candidates, change.event, { only: options.only, except: change.notFor }),
  );
  if (wanted.size === 0) return [];
  const render = options.render ?? sharedTemplateRenderer().render;
  const body = buildPayload(change);
  const planned: Array<Promise<PlannedDelivery>> = [];
  for (const candidate of [...candidates].sort((a, b) => a.id - b.id)) {
    if (!wanted.has(candidate.id)) continue;
    let matches: boolean;
    try {
      matches =
        change.event === "ping" ||
        candidate.conditions === null ||
        conditionsMatch(candidate.conditions, change.data ?? null, {
          prechange: change.prechange ?? null,
          postchange: change.postchange ?? null,
        });
    } catch (error) {
      if (!(error instanceof UnrunnableRegexError)) throw error;
      // Recorded as failed with the reason rather than taken for "no match".
      const failed = { payload: "", url: null, headers: null, context: body };
      planned.push(
        Promise.resolve({
          webhookId: candidate.id,
          ...failed,
          templateError: `Condition error: ${error.message}`,
        }),
      );
      continue;
    }
    if (!matches) continue;
    planned.push(render(candidate, body).then((r) => ({ webhookId: candidate.id, ...r })));
  }
  return Promise.all(planned);
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
