import type { Logger } from "../log.ts";
import type { Store } from "../webhooks/ports.ts";

/** The same database failure is logged again at most this often while it lasts. */
const RELOG_MS = 60_000;

/**
 * A request that failed because of the database itself (a full disk, a read-only file, an
 * unreachable server) is answered 503 with what is wrong, not 500 with an error id, and logged
 * as one line: once when it starts, then at most once a minute with how many more failed, not
 * once per request with a stack trace.
 */
export function databaseFailureAnswer(options: {
  store: Pick<Store, "explainFailure">;
  logger: Pick<Logger, "error">;
  now: () => number;
}): (error: unknown, path: string) => Response | null {
  let last: { reason: string; at: number; since: number } | null = null;
  return (error, path) => {
    const reason = options.store.explainFailure(error);
    if (reason === null) return null;
    const now = options.now();
    if (last === null || last.reason !== reason || now - last.at >= RELOG_MS) {
      const more = last?.reason === reason && last.since > 0 ? ` (${last.since} more since)` : "";
      options.logger.error(`The database cannot take this request: ${reason}${more}`);
      last = { reason, at: now, since: 0 };
    } else {
      last.since++;
    }
    const message =
      "Service unavailable: the database cannot take writes now; the server log says why";
    const headers = { "retry-after": "30" };
    return path.startsWith("/api/")
      ? Response.json({ error: message }, { status: 503, headers })
      : new Response(message, {
          status: 503,
          headers: { ...headers, "content-type": "text/plain" },
        });
  };
}
