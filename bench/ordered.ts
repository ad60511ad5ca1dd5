/**
 * bench:webhooks section `ordered`: an ordered webhook over 1,000 objects beside an unordered
 * one, the same deliveries (change i is a change of item i mod 1,000), each run a worker process
 * (`--once`, its defaults) on a fresh SQLite database sending to the sink process. Runs
 * alternate (unordered/ordered, then ordered/unordered, …) so drift on a shared machine falls
 * on both alike. Rates come from the sink's clock (first to last arrival). Target: ordered ≥ 0.5
 * of unordered (issue 28). Everything is on loopback; counts are bounded.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import { benchChange, median } from "./shared.ts";
import { startSink } from "./sink.ts";

export const ORDERED_TITLE =
  "Ordered delivery: an ordered webhook over 1,000 objects vs an unordered one (worker process → sink process)";

const ROOT = join(import.meta.dir, "..");
const OBJECTS = 1000;

export interface OrderedOptions {
  deliveries: number;
  concurrency: number;
  rounds: number;
  report: (label: string, value: string, note?: string) => void;
}

export async function orderedSection(options: OrderedOptions): Promise<void> {
  const { deliveries, concurrency, rounds, report } = options;
  const dir = mkdtempSync(join(tmpdir(), "bench-ordered-"));
  const sink = await startSink();
  let runs = 0;

  /** One worker run over a fresh database; deliveries per second by the sink's clock. */
  async function run(ordered: boolean): Promise<number> {
    const path = join(dir, `ordered-${++runs}.db`);
    const seed = openSqliteStore(path);
    await seed.webhooks.create({ name: "bench", url: `${sink.url}/hook`, ordered });
    await seed.transaction(async (tx) => {
      for (let done = 0; done < deliveries; done += 1000) {
        const size = Math.min(1000, deliveries - done);
        const changes = Array.from({ length: size }, (_, i) => benchChange((done + i) % OBJECTS));
        await tx.queue.enqueueMany(changes);
      }
    });
    await sink.reset();
    const worker = Bun.spawn(["bun", join(ROOT, "scripts/worker.ts"), "--once"], {
      cwd: ROOT,
      env: {
        ...process.env,
        DATABASE_URL: path,
        WEBHOOK_ALLOWED_HOSTS: new URL(sink.url).host,
        WEBHOOK_CONCURRENCY: String(concurrency),
      },
      stdout: "ignore",
      stderr: "pipe",
    });
    const code = await worker.exited;
    const successful = (await seed.queue.stats()).successful;
    await seed.close();
    if (code !== 0 || successful !== deliveries) {
      const log = await new Response(worker.stderr).text();
      throw new Error(`worker exited ${code}, ${successful} of ${deliveries} successful: ${log}`);
    }
    const arrived = await sink.stats();
    return (arrived.count / (arrived.last - arrived.first)) * 1000;
  }

  try {
    await run(false); // warm-up (page cache, the sink's JIT), not counted
    const unordered: number[] = [];
    const ordered: number[] = [];
    for (let round = 0; round < rounds; round++) {
      for (const isOrdered of round % 2 === 0 ? [false, true] : [true, false]) {
        (isOrdered ? ordered : unordered).push(await run(isOrdered));
      }
    }
    const perSecond = (value: number) => `${Math.round(value).toLocaleString("en")}/s`;
    const runsNote = (values: number[]) =>
      `median of ${values.length} runs (${values.map(perSecond).join(", ")})`;
    report(`  ${deliveries} deliveries over ${OBJECTS} objects, concurrency ${concurrency}`, "");
    report("unordered webhook", perSecond(median(unordered)), runsNote(unordered));
    report("ordered webhook", perSecond(median(ordered)), runsNote(ordered));
    const paired = ordered.map((value, i) => value / (unordered[i] ?? value));
    report(
      "ordered / unordered",
      (median(ordered) / median(unordered)).toFixed(2),
      `per round ${paired.map((r) => r.toFixed(2)).join(", ")} (target ≥ 0.5)`,
    );
  } finally {
    await sink.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
