/** @jsxImportSource hono/jsx */
import { type Context, Hono } from "hono";
import type { WebhookFields } from "../../webhooks/definition/field-faces.ts";
import type { BulkPace } from "../../webhooks/delivery/replay.ts";
import type { Store } from "../../webhooks/ports.ts";
import type { AppEnv } from "../context.ts";
import { backgroundTaskRoutes } from "./background-tasks/background-tasks.tsx";
import { BACKGROUND_TASKS } from "./background-tasks/background-tasks-views.tsx";
import { itemRoutes } from "./items/items.tsx";
import { NotFoundPage } from "./not-found.tsx";
import { pageContext, renderPage } from "./page.tsx";
import { webhookRoutes } from "./webhooks/webhooks.tsx";

export interface AdminOptions {
  store: Store;
  now: () => Date;
  generateSecret: () => string;
  /** Whether workers will refuse a webhook URL: warned on the webhook form and its preview. */
  urlWarning: (url: string) => Promise<string | null>;
  /** WORKER_HEARTBEAT_MS: a worker not seen for 3 of these is shown as stale. */
  heartbeatIntervalMs?: number;
  /** The retry schedule a new webhook's form offers (default day; the demo's: short). */
  newWebhookRetrySchedule?: string;
  /** WEBHOOK_MAX_ATTEMPTS as the workers have it (null: each schedule's own count). */
  maxAttempts?: number | null;
  /** Chunks of "Retry all failed" and Replay, and the pause between them (default: DEFAULT_PACE). */
  bulkPace?: BulkPace;
  /** The webhook fields (default WEBHOOK_FIELDS; a test's table adds its own). */
  fields?: WebhookFields;
}

/**
 * The server-rendered admin, mounted at /admin. Authentication and CSRF checks are the app's
 * middleware (lib/app); these routes read the username and CSRF token from the context.
 */
export function createAdmin(options: AdminOptions): Hono<AppEnv> {
  const admin = new Hono<AppEnv>();
  admin.get("/", (c) => c.redirect(BACKGROUND_TASKS, 302));
  admin.route("/background-tasks", backgroundTaskRoutes(options));
  admin.route("/webhooks", webhookRoutes(options));
  admin.route("/items", itemRoutes(options));
  return admin;
}

/** The 404 page for an unknown admin path (a mounted app's notFound is not used by Hono). */
export function adminNotFound(c: Context<AppEnv>) {
  return renderPage(c, <NotFoundPage page={pageContext(c)} what="Page" />, 404);
}
