/** @jsxImportSource hono/jsx */

import type { Webhook } from "../../../webhooks/model.ts";
import {
  ATTEMPT_OUTCOMES,
  type HealthSummary,
  healthSummary,
  LATENCY_SAMPLE,
  percent,
  STATS_WINDOW_NAMES,
  type WebhookStats,
  webhookStats,
} from "../../../webhooks/observe/webhook-stats.ts";
import type { Store } from "../../../webhooks/ports.ts";
import { formatDuration, formatTime, relativeTime } from "../format.ts";

/** A webhook's health at `nowMs`, counted from its attempts (observe/webhook-stats.ts). */
export async function loadHealth(
  store: Store,
  webhook: Webhook,
  nowMs: number,
): Promise<WebhookStats> {
  return webhookStats(webhook, await store.queue.attemptTally(webhook.id, nowMs), nowMs);
}

/** Each webhook's health by id: the list's Health column (the day and the status only). */
export async function loadHealthOf(
  store: Store,
  webhooks: readonly Webhook[],
  nowMs: number,
): Promise<Map<number, HealthSummary>> {
  const summaries = await store.queue.attemptSummaries(
    webhooks.map((w) => w.id),
    nowMs,
  );
  return new Map(webhooks.map((w) => [w.id, healthSummary(w, summaries.get(w.id))]));
}

const STATUS_TEXT = {
  healthy: "healthy",
  failing: "failing",
  disabled: "disabled",
  idle: "no success yet",
} as const;

/** The health badge and the day's success rate: the webhook list's Health column. */
export function HealthCell(props: { health: HealthSummary }) {
  const { health } = props;
  return (
    <>
      <span class={`badge ${health.status}`}>{STATUS_TEXT[health.status]}</span>{" "}
      <span class="muted">
        {health.dayAttempts === 0
          ? "no attempt in 24 h"
          : `${percent(health.daySuccessRate)} of ${health.dayAttempts} in 24 h`}
      </span>
    </>
  );
}

/** A webhook's health at the head of its page (the same as GET /api/webhooks/{id}/stats). */
export function HealthSection(props: { stats: WebhookStats; nowMs: number }) {
  const { stats, nowMs } = props;
  const at = (ms: number | null) =>
    ms === null ? "never" : `${formatTime(ms)} (${relativeTime(ms, nowMs)})`;
  return (
    <section class="health" id="health">
      <h2>
        Health <span class={`badge ${stats.status}`}>{STATUS_TEXT[stats.status]}</span>
      </h2>
      <table class="fields">
        <tbody>
          <tr>
            <th>Last success</th>
            <td class="wrap">{at(stats.lastSuccessAt)}</td>
          </tr>
          {stats.failingSince !== null ? (
            <tr>
              <th>Failing since</th>
              <td class="wrap">
                {at(stats.failingSince)}: {stats.consecutiveFailures}{" "}
                {stats.consecutiveFailures === 1 ? "attempt" : "attempts"} failed in a row
              </td>
            </tr>
          ) : null}
          <tr>
            <th>Next retry</th>
            <td class="wrap">
              {stats.nextRetryAt === null ? "none waiting" : at(stats.nextRetryAt)}
            </td>
          </tr>
          <tr>
            <th>Latency</th>
            <td class="wrap">
              {stats.latency === null
                ? "no answered attempt in 24 h"
                : `p50 ${formatDuration(stats.latency.p50)}, p95 ${formatDuration(stats.latency.p95)} (newest ${stats.latency.sample} answered attempts in 24 h, at most ${LATENCY_SAMPLE})`}
            </td>
          </tr>
        </tbody>
      </table>
      <table class="list health-windows">
        <thead>
          <tr>
            <th>Window</th>
            <th class="num">Attempts</th>
            <th class="num">Success rate</th>
            {ATTEMPT_OUTCOMES.map((outcome) => (
              <th class="num">{outcome.replace("_", " ")}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {STATS_WINDOW_NAMES.map((name) => {
            const w = stats.windows[name];
            return (
              <tr>
                <td>last {name}</td>
                <td class="num" data-label="Attempts">
                  {w.attempts}
                </td>
                <td class="num" data-label="Success rate">
                  {percent(w.successRate)}
                </td>
                {ATTEMPT_OUTCOMES.map((outcome) => (
                  <td class="num" data-label={outcome.replace("_", " ")}>
                    {w.outcomes[outcome]}
                  </td>
                ))}
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
