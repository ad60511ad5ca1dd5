import { hmac, randomToken, safeEqual } from "../secrets.ts";

export const SESSION_COOKIE = "admin_session";
export const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;

/**
 * Login sessions without server state: the cookie is `issuedAt.nonce.signature`, signed with a
 * key derived from ADMIN_TOKEN, so changing the token logs everybody out.
 */
export interface SessionSigner {
  issue(now: Date): string;
  verify(value: string | undefined, now: Date): boolean;
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
      if (!match) return false;
      const [, issuedAt, nonce, signature] = match as unknown as [string, string, string, string];
      const age = now.getTime() / 1000 - Number(issuedAt);
      if (age < -60 || age > SESSION_MAX_AGE_SECONDS) return false;
      return safeEqual(signature, hmac(key, `${issuedAt}.${nonce}`));
    },
  };
}
