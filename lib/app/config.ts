import ipaddr from "ipaddr.js";
import { z } from "zod";
import { type Env, parseEnv } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";
import { type DatabaseTarget, parseDatabaseUrl } from "../store/database-url.ts";

export const DEFAULT_HOST = "127.0.0.1";
export const DEFAULT_PORT = 8000;

export interface AppConfig {
  host: string;
  port: number;
  /** Null: no authentication, which is only allowed on a loopback address. */
  adminToken: string | null;
  database: DatabaseTarget;
}

const adminTokenSchema = z
  .string()
  .regex(/^\S{16,}$/, "expected at least 16 characters without spaces, e.g. `openssl rand -hex 32`")
  .optional();

const envSchema = z.object({
  ADMIN_TOKEN: adminTokenSchema,
  DATABASE_URL: z.string().optional(),
});

/** ADMIN_TOKEN alone (a worker's --metrics-port follows the app's rule), null when unset. */
export function loadAdminToken(env: Env): string | null {
  return parseEnv(z.object({ ADMIN_TOKEN: adminTokenSchema }), env).ADMIN_TOKEN ?? null;
}

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
  return { host, port, adminToken, database: parseDatabaseUrl(parsed.DATABASE_URL) };
}

/** Anyone who can reach a non-loopback address could change data: require the token there. */
export function assertSafeBind(host: string, adminToken: string | null): void {
  if (adminToken !== null || isLoopbackHost(host)) return;
  throw new ConfigError(
    `--host=${host} is not a loopback address, so ADMIN_TOKEN is required: set ADMIN_TOKEN (e.g. \`openssl rand -hex 32\`) or listen on 127.0.0.1`,
  );
}

export function isLoopbackHost(host: string): boolean {
  const bare = host.replace(/^\[(.*)\]$/, "$1").toLowerCase();
  if (bare === "localhost") return true;
  if (!ipaddr.isValid(bare)) return false;
  return ipaddr.process(bare).range() === "loopback";
}

/** A port flag: a whole number from 0 (any free port) to 65535. */
export function parsePort(
  value: string | number | undefined,
  flag: string,
  fallback: number,
): number {
  if (value === undefined || value === "") return fallback;
  const text = String(value).trim();
  const port = Number(text);
  if (!/^\d{1,5}$/.test(text) || port > 65535) {
    throw new ConfigError(`${flag}=${text} is invalid: expected a whole number from 0 to 65535`);
  }
  return port;
}
