import { Hono } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import { secureHeaders } from "hono/secure-headers";
import { type AllowedHosts, hostCheckMiddleware } from "../http/host-check.ts";
import type { AllowList, Resolver } from "../http/ssrf.ts";
import { createLoginThrottle, type LoginThrottle } from "../http/token-throttle.ts";
import { createLogger, type Logger } from "../log.ts";
import { hmac, randomToken } from "../secrets.ts";
import type { WebhookFields } from "../webhooks/definition/field-faces.ts";
import type { BulkPace } from "../webhooks/delivery/replay.ts";
import { createMetrics } from "../webhooks/observe/metrics.ts";
import { metricsHandler } from "../webhooks/observe/metrics-app.ts";
import { DEFAULT_HEARTBEAT_MS } from "../webhooks/observe/staleness.ts";
import type { Store } from "../webhooks/ports.ts";
import { generateSecret as defaultGenerateSecret } from "../webhooks/sending/signing.ts";
import { urlRefusalWarning } from "../webhooks/sending/url-refusal.ts";
import { adminNotFound, createAdmin } from "./admin/admin.tsx";
import { idempotencyMiddleware } from "./api/idempotency.ts";
import { OPENAPI_PATH, openApiDocument } from "./api/openapi.ts";
import { apiCrossSiteGuard } from "./auth/api-cross-site.ts";
import { type AdminAuth, authMiddleware } from "./auth/auth.ts";
import { csrfMiddleware } from "./auth/csrf.ts";
import { loginRoutes } from "./auth/login.tsx";
import { createSessionSigner } from "./auth/session.ts";
import type { AppEnv } from "./context.ts";
import { databaseFailureAnswer } from "./database-failure.ts";
import { createDeliveriesApi } from "./deliveries/deliveries-api.ts";
import { healthRoutes } from "./health.ts";
import { createItemsApi, DEFAULT_BODY_LIMIT_BYTES } from "./items/items-api.ts";
import { requestIdMiddleware } from "./request-id.ts";
import { createWebhookStatsApi } from "./webhooks/webhook-stats-api.ts";
import { createWebhooksApi } from "./webhooks/webhooks-api.ts";

export interface CreateAppOptions {
  store: Store;
  config?: {
    /** When set, every /api and /admin request needs it (bearer header or login cookie). */
    adminToken?: string | null;
    bodyLimitBytes?: number;
    /** WORKER_HEARTBEAT_MS: a worker not seen for 3 of these is stale (admin, /metrics). */
    heartbeatIntervalMs?: number;
    /** WEBHOOK_MAX_ATTEMPTS as the workers have it: Background Tasks' "attempt 3 of 8". */
    maxAttempts?: number | null;
    /** The retry schedule a new webhook's form offers (default day; the demo's: short). */
    newWebhookRetrySchedule?: string;
    /**
     * Names the app answers to besides IP addresses and localhost (the --host name and
     * APP_ALLOWED_HOSTS); a request for any other Host gets 421 before anything else runs.
     */
    allowedHosts?: AllowedHosts;
    /**
     * WEBHOOK_ALLOWED_HOSTS as the workers have it, so the webhook form can warn about URLs they
     * will refuse (the workers decide; the form can only assume the same setting).
     */
    webhookAllowList?: AllowList;
  };
  /** Resolves webhook host names for those warnings; tests pass a fake. */
  resolve?: Resolver;
  now?: () => Date;
  logger?: Logger;
  /** Makes a webhook secret when the admin's form leaves it empty. */
  generateSecret?: () => string;
  /** Request ids (X-Request-Id, the payload's request_id). */
  randomUUID?: () => string;
  /** Chunks of a bulk retry or replay and the pause between them; tests pass small chunks. */
  bulkPace?: BulkPace;
  /** Backoff for wrong admin tokens per client (default: 5 free, then 1 s doubling to 15 min). */
  loginThrottle?: LoginThrottle;
  /** The webhook fields of the API, its document and the admin form (default WEBHOOK_FIELDS). */
  webhookFields?: WebhookFields;
}

/**
 * The inventory application: the JSON API at /api/items, the admin at /admin, Prometheus
 * metrics at /metrics, and the authentication, CSRF and security headers around them. Pure composition: serving it
 * (Bun.serve) is the caller's business.
 */
export function createApp(options: CreateAppOptions): Hono<AppEnv> {
  const { store } = options;
  const now = options.now ?? (() => new Date());
  const logger = options.logger ?? createLogger();
  const adminToken = options.config?.adminToken ?? null;
  const limitBytes = options.config?.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
  const heartbeatIntervalMs = options.config?.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_MS;
  const sessions = adminToken === null ? null : createSessionSigner(adminToken);
  // With a token, CSRF tokens stay valid across restarts; without one, per process is enough.
  const csrfKey = adminToken === null ? randomToken(32) : hmac(adminToken, "admin-csrf-key");

  const app = new Hono<AppEnv>();
  app.use(
    hostCheckMiddleware({
      allowed: options.config?.allowedHosts ?? [],
      variable: "APP_ALLOWED_HOSTS",
    }),
  );
  app.use(requestIdMiddleware(options.randomUUID));
  // Before authentication: a supervisor or load balancer asks without credentials.
  app.route("/", healthRoutes({ store, logger }));
  app.use(
    secureHeaders({
      // No script runs on these pages: escaped text stays text even if escaping ever slipped.
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        styleSrc: ["'unsafe-inline'"],
        imgSrc: ["'self'", "data:"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
        baseUri: ["'none'"],
      },
    }),
  );
  app.use("/admin/*", bodyLimit({ maxSize: limitBytes }));
  app.use("/admin/*", csrfMiddleware({ key: csrfKey }));
  const auth: AdminAuth = {
    adminToken,
    sessions,
    revocations: store.sessions,
    throttle: options.loginThrottle ?? createLoginThrottle(),
    tokens: store.tokens,
    now,
    logger,
  };
  app.use("/admin/*", authMiddleware(auth));
  // The API's description is public, as NetBox's and Svix's are: registered before the API's
  // authentication, it answers before that runs.
  const document = openApiDocument(app);
  app.get(OPENAPI_PATH, async (c) => c.json(await document()));
  app.use("/api/*", authMiddleware(auth));
  app.use("/api/*", apiCrossSiteGuard());
  // After who and from where: keys are per credential, and a refused request keeps none.
  app.use(
    "/api/*",
    idempotencyMiddleware({
      keys: store.idempotency,
      now: () => now().getTime(),
      maxBodyBytes: limitBytes,
    }),
  );
  app.use("/metrics", authMiddleware(auth));

  app.get("/", (c) => c.redirect("/admin", 302));
  const generateSecret = options.generateSecret ?? defaultGenerateSecret;
  const urlWarning = (url: string) =>
    urlRefusalWarning(url, {
      allow: options.config?.webhookAllowList ?? [],
      resolve: options.resolve,
    });
  app.route("/api/items", createItemsApi({ store, now, bodyLimitBytes: limitBytes }));
  app.route("/api/webhooks", createWebhookStatsApi({ store, now }));
  app.route(
    "/api/webhooks",
    createWebhooksApi({
      store,
      now,
      bodyLimitBytes: limitBytes,
      generateSecret,
      urlWarning,
      fields: options.webhookFields,
    }),
  );
  app.route(
    "/api/deliveries",
    createDeliveriesApi({ store, now, bodyLimitBytes: limitBytes, pace: options.bulkPace }),
  );
  app.route("/admin", loginRoutes(auth));
  const maxAttempts = options.config?.maxAttempts ?? null;
  app.route(
    "/admin",
    createAdmin({
      store,
      now,
      generateSecret,
      urlWarning,
      heartbeatIntervalMs,
      maxAttempts,
      newWebhookRetrySchedule: options.config?.newWebhookRetrySchedule,
      bulkPace: options.bulkPace,
      fields: options.webhookFields,
    }),
  );
  // Every worker's attempts, read back from the attempts table (recorded since the first scrape).
  const metrics = createMetrics({
    source: {
      stats: () => store.queue.stats(),
      dueSummary: (at) => store.queue.dueSummary(at),
      workers: () => store.workers.list(),
      webhooks: () => store.webhooks.list(),
      attempts: {
        lastId: () => store.queue.lastAttemptId(),
        after: (afterId, limit) => store.queue.attemptsAfter(afterId, limit),
      },
    },
    now: () => now().getTime(),
    heartbeatIntervalMs,
  });
  app.get("/metrics", metricsHandler(metrics, logger));

  app.notFound((c) => {
    if (c.req.path === "/admin" || c.req.path.startsWith("/admin/")) return adminNotFound(c);
    return c.json({ error: "Not found" }, 404);
  });

  const unavailable = databaseFailureAnswer({ store, logger, now: () => now().getTime() });
  app.onError((error, c) => {
    if (error instanceof HTTPException) return error.getResponse();
    const answer = unavailable(error, c.req.path);
    if (answer !== null) return answer;
    const requestId = c.get("requestId");
    logger.error(`${c.req.method} ${c.req.path} failed (request ${requestId}):`, error);
    const message = `Internal error; the server log has the details under request id ${requestId}`;
    return c.req.path.startsWith("/api/") ? c.json({ error: message }, 500) : c.text(message, 500);
  });

  return app;
}
