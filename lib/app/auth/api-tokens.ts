import { createHash } from "node:crypto";
import { randomToken } from "../../secrets.ts";
import type { ApiToken, ApiTokenRepo } from "../../webhooks/ports.ts";

/**
 * API tokens: what a program sends as `Authorization: Bearer inv_…` instead of ADMIN_TOKEN.
 *
 * Only the SHA-256 of a token is stored. A slow password hash (bcrypt, Argon2) exists to make
 * guessing a low-entropy password from its hash expensive; these tokens are 256 random bits, so
 * no guess from the hash is feasible whatever the hash costs, and a slow hash would instead
 * cost every API request tens of milliseconds of CPU (a denial of service in waiting). GitHub,
 * Stripe and Svix keep API tokens the same way. Looked up by hash (a unique index), so the
 * comparison leaks nothing about the token.
 */

export const API_TOKEN_PREFIX = "inv_";
/** A used token's last-used time is written at most this often (a read must not be a write). */
export const LAST_USED_EVERY_MS = 60_000;

export function generateApiToken(random: (bytes: number) => string = randomToken): string {
  return `${API_TOKEN_PREFIX}${random(32)}`;
}

/** Whether a value has an API token's shape: `inv_` and 43 base64url characters (256 bits). */
export function looksLikeApiToken(value: string): boolean {
  return /^inv_[A-Za-z0-9_-]{43}$/.test(value);
}

export function hashApiToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Why `name` cannot name a token, or null. */
export function tokenNameProblem(name: string): string | null {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)
    ? null
    : "expected 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit";
}

export type TokenVerdict =
  | { kind: "valid"; token: ApiToken }
  | { kind: "expired"; token: ApiToken }
  | { kind: "unknown" };

/**
 * What a bearer value that is not ADMIN_TOKEN is: a valid API token (its use recorded, at most
 * once a minute), an expired one, or nothing known (a revoked token is deleted: unknown).
 */
export async function verifyApiToken(
  tokens: ApiTokenRepo,
  bearer: string,
  nowMs: number,
): Promise<TokenVerdict> {
  // Only our own shape is looked up: anything else is wrong without a query.
  if (!bearer.startsWith(API_TOKEN_PREFIX)) return { kind: "unknown" };
  const token = await tokens.findByHash(hashApiToken(bearer));
  if (token === null) return { kind: "unknown" };
  if (token.expiresAt !== null && token.expiresAt <= nowMs) return { kind: "expired", token };
  if (token.lastUsedAt === null || nowMs - token.lastUsedAt >= LAST_USED_EVERY_MS) {
    // A database that takes no writes now (a full disk) must not refuse the token's reads:
    // the last use is a note, tried again with the next request.
    await tokens.markUsed(token.name, nowMs).catch(() => {});
  }
  return { kind: "valid", token };
}

/** Whether a token may make a request with `method`: a read token only GET and HEAD. */
export function tokenAllows(token: Pick<ApiToken, "write">, method: string): boolean {
  return token.write || method === "GET" || method === "HEAD";
}
