import { z } from "zod";
import { type Env, parseEnv } from "./env.ts";

const EXPECTED = "expected at least 16 characters without spaces, e.g. `openssl rand -hex 32`";

/**
 * ADMIN_TOKEN: at least 16 characters, no whitespace. A bad one is never repeated in the message
 * (see parseEnv); the message says what is wrong with it instead.
 */
export const adminTokenSchema = z
  .string()
  .superRefine((value, context) => {
    if (/\s/.test(value)) {
      context.addIssue({ code: "custom", message: `it contains whitespace: ${EXPECTED}` });
    } else if (value.length < 16) {
      context.addIssue({
        code: "custom",
        message: `it is ${value.length} characters long: ${EXPECTED}`,
      });
    }
  })
  .optional();

/** ADMIN_TOKEN alone (a worker's --metrics-port follows the app's rule), null when unset. */
export function loadAdminToken(env: Env): string | null {
  return parseEnv(z.object({ ADMIN_TOKEN: adminTokenSchema }), env).ADMIN_TOKEN ?? null;
}
