import type { Database } from "bun:sqlite";
import type { WebhookHealthRepo } from "../../webhooks/ports.ts";
import { createSqliteHealthStore } from "./health-sql.ts";
import { pauseWebhook } from "./rate-limit.ts";

/** Failure streaks, automatic disabling and 429/503 pauses in the webhooks table (migration 2). */
export function createSqliteHealthRepo(db: Database): WebhookHealthRepo {
  return {
    ...createSqliteHealthStore(db),
    async pause(webhookId, until) {
      return pauseWebhook(db, webhookId, until);
    },
  };
}
