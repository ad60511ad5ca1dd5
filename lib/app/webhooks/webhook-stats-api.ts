import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import {
  ATTEMPT_OUTCOMES,
  LATENCY_SAMPLE,
  STATS_WINDOW_NAMES,
  type WebhookStats,
  webhookStats,
} from "../../webhooks/observe/webhook-stats.ts";
import type { Store } from "../../webhooks/ports.ts";
import {
  apiErrorSchema,
  idParameter,
  json,
  throttled,
  unauthorized,
} from "../api/openapi-parts.ts";
import type { AppEnv } from "../context.ts";
import { idParam } from "../items/items-api.ts";

const time = z.iso.datetime({ offset: true });

const windowSchema = z.object({
  since: time.describe("the window's start: now less an hour, a day or a week"),
  attempts: z.int().min(0),
  success_rate: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe("successful / attempts; null without any"),
  outcomes: z.object(Object.fromEntries(ATTEMPT_OUTCOMES.map((o) => [o, z.int().min(0)]))),
});

const statsSchema = z
  .object({
    webhook_id: z.int().min(1),
    status: z
      .enum(["healthy", "failing", "disabled", "idle"])
      .describe(
        "disabled; failing: its newest attempts failed; idle: no success kept; else healthy",
      ),
    windows: z.object(Object.fromEntries(STATS_WINDOW_NAMES.map((name) => [name, windowSchema]))),
    last_success_at: time.nullable(),
    failing_since: time
      .nullable()
      .describe("when the first of the attempts failed in a row started"),
    consecutive_failures: z.int().min(0).describe("attempts failed since the last success"),
    latency_ms: z
      .object({ p50: z.number(), p95: z.number(), sample: z.int().min(1) })
      .nullable()
      .describe(
        `of the newest answered attempts (success, HTTP error, timeout) of the last day, at most ${LATENCY_SAMPLE}`,
      ),
    next_retry_at: time
      .nullable()
      .describe("when the next automatic retry of its deliveries is due"),
  })
  .meta({ id: "WebhookStats" });

const statsDoc = describeRoute({
  summary:
    "A webhook's health: attempts by outcome over the last hour, day and week, success rate, last success, failing streak, latency, next retry",
  tags: ["webhooks"],
  parameters: [idParameter("webhook")],
  responses: {
    200: json("Its health, counted from its attempts", statsSchema),
    401: unauthorized,
    404: json("No webhook with this id", apiErrorSchema),
    429: throttled,
  },
});

/** GET /api/webhooks/{id}/stats: a webhook's health (observe/webhook-stats.ts). */
export function createWebhookStatsApi(options: { store: Store; now: () => Date }): Hono<AppEnv> {
  const { store } = options;
  const api = new Hono<AppEnv>();
  api.get("/:id/stats", statsDoc, async (c) => {
    const id = idParam(c.req.param("id"));
    const webhook = id === null ? null : await store.webhooks.get(id);
    if (webhook === null) return c.json({ error: "Webhook not found" }, 404);
    const now = options.now().getTime();
    return c.json(
      statsJson(webhookStats(webhook, await store.queue.attemptTally(webhook.id, now), now)),
    );
  });
  return api;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function statsJson(stats: WebhookStats) {
  return {
    webhook_id: stats.webhookId,
    status: stats.status,
    windows: Object.fromEntries(
      STATS_WINDOW_NAMES.map((name) => {
        const w = stats.windows[name];
        return [
          name,
          {
            since: iso(w.since),
            attempts: w.attempts,
            success_rate: w.successRate,
            outcomes: w.outcomes,
          },
        ];
      }),
    ),
    last_success_at: iso(stats.lastSuccessAt),
    failing_since: iso(stats.failingSince),
    consecutive_failures: stats.consecutiveFailures,
    latency_ms: stats.latency,
    next_retry_at: iso(stats.nextRetryAt),
  };
}
