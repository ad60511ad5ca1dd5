import { z } from "zod";
import { loadAdminToken } from "../config/admin-token.ts";
import { type Env, intInRange, withoutEmpty } from "../config/env.ts";
import { ConfigError } from "../config/errors.ts";
import { type Field, type Flags, loadFields } from "../config/fields.ts";
import { type AllowedHosts, parseAllowedHosts } from "../http/host-check.ts";
import { loadProxySetting, type ProxySetting } from "../http/proxy.ts";
import { type AllowList, parseAllowList } from "../http/ssrf.ts";
import { type DatabaseTarget, parseDatabaseUrl } from "../store/database-url.ts";
import { LEASE_MARGIN_MS } from "../webhooks/delivery/lease-rules.ts";
import { assertMetricsBinding } from "./metrics-binding.ts";

export interface WorkerConfig {
  database: DatabaseTarget;
  /** Per-request timeout, covering connect, headers and the (capped) body read. */
  timeoutMs: number;
  /**
   * A cap on every webhook's retry schedule, and the attempts of `short`; 1 = no automatic
   * retry (NetBox's default). null when not set: each schedule makes its own count.
   */
  maxAttempts: number | null;
  allowList: AllowList;
  /**
   * WEBHOOK_PROXY_URL and WEBHOOK_NO_PROXY: the proxy deliveries go through, null (or absent)
   * for none. HTTP_PROXY and the like are never used (lib/http/proxy.ts).
   */
  proxy?: ProxySetting | null;
  /** How long a claim is leased; a delivery whose worker died is retried after this. */
  leaseMs: number;
  concurrency: number;
  /** Claims held ready beyond the requests in flight (throughput under load; see worker.ts). */
  prefetch: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** After SIGINT/SIGTERM, how long in-flight requests may run before they are aborted. */
  shutdownGraceMs: number;
  /**
   * How often an idle worker reads `PRAGMA data_version` as a safety net: changes to the WAL
   * file wake it sooner (see lib/store/sqlite/changes.ts).
   */
  pollMs: number;
}

type WorkerKey = Exclude<keyof WorkerConfig, "database" | "allowList" | "proxy">;

/** Lease = timeout + this by default: room for the DB write after the slowest request. */
const DEFAULT_LEASE_EXTRA_MS = 30_000;

/**
 * Every worker setting with its variable, flag, form and default: parsing, the citty arguments
 * and the worker's --help are all written from this table (lib/config/fields.ts).
 */
export const WORKER_FIELDS: readonly Field<WorkerKey>[] = [
  {
    key: "timeoutMs",
    env: "WEBHOOK_TIMEOUT_MS",
    flag: "timeout-ms",
    schema: intInRange(100, 300_000),
    default: 10_000,
    hint: "ms",
    description: "timeout of one HTTP attempt (ms)",
  },
  {
    key: "maxAttempts",
    env: "WEBHOOK_MAX_ATTEMPTS",
    flag: "max-attempts",
    schema: intInRange(1, 100),
    defaultText: "the webhook's retry schedule's (day: 8, short: 5)",
    hint: "n",
    description: "caps the attempts of every retry schedule (1 = no automatic retry)",
  },
  {
    key: "concurrency",
    env: "WEBHOOK_CONCURRENCY",
    flag: "concurrency",
    schema: intInRange(1, 1024),
    default: 16,
    hint: "n",
    description: "requests in flight at once, per worker process",
  },
  {
    key: "prefetch",
    env: "WEBHOOK_PREFETCH",
    flag: "prefetch",
    schema: intInRange(0, 1024),
    // A finished request's slot is refilled at once, not after a write; topped up when half
    // empty, so claims and results are written in large batches. Four times the concurrency:
    // 6–10 % more deliveries a second than twice (bench:webhooks, 64 in flight), and a held
    // claim is renewed before it is sent, so a longer wait in the buffer loses no lease.
    default: (values) => Math.min(1024, 4 * (Number(values.concurrency) || 16)),
    defaultText: "four times the concurrency",
    hint: "n",
    description: "claims held ready beyond those in flight",
  },
  {
    key: "leaseMs",
    env: "WEBHOOK_LEASE_MS",
    flag: "lease-ms",
    schema: intInRange(1000, 86_400_000),
    default: (values) => (Number(values.timeoutMs) || 10_000) + DEFAULT_LEASE_EXTRA_MS,
    defaultText: "the timeout + 30000",
    hint: "ms",
    description: "lease of a claimed delivery (ms); must exceed the timeout by 1000",
  },
  {
    key: "shutdownGraceMs",
    env: "WEBHOOK_SHUTDOWN_GRACE_MS",
    flag: "grace-ms",
    schema: intInRange(0, 3_600_000),
    default: 15_000,
    hint: "ms",
    description: "on SIGINT/SIGTERM, time in-flight requests get before being aborted (ms)",
  },
  {
    key: "retryBaseMs",
    env: "WEBHOOK_RETRY_BASE_MS",
    schema: intInRange(100, 86_400_000),
    default: 10_000,
    description: "the short retry schedule's first delay (ms); doubles with each retry",
  },
  {
    key: "retryMaxMs",
    env: "WEBHOOK_RETRY_MAX_MS",
    schema: intInRange(100, 604_800_000),
    default: 3_600_000,
    description: "the short retry schedule's longest delay between two attempts (ms)",
  },
  {
    key: "pollMs",
    env: "WEBHOOK_POLL_MS",
    schema: intInRange(1, 1000),
    default: 50,
    description: "how often an idle worker checks the database when no WAL file event woke it (ms)",
  },
];

/** Which of the two named the database, for messages: `--database-url` or `DATABASE_URL`. */
export function databaseSource(flags: Flags = {}): string {
  const flag = flags["database-url"];
  return typeof flag === "string" && flag.trim() !== "" ? "--database-url" : "DATABASE_URL";
}

/** DATABASE_URL, or `--database-url` over it, and DATABASE_POOL_MAX. */
export function loadDatabaseTarget(env: Env, flags: Flags = {}): DatabaseTarget {
  const flag = flags["database-url"];
  const poolMax = withoutEmpty(env).DATABASE_POOL_MAX;
  if (typeof flag === "string" && flag.trim() !== "") {
    try {
      return parseDatabaseUrl(flag, poolMax);
    } catch (error) {
      throw new ConfigError(
        error instanceof Error
          ? error.message.replace(/^DATABASE_URL=/, "--database-url=")
          : String(error),
      );
    }
  }
  return parseDatabaseUrl(withoutEmpty(env).DATABASE_URL, poolMax);
}

/**
 * The worker's settings from env and flags, parsed once: flags override env, empty values count
 * as unset, a bad value is a one-line ConfigError naming the variable or flag and the form.
 */
export function loadWorkerConfig(env: Env, flags: Flags = {}): WorkerConfig {
  const { values, given, sourceOf } = loadFields(WORKER_FIELDS, env, flags);
  const config: WorkerConfig = {
    ...(values as Record<WorkerKey, number>),
    maxAttempts: given.has("maxAttempts") ? (values.maxAttempts as number) : null,
    database: loadDatabaseTarget(env, flags),
    allowList: parseAllowList(withoutEmpty(env).WEBHOOK_ALLOWED_HOSTS),
    proxy: loadProxySetting(env, { url: "WEBHOOK_PROXY_URL", noProxy: "WEBHOOK_NO_PROXY" }),
  };
  if (given.has("leaseMs") && config.leaseMs < config.timeoutMs + LEASE_MARGIN_MS) {
    // A lease shorter than a request would let a second worker resend a delivery in flight.
    throw new ConfigError(
      `${sourceOf("leaseMs")}=${config.leaseMs} is invalid: expected at least the timeout + ${LEASE_MARGIN_MS} (${config.timeoutMs + LEASE_MARGIN_MS})`,
    );
  }
  if (config.retryMaxMs < config.retryBaseMs) {
    throw new ConfigError(
      `WEBHOOK_RETRY_MAX_MS=${config.retryMaxMs} is invalid: expected at least WEBHOOK_RETRY_BASE_MS (${config.retryBaseMs})`,
    );
  }
  return config;
}

/** Where a worker serves GET /metrics (`--metrics-port`, `--metrics-host`). */
export interface MetricsListen {
  host: string;
  /** 0: any free port (the worker logs the one it got). */
  port: number;
  /** With a token, a scrape needs `Authorization: Bearer <ADMIN_TOKEN>`. */
  adminToken?: string | null;
  /** Names a scrape's Host may carry besides IP addresses, localhost and `host`; default none. */
  allowedHosts?: AllowedHosts;
}

const DEFAULT_METRICS_HOST = "127.0.0.1";
export const METRICS_ALLOWED_HOSTS_VARIABLE = "WORKER_METRICS_ALLOWED_HOSTS";

type MetricsKey = "port" | "host" | "allowedHosts";

/** The metrics listener's flags and variable, read by the same field engine as the rest. */
export const WORKER_METRICS_FIELDS: readonly Field<MetricsKey>[] = [
  {
    key: "port",
    flag: "metrics-port",
    schema: intInRange(0, 65535),
    hint: "port",
    description: "serve GET /metrics (Prometheus) on this port; 0 picks a free one",
  },
  {
    key: "host",
    flag: "metrics-host",
    schema: z
      .string()
      .regex(/^[\w.:[\]-]+$/, "expected an address such as 127.0.0.1 or ::1")
      .transform((value) => value.replace(/^\[(.*)\]$/, "$1")),
    default: DEFAULT_METRICS_HOST,
    hint: "address",
    description: "address for --metrics-port; other than loopback needs ADMIN_TOKEN",
  },
  {
    key: "allowedHosts",
    env: METRICS_ALLOWED_HOSTS_VARIABLE,
    schema: z
      .string()
      .transform((value) => parseAllowedHosts(value, METRICS_ALLOWED_HOSTS_VARIABLE)),
    defaultText: "none",
    description:
      "comma list of host names a scraper reaches --metrics-port by (`.example.com` for subdomains too); IP addresses, localhost and --metrics-host always pass",
  },
];

/**
 * `--metrics-port N [--metrics-host H]`, or null when the worker serves no metrics. The app's
 * ADMIN_TOKEN rule applies: loopback is open, any other address needs the token.
 */
export function loadWorkerMetrics(env: Env, flags: Flags = {}): MetricsListen | null {
  const { values, given } = loadFields(WORKER_METRICS_FIELDS, env, flags);
  if (!given.has("port")) {
    if (given.has("host")) {
      throw new ConfigError("--metrics-host needs --metrics-port too, e.g. --metrics-port 9464");
    }
    return null;
  }
  const host = values.host as string;
  const adminToken = loadAdminToken(env);
  assertMetricsBinding(host, adminToken);
  return {
    host,
    port: values.port as number,
    adminToken,
    allowedHosts: (values.allowedHosts as AllowedHosts | undefined) ?? [],
  };
}
