import type { Logger } from "../log.ts";
import { escapeControl } from "../text/control.ts";
import type { AttemptOutcome, Outcome } from "../webhooks/types.ts";

export interface AttemptLogEntry {
  deliveryId: number;
  webhookName: string;
  attempt: number;
  statusCode: number | null;
  durationMs: number;
  outcome: AttemptOutcome;
  error: string | null;
  /** What the queue does next, when known: shown as "retrying at …" or "giving up". */
  next?: Outcome;
}

/** The structured fields of an attempt line, as they appear in JSON-lines output. */
export interface AttemptLogFields {
  deliveryId: number;
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

/**
 * Logs one line per attempt: a success at debug level, a failure at warn level (so the default
 * info level shows failures only), with delivery id, webhook name, attempt, status and duration.
 */
export function logAttempt(logger: Pick<Logger, "debug" | "warn">, entry: AttemptLogEntry): void {
  const line = new LogLine(describeAttempt(entry), attemptFields(entry));
  if (entry.outcome === "success") logger.debug(line);
  else logger.warn(line);
}

/** The human-readable line, e.g. `Delivery 17 to "orders", attempt 2 failed: HTTP 500 in 12 ms`. */
export function describeAttempt(entry: AttemptLogEntry): string {
  const name = escapeControl(JSON.stringify(entry.webhookName));
  const head = `Delivery ${entry.deliveryId} to ${name}, attempt ${entry.attempt}`;
  const result = `${resultText(entry)} in ${Math.round(entry.durationMs)} ms`;
  if (entry.outcome === "success") return `${head}: ${result}`;
  const error = entry.error ? ` (${escapeControl(entry.error.replace(/\s+/g, " ").trim())})` : "";
  return `${head} failed: ${result}${error}${nextText(entry.next)}`;
}

function resultText(entry: AttemptLogEntry): string {
  if (entry.statusCode !== null) return `HTTP ${entry.statusCode}`;
  return entry.outcome.replace("_", " ");
}

function nextText(next: Outcome | undefined): string {
  if (next === undefined) return "";
  if (next.state === "queued") return `; retrying at ${new Date(next.nextAttemptAt).toISOString()}`;
  if (next.state === "failed") return "; giving up";
  return "";
}

function attemptFields(entry: AttemptLogEntry): AttemptLogFields {
  const fields: AttemptLogFields = {
    deliveryId: entry.deliveryId,
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
