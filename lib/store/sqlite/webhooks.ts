import type { Database } from "bun:sqlite";
import { DuplicateWebhookNameError, WebhookNotFoundError } from "../../webhooks/errors.ts";
import { DEFAULT_FAILING_NOTICE_AFTER } from "../../webhooks/events/failing-notices.ts";
import { disabledEvent } from "../../webhooks/events/operational-events.ts";
import type { ConditionSet, NewWebhook, Webhook, WebhookPatch } from "../../webhooks/model.ts";
import { storedRetrySchedule } from "../../webhooks/policy/retry-schedule.ts";
import type { WebhookRepo } from "../../webhooks/ports.ts";
import { previousSecretColumns, retryColumns } from "../webhook-columns.ts";
import type { ChangeListener } from "./changes.ts";
import { createSqliteEventRecorder } from "./operational-events.ts";

export interface WebhookRow {
  id: number;
  name: string;
  url: string;
  method: string;
  content_type: string;
  headers: string;
  secret: string | null;
  events: string;
  enabled: number;
  disabled_reason: string | null;
  disabled_at: number | null;
  max_per_second: number | null;
  body_template: string | null;
  /** JSON text of the condition set. */
  conditions: string | null;
  ssl_verification: number;
  ca_file: string | null;
  client_cert_file: string | null;
  client_key_file: string | null;
  timeout_ms: number | null;
  ordered: number;
  retry_schedule: string;
  /** The attempts the schedule makes by itself; NULL for short (the worker's count). */
  retry_attempts: number | null;
  previous_secret: string | null;
  previous_secret_until: number | null;
  failing_since: number | null;
  failing_notice_after: number;
  failing_noticed_at: number | null;
  failing_recovered_at: number | null;
  /** The 429/503 pause and the next rate-limit slot (claims read them; not in Webhook). */
  paused_until: number;
  next_send_at: number;
  created_at: number;
  updated_at: number;
}

export function webhookFromRow(row: WebhookRow): Webhook {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    method: row.method,
    contentType: row.content_type,
    headers: JSON.parse(row.headers) as Array<[string, string]>,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: row.previous_secret_until,
    events: JSON.parse(row.events) as string[],
    enabled: row.enabled === 1,
    disabledReason: row.disabled_reason,
    disabledAt: row.disabled_at,
    maxPerSecond: row.max_per_second,
    bodyTemplate: row.body_template,
    conditions: row.conditions === null ? null : (JSON.parse(row.conditions) as ConditionSet),
    sslVerification: row.ssl_verification === 1,
    caFile: row.ca_file,
    clientCertFile: row.client_cert_file,
    clientKeyFile: row.client_key_file,
    timeoutMs: row.timeout_ms,
    ordered: row.ordered === 1,
    retrySchedule: storedRetrySchedule(row.retry_schedule),
    failingNoticeAfter: row.failing_notice_after,
    failingNoticedAt: row.failing_noticed_at,
    failingRecoveredAt: row.failing_recovered_at,
    failingSince: row.failing_since,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

type Options = Pick<
  NewWebhook,
  | "bodyTemplate"
  | "conditions"
  | "sslVerification"
  | "caFile"
  | "clientCertFile"
  | "clientKeyFile"
  | "timeoutMs"
  | "ordered"
  | "retrySchedule"
  | "failingNoticeAfter"
>;

/** The options' columns (NetBox's body template, conditions, TLS, timeout; ordering; retries). */
function optionColumns(options: Options): Record<string, string | number | null> {
  return {
    body_template: options.bodyTemplate ?? null,
    conditions: options.conditions ? JSON.stringify(options.conditions) : null,
    ssl_verification: options.sslVerification === false ? 0 : 1,
    ca_file: options.caFile ?? null,
    client_cert_file: options.clientCertFile ?? null,
    client_key_file: options.clientKeyFile ?? null,
    timeout_ms: options.timeoutMs ?? null,
    ordered: options.ordered === true ? 1 : 0,
    ...retryColumns(options.retrySchedule),
    failing_notice_after: options.failingNoticeAfter ?? DEFAULT_FAILING_NOTICE_AFTER,
  };
}

/** The fields a patch gives (undefined means "keep"; null means "clear"). */
function definedOf<T extends object>(patch: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(patch).filter(([, value]) => value !== undefined),
  ) as Partial<T>;
}

/** The webhooks table. Input is validated by the caller (lib/webhooks/definition/validate.ts). */
export function createSqliteWebhookRepo(
  db: Database,
  options: { now?: () => number; changes?: Pick<ChangeListener, "notifyLocal"> } = {},
): WebhookRepo {
  const now = options.now ?? Date.now;
  const insertStmt = db.prepare<WebhookRow, Record<string, string | number | null>>(
    `INSERT INTO webhooks (name, url, method, content_type, headers, secret, events, enabled,
       disabled_reason, disabled_at, max_per_second, body_template, conditions,
       ssl_verification, ca_file, client_cert_file, client_key_file, timeout_ms, ordered,
       retry_schedule, retry_attempts, failing_notice_after, created_at, updated_at)
     VALUES ($name, $url, $method, $content_type, $headers, $secret, $events, $enabled,
       $disabled_reason, $disabled_at, $max_per_second, $body_template, $conditions,
       $ssl_verification, $ca_file, $client_cert_file, $client_key_file, $timeout_ms, $ordered,
       $retry_schedule, $retry_attempts, $failing_notice_after, $now, $now)
     RETURNING *`,
  );
  const updateStmt = db.prepare<WebhookRow, Record<string, string | number | null>>(
    `UPDATE webhooks SET name = $name, url = $url, method = $method, content_type = $content_type,
       headers = $headers, secret = $secret, previous_secret = $previous_secret,
       previous_secret_until = $previous_secret_until, events = $events, enabled = $enabled,
       disabled_reason = $disabled_reason, disabled_at = $disabled_at,
       max_per_second = $max_per_second, body_template = $body_template,
       conditions = $conditions, ssl_verification = $ssl_verification, ca_file = $ca_file,
       client_cert_file = $client_cert_file, client_key_file = $client_key_file,
       timeout_ms = $timeout_ms, ordered = $ordered, retry_schedule = $retry_schedule,
       retry_attempts = $retry_attempts, failing_notice_after = $failing_notice_after,
       updated_at = $now
     WHERE id = $id
     RETURNING *`,
  );
  const getStmt = db.prepare<WebhookRow, [number]>("SELECT * FROM webhooks WHERE id = ?");
  const getByNameStmt = db.prepare<WebhookRow, [string]>("SELECT * FROM webhooks WHERE name = ?");
  const listStmt = db.prepare<WebhookRow, []>("SELECT * FROM webhooks ORDER BY id");
  const removeStmt = db.prepare<unknown, [number]>("DELETE FROM webhooks WHERE id = ?");
  const recordEvent = createSqliteEventRecorder(db);
  // Enabling again starts afresh: no failure streak, no 429/503 pause left over.
  const clearHealthStmt = db.prepare<unknown, [number]>(
    "UPDATE webhooks SET failing_since = NULL, failed_deliveries = 0, paused_until = 0 WHERE id = ?",
  );

  // Writes run in BEGIN IMMEDIATE (a savepoint inside a caller's transaction): a deferred
  // transaction that reads, then writes, fails with SQLITE_BUSY when another process wrote.
  function write<T>(name: string, fn: () => T): T {
    try {
      return db.transaction(fn).immediate();
    } catch (error) {
      if (
        error instanceof Error &&
        /UNIQUE constraint failed: webhooks\.name/.test(error.message)
      ) {
        throw new DuplicateWebhookNameError(name);
      }
      throw error;
    }
  }

  function updateRow(id: number, patch: WebhookPatch): WebhookRow {
    const current = getStmt.get(id);
    if (!current) throw new WebhookNotFoundError(id);
    const before = webhookFromRow(current);
    const t = now();
    const enabled = patch.enabled ?? before.enabled;
    if (enabled && !before.enabled) clearHealthStmt.run(id);
    // Enabling clears the reason; disabling keeps the time it first happened.
    const disabledAt = enabled ? null : (before.disabledAt ?? t);
    const disabledReason = enabled
      ? null
      : patch.disabledReason !== undefined
        ? patch.disabledReason
        : before.disabledReason;
    const row = updateStmt.get({
      id,
      name: patch.name ?? before.name,
      url: patch.url ?? before.url,
      method: patch.method ?? before.method,
      content_type: patch.contentType ?? before.contentType,
      headers: JSON.stringify(patch.headers ?? before.headers),
      secret: patch.secret !== undefined ? patch.secret : before.secret,
      ...previousSecretColumns(before, patch),
      events: JSON.stringify(patch.events ?? before.events),
      enabled: enabled ? 1 : 0,
      disabled_reason: disabledReason,
      disabled_at: disabledAt,
      max_per_second: patch.maxPerSecond !== undefined ? patch.maxPerSecond : before.maxPerSecond,
      ...optionColumns({ ...before, ...definedOf(patch) }),
      now: t,
    });
    if (!row) throw new WebhookNotFoundError(id);
    // Disabled by hand: its webhook.disabled commits with it (when another webhook subscribes).
    if (!enabled && before.enabled) {
      const reason = disabledReason ?? "disabled";
      recordEvent(disabledEvent(webhookFromRow(row), { reason, kind: "manual", at: t }), t);
    }
    return row;
  }

  return {
    async create(input: NewWebhook): Promise<Webhook> {
      const t = now();
      const enabled = input.enabled ?? true;
      const row = write(input.name, () =>
        insertStmt.get({
          name: input.name,
          url: input.url,
          method: input.method ?? "POST",
          content_type: input.contentType ?? "application/json",
          headers: JSON.stringify(input.headers ?? []),
          secret: input.secret ?? null,
          events: JSON.stringify(input.events ?? ["*"]),
          enabled: enabled ? 1 : 0,
          disabled_reason: null,
          disabled_at: enabled ? null : t,
          max_per_second: input.maxPerSecond ?? null,
          ...optionColumns(input),
          now: t,
        }),
      );
      if (!row) throw new Error("Inserting a webhook returned no row");
      return webhookFromRow(row);
    },

    async update(id: number, patch: WebhookPatch): Promise<Webhook> {
      const wasEnabled = getStmt.get(id)?.enabled === 1;
      const updated = webhookFromRow(write(patch.name ?? "", () => updateRow(id, patch)));
      // Its queued deliveries just became claimable: wake a worker of this process (other
      // processes notice the commit themselves).
      if (updated.enabled && !wasEnabled) options.changes?.notifyLocal();
      return updated;
    },

    async get(id: number): Promise<Webhook | null> {
      const row = getStmt.get(id);
      return row ? webhookFromRow(row) : null;
    },

    async getByName(name: string): Promise<Webhook | null> {
      const row = getByNameStmt.get(name);
      return row ? webhookFromRow(row) : null;
    },

    async list(): Promise<Webhook[]> {
      return listStmt.all().map(webhookFromRow);
    },

    async remove(id: number): Promise<boolean> {
      return write("", () => removeStmt.run(id).changes > 0);
    },
  };
}
