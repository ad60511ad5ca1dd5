import type { SQL } from "bun";
import type { IdempotencyKeys, IdempotencyRecord } from "../../webhooks/ports.ts";

type Row = { fingerprint: string; answer: string | null };

/** Idempotency keys in `idempotency_keys`: taken atomically, expired ones removed as keys come. */
export function createPostgresIdempotencyKeys(sql: SQL): IdempotencyKeys {
  return {
    async begin(scope, key, request) {
      return sql.begin(async (tx) => {
        await tx`DELETE FROM idempotency_keys WHERE (scope, key) IN (
          SELECT scope, key FROM idempotency_keys WHERE expires_at <= ${request.now} LIMIT 100)`;
        // Taken when free or expired; otherwise the row is locked and read as it stands.
        const taken = await tx<Row[]>`
          INSERT INTO idempotency_keys (scope, key, fingerprint, answer, expires_at)
          VALUES (${scope}, ${key}, ${request.fingerprint}, NULL, ${request.expiresAt})
          ON CONFLICT (scope, key) DO UPDATE
            SET fingerprint = excluded.fingerprint, answer = NULL, expires_at = excluded.expires_at
            WHERE idempotency_keys.expires_at <= ${request.now}
          RETURNING fingerprint`;
        if (taken.length > 0) return null;
        const [row] = await tx<Row[]>`SELECT fingerprint, answer FROM idempotency_keys
          WHERE scope = ${scope} AND key = ${key}`;
        return row === undefined ? null : recordOf(row);
      });
    },
    async finish(scope, key, kept) {
      await sql`UPDATE idempotency_keys
        SET answer = ${JSON.stringify(kept.answer)}, expires_at = ${kept.expiresAt}
        WHERE scope = ${scope} AND key = ${key}`;
    },
    async abandon(scope, key) {
      await sql`DELETE FROM idempotency_keys
        WHERE scope = ${scope} AND key = ${key} AND answer IS NULL`;
    },
  };
}

function recordOf(row: Row): IdempotencyRecord {
  return {
    fingerprint: row.fingerprint,
    answer: row.answer === null ? null : (JSON.parse(row.answer) as IdempotencyRecord["answer"]),
  };
}
