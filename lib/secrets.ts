import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";

/** Compares two secrets in constant time, whatever their lengths (both are hashed first). */
export function safeEqual(a: string, b: string): boolean {
  const left = createHash("sha256").update(a).digest();
  const right = createHash("sha256").update(b).digest();
  return timingSafeEqual(left, right);
}

export function hmac(key: string | Buffer, message: string): string {
  return createHmac("sha256", key).update(message).digest("base64url");
}

export function randomToken(bytes = 32): string {
  return randomBytes(bytes).toString("base64url");
}
