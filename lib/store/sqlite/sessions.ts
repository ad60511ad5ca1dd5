import type { Database } from "bun:sqlite";
import type { SessionRevocations } from "../../webhooks/ports.ts";

/** Sessions ended by logout, in `revoked_sessions`; expired rows go at the next logout. */
export function createSqliteSessionRevocations(
  db: Database,
  now: () => number = Date.now,
): SessionRevocations {
  const insertStmt = db.prepare<unknown, [string, number]>(
    "INSERT OR REPLACE INTO revoked_sessions (id, expires_at) VALUES (?, ?)",
  );
  const purgeStmt = db.prepare<unknown, [number]>(
    "DELETE FROM revoked_sessions WHERE expires_at < ?",
  );
  const findStmt = db.prepare<{ found: number }, [string]>(
    "SELECT 1 AS found FROM revoked_sessions WHERE id = ?",
  );
  const revokeTx = db.transaction((id: string, expiresAt: number) => {
    purgeStmt.run(now());
    insertStmt.run(id, expiresAt);
  });
  return {
    async revoke(id, expiresAt) {
      revokeTx.immediate(id, expiresAt);
    },
    async isRevoked(id) {
      return findStmt.get(id) !== null;
    },
  };
}
