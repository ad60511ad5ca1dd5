import type { Logger } from "../log.ts";
import { escapeControl } from "../text/control.ts";
import { maskUrlPasswords } from "../text/url-credentials.ts";
import type { AttemptOutcome, AttemptRecord, Claim, Outcome } from "../webhooks/model.ts";
import { attemptLimit } from "../webhooks/policy/retry-schedule.ts";

export interface AttemptLogEntry {
  deliveryId: number;
  webhookName: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  outcome: AttemptOutcome;
  error: string | null;
  /** The delivery's event, shown as `(item.updated)`. */
  event?: string;
  /** Shown as `attempt 2/5`. */
  maxAttempts?: number;
  /** What the queue does next, when known: "retry at …" or "failed, no more retries". */
  next?: Outcome;
}

/** The structured fields of an attempt line, as they appear in JSON-lines output. */
export interface AttemptLogFields {
  deliveryId: number;
  event?: string;
  webhook: string;
  attempt: number;
  status: number | null;
  durationMs: number;
  outcome: AttemptOutcome;
  error: string | null;
  nextAttemptAt?: string;
}

/**
 * A log line with fields. consola takes a plain object with `message` as a log object and keeps
 * the other properties (the JSON reporter prints them); `toString` keeps loggers that only
 * stringify their arguments (createMemoryLogger) readable.
 */
export class LogLine {
  readonly message: string;
  constructor(message: string, fields: object) {
    Object.assign(this, fields);
    this.message = message;
  }
  toString(): string {
    return this.message;
  }
}

/** The entry for a finished attempt, from what the worker has at hand. */
export function attemptLogEntry(
  claim: Claim,
  delivered: { record: AttemptRecord; outcome: Outcome },
  maxAttempts?: number | null,
): AttemptLogEntry {
  const { record, outcome } = delivered;
  // Of the attempts this delivery gets: its webhook's schedule, cut by WEBHOOK_MAX_ATTEMPTS.
  const limit =
    maxAttempts === undefined ? undefined : attemptLimit(claim.webhook.retrySchedule, maxAttempts);
  return {
    deliveryId: claim.delivery.id,
    event: claim.delivery.event,
    webhookName: claim.webhook.name,
    attempt: claim.attempt,
    maxAttempts: limit,
    statusCode: record.statusCode,
    durationMs: record.durationMs,
    outcome: record.outcome,
    // An error can quote a URL: its password stays out of the log.
    error: record.error === null ? null : maskUrlPasswords(record.error),
    next: outcome,
  };
}

/**
 * Logs one line per attempt: a success at debug level, a failure at warn level (so the default
 * info level shows failures only), with delivery id, webhook name, attempt, status and duration.
 */
export function logAttempt(logger: Pick<Logger, "debug" | "warn">, entry: AttemptLogEntry): void {
  const line = new LogLine(describeAttempt(entry), attemptFields(entry));
  if (entry.outcome === "success") logger.debug(line);
  else logger.warn(line);
}

/**
 * The human-readable line, e.g.
 * `Delivery 17 (item.updated) to "orders", attempt 2/5 (12 ms): HTTP 500 Internal Server Error; retry at …`.
 * The duration sits by the attempt: after the result it read as part of an error's own sentence
 * ("…set WEBHOOK_ALLOWED_HOSTS=… to allow it in 1 ms").
 */
export function describeAttempt(entry: AttemptLogEntry): string {
  const event = entry.event ? ` (${entry.event})` : "";
  const name = JSON.stringify(entry.webhookName);
  const of = entry.maxAttempts ? `/${Math.max(entry.maxAttempts, entry.attempt)}` : "";
  const took = `(${Math.round(entry.durationMs)} ms)`;
  const head = `Delivery ${entry.deliveryId}${event} to ${name}, attempt ${entry.attempt}${of} ${took}`;
  const line = `${head}: ${resultText(entry)}${nextText(entry)}`;
  return escapeControl(line.replace(/\s*[\r\n]+\s*/g, " "));
}

function resultText(entry: AttemptLogEntry): string {
  const status = entry.statusCode === null ? null : `HTTP ${entry.statusCode}`;
  if (!entry.error) return status ?? entry.outcome.replace("_", " ");
  if (status === null || entry.error.startsWith(status)) return entry.error;
  return `${status} (${entry.error})`;
}

function nextText(entry: AttemptLogEntry): string {
  if (entry.outcome === "success" || entry.next === undefined) return "";
  if (entry.next.state === "queued") {
    return `; retry at ${new Date(entry.next.nextAttemptAt).toISOString()}`;
  }
  return entry.next.state === "failed" ? "; failed, no more retries" : "";
}

function attemptFields(entry: AttemptLogEntry): AttemptLogFields {
  const fields: AttemptLogFields = {
    deliveryId: entry.deliveryId,
    ...(entry.event ? { event: entry.event } : {}),
    webhook: entry.webhookName,
    attempt: entry.attempt,
    status: entry.statusCode,
    durationMs: Math.round(entry.durationMs),
    outcome: entry.outcome,
    error: entry.error,
  };
  if (entry.next?.state === "queued") {
    fields.nextAttemptAt = new Date(entry.next.nextAttemptAt).toISOString();
  }
  return fields;
}
