import { z } from "zod";
import { type Env, intInRange } from "./env.ts";
import { type Field, loadFields } from "./fields.ts";

export const LOG_FORMATS = ["pretty", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** consola's numeric levels for the names LOG_LEVEL accepts. */
export const LOG_LEVELS = { error: 0, warn: 1, info: 3, debug: 4 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

export interface OperabilityConfig {
  log: { format: LogFormat; level: number };
  /** Terminal deliveries older than this many days are purged; 0 keeps them forever. */
  retentionDays: number;
  /** When a failing endpoint is disabled (AutoDisableSettings in webhooks/policy/webhook-health.ts). */
  autoDisable: {
    enabled: boolean;
    failingForMs: number;
    minFailedDeliveries: number;
    onGone: boolean;
  };
  /** How often a worker records its heartbeat; readers use it to decide what is stale. */
  heartbeatIntervalMs: number;
}

const HOUR_MS = 3_600_000;

type OperabilityKey =
  | "logFormat"
  | "logLevel"
  | "retentionDays"
  | "autoDisable"
  | "autoDisableHours"
  | "autoDisableFailures"
  | "heartbeatMs";

/** Logging, retention, auto-disable and heartbeat settings: variables only, read by the worker and the app. */
export const OPERABILITY_FIELDS: readonly Field<OperabilityKey>[] = [
  {
    key: "logFormat",
    env: "LOG_FORMAT",
    schema: z.enum(LOG_FORMATS, { error: "expected json or pretty" }),
    default: "pretty",
    description: "log lines as pretty text or JSON lines",
  },
  {
    key: "logLevel",
    env: "LOG_LEVEL",
    schema: z.enum(Object.keys(LOG_LEVELS) as [LogLevelName, ...LogLevelName[]], {
      error: "expected error, warn, info or debug",
    }),
    default: "info",
    description: "least severe level logged: error, warn, info or debug",
  },
  {
    key: "retentionDays",
    env: "WEBHOOK_RETENTION_DAYS",
    schema: intInRange(0, 3650),
    default: 30,
    description: "days finished deliveries are kept (0: forever)",
  },
  {
    key: "autoDisable",
    env: "WEBHOOK_AUTO_DISABLE",
    schema: z.stringbool({ error: "expected true or false" }),
    default: true,
    description: "disable a webhook whose endpoint keeps failing",
  },
  {
    key: "autoDisableHours",
    env: "WEBHOOK_AUTO_DISABLE_HOURS",
    schema: intInRange(1, 8760),
    default: 24,
    description: "hours of failures before a webhook is disabled",
  },
  {
    key: "autoDisableFailures",
    env: "WEBHOOK_AUTO_DISABLE_FAILURES",
    schema: intInRange(1, 1_000_000),
    default: 10,
    description: "failed deliveries (at least) before a webhook is disabled",
  },
  {
    key: "heartbeatMs",
    env: "WORKER_HEARTBEAT_MS",
    schema: intInRange(1000, 60_000),
    default: 5000,
    description: "how often a worker records that it is alive (ms)",
  },
];

/**
 * Reads the operability settings (logging, retention, endpoint auto-disable, heartbeats) once.
 * A bad value throws a ConfigError whose message is one line naming the variable.
 */
export function loadOperabilityConfig(env: Env): OperabilityConfig {
  const parsed = loadFields(OPERABILITY_FIELDS, env).values as {
    logFormat: LogFormat;
    logLevel: LogLevelName;
    retentionDays: number;
    autoDisable: boolean;
    autoDisableHours: number;
    autoDisableFailures: number;
    heartbeatMs: number;
  };
  return {
    log: { format: parsed.logFormat, level: LOG_LEVELS[parsed.logLevel] },
    retentionDays: parsed.retentionDays,
    autoDisable: {
      enabled: parsed.autoDisable,
      failingForMs: parsed.autoDisableHours * HOUR_MS,
      minFailedDeliveries: parsed.autoDisableFailures,
      onGone: true,
    },
    heartbeatIntervalMs: parsed.heartbeatMs,
  };
}
