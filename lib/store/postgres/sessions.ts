import type { SQL } from "bun";
import type { SessionRevocations } from "../../webhooks/ports.ts";

/** Sessions ended by logout, in `revoked_sessions`; expired rows go at the next logout. */
export function createPostgresSessionRevocations(
  sql: SQL,
  now: () => number = Date.now,
): SessionRevocations {
  return {
    async revoke(id, expiresAt) {
      await sql.begin(async (tx) => {
        await tx`DELETE FROM revoked_sessions WHERE expires_at < ${now()}`;
        await tx`
          INSERT INTO revoked_sessions (id, expires_at) VALUES (${id}, ${expiresAt})
          ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at`;
      });
    },
    async isRevoked(id) {
      const rows = await sql`SELECT 1 FROM revoked_sessions WHERE id = ${id}`;
      return rows.length > 0;
    },
  };
}
