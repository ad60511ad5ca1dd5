import type { FanOutCandidate, PlannedDelivery } from "../../../webhooks/events/fan-out.ts";
import { changedObject, newMessageId } from "../../../webhooks/events/payload.ts";
import type { ChangeEvent, ConditionSet } from "../../../webhooks/model.ts";
import {
  type ChangePlan,
  makeChangePlan,
  type PlanHint,
  rendersOffThread,
  replan,
} from "../../../webhooks/rendering/change-plan.ts";
import type { RenderTemplates } from "../../../webhooks/rendering/render-process.ts";
import { CHANGE_CHANNEL } from "../changes.ts";
import type { StoreClock } from "../clock.ts";
import { type Db, toNumber } from "../db.ts";
import type { Int8 } from "./rows.ts";

/** Rows per INSERT: the arrays bound to one statement stay a few MB at most. */
const ROWS_PER_STATEMENT = 5000;

interface CandidateRow {
  id: Int8;
  events: string[];
  url: string;
  headers: Array<[string, string]>;
  body_template: string | null;
  conditions: ConditionSet | null;
}

/** One column per array bound to the INSERT. */
interface Rows {
  webhook: number[];
  message: string[];
  event: string[];
  payload: string[];
  url: Array<string | null>;
  headers: Array<string | null>;
  context: Array<string | null>;
  failed: boolean[];
  later: boolean[];
  error: Array<string | null>;
  objectModel: Array<string | null>;
  objectId: Array<number | null>;
}

/**
 * Fans changes out to the webhooks that get them (lib/webhooks/events/fan-out.ts decides which, by
 * event and conditions, and renders templates): the webhooks are read once, then one INSERT
 * per 5,000 deliveries (a single change is one statement, so it is atomic without a transaction
 * of its own). A template that failed is a failed delivery with its error as attempt 1. The join
 * drops a webhook disabled since it was read. pg_notify is sent once per transaction however
 * many rows call it, and delivered at commit (the caller's, if any).
 */
export function createEnqueue(
  db: Db,
  clock: StoreClock,
  options: { render?: RenderTemplates; hint: PlanHint },
) {
  const { render, hint } = options;
  async function candidatesOf(webhookId: number | undefined): Promise<FanOutCandidate[]> {
    const rows =
      webhookId === undefined
        ? await db.sql<CandidateRow[]>`
            SELECT id, events, url, headers, body_template, conditions
            FROM webhooks WHERE enabled ORDER BY id`
        : await db.sql<CandidateRow[]>`
            SELECT id, events, url, headers, body_template, conditions
            FROM webhooks WHERE id = ${webhookId} AND enabled`;
    const candidates = rows.map((row) => ({
      id: toNumber(row.id),
      events: row.events,
      url: row.url,
      headers: row.headers,
      bodyTemplate: row.body_template,
      conditions: row.conditions,
    }));
    if (webhookId === undefined) hint.offThread = rendersOffThread(candidates);
    return candidates;
  }

  async function enqueueMany(
    changes: readonly ChangeEvent[],
    options: { webhookId?: number; plan?: ChangePlan } = {},
  ): Promise<number[]> {
    const webhookId = options.webhookId;
    if (changes.length === 0) return [];
    if (webhookId !== undefined && !Number.isSafeInteger(webhookId)) return [];
    const candidates = await candidatesOf(webhookId);
    const rows: Rows = {
      webhook: [],
      message: [],
      event: [],
      payload: [],
      url: [],
      headers: [],
      context: [],
      failed: [],
      later: [],
      error: [],
      objectModel: [],
      objectId: [],
    };
    for (const change of changes) {
      const only = { only: webhookId, render };
      for (const planned of await replan(options.plan, candidates, change, only)) {
        push(rows, change, planned);
      }
    }
    const t = clock.param();
    const ids: number[] = [];
    for (let start = 0; start < rows.webhook.length; start += ROWS_PER_STATEMENT) {
      const end = start + ROWS_PER_STATEMENT;
      const slice = <T>(column: T[]) => column.slice(start, end);
      const inserted = await db.sql<Array<{ id: Int8 }>>`
        WITH clock AS (
          SELECT coalesce(${t}::bigint, (extract(epoch from now()) * 1000)::bigint) AS t
        ), inserted AS (
          INSERT INTO deliveries (webhook_id, message_id, event, payload, url, headers, context,
            template_failed, state, attempts, last_error, next_attempt_at, created_at,
            updated_at, completed_at, object_model, object_id, render_pending, ordered)
          SELECT target.webhook_id, target.message_id, target.event, target.payload,
            target.url, target.headers::jsonb, target.context, target.failed,
            CASE WHEN target.failed THEN 'failed' ELSE 'queued' END,
            CASE WHEN target.failed THEN 1 ELSE 0 END, target.error,
            (SELECT t FROM clock), (SELECT t FROM clock), (SELECT t FROM clock),
            CASE WHEN target.failed THEN (SELECT t FROM clock) END,
            target.object_model, target.object_id, target.later,
            w.ordered AND target.object_id IS NOT NULL
          FROM unnest(${slice(rows.webhook)}::bigint[], ${slice(rows.message)}::text[],
                      ${slice(rows.event)}::text[], ${slice(rows.payload)}::text[],
                      ${slice(rows.url)}::text[], ${slice(rows.headers)}::text[],
                      ${slice(rows.context)}::text[], ${slice(rows.failed)}::boolean[],
                      ${slice(rows.error)}::text[], ${slice(rows.objectModel)}::text[],
                      ${slice(rows.objectId)}::bigint[], ${slice(rows.later)}::boolean[])
            WITH ORDINALITY AS target(webhook_id, message_id, event, payload, url, headers,
              context, failed, error, object_model, object_id, later, n)
          JOIN webhooks w ON w.id = target.webhook_id AND w.enabled
          ORDER BY target.n
          RETURNING id, template_failed, last_error, webhook_id
        ), template_errors AS (
          -- A template that cannot render is attempt 1, recorded at once: nothing is sent.
          INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
            outcome, error, webhook_id)
          SELECT id, 1, NULL, (SELECT t FROM clock), 0, 'template_error', last_error, webhook_id
          FROM inserted WHERE template_failed
        )
        SELECT id, pg_notify(${CHANGE_CHANNEL}, '') AS notified FROM inserted`;
      for (const row of inserted) ids.push(toNumber(row.id));
    }
    return ids.sort((a, b) => a - b);
  }

  /** Reads the webhooks on a pooled connection (or the caller's transaction), then renders. */
  async function plan(
    change: ChangeEvent,
    options: { webhookId?: number } = {},
  ): Promise<ChangePlan> {
    const webhookId = options.webhookId;
    const candidates =
      webhookId !== undefined && !Number.isSafeInteger(webhookId)
        ? []
        : await candidatesOf(webhookId);
    return makeChangePlan(candidates, change, { only: webhookId, render });
  }

  return {
    enqueueMany,
    enqueue: (change: ChangeEvent, options: { webhookId?: number; plan?: ChangePlan } = {}) =>
      enqueueMany([change], options),
    plan,
    worthPlanning: async () => hint.offThread,
  };
}

function push(rows: Rows, change: ChangeEvent, planned: PlannedDelivery): void {
  rows.webhook.push(planned.webhookId);
  rows.message.push(newMessageId());
  rows.event.push(change.event);
  rows.payload.push(planned.payload);
  rows.url.push(planned.url);
  rows.headers.push(planned.headers === null ? null : JSON.stringify(planned.headers));
  rows.context.push(planned.context);
  rows.failed.push(planned.templateError !== null);
  rows.later.push(planned.renderLater === true);
  rows.error.push(planned.templateError);
  const object = changedObject(change);
  rows.objectModel.push(object?.model ?? null);
  rows.objectId.push(object?.id ?? null);
}
