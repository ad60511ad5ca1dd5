import { z } from "zod";
import { type Env, intInRange, parseEnv } from "../config/env.ts";

export const LOG_FORMATS = ["pretty", "json"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** consola's numeric levels for the names LOG_LEVEL accepts. */
export const LOG_LEVELS = { error: 0, warn: 1, info: 3, debug: 4 } as const;
export type LogLevelName = keyof typeof LOG_LEVELS;

export interface OpsConfig {
  log: { format: LogFormat; level: number };
  /** Terminal deliveries older than this many days are purged; 0 keeps them forever. */
  retentionDays: number;
  /** When a failing endpoint is disabled (AutoDisableSettings in webhooks/policy/endpoint-health.ts). */
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

const schema = z.object({
  LOG_FORMAT: z.enum(LOG_FORMATS, { error: "expected json or pretty" }).default("pretty"),
  LOG_LEVEL: z
    .enum(Object.keys(LOG_LEVELS) as [LogLevelName, ...LogLevelName[]], {
      error: "expected error, warn, info or debug",
    })
    .default("info"),
  WEBHOOK_RETENTION_DAYS: intInRange(0, 3650).default(30),
  WEBHOOK_AUTO_DISABLE: z.stringbool({ error: "expected true or false" }).default(true),
  WEBHOOK_AUTO_DISABLE_HOURS: intInRange(1, 8760).default(24),
  WEBHOOK_AUTO_DISABLE_FAILURES: intInRange(1, 1_000_000).default(10),
  WORKER_HEARTBEAT_MS: intInRange(1000, 60_000).default(5000),
});

/**
 * Reads the operability settings (logging, retention, endpoint auto-disable, heartbeats) once.
 * A bad value throws a ConfigError whose message is one line naming the variable.
 */
export function loadOpsConfig(env: Env): OpsConfig {
  const parsed = parseEnv(schema, env);
  return {
    log: { format: parsed.LOG_FORMAT, level: LOG_LEVELS[parsed.LOG_LEVEL] },
    retentionDays: parsed.WEBHOOK_RETENTION_DAYS,
    autoDisable: {
      enabled: parsed.WEBHOOK_AUTO_DISABLE,
      failingForMs: parsed.WEBHOOK_AUTO_DISABLE_HOURS * HOUR_MS,
      minFailedDeliveries: parsed.WEBHOOK_AUTO_DISABLE_FAILURES,
      onGone: true,
    },
    heartbeatIntervalMs: parsed.WORKER_HEARTBEAT_MS,
  };
}
