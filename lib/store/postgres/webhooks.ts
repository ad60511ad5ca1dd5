import { DuplicateWebhookNameError, WebhookNotFoundError } from "../../webhooks/errors.ts";
import { DEFAULT_FAILING_NOTICE_AFTER } from "../../webhooks/events/failing-notices.ts";
import { disabledEvent } from "../../webhooks/events/operational-events.ts";
import type { ConditionSet, NewWebhook, Webhook, WebhookPatch } from "../../webhooks/model.ts";
import { storedRetrySchedule } from "../../webhooks/policy/retry-schedule.ts";
import type { WebhookRepo } from "../../webhooks/ports.ts";
import { previousSecretColumns, retryColumns } from "../webhook-columns.ts";
import { CHANGE_CHANNEL } from "./changes.ts";
import { type Db, isUniqueViolation, toNumber, toNumberOrNull } from "./db.ts";

export interface WebhookRow {
  id: string | number;
  name: string;
  url: string;
  method: string;
  content_type: string;
  headers: Array<[string, string]>;
  secret: string | null;
  events: string[];
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: string | number | null;
  max_per_second: number | null;
  body_template: string | null;
  conditions: ConditionSet | null;
  ssl_verification: boolean;
  ca_file: string | null;
  client_cert_file: string | null;
  client_key_file: string | null;
  timeout_ms: number | null;
  ordered: boolean;
  retry_schedule: string;
  retry_attempts: number | null;
  previous_secret: string | null;
  previous_secret_until: string | number | null;
  failing_since: string | number | null;
  failing_notice_after: number;
  failing_noticed_at: string | number | null;
  failing_recovered_at: string | number | null;
  created_at: string | number;
  updated_at: string | number;
}

export function webhookFromRow(row: WebhookRow): Webhook {
  return {
    id: toNumber(row.id),
    name: row.name,
    url: row.url,
    method: row.method,
    contentType: row.content_type,
    headers: row.headers,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: toNumberOrNull(row.previous_secret_until),
    events: row.events,
    enabled: row.enabled,
    disabledReason: row.disabled_reason,
    disabledAt: toNumberOrNull(row.disabled_at),
    maxPerSecond: row.max_per_second,
    bodyTemplate: row.body_template,
    conditions: row.conditions,
    sslVerification: row.ssl_verification,
    caFile: row.ca_file,
    clientCertFile: row.client_cert_file,
    clientKeyFile: row.client_key_file,
    timeoutMs: row.timeout_ms,
    ordered: row.ordered,
    retrySchedule: storedRetrySchedule(row.retry_schedule),
    failingNoticeAfter: row.failing_notice_after,
    failingNoticedAt: toNumberOrNull(row.failing_noticed_at),
    failingRecoveredAt: toNumberOrNull(row.failing_recovered_at),
    failingSince: toNumberOrNull(row.failing_since),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

/** JSON text for a JSONB parameter (a JS string bound to jsonb would be encoded twice). */
function conditionsJson(conditions: ConditionSet | null | undefined): string | null {
  return conditions ? JSON.stringify(conditions) : null;
}

/** The webhooks table, same behaviour as lib/store/sqlite/webhooks.ts. Input is validated by the caller. */
export function createPostgresWebhookRepo(
  db: Db,
  options: { now?: () => number } = {},
): WebhookRepo {
  const now = options.now ?? Date.now;

  async function write<T>(name: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (isUniqueViolation(error, "webhooks_name_key")) throw new DuplicateWebhookNameError(name);
      throw error;
    }
  }

  return {
    async create(input: NewWebhook): Promise<Webhook> {
      const t = now();
      const enabled = input.enabled ?? true;
      const retry = retryColumns(input.retrySchedule);
      const [row] = await write(input.name, () =>
        db.isolated(
          (sql) => sql<WebhookRow[]>`
            INSERT INTO webhooks (name, url, method, content_type, headers, secret, events,
              enabled, disabled_reason, disabled_at, max_per_second, body_template, conditions,
              ssl_verification, ca_file, client_cert_file, client_key_file, timeout_ms, ordered,
              retry_schedule, retry_attempts, failing_notice_after, created_at, updated_at)
            VALUES (${input.name}, ${input.url}, ${input.method ?? "POST"},
              ${input.contentType ?? "application/json"},
              ${JSON.stringify(input.headers ?? [])}::text::jsonb, ${input.secret ?? null},
              ${JSON.stringify(input.events ?? ["*"])}::text::jsonb, ${enabled}, NULL,
              ${enabled ? null : t}, ${input.maxPerSecond ?? null}, ${input.bodyTemplate ?? null},
              ${conditionsJson(input.conditions)}::text::jsonb, ${input.sslVerification ?? true},
              ${input.caFile ?? null}, ${input.clientCertFile ?? null},
              ${input.clientKeyFile ?? null}, ${input.timeoutMs ?? null}, ${input.ordered ?? false},
              ${retry.retry_schedule},
              ${retry.retry_attempts},
              ${input.failingNoticeAfter ?? DEFAULT_FAILING_NOTICE_AFTER}, ${t}, ${t})
            RETURNING *`,
        ),
      );
      if (!row) throw new Error("Inserting a webhook returned no row");
      return webhookFromRow(row);
    },

    async update(id: number, patch: WebhookPatch): Promise<Webhook> {
      const name = patch.name;
      const row = await write(name ?? "", () =>
        db.isolated(async (sql) => {
          const [current] = await sql<WebhookRow[]>`
            SELECT * FROM webhooks WHERE id = ${id} FOR UPDATE`;
          if (!current) throw new WebhookNotFoundError(id);
          const before = webhookFromRow(current);
          const t = now();
          const enabled = patch.enabled ?? before.enabled;
          // Enabling clears the reason; disabling keeps the first time it happened.
          const disabledAt = enabled ? null : (before.disabledAt ?? t);
          const disabledReason = enabled
            ? null
            : patch.disabledReason !== undefined
              ? patch.disabledReason
              : before.disabledReason;
          const secret = patch.secret !== undefined ? patch.secret : before.secret;
          const maxPerSecond =
            patch.maxPerSecond !== undefined ? patch.maxPerSecond : before.maxPerSecond;
          const kept = <K extends keyof WebhookPatch & keyof Webhook>(key: K) =>
            patch[key] !== undefined ? patch[key] : before[key];
          const previous = previousSecretColumns(before, patch);
          const retry = retryColumns(kept("retrySchedule"));
          // Enabling again starts afresh: no failure streak, no 429/503 pause left over.
          const reenabled = enabled && !before.enabled;
          const [updated] = await sql<WebhookRow[]>`
            UPDATE webhooks SET name = ${name ?? before.name}, url = ${patch.url ?? before.url},
              method = ${patch.method ?? before.method},
              content_type = ${patch.contentType ?? before.contentType},
              headers = ${JSON.stringify(patch.headers ?? before.headers)}::text::jsonb,
              secret = ${secret}, previous_secret = ${previous.previous_secret},
              previous_secret_until = ${previous.previous_secret_until},
              events = ${JSON.stringify(patch.events ?? before.events)}::text::jsonb,
              enabled = ${enabled}, disabled_reason = ${disabledReason},
              disabled_at = ${disabledAt}, max_per_second = ${maxPerSecond},
              body_template = ${kept("bodyTemplate")},
              conditions = ${conditionsJson(kept("conditions"))}::text::jsonb,
              ssl_verification = ${kept("sslVerification")}, ca_file = ${kept("caFile")},
              client_cert_file = ${kept("clientCertFile")},
              client_key_file = ${kept("clientKeyFile")},
              timeout_ms = ${kept("timeoutMs")}, ordered = ${kept("ordered")},
              retry_schedule = ${retry.retry_schedule},
              retry_attempts = ${retry.retry_attempts},
              failing_notice_after = ${kept("failingNoticeAfter")}, updated_at = ${t},
              failing_since = CASE WHEN ${reenabled}::boolean THEN NULL ELSE failing_since END,
              failed_deliveries = CASE WHEN ${reenabled}::boolean THEN 0 ELSE failed_deliveries END,
              paused_until = CASE WHEN ${reenabled}::boolean THEN 0 ELSE paused_until END
            WHERE id = ${id}
            RETURNING *`;
          // Its queued deliveries just became claimable: wake the workers (at commit).
          if (reenabled) await sql`SELECT pg_notify(${CHANGE_CHANNEL}, '')`;
          // Disabled by hand: its webhook.disabled commits with it, when another subscribes.
          if (updated && !enabled && before.enabled) {
            const reason = disabledReason ?? "disabled";
            const event = disabledEvent(webhookFromRow(updated), { reason, kind: "manual", at: t });
            await sql`
              INSERT INTO operational_events (event, not_for, data, created_at)
              SELECT ${event.event}, ${id}, ${event.data}, ${t}
              WHERE EXISTS (SELECT 1 FROM webhooks w
                WHERE w.enabled AND w.id <> ${id} AND w.events ? 'webhook.disabled')`;
          }
          return updated;
        }),
      );
      if (!row) throw new WebhookNotFoundError(id);
      return webhookFromRow(row);
    },

    async get(id: number): Promise<Webhook | null> {
      const [row] = await db.sql<WebhookRow[]>`SELECT * FROM webhooks WHERE id = ${id}`;
      return row ? webhookFromRow(row) : null;
    },

    async getByName(name: string): Promise<Webhook | null> {
      const [row] = await db.sql<WebhookRow[]>`SELECT * FROM webhooks WHERE name = ${name}`;
      return row ? webhookFromRow(row) : null;
    },

    async list(): Promise<Webhook[]> {
      const rows = await db.sql<WebhookRow[]>`SELECT * FROM webhooks ORDER BY id`;
      return rows.map(webhookFromRow);
    },

    async remove(id: number): Promise<boolean> {
      const result = await db.sql`DELETE FROM webhooks WHERE id = ${id}`;
      return result.count > 0;
    },
  };
}
