import { defineCommand } from "citty";
import { rejectUnknown } from "../cli/args.ts";
import { loadOperabilityConfig } from "../config/operability.ts";
import { classifyWorkers, noLiveWorkerWarning } from "../webhooks/observe/staleness.ts";
import { formatWorkerTable } from "../webhooks/observe/workers-view.ts";
import { commonArgs } from "./args.ts";
import { type CliDeps, withStore } from "./context.ts";
import { json } from "./format.ts";

/**
 * `webhooks workers`: the workers that recorded a heartbeat, with their age; one not seen for 3
 * heartbeats (WORKER_HEARTBEAT_MS) is stale. Warns on stderr when deliveries are due and no
 * worker is live.
 */
export function workersCommand(deps: CliDeps) {
  const args = { ...commonArgs } as const;
  return defineCommand({
    meta: { name: "workers", description: "List running workers (live or stale) with their age" },
    args,
    async run({ args: flags, rawArgs }) {
      rejectUnknown(rawArgs, args);
      const { heartbeatIntervalMs } = loadOperabilityConfig(deps.env);
      await withStore(deps, flags, async ({ store, out, now }) => {
        const t = now();
        const [registered, due] = await Promise.all([
          store.workers.list(),
          store.queue.dueSummary(t),
        ]);
        const rows = classifyWorkers(registered, t, heartbeatIntervalMs);
        out(flags.json ? json(rows) : formatWorkerTable(rows, t));
        const warning = noLiveWorkerWarning({
          dueCount: due.count,
          workers: registered,
          now: t,
          intervalMs: heartbeatIntervalMs,
        });
        if (warning) {
          const count = `${due.count} ${due.count === 1 ? "delivery is" : "deliveries are"} due`;
          (deps.err ?? deps.out)(`warning: ${warning} (${count})`);
        }
      });
    },
  });
}
