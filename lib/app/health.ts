import { Hono } from "hono";
import { describeRoute } from "hono-openapi";
import { z } from "zod";
import type { Logger } from "../log.ts";
import type { Store } from "../webhooks/ports.ts";
import { json } from "./api/openapi-parts.ts";
import type { AppEnv } from "./context.ts";

const aliveSchema = z.object({ status: z.literal("alive") }).meta({ id: "Alive" });
const readySchema = z
  .object({
    status: z.enum(["ready", "not ready"]),
    reason: z.string().optional().describe("what keeps it from taking writes (no paths or names)"),
  })
  .meta({ id: "Readiness" });

/**
 * GET /healthz (the process answers: for a supervisor's liveness check, touches nothing) and
 * GET /readyz (the database takes writes and has this release's schema: for a load balancer).
 * Both answer without credentials, so the answer names no file or server: the reason in full
 * goes to the log, once per reason while it lasts.
 */
export function healthRoutes(options: { store: Store; logger: Logger }): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  let logged: string | null = null;
  app.get(
    "/healthz",
    describeRoute({
      summary: "Liveness: the process answers (no credentials, touches nothing)",
      tags: ["health"],
      responses: { 200: json("Alive", aliveSchema) },
    }),
    (c) => c.json({ status: "alive" as const }),
  );
  app.get(
    "/readyz",
    describeRoute({
      summary: "Readiness: the database takes writes and has this release's schema",
      tags: ["health"],
      responses: {
        200: json("Ready", readySchema),
        503: json("Not ready; the log has the full reason", readySchema),
      },
    }),
    async (c) => {
      const problem = await options.store.readiness().catch((error: unknown) => String(error));
      if (problem === null) {
        if (logged !== null) options.logger.info("Ready again: the database takes writes");
        logged = null;
        return c.json({ status: "ready" as const });
      }
      if (problem !== logged) options.logger.warn(`Not ready: ${problem}`);
      logged = problem;
      return c.json({ status: "not ready" as const, reason: publicReason(problem) }, 503);
    },
  );
  return app;
}

/** The kind of problem, without the paths and addresses the full line names. */
function publicReason(problem: string): string {
  if (/full/.test(problem)) return "disk full";
  if (/schema/.test(problem)) return "schema version mismatch";
  if (/unreachable|did not answer/.test(problem)) return "database unreachable";
  return "database does not take writes";
}
