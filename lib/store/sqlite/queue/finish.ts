import type { Database, SQLQueryBindings } from "bun:sqlite";
import { failingEvent, recoveredEvent } from "../../../webhooks/events/failing-notices.ts";
import { exhaustedEvent } from "../../../webhooks/events/operational-events.ts";
import type { AttemptRecord, Claim, Outcome } from "../../../webhooks/model.ts";
import type { FinishItem } from "../../../webhooks/ports.ts";
import { createSqliteEventRecorder } from "../operational-events.ts";
import { perRowCount } from "./rows.ts";

/** Results per statement pair: the bound values stay far below SQLite's parameter limit. */
const RESULTS_PER_STATEMENT = 64;
/** Values bound per result in the fenced UPDATE and in the attempts INSERT. */
const OUTCOME_VALUES = 8;
const ATTEMPT_VALUES = 12;

/** `(?s+1, …, ?s+width)` for each of `count` rows, numbered from `start`. */
function valueRows(count: number, width: number, start: number): string {
  return Array.from({ length: count }, (_, i) => {
    const first = start + i * width;
    return `(${Array.from({ length: width }, (_, j) => `?${first + j + 1}`).join(", ")})`;
  }).join(", ");
}

/**
 * Ending a claim: its result (the attempt recorded, the outcome applied) or giving it back
 * unattempted. Both apply only while the claim stands: the delivery, by id and message id (an id
 * alone could be a stranger's, were it ever reused), still leased to the claim's worker under
 * the claim's generation (fencing by the claim, not by the clock: a live owner's
 * result whose lease ran out during an outage is still written if nobody took it over). Run
 * inside the caller's write transaction.
 */
export function createFinish(db: Database) {
  // A batch of results: one fenced UPDATE … FROM (VALUES …) and one INSERT of the attempts of
  // those that applied. Each commit rewrites the last page of every table and index it touches,
  // so results per statement and per commit are what make results cheap. ?1 is the time.
  const outcomesStmt = perRowCount<{ id: number }>(
    db,
    (count) => `WITH f(id, message, owner, generation, state, next_at, status, error) AS (
        VALUES ${valueRows(count, OUTCOME_VALUES, 1)})
      UPDATE deliveries SET state = f.state,
        next_attempt_at = coalesce(f.next_at, deliveries.next_attempt_at),
        lease_owner = NULL, lease_expires_at = NULL, last_status = f.status,
        last_error = f.error, updated_at = ?1,
        completed_at = CASE WHEN f.state = 'queued' THEN NULL ELSE ?1 END
      FROM f
      WHERE deliveries.id = f.id AND deliveries.message_id = f.message
        AND deliveries.state = 'delivering' AND deliveries.lease_owner = f.owner AND deliveries.claim_generation = f.generation
      RETURNING deliveries.id`,
  );
  const attemptsStmt = perRowCount(
    db,
    (count) => `INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
        status_code, outcome, error, response_headers, response_body, url, webhook_id)
      VALUES ${valueRows(count, ATTEMPT_VALUES, 0)}`,
  );
  const recordEvent = createSqliteEventRecorder(db);
  // The failing notice's state (failing-notices.ts): set by webhook.failing, once per run.
  const noticeStmt = db.prepare<unknown, [number, number]>(
    "UPDATE webhooks SET failing_noticed_at = ?2 WHERE id = ?1 AND failing_noticed_at IS NULL",
  );
  const noticedStmt = db.prepare<{ failing_noticed_at: number | null }, [number]>(
    "SELECT failing_noticed_at FROM webhooks WHERE id = ?",
  );
  const recoverStmt = db.prepare<unknown, [number, number]>(
    "UPDATE webhooks SET failing_noticed_at = NULL, failing_recovered_at = ?2 WHERE id = ?1",
  );
  const releaseStmt = db.prepare<unknown, SQLQueryBindings[]>(
    `UPDATE deliveries SET state = 'queued', attempts = attempts - 1, lease_owner = NULL,
       lease_expires_at = NULL, updated_at = ?4
     WHERE id = ?1 AND state = 'delivering' AND lease_owner = ?2 AND claim_generation = ?3
       AND message_id = ?5`,
  );

  function outcomeValues(claim: Claim, record: AttemptRecord, outcome: Outcome) {
    return [
      claim.delivery.id,
      claim.delivery.messageId,
      claim.workerId,
      claim.generation,
      outcome.state,
      outcome.state === "queued" ? outcome.nextAttemptAt : null,
      record.statusCode,
      record.error,
    ];
  }

  /** An attempts row's values, in the INSERT's column order. */
  function attemptValues(claim: Claim, record: AttemptRecord): SQLQueryBindings[] {
    return [
      claim.delivery.id,
      claim.attempt,
      claim.workerId,
      record.startedAt,
      record.durationMs,
      record.statusCode,
      record.outcome,
      record.error,
      record.responseHeaders,
      record.responseBody,
      record.url ?? null,
      claim.delivery.webhookId,
    ];
  }

  /** Up to RESULTS_PER_STATEMENT results: per item, whether it applied. */
  function finishChunk(items: readonly FinishItem[], at: number): boolean[] {
    const values: SQLQueryBindings[] = [at];
    for (const { claim, record, outcome } of items) {
      values.push(...outcomeValues(claim, record, outcome));
    }
    const applied = new Set(
      outcomesStmt(items.length)
        .all(...values)
        .map((row) => row.id),
    );
    const written = items.filter((item) => applied.has(item.claim.delivery.id));
    if (written.length > 0) {
      const attempts = written.flatMap(({ claim, record }) => attemptValues(claim, record));
      attemptsStmt(written.length).run(...attempts);
      // A delivery whose attempts ran out: its delivery.exhausted commits with its result.
      for (const item of written) {
        const exhausted = exhaustedEvent(item);
        if (exhausted) recordEvent(exhausted, at);
      }
      noticeFailing(written, at);
    }
    return items.map((item) => applied.has(item.claim.delivery.id));
  }

  /**
   * The failing notice of results written (failing-notices.ts), in their transaction: a
   * webhook's first webhook.failing of a run, and its webhook.recovered at the next success.
   * A success reads the webhook once per chunk; the usual one, with no notice open, writes nothing.
   */
  function noticeFailing(written: readonly FinishItem[], at: number): void {
    const open = new Map<number, number | null>();
    for (const item of written) {
      const id = item.claim.webhook.id;
      if (item.outcome.state === "successful") {
        if (!open.has(id)) open.set(id, noticedStmt.get(id)?.failing_noticed_at ?? null);
        const noticedAt = open.get(id);
        if (noticedAt === null || noticedAt === undefined) continue;
        recoverStmt.run(id, at);
        open.set(id, null);
        recordEvent(recoveredEvent(item, noticedAt), at);
        continue;
      }
      const failing = failingEvent(item);
      if (failing && noticeStmt.run(id, at).changes > 0) {
        open.set(id, at);
        recordEvent(failing, at);
      }
    }
  }

  /**
   * Results in the caller's transaction, fenced: per item, whether it applied (false: the claim
   * no longer stands, the result is discarded). A delivery appears at most once per call.
   */
  function finishRows(items: readonly FinishItem[], at: number): boolean[] {
    const applied: boolean[] = [];
    for (let start = 0; start < items.length; start += RESULTS_PER_STATEMENT) {
      applied.push(...finishChunk(items.slice(start, start + RESULTS_PER_STATEMENT), at));
    }
    return applied;
  }

  /** Gives claims back: queued again, attempt number not consumed. Returns how many. */
  function releaseRows(claims: Claim[], at: number): number {
    let released = 0;
    for (const claim of claims) {
      const { id, messageId } = claim.delivery;
      released += releaseStmt.run(id, claim.workerId, claim.generation, at, messageId).changes;
    }
    return released;
  }

  return { finishRows, releaseRows };
}
