import { untilAborted } from "../async/race-abort.ts";
import { listenUrl, serveOn } from "../http/listen.ts";
import type { AllowList } from "../http/ssrf.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../webhooks/ports.ts";
import { type CreateAppOptions, createApp } from "./create-app.ts";

/** How long a stop waits for the requests in flight to be answered before it cuts them off. */
export const DRAIN_MS = 10_000;

export interface ServingApp {
  /** Where it listens, e.g. http://127.0.0.1:8000 (the real port when 0 was asked for). */
  url: string;
  /** Requests being answered now. */
  readonly inFlight: number;
  /**
   * Stops listening at once, answers the requests in flight, then resolves: their connections
   * are cut only when `signal` aborts (a second Ctrl-C) or after `graceMs` (DRAIN_MS).
   */
  stop(options?: { signal?: AbortSignal; graceMs?: number }): Promise<void>;
}

/**
 * Serves createApp(); a taken port or a missing address is a one-line ConfigError (serveOn).
 */
export function serveApp(options: {
  host: string;
  port: number;
  store: Store;
  adminToken: string | null;
  /** APP_ALLOWED_HOSTS; the --host name is added (IP addresses and localhost always pass). */
  allowedHosts?: readonly string[];
  /** WEBHOOK_ALLOWED_HOSTS, for the webhook form's warnings (createApp). */
  webhookAllowList?: AllowList;
  logger: Logger;
  now?: CreateAppOptions["now"];
  heartbeatIntervalMs?: number;
  /** WEBHOOK_MAX_ATTEMPTS, for Background Tasks' "attempt 3 of 8". */
  maxAttempts?: number | null;
  /** The retry schedule a new webhook's form offers (the demo's: short). */
  newWebhookRetrySchedule?: string;
}): ServingApp {
  const app = createApp({
    store: options.store,
    config: {
      adminToken: options.adminToken,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      maxAttempts: options.maxAttempts,
      newWebhookRetrySchedule: options.newWebhookRetrySchedule,
      allowedHosts: [options.host.toLowerCase(), ...(options.allowedHosts ?? [])],
      webhookAllowList: options.webhookAllowList,
    },
    logger: options.logger,
    now: options.now,
  });
  const server = serveOn({ host: options.host, port: options.port, flag: "--port" }, app.fetch);
  return {
    url: listenUrl(options.host, server.port ?? options.port),
    get inFlight() {
      return server.pendingRequests;
    },
    async stop(stopping = {}) {
      // Bun's graceful stop: no new connections, idle keep-alive ones closed at once, each one
      // with a request in flight closed once its answer is written.
      let drained = false;
      const draining = server.stop(false).then(() => {
        drained = true;
      });
      const deadline = AbortSignal.timeout(stopping.graceMs ?? DRAIN_MS);
      const cut = stopping.signal ? AbortSignal.any([stopping.signal, deadline]) : deadline;
      await untilAborted(draining, cut);
      if (!drained) await server.stop(true);
    },
  };
}
