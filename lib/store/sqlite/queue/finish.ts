import type { Database, SQLQueryBindings, Statement } from "bun:sqlite";
import type { AttemptRecord, Claim, Outcome } from "../../../webhooks/model.ts";
import type { Params } from "./rows.ts";

/**
 * Ending a claim: its result (the attempt recorded, the outcome applied) or giving it back
 * unattempted. Both apply only while the claim's lease stands (state 'delivering' and the same
 * attempt number: fencing). Run inside the caller's write transaction.
 */
export function createFinish(db: Database) {
  // Numbered parameters: run once or twice per delivery, binding an array is cheaper than an
  // object of names (about 1 µs per delivery).
  const finishStmt = db.prepare<unknown, SQLQueryBindings[]>(
    `UPDATE deliveries SET state = ?3, next_attempt_at = coalesce(?4, next_attempt_at),
       lease_owner = NULL, lease_expires_at = NULL, last_status = ?5, last_error = ?6,
       updated_at = ?7, completed_at = ?8
     WHERE id = ?1 AND state = 'delivering' AND attempts = ?2`,
  );
  const insertAttemptStmt = db.prepare<unknown, SQLQueryBindings[]>(
    `INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms, status_code,
       outcome, error, response_headers, response_body, url)
     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)`,
  );
  const releaseStmt = db.prepare<unknown, Params>(
    `UPDATE deliveries SET state = 'queued', attempts = attempts - 1, lease_owner = NULL,
       lease_expires_at = NULL, updated_at = $now
     WHERE id = $id AND state = 'delivering' AND attempts = $attempt`,
  );

  /** The fenced UPDATE: false when another worker took the delivery over (or it was released). */
  function applyOutcome(
    claim: Claim,
    record: AttemptRecord,
    outcome: Outcome,
    at: number,
  ): boolean {
    const queued = outcome.state === "queued";
    const updated = finishStmt.run(
      claim.delivery.id,
      claim.attempt,
      outcome.state,
      queued ? outcome.nextAttemptAt : null,
      record.statusCode,
      record.error,
      at,
      queued ? null : at,
    );
    return updated.changes > 0;
  }

  /** An attempts row's values, in the column order of both INSERTs. */
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
    ];
  }

  function finishRow(claim: Claim, record: AttemptRecord, outcome: Outcome, at: number): boolean {
    // Fencing: a result whose lease was lost writes nothing.
    if (!applyOutcome(claim, record, outcome, at)) return false;
    insertAttemptStmt.run(...attemptValues(claim, record));
    return true;
  }

  // The attempt rows of a batch, up to 16 per INSERT: one statement run instead of sixteen.
  const ATTEMPTS_PER_INSERT = 16;
  const insertAttemptsStmts = new Map<number, Statement<unknown, SQLQueryBindings[]>>();
  function insertAttemptsStmt(count: number) {
    let stmt = insertAttemptsStmts.get(count);
    if (!stmt) {
      const rows = Array.from({ length: count }, (_, i) => {
        const n = i * 11;
        return `(${Array.from({ length: 11 }, (_, k) => `?${n + k + 1}`).join(", ")})`;
      });
      stmt = db.prepare(
        `INSERT INTO attempts (delivery_id, attempt, worker_id, started_at, duration_ms,
           status_code, outcome, error, response_headers, response_body, url)
         VALUES ${rows.join(", ")}`,
      );
      insertAttemptsStmts.set(count, stmt);
    }
    return stmt;
  }

  /**
   * finishRow for a whole batch, in the caller's transaction: the fenced UPDATE per delivery,
   * then the attempts of those that applied, 16 per INSERT. Per item: whether it applied.
   */
  function finishRows(
    items: ReadonlyArray<{ claim: Claim; record: AttemptRecord; outcome: Outcome }>,
    at: number,
  ): boolean[] {
    const values: SQLQueryBindings[] = [];
    let pending = 0;
    const flush = () => {
      if (pending === 0) return;
      insertAttemptsStmt(pending).run(...values);
      values.length = 0;
      pending = 0;
    };
    const applied = items.map(({ claim, record, outcome }) => {
      if (!applyOutcome(claim, record, outcome, at)) return false;
      values.push(...attemptValues(claim, record));
      if (++pending === ATTEMPTS_PER_INSERT) flush();
      return true;
    });
    flush();
    return applied;
  }

  /** Gives claims back: queued again, attempt number not consumed. Returns how many. */
  function releaseRows(claims: Claim[], at: number): number {
    let released = 0;
    for (const claim of claims) {
      released += releaseStmt.run({
        id: claim.delivery.id,
        attempt: claim.attempt,
        now: at,
      }).changes;
    }
    return released;
  }

  return { finishRow, finishRows, releaseRows };
}
