import { z } from "zod";
import { adminTokenSchema } from "../config/admin-token.ts";
import { type Env, parseEnv } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";
import { isLoopbackHost, parsePort } from "../http/listen.ts";
import { type DatabaseTarget, parseDatabaseUrl } from "../store/database-url.ts";
import { type AllowedHosts, parseAllowedHosts } from "./host-check.ts";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 8000;

export interface AppConfig {
  host: string;
  port: number;
  /** Null: no authentication, which is only allowed on a loopback address. */
  adminToken: string | null;
  database: DatabaseTarget;
  /** APP_ALLOWED_HOSTS: the names a reverse proxy forwards with (besides localhost and IPs). */
  allowedHosts: AllowedHosts;
}

const envSchema = z.object({
  ADMIN_TOKEN: adminTokenSchema,
  DATABASE_URL: z.string().optional(),
  APP_ALLOWED_HOSTS: z.string().optional(),
  DATABASE_POOL_MAX: z.string().optional(),
});

/** `bun run app` settings: flags (--host, --port) and env (ADMIN_TOKEN, DATABASE_URL). */
export function loadAppConfig(
  env: Env,
  flags: { host?: string; port?: string | number } = {},
): AppConfig {
  const parsed = parseEnv(envSchema, env);
  const host = flags.host?.trim() || DEFAULT_HOST;
  const port = parsePort(flags.port, "--port", DEFAULT_PORT);
  const adminToken = parsed.ADMIN_TOKEN ?? null;
  assertSafeBind(host, adminToken);
  return {
    host,
    port,
    adminToken,
    database: parseDatabaseUrl(parsed.DATABASE_URL, parsed.DATABASE_POOL_MAX),
    allowedHosts: parseAllowedHosts(parsed.APP_ALLOWED_HOSTS),
  };
}

/** Anyone who can reach a non-loopback address could change data: require the token there. */
export function assertSafeBind(host: string, adminToken: string | null): void {
  if (adminToken !== null || isLoopbackHost(host)) return;
  throw new ConfigError(
    `--host=${host} is not a loopback address, so ADMIN_TOKEN is required: set ADMIN_TOKEN (e.g. \`openssl rand -hex 32\`) or listen on 127.0.0.1`,
  );
}
