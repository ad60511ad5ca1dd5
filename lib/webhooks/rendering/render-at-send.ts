import type { AttemptOutcome, AttemptRecord, Claim, RenderedDelivery, Webhook } from "../model.ts";
import type { SendResult } from "../sending/send.ts";
import {
  OWN_BUDGET_SPENT,
  overranOwnBudget,
  RENDER_DEADLINE_MS,
  type RenderTemplates,
} from "./render-process.ts";

/** One HTTP attempt, as the worker's sender makes it (createSender). */
export type Attempt = (
  claim: Claim,
  call: { maxTimeoutMs?: number; signal?: AbortSignal },
) => Promise<SendResult>;

/** An attempt that may end before the request: null, nothing sent, the claim to give back. */
export type AttemptOrGiveBack = (...args: Parameters<Attempt>) => Promise<SendResult | null>;

/** Below this much of the lease left for the request after rendering, the claim is given back. */
const MIN_REQUEST_MS = 100;

/**
 * A worker's attempt for a delivery left to render at enqueue (renderPending: the change's
 * renders ran out of time, or the machine was too busy): rendered first, from the change it
 * kept, with the webhook's templates and conditions as claimed (as they are now) and a CPU
 * budget of its own (RENDER_DEADLINE_MS; the worker's renderer waits up to 5 s for CPU), then
 * kept (fenced by the claim, so a retry sends the same bytes), then sent. Its own template past
 * its budget, or failing, is the delivery's template_error, as at enqueue. Stopped again for
 * want of CPU, nothing is sent and the attempt is retried as a timeout is. Every other delivery
 * goes straight to `attempt`. The render comes after the claim's last look at its webhook, so the
 * webhook is read again once it is kept: sent with its values as they are then (a changed URL,
 * secret or header), and not sent when it was disabled or deleted meanwhile (null: the claim is
 * given back unattempted, and its next claim sends what was kept).
 */
export function renderBeforeSend(
  attempt: Attempt,
  options: {
    render: RenderTemplates;
    keep(claim: Claim, rendered: RenderedDelivery): Promise<boolean>;
    /** The webhook as it is now (null: deleted). */
    webhook(id: number): Promise<Webhook | null>;
    now: () => number;
  },
): AttemptOrGiveBack {
  return async (claim, call) => {
    if (!claim.delivery.renderPending) return attempt(claim, call);
    const startedAt = options.now();
    const started = performance.now();
    const notSent = (outcome: AttemptOutcome, error: string) =>
      unsent(startedAt, started, outcome, error);
    const { webhook, delivery } = claim;
    const context = delivery.context ?? delivery.payload;
    let change: { event?: unknown; data?: unknown; snapshots?: Record<string, unknown> };
    try {
      change = JSON.parse(context);
    } catch {
      return notSent(
        "template_error",
        "Template error: the change kept for this delivery cannot be read",
      );
    }
    const conditions =
      change.event === "ping" || webhook.conditions === null ? undefined : webhook.conditions;
    const result = await options.render(webhook, context, {
      deadlineMs: RENDER_DEADLINE_MS,
      conditions,
      subject: {
        data: change.data ?? null,
        prechange: change.snapshots?.prechange ?? null,
        postchange: change.snapshots?.postchange ?? null,
      },
    });
    // Starved of CPU again (5 s of wall time without its 100 ms of CPU): given back unattempted
    // and rendered again at its next claim. A busy machine never uses up an attempt, so never
    // fails a delivery, the last attempt included; a template that costs too much fails on its
    // own budget instead (below).
    if (result.busy) return null;
    if (!result.matched) {
      return notSent(
        "template_error",
        "Condition error: the webhook's conditions do not match this change (checked when it was rendered, before the send); nothing was sent",
      );
    }
    if (result.templateError !== null) {
      const error = overranOwnBudget(result) ? OWN_BUDGET_SPENT : result.templateError;
      return notSent("template_error", error);
    }
    const { payload, url, headers, context: renderedContext } = result;
    const rendered = { payload, url, headers, context: renderedContext, templateError: null };
    let kept: boolean;
    try {
      kept = await options.keep(claim, rendered);
    } catch (error) {
      // Not sent unkept (a retry would then send other bytes): an attempt that sent nothing.
      const reason = error instanceof Error ? error.message : String(error);
      return notSent(
        "network_error",
        `Rendering before the send: what rendered could not be kept (${reason}); nothing was sent`,
      );
    }
    if (!kept) {
      return notSent(
        "lease_expired",
        "The delivery was no longer this worker's once rendered; nothing was sent",
      );
    }
    // Disabled while it rendered: given back as the claim buffer gives back a disabled
    // webhook's claims. A read that fails gives it back too: nothing sent on old values.
    const current = await options.webhook(webhook.id).catch(() => null);
    if (current === null || !current.enabled) return null;
    const left = (call.maxTimeoutMs ?? Number.POSITIVE_INFINITY) - (performance.now() - started);
    // The render took the time the lease left for the request: given back unattempted, as a
    // claim whose lease no longer outlasts its request (send-claim.ts); its next claim sends
    // what was kept. A busy machine never uses up an attempt here, the last one included.
    if (left < MIN_REQUEST_MS) return null;
    const sent = {
      ...delivery,
      payload,
      url,
      headers,
      context: rendered.context,
      renderPending: false,
    };
    return attempt(
      { ...claim, webhook: current, delivery: sent },
      { ...call, maxTimeoutMs: Math.min(left, call.maxTimeoutMs ?? left) },
    );
  };
}

/** What an attempt that sent nothing records. */
function unsent(
  startedAt: number,
  started: number,
  outcome: AttemptOutcome,
  error: string,
): SendResult {
  const record: AttemptRecord = {
    startedAt,
    durationMs: Math.round((performance.now() - started) * 1000) / 1000,
    statusCode: null,
    outcome,
    error,
    responseHeaders: null,
    responseBody: null,
    url: null,
  };
  return { record, outcome, statusCode: null };
}
