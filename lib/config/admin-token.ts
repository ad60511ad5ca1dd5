import { z } from "zod";
import { type Env, parseEnv } from "./env.ts";

export const adminTokenSchema = z
  .string()
  .regex(/^\S{16,}$/, "expected at least 16 characters without spaces, e.g. `openssl rand -hex 32`")
  .optional();

/** ADMIN_TOKEN alone (a worker's --metrics-port follows the app's rule), null when unset. */
export function loadAdminToken(env: Env): string | null {
  return parseEnv(z.object({ ADMIN_TOKEN: adminTokenSchema }), env).ADMIN_TOKEN ?? null;
}
