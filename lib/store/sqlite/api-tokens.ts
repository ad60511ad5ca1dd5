import type { Database } from "bun:sqlite";
import { type ApiToken, type ApiTokenRepo, DuplicateTokenNameError } from "../../webhooks/ports.ts";

interface TokenRow {
  name: string;
  can_write: number;
  created_at: number;
  last_used_at: number | null;
  expires_at: number | null;
}

const COLUMNS = "name, can_write, created_at, last_used_at, expires_at";

function toToken(row: TokenRow): ApiToken {
  return {
    name: row.name,
    write: row.can_write === 1,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    expiresAt: row.expires_at,
  };
}

/** API tokens in `api_tokens`: each one's hash, never the token. */
export function createSqliteApiTokenRepo(db: Database, now: () => number = Date.now): ApiTokenRepo {
  const insertStmt = db.prepare<TokenRow, [string, string, number, number, number | null]>(
    `INSERT INTO api_tokens (name, token_hash, can_write, created_at, expires_at)
     VALUES (?, ?, ?, ?, ?) RETURNING ${COLUMNS}`,
  );
  const listStmt = db.prepare<TokenRow, []>(`SELECT ${COLUMNS} FROM api_tokens ORDER BY name`);
  const deleteStmt = db.prepare<unknown, [string]>("DELETE FROM api_tokens WHERE name = ?");
  const findStmt = db.prepare<TokenRow, [string]>(
    `SELECT ${COLUMNS} FROM api_tokens WHERE token_hash = ?`,
  );
  const usedStmt = db.prepare<unknown, [number, string]>(
    "UPDATE api_tokens SET last_used_at = ? WHERE name = ?",
  );
  return {
    async create({ name, hash, write, expiresAt }) {
      try {
        const row = insertStmt.get(name, hash, write ? 1 : 0, now(), expiresAt);
        if (row === null) throw new Error("INSERT … RETURNING gave no row");
        return toToken(row);
      } catch (error) {
        if (
          error instanceof Error &&
          /UNIQUE constraint failed: api_tokens\.name/.test(error.message)
        ) {
          throw new DuplicateTokenNameError(name);
        }
        throw error;
      }
    },
    async list() {
      return listStmt.all().map(toToken);
    },
    async revoke(name) {
      return deleteStmt.run(name).changes > 0;
    },
    async findByHash(hash) {
      const row = findStmt.get(hash);
      return row === null ? null : toToken(row);
    },
    async markUsed(name, at) {
      usedStmt.run(at, name);
    },
  };
}
