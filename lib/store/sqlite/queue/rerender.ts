import type { Database } from "bun:sqlite";
import type { ConditionSet } from "../../../webhooks/model.ts";
import type { RenderTemplates } from "../../../webhooks/rendering/render-process.ts";
import {
  type Rerendered,
  rerenderFailures,
  type TemplateFailure,
} from "../../../webhooks/rendering/rerender.ts";
import type { Params } from "./rows.ts";

interface FailureRow {
  id: number;
  context: string;
  url: string;
  headers: string;
  body_template: string | null;
  conditions: string | null;
}

const FAILURE_SELECT = `
  SELECT d.id, d.context, w.url, w.headers, w.body_template, w.conditions
  FROM deliveries d JOIN webhooks w ON w.id = d.webhook_id
  WHERE d.state = 'failed' AND d.template_failed = 1 AND d.context IS NOT NULL`;

/**
 * The retry of deliveries their template failed: rendered again outside any transaction
 * (lib/webhooks/rendering/rerender.ts), then, in one, queued with what rendered (or left failed with the
 * new reason), each only if still failed by its template.
 */
export function createRerender(
  db: Database,
  render: RenderTemplates,
  turn: <T>(fn: () => T) => Promise<T>,
) {
  const byIdsStmt = db.prepare<FailureRow, [string]>(
    `${FAILURE_SELECT} AND d.id IN (SELECT value FROM json_each(?1)) ORDER BY d.id`,
  );
  const requeueStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', template_failed = 0, url = $url, headers = $headers,
       context = $context, last_error = NULL, next_attempt_at = $now, completed_at = NULL,
       updated_at = $now
     WHERE id = $id AND state = 'failed' AND template_failed = 1`,
  );
  const payloadStmt = db.prepare<unknown, Params>(
    "UPDATE delivery_payloads SET payload = $payload WHERE delivery_id = $id",
  );
  const stillFailedStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET last_error = $error, updated_at = $now
     WHERE id = $id AND state = 'failed' AND template_failed = 1`,
  );
  const apply = db.transaction((results: Rerendered[], now: number): number[] => {
    const queued: number[] = [];
    for (const result of results) {
      if ("error" in result) {
        stillFailedStmt.run({ id: result.id, error: result.error, now });
        continue;
      }
      const { payload, url, headers, context } = result.rendered;
      const headersJson = headers === null ? null : JSON.stringify(headers);
      const changed = requeueStmt.run({ id: result.id, url, headers: headersJson, context, now });
      if (changed.changes === 0) continue;
      payloadStmt.run({ id: result.id, payload });
      queued.push(result.id);
    }
    return queued;
  });

  return {
    /**
     * Renders again those of `ids` failed by their template; the ids queued now. The read and
     * the write each take `turn` on the connection; the renders between them hold nothing, so
     * the app answers other requests while they run.
     */
    async byIds(ids: number[], now: number): Promise<number[]> {
      const valid = JSON.stringify(ids.filter((id) => Number.isSafeInteger(id)));
      const rows = await turn(() => byIdsStmt.all(valid));
      if (rows.length === 0) return [];
      const results = await rerenderFailures(rows.map(failureOf), render);
      return turn(() => apply.immediate(results, now));
    },
  };
}

function failureOf(row: FailureRow): TemplateFailure {
  return {
    id: row.id,
    context: row.context,
    webhook: {
      url: row.url,
      headers: JSON.parse(row.headers) as Array<[string, string]>,
      bodyTemplate: row.body_template,
      conditions: row.conditions === null ? null : (JSON.parse(row.conditions) as ConditionSet),
    },
  };
}
