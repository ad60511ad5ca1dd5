import type { Database } from "bun:sqlite";
import { createSqliteHealthStore } from "../../ops/sqlite/health.ts";
import { pauseWebhook } from "../../ops/sqlite/rate-limit.ts";
import type { WebhookHealthRepo } from "../types.ts";

/** Failure streaks, automatic disabling and 429/503 pauses in the webhooks table (migration 2). */
export function createSqliteHealthRepo(db: Database): WebhookHealthRepo {
  return {
    ...createSqliteHealthStore(db),
    async pause(webhookId, until) {
      return pauseWebhook(db, webhookId, until);
    },
  };
}
