import { type FanOutCandidate, planChange } from "../events/fan-out.ts";
import { buildPayload } from "../events/payload.ts";
import type { ChangeEvent, ChangePlan, PlannedDelivery } from "../model.ts";
import { hasRegex } from "./conditions.ts";
import { usesTemplates } from "./render.ts";
import type { RenderTemplates } from "./render-process.ts";

export type { ChangePlan } from "../model.ts";

/** Plans `change` for `candidates` (the enabled webhooks a store read, outside a transaction). */
export async function makeChangePlan(
  candidates: readonly FanOutCandidate[],
  change: ChangeEvent,
  options: { only?: number; render?: RenderTemplates } = {},
): Promise<ChangePlan> {
  const { planned, spentMs } = await planChange(candidates, change, options);
  return {
    body: buildPayload(change),
    only: options.only,
    seen: new Map(candidates.map((candidate) => [candidate.id, fingerprint(candidate)])),
    planned,
    spentMs,
  };
}

/**
 * The deliveries of `change` given the enabled webhooks read now (`candidates`, at insert, under
 * the write lock): a webhook unchanged since `plan` keeps what was planned for it (a delivery, or
 * none when it did not want the change); one disabled or removed since gets nothing; one created
 * or edited since is planned here, with what is left of the change's render budget. Without a
 * plan, or with one made for another change, everything is planned here, as before plans.
 */
export async function replan(
  plan: ChangePlan | undefined,
  candidates: readonly FanOutCandidate[],
  change: ChangeEvent,
  options: { only?: number; render?: RenderTemplates } = {},
): Promise<PlannedDelivery[]> {
  if (plan === undefined || plan.only !== options.only || plan.body !== buildPayload(change)) {
    return (await planChange(candidates, change, options)).planned;
  }
  const current = new Set<number>();
  const stale: FanOutCandidate[] = [];
  for (const candidate of candidates) {
    if (plan.seen.get(candidate.id) === fingerprint(candidate)) current.add(candidate.id);
    else stale.push(candidate);
  }
  const kept = plan.planned.filter((delivery) => current.has(delivery.webhookId));
  if (stale.length === 0) return kept;
  const fresh = (await planChange(stale, change, { ...options, spentMs: plan.spentMs })).planned;
  return [...kept, ...fresh].sort((a, b) => a.webhookId - b.webhookId);
}

/** What planning read of a webhook: any difference means it must be planned again. */
function fingerprint(candidate: FanOutCandidate): string {
  return JSON.stringify([
    candidate.events,
    candidate.url,
    candidate.headers,
    candidate.bodyTemplate,
    candidate.conditions,
  ]);
}

/**
 * Whether changes are worth planning before their transaction: some enabled webhook, as the
 * store last read them all, renders off the thread (a template or a regex condition). Without
 * one, planning ahead would only add reads. A hint, never a guarantee: the insert checks the
 * webhooks itself, so a stale hint costs one change rendered inside its transaction, as before
 * plans, and that change's read of the webhooks sets it right.
 */
export interface PlanHint {
  offThread: boolean;
}

/** A hint that says yes until the webhooks were first read. */
export function createPlanHint(): PlanHint {
  return { offThread: true };
}

/** Whether any of the enabled webhooks renders off the thread (what PlanHint records). */
export function rendersOffThread(candidates: readonly FanOutCandidate[]): boolean {
  return candidates.some(
    (candidate) =>
      usesTemplates(candidate) || (candidate.conditions !== null && hasRegex(candidate.conditions)),
  );
}
