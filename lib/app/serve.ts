import { listenUrl, serveOn } from "../http/listen.ts";
import type { AllowList } from "../http/ssrf.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../webhooks/ports.ts";
import { type CreateAppOptions, createApp } from "./create-app.ts";

export interface ServingApp {
  /** Where it listens, e.g. http://127.0.0.1:8000 (the real port when 0 was asked for). */
  url: string;
  stop(): Promise<void>;
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
    async stop() {
      await server.stop(true);
    },
  };
}
