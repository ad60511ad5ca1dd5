import { z } from "zod";
import { adminTokenSchema } from "../config/admin-token.ts";
import { type Env, intInRange, withoutEmpty } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";
import { type Field, type Flags, loadFields } from "../config/fields.ts";
import { type AllowedHosts, parseAllowedHosts } from "../http/host-check.ts";
import { isLoopbackHost } from "../http/listen.ts";
import { type AllowList, parseAllowList } from "../http/ssrf.ts";
import {
  type DatabaseTarget,
  DEFAULT_DATABASE_URL,
  parseDatabaseUrl,
} from "../store/database-url.ts";

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
  /** WEBHOOK_ALLOWED_HOSTS, the workers' setting: the webhook form warns about what they refuse. */
  webhookAllowList: AllowList;
  /** WEBHOOK_MAX_ATTEMPTS, the workers' cap: "attempt 3 of 8" in Background Tasks; null: unset. */
  maxAttempts: number | null;
}

type AppKey =
  | "host"
  | "port"
  | "adminToken"
  | "allowedHosts"
  | "webhookAllowList"
  | "maxAttempts"
  | "databaseUrl";

/**
 * The app's flags and variables: parsing and `bun run app --help` are written from this table
 * (lib/config/fields.ts). DATABASE_POOL_MAX is read with DATABASE_URL (parseDatabaseUrl).
 */
export const APP_FIELDS: readonly Field<AppKey>[] = [
  {
    key: "host",
    flag: "host",
    schema: z.string().regex(/^[\w.:[\]-]+$/, "expected an address such as 127.0.0.1 or ::1"),
    default: DEFAULT_HOST,
    hint: "address",
    description: "address to listen on; other than loopback needs ADMIN_TOKEN",
  },
  {
    key: "port",
    flag: "port",
    schema: intInRange(0, 65535),
    default: DEFAULT_PORT,
    hint: "port",
    description: "port to listen on; 0 picks a free one",
  },
  {
    key: "adminToken",
    env: "ADMIN_TOKEN",
    schema: adminTokenSchema,
    defaultText: "none: open on loopback only",
    secret: true,
    description:
      "token the admin and the API require, 16+ characters without spaces (e.g. `openssl rand -hex 32`); required on a non-loopback --host",
  },
  {
    key: "allowedHosts",
    env: "APP_ALLOWED_HOSTS",
    schema: z.string().transform((value) => parseAllowedHosts(value, "APP_ALLOWED_HOSTS")),
    defaultText: "none",
    description:
      "comma list of host names a reverse proxy forwards with (`.example.com` for subdomains too); localhost, IP addresses and --host always pass",
  },
  {
    key: "webhookAllowList",
    env: "WEBHOOK_ALLOWED_HOSTS",
    schema: z.string().transform((value) => parseAllowList(value)),
    defaultText: "none",
    description:
      "the workers' allow-list, given the same value here: the webhook form warns about a URL they would refuse",
  },
  {
    key: "maxAttempts",
    env: "WEBHOOK_MAX_ATTEMPTS",
    schema: intInRange(1, 100),
    defaultText: "the retry schedule's",
    description:
      "the workers' cap on attempts, given the same value here: Background Tasks says which attempt of how many comes next",
  },
  {
    key: "databaseUrl",
    env: "DATABASE_URL",
    schema: z.string(),
    default: DEFAULT_DATABASE_URL,
    description: "database: file path, sqlite:PATH or postgres://…",
  },
];

/** `bun run app` settings: flags (--host, --port) and env (ADMIN_TOKEN, DATABASE_URL, …). */
export function loadAppConfig(env: Env, flags: Flags = {}): AppConfig {
  const { values } = loadFields(APP_FIELDS, env, flags);
  const host = String(values.host).replace(/^\[(.*)\]$/, "$1");
  const adminToken = (values.adminToken as string | undefined) ?? null;
  assertSafeBind(host, adminToken);
  return {
    host,
    port: values.port as number,
    adminToken,
    database: parseDatabaseUrl(values.databaseUrl as string, withoutEmpty(env).DATABASE_POOL_MAX),
    allowedHosts: (values.allowedHosts as AllowedHosts | undefined) ?? [],
    webhookAllowList: (values.webhookAllowList as AllowList | undefined) ?? [],
    maxAttempts: (values.maxAttempts as number | undefined) ?? null,
  };
}

/** Anyone who can reach a non-loopback address could change data: require the token there. */
export function assertSafeBind(host: string, adminToken: string | null): void {
  if (adminToken !== null || isLoopbackHost(host)) return;
  throw new ConfigError(
    `--host=${host} is not a loopback address, so ADMIN_TOKEN is required: set ADMIN_TOKEN (e.g. \`openssl rand -hex 32\`) or listen on 127.0.0.1`,
  );
}
