import type { Database, SQLQueryBindings } from "bun:sqlite";
import {
  type FanOutCandidate,
  isPlain,
  type PlannedDelivery,
} from "../../../webhooks/events/fan-out.ts";
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
import { perRowCount } from "./rows.ts";

const MAX_ROWS_PER_INSERT = 32;

interface CandidateRow {
  id: number;
  events: string;
  url: string;
  headers: string;
  body_template: string | null;
  conditions: string | null;
}

const CANDIDATE_COLUMNS = "id, events, url, headers, body_template, conditions";

/**
 * deliveries.ordered of a new row: its webhook is ordered and it is an object's change (a ping
 * has no object). Read in the insert, under its write lock, so it is the webhook's flag at commit.
 */
function orderedOf(webhookId: string, objectId: string): string {
  return `(${objectId} IS NOT NULL AND coalesce((SELECT w.ordered FROM webhooks w WHERE w.id = ${webhookId}), 0))`;
}

/** The enabled webhooks a change may go to, as fan-out reads them (JSON columns parsed once). */
function createCandidates(db: Database, hint: PlanHint) {
  const enabledTargetsStmt = db.prepare<CandidateRow, []>(
    `SELECT ${CANDIDATE_COLUMNS} FROM webhooks WHERE enabled = 1 ORDER BY id`,
  );
  const enabledTargetStmt = db.prepare<CandidateRow, [number]>(
    `SELECT ${CANDIDATE_COLUMNS} FROM webhooks WHERE id = ? AND enabled = 1`,
  );

  // JSON columns: most webhooks share a handful of values, parsed once.
  const parsed = new Map<string, unknown>();
  function parsedJson<T>(text: string): T {
    let value = parsed.get(text);
    if (value === undefined) {
      value = JSON.parse(text);
      if (parsed.size >= 1000) parsed.clear();
      parsed.set(text, value);
    }
    return value as T;
  }

  function candidates(webhookId: number | undefined): FanOutCandidate[] {
    const rows =
      webhookId === undefined
        ? enabledTargetsStmt.all()
        : [enabledTargetStmt.get(webhookId)].filter((row) => row !== null);
    const targets = rows.map((row) => ({
      id: row.id,
      events: parsedJson<string[]>(row.events),
      url: row.url,
      headers: parsedJson<Array<[string, string]>>(row.headers),
      bodyTemplate: row.body_template,
      conditions: row.conditions === null ? null : parsedJson<ConditionSet>(row.conditions),
    }));
    if (webhookId === undefined) hint.offThread = rendersOffThread(targets);
    return targets;
  }

  return candidates;
}

/**
 * The inserts of planned deliveries: plain ones in chunks sharing one payload, rendered ones a
 * row each, a template's failure as its attempt 1.
 */
function createInserts(db: Database) {
  const insertDeliveriesStmt = perRowCount<{ id: number }>(db, (count) => {
    const rows = Array.from(
      { length: count },
      (_, i) =>
        `(?${5 + 2 * i}, ?${6 + 2 * i}, ?1, ?3, ?4, ${orderedOf(`?${5 + 2 * i}`, "?4")}, 'queued', 0, ?2, ?2, ?2)`,
    );
    return `INSERT INTO deliveries (webhook_id, message_id, event, object_model, object_id, ordered,
           state, attempts, next_attempt_at, created_at, updated_at)
         VALUES ${rows.join(", ")}
         RETURNING id`;
  });
  // The payload of each delivery in its own table (migration 6); one body bound once per chunk.
  const insertPayloadsStmt = perRowCount(db, (count) => {
    const rows = Array.from({ length: count }, (_, i) => `(?${2 + i}, ?1)`);
    return `INSERT INTO delivery_payloads (delivery_id, payload) VALUES ${rows.join(", ")}`;
  });
  const insertRenderedStmt = db.prepare<{ id: number }, SQLQueryBindings[]>(
    `INSERT INTO deliveries (webhook_id, message_id, event, url, headers, context,
       template_failed, state, attempts, last_error, next_attempt_at, created_at, updated_at,
       completed_at, object_model, object_id, render_pending, ordered)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?11, ?11, ?12, ?13, ?14, ?15,
       ${orderedOf("?1", "?14")})
     RETURNING id`,
  );
  // A template that cannot render is attempt 1, recorded at once: nothing is ever sent for it.
  const insertTemplateErrorStmt = db.prepare<unknown, SQLQueryBindings[]>(
    `INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms, outcome, error,
       webhook_id)
     VALUES (?1, 1, NULL, ?2, 0, 'template_error', ?3, ?4)`,
  );

  function insertRendered(change: ChangeEvent, delivery: PlannedDelivery, t: number): number {
    const failed = delivery.templateError !== null;
    const object = changedObject(change);
    const row = insertRenderedStmt.get(
      delivery.webhookId,
      newMessageId(undefined, t),
      change.event,
      delivery.url,
      delivery.headers === null ? null : JSON.stringify(delivery.headers),
      delivery.context,
      failed ? 1 : 0,
      failed ? "failed" : "queued",
      failed ? 1 : 0,
      delivery.templateError,
      t,
      failed ? t : null,
      object?.model ?? null,
      object?.id ?? null,
      delivery.renderLater ? 1 : 0,
    );
    if (!row) throw new Error("Inserting a delivery returned no id");
    insertPayloadsStmt(1).run(delivery.payload, row.id);
    if (failed) insertTemplateErrorStmt.run(row.id, t, delivery.templateError, delivery.webhookId);
    return row.id;
  }

  function insertPlanned(change: ChangeEvent, planned: PlannedDelivery[], t: number): number[] {
    const ids: number[] = [];
    const plain = planned.filter(isPlain);
    for (const delivery of planned) {
      if (!isPlain(delivery)) ids.push(insertRendered(change, delivery, t));
    }
    const payload = plain[0]?.payload ?? "";
    const object = changedObject(change);
    for (let start = 0; start < plain.length; start += MAX_ROWS_PER_INSERT) {
      const chunk = plain.slice(start, start + MAX_ROWS_PER_INSERT);
      const values: SQLQueryBindings[] = [
        change.event,
        t,
        object?.model ?? null,
        object?.id ?? null,
      ];
      for (const delivery of chunk) values.push(delivery.webhookId, newMessageId(undefined, t));
      const inserted = insertDeliveriesStmt(chunk.length).all(...values);
      if (inserted.length !== chunk.length) throw new Error("Inserting deliveries returned no ids");
      const chunkIds = inserted.map((row) => row.id);
      insertPayloadsStmt(chunkIds.length).run(payload, ...chunkIds);
      ids.push(...chunkIds);
    }
    return ids;
  }

  return { insertPlanned };
}

/**
 * Fans a change out to the webhooks that get it (lib/webhooks/events/fan-out.ts decides which, and
 * renders templates): the plain deliveries, which share NetBox's default body, one INSERT per 32
 * rows (payload and time bound once); templated ones a row each with what was rendered; a
 * template that failed as a failed delivery with its error as attempt 1.
 */
export function createEnqueue(
  db: Database,
  now: () => number,
  options: { render?: RenderTemplates; hint: PlanHint },
) {
  const { render, hint } = options;
  const candidates = createCandidates(db, hint);
  const { insertPlanned } = createInserts(db);
  const stillEnabledStmt = db.prepare<{ id: number }, [string]>(
    "SELECT id FROM webhooks WHERE enabled = 1 AND id IN (SELECT value FROM json_each(?))",
  );
  // Rendering waited for the template renderer: a webhook disabled or removed meanwhile (by
  // another process; inside a caller's transaction nothing can change) gets nothing. One
  // changed meanwhile keeps what was rendered, as a delivery queued just before the change would.
  const insertTx = db.transaction(
    (plans: ReadonlyArray<{ change: ChangeEvent; planned: PlannedDelivery[] }>): number[] => {
      const planned = plans.flatMap((plan) => plan.planned.map((p) => p.webhookId));
      if (planned.length === 0) return [];
      const enabled = new Set(
        stillEnabledStmt.all(JSON.stringify([...new Set(planned)])).map((row) => row.id),
      );
      const t = now();
      const ids: number[] = [];
      for (const { change, planned } of plans) {
        const kept = planned.filter((delivery) => enabled.has(delivery.webhookId));
        ids.push(...insertPlanned(change, kept, t));
      }
      return ids.sort((a, b) => a - b);
    },
  );

  /**
   * Plans each change (rendering templates off this thread, see planDeliveries; with `plan`,
   * only what changed since it was made, see replan), then inserts them all in one transaction
   * (a savepoint inside the caller's).
   */
  async function enqueue(
    changes: readonly ChangeEvent[],
    webhookId: number | undefined,
    plan?: ChangePlan,
  ): Promise<number[]> {
    const targets = candidates(webhookId);
    if (targets.length === 0) return [];
    const plans: Array<{ change: ChangeEvent; planned: PlannedDelivery[] }> = [];
    for (const change of changes) {
      const planned = await replan(plan, targets, change, { only: webhookId, render });
      plans.push({ change, planned });
    }
    return insertTx.immediate(plans);
  }

  /** The webhooks are read through `read` (the store's turn on the connection); renders are not. */
  async function plan(
    change: ChangeEvent,
    webhookId: number | undefined,
    read: <T>(fn: () => T) => Promise<T>,
  ): Promise<ChangePlan> {
    const targets = await read(() => candidates(webhookId));
    return makeChangePlan(targets, change, { only: webhookId, render });
  }

  return { enqueue, plan };
}
