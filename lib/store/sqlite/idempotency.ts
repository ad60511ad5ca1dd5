import type { Database } from "bun:sqlite";
import type { IdempotencyKeys, IdempotencyRecord } from "../../webhooks/ports.ts";

type Row = { fingerprint: string; answer: string | null; expires_at: number };

/** Idempotency keys in `idempotency_keys`: taken atomically, expired ones removed as keys come. */
export function createSqliteIdempotencyKeys(db: Database): IdempotencyKeys {
  const purgeStmt = db.prepare<unknown, [number]>(
    `DELETE FROM idempotency_keys WHERE (scope, key) IN (
       SELECT scope, key FROM idempotency_keys INDEXED BY idempotency_keys_expiry
       WHERE expires_at <= ? LIMIT 100)`,
  );
  const findStmt = db.prepare<Row, [string, string]>(
    "SELECT fingerprint, answer, expires_at FROM idempotency_keys WHERE scope = ? AND key = ?",
  );
  const takeStmt = db.prepare<unknown, [string, string, string, number]>(
    `INSERT OR REPLACE INTO idempotency_keys (scope, key, fingerprint, answer, expires_at)
     VALUES (?, ?, ?, NULL, ?)`,
  );
  const finishStmt = db.prepare<unknown, [string, number, string, string]>(
    "UPDATE idempotency_keys SET answer = ?, expires_at = ? WHERE scope = ? AND key = ?",
  );
  const abandonStmt = db.prepare<unknown, [string, string]>(
    "DELETE FROM idempotency_keys WHERE scope = ? AND key = ? AND answer IS NULL",
  );
  // One immediate transaction: two requests with the same key cannot both find it free.
  const beginTx = db.transaction(
    (scope: string, key: string, fingerprint: string, now: number, expiresAt: number) => {
      purgeStmt.run(now);
      const row = findStmt.get(scope, key);
      if (row !== null && row.expires_at > now) return recordOf(row);
      takeStmt.run(scope, key, fingerprint, expiresAt);
      return null;
    },
  );
  return {
    async begin(scope, key, request) {
      return beginTx.immediate(scope, key, request.fingerprint, request.now, request.expiresAt);
    },
    async finish(scope, key, kept) {
      finishStmt.run(JSON.stringify(kept.answer), kept.expiresAt, scope, key);
    },
    async abandon(scope, key) {
      abandonStmt.run(scope, key);
    },
  };
}

function recordOf(row: Row): IdempotencyRecord {
  return {
    fingerprint: row.fingerprint,
    answer: row.answer === null ? null : (JSON.parse(row.answer) as IdempotencyRecord["answer"]),
  };
}
