import { hmac, randomToken, safeEqual } from "../../secrets.ts";

export const SESSION_COOKIE = "admin_session";
export const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;

/** A session cookie that checked out: its id (the nonce) and when it expires (epoch ms). */
export interface Session {
  id: string;
  expiresAt: number;
}

/**
 * Login sessions as signed cookies: `issuedAt.nonce.signature`, signed with a key derived from
 * ADMIN_TOKEN, so changing the token logs everybody out. A forged or expired cookie is refused
 * here without a database read; a logout is recorded by the nonce (store.sessions).
 */
export interface SessionSigner {
  issue(now: Date): string;
  /** The session a cookie carries when its signature and age check out, else null. */
  verify(value: string | undefined, now: Date): Session | null;
}

export function createSessionSigner(adminToken: string): SessionSigner {
  const key = hmac(adminToken, "admin-session-key");
  return {
    issue(now) {
      const body = `${Math.floor(now.getTime() / 1000)}.${randomToken(16)}`;
      return `${body}.${hmac(key, body)}`;
    },
    verify(value, now) {
      const match = value?.match(/^(\d{1,12})\.([\w-]{1,64})\.([\w-]{43})$/);
      if (!match) return null;
      const [, issuedAt, nonce, signature] = match as unknown as [string, string, string, string];
      const age = now.getTime() / 1000 - Number(issuedAt);
      if (age < -60 || age > SESSION_MAX_AGE_SECONDS) return null;
      if (!safeEqual(signature, hmac(key, `${issuedAt}.${nonce}`))) return null;
      return { id: nonce, expiresAt: (Number(issuedAt) + SESSION_MAX_AGE_SECONDS) * 1000 };
    },
  };
}
