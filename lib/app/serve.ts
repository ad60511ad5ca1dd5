import { ConfigError } from "../config/errors.ts";
import type { Logger } from "../log.ts";
import type { Store } from "../store/types.ts";
import { type CreateAppOptions, createApp } from "./create-app.ts";

export interface ServingApp {
  /** Where it listens, e.g. http://127.0.0.1:8000 (the real port when 0 was asked for). */
  url: string;
  stop(): Promise<void>;
}

/**
 * Serves createApp() with Bun.serve. A taken port is a one-line ConfigError naming the flag,
 * not a stack trace.
 */
export function serveApp(options: {
  host: string;
  port: number;
  store: Store;
  adminToken: string | null;
  logger: Logger;
  now?: CreateAppOptions["now"];
  heartbeatIntervalMs?: number;
}): ServingApp {
  const app = createApp({
    store: options.store,
    config: { adminToken: options.adminToken, heartbeatIntervalMs: options.heartbeatIntervalMs },
    logger: options.logger,
    now: options.now,
  });
  let server: ReturnType<typeof Bun.serve>;
  try {
    server = Bun.serve({ hostname: options.host, port: options.port, fetch: app.fetch });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "EADDRINUSE") {
      throw new ConfigError(
        `--port=${options.port} is in use on ${options.host}: stop what listens there or pick another port`,
      );
    }
    throw error;
  }
  return {
    url: listenUrl(options.host, server.port ?? options.port),
    async stop() {
      await server.stop(true);
    },
  };
}

export function listenUrl(host: string, port: number): string {
  return `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
}
