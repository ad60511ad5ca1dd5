import type { SQL } from "bun";
import type { ConditionSet } from "../../../webhooks/model.ts";
import type { RenderTemplates } from "../../../webhooks/rendering/render-process.ts";
import { rerenderFailures, type TemplateFailure } from "../../../webhooks/rendering/rerender.ts";
import { CHANGE_CHANNEL } from "../changes.ts";
import type { StoreClock } from "../clock.ts";
import type { Db } from "../db.ts";

interface FailureRow {
  id: string | number;
  context: string;
  url: string;
  headers: Array<[string, string]>;
  body_template: string | null;
  conditions: ConditionSet | null;
}

/**
 * The retry of deliveries their template failed (as SQLite's rerender.ts): rendered again
 * outside any transaction, then, in one, queued with what rendered or left failed with the new
 * reason, each only if still failed by its template. Returns the ids queued now.
 */
export function createRerender(db: Db, clock: StoreClock, render: RenderTemplates) {
  async function rerender(rows: FailureRow[], at: number): Promise<number[]> {
    if (rows.length === 0) return [];
    const results = await rerenderFailures(rows.map(failureOf), render);
    const t = clock.param(at);
    return db.atomic(async (sql: SQL) => {
      const queued: number[] = [];
      for (const result of results) {
        if ("error" in result) {
          await sql`UPDATE deliveries SET last_error = ${result.error},
              updated_at = coalesce(${t}::bigint, (extract(epoch from now()) * 1000)::bigint)
            WHERE id = ${result.id} AND state = 'failed' AND template_failed`;
          continue;
        }
        const { payload, url, headers, context } = result.rendered;
        const headersJson = headers === null ? null : JSON.stringify(headers);
        const changed = await sql`
          UPDATE deliveries SET state = 'queued', template_failed = FALSE, payload = ${payload},
            url = ${url}, headers = ${headersJson}::jsonb, context = ${context}, last_error = NULL,
            next_attempt_at = coalesce(${t}::bigint, (extract(epoch from now()) * 1000)::bigint),
            completed_at = NULL,
            updated_at = coalesce(${t}::bigint, (extract(epoch from now()) * 1000)::bigint)
          WHERE id = ${result.id} AND state = 'failed' AND template_failed`;
        if (changed.count > 0) queued.push(result.id);
      }
      if (queued.length > 0) await sql`SELECT pg_notify(${CHANGE_CHANNEL}, '')`;
      return queued;
    });
  }

  return {
    async byIds(ids: number[], at: number): Promise<number[]> {
      const valid = ids.filter((id) => Number.isSafeInteger(id));
      if (valid.length === 0) return [];
      const rows = await db.sql<FailureRow[]>`
        SELECT d.id, d.context, w.url, w.headers, w.body_template, w.conditions
        FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
        WHERE d.state = 'failed' AND d.template_failed AND d.context IS NOT NULL
          AND d.id = ANY(${valid}::bigint[])
        ORDER BY d.id`;
      return rerender(rows, at);
    },
  };
}

function failureOf(row: FailureRow): TemplateFailure {
  const { url, headers, body_template: bodyTemplate, conditions } = row;
  return {
    id: Number(row.id),
    context: row.context,
    webhook: { url, headers, bodyTemplate, conditions },
  };
}
