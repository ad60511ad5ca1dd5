import type { SQL } from "bun";
import { type ApiToken, type ApiTokenRepo, DuplicateTokenNameError } from "../../webhooks/ports.ts";
import { isUniqueViolation, toNumber, toNumberOrNull } from "./db.ts";

interface TokenRow {
  name: string;
  can_write: boolean;
  created_at: string | number;
  last_used_at: string | number | null;
  expires_at: string | number | null;
}

function toToken(row: TokenRow): ApiToken {
  return {
    name: row.name,
    write: row.can_write,
    createdAt: toNumber(row.created_at),
    lastUsedAt: toNumberOrNull(row.last_used_at),
    expiresAt: toNumberOrNull(row.expires_at),
  };
}

/** API tokens in `api_tokens`: each one's hash, never the token. */
export function createPostgresApiTokenRepo(sql: SQL, now: () => number = Date.now): ApiTokenRepo {
  return {
    async create({ name, hash, write, expiresAt }) {
      try {
        const [row] = await sql<TokenRow[]>`
          INSERT INTO api_tokens (name, token_hash, can_write, created_at, expires_at)
          VALUES (${name}, ${hash}, ${write}, ${now()}, ${expiresAt})
          RETURNING name, can_write, created_at, last_used_at, expires_at`;
        if (row === undefined) throw new Error("INSERT … RETURNING gave no row");
        return toToken(row);
      } catch (error) {
        if (isUniqueViolation(error, "api_tokens_name_key"))
          throw new DuplicateTokenNameError(name);
        throw error;
      }
    },
    async list() {
      const rows = await sql<TokenRow[]>`
        SELECT name, can_write, created_at, last_used_at, expires_at
        FROM api_tokens ORDER BY name`;
      return rows.map(toToken);
    },
    async revoke(name) {
      const rows = await sql`DELETE FROM api_tokens WHERE name = ${name} RETURNING 1`;
      return rows.length > 0;
    },
    async findByHash(hash) {
      const [row] = await sql<TokenRow[]>`
        SELECT name, can_write, created_at, last_used_at, expires_at
        FROM api_tokens WHERE token_hash = ${hash}`;
      return row === undefined ? null : toToken(row);
    },
    async markUsed(name, at) {
      await sql`UPDATE api_tokens SET last_used_at = ${at} WHERE name = ${name}`;
    },
  };
}
