/**
 * bench:webhooks section `anatomy`: where the worker process's CPU goes beside the flat loop's
 * (bench/flat-loop.ts), the pair whose ratio `peers` reports. Each round runs both as processes
 * against one sink on the same kind of store, and reads each thread's CPU from
 * /proc/<pid>/task while it runs (the JS thread, JSC's compiler threads, Bun's HTTP client
 * thread, the GC's helpers), with JSC's own report of what it compiled and how long that took
 * (BUN_JSC_reportCompileTimes). A last pair runs five times the deliveries: the compilers' cost
 * is paid once per process, so the ratio of a long run shows what is left once it is spread out.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openSqliteStore } from "../lib/store/sqlite/store.ts";
import { benchWorkerEnv, FLAT_LOOP_SCRIPT, fillStore, rateOf, WORKER_SCRIPT } from "./peers.ts";
import { median } from "./shared.ts";
import { type Sink, startSink } from "./sink.ts";

export const ANATOMY_TITLE =
  "Where the worker's CPU goes beside the flat loop's: threads and JIT, per process";

type Report = (label: string, value: string, note?: string) => void;

/** How often the threads' CPU is read: the last reading before the exit is what is counted. */
const POLL_MS = 10;
/** A clock tick of /proc's utime and stime: USER_HZ is 100 on Linux. */
const CLOCK_TICK_US = 10_000;

/** Thread names as the kernel shows them, grouped by what they do. */
const THREAD_GROUPS: Array<[string, RegExp]> = [
  ["JS thread", /^bun$/],
  ["JIT compilers", /^(JITWorker|JSCWarmUp)/],
  ["HTTP client", /^HTTP Client/],
  ["GC helpers", /^(HeapHelper|mi-scavenger)/],
];

interface Run {
  rate: number;
  /** CPU µs per delivery by thread group (and "other"). */
  threads: Map<string, number>;
  /** Milliseconds JSC spent compiling, by tier (Baseline, DFG, FTL). */
  compileMs: Map<string, number>;
}

export async function anatomySection(options: {
  jobs: number;
  concurrency: number;
  rounds: number;
  report: Report;
}): Promise<void> {
  const { jobs, concurrency, rounds, report } = options;
  const sink = await startSink();
  const scratch = mkdtempSync(join(tmpdir(), "bench-anatomy-"));
  let files = 0;
  const run = async (kind: "worker" | "flat", count: number): Promise<Run> => {
    const path = join(scratch, `${kind}-${files++}.db`);
    await fillStore(openSqliteStore(path), sink, count);
    await sink.reset();
    const command =
      kind === "worker"
        ? ["bun", WORKER_SCRIPT, "--once"]
        : ["bun", FLAT_LOOP_SCRIPT, path, String(concurrency)];
    return measured(command, path, sink, count, concurrency);
  };
  try {
    const worker: Run[] = [];
    const flat: Run[] = [];
    for (let round = 0; round < rounds; round++) {
      worker.push(await run("worker", jobs));
      flat.push(await run("flat", jobs));
    }
    const ratios = worker.map((w, i) => w.rate / (flat[i]?.rate ?? Number.NaN));
    report(
      "worker / flat loop, instrumented",
      median(ratios).toFixed(2),
      `median of ${ratios.map((r) => r.toFixed(2)).join(", ")}; ${jobs} deliveries, ${concurrency} in flight`,
    );
    for (const [group] of [...THREAD_GROUPS, ["other"] as const]) {
      const of = (runs: Run[]) => median(runs.map((r) => r.threads.get(group) ?? 0));
      report(
        `  ${group}, CPU per delivery`,
        `${of(worker).toFixed(1)} vs ${of(flat).toFixed(1)} µs`,
        group === "JS thread"
          ? "worker vs flat loop, medians; start-up included"
          : "worker vs flat loop, medians",
      );
    }
    for (const tier of ["Baseline", "DFG", "FTL"]) {
      const of = (runs: Run[]) => median(runs.map((r) => r.compileMs.get(tier) ?? 0));
      report(
        `  JIT ${tier} compiling`,
        `${Math.round(of(worker))} vs ${Math.round(of(flat))} ms`,
        `per process of ${jobs} deliveries, worker vs flat loop (JSC's report)`,
      );
    }
    const long = 5 * jobs;
    const longWorker = await run("worker", long);
    const longFlat = await run("flat", long);
    report(
      "worker / flat loop, a long run",
      (longWorker.rate / longFlat.rate).toFixed(2),
      `${long} deliveries each, one pair: the compilers' cost spread over five times the work`,
    );
  } finally {
    await sink.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** Runs `command` to the end with its threads watched and JSC's compile report on. */
async function measured(
  command: string[],
  database: string,
  sink: Sink,
  jobs: number,
  concurrency: number,
): Promise<Run> {
  const child = Bun.spawn(command, {
    env: { ...benchWorkerEnv(database, concurrency), BUN_JSC_reportCompileTimes: "1" },
    stdout: "ignore",
    stderr: "pipe",
  });
  const ticks = new Map<string, { name: string; ticks: number }>();
  const poll = setInterval(() => readThreadTicks(child.pid, ticks), POLL_MS);
  const stderr = new Response(child.stderr).text();
  const code = await child.exited;
  clearInterval(poll);
  const report = await stderr;
  if (code !== 0) throw new Error(`${command.join(" ")} exited ${code}: ${report.slice(-2000)}`);
  const threads = new Map<string, number>();
  for (const { name, ticks: used } of ticks.values()) {
    const group = THREAD_GROUPS.find(([, pattern]) => pattern.test(name))?.[0] ?? "other";
    threads.set(group, (threads.get(group) ?? 0) + (used * CLOCK_TICK_US) / jobs);
  }
  return {
    rate: await rateOf(sink, jobs),
    threads,
    compileMs: compileTimes(report),
  };
}

/**
 * Each thread's user + system clock ticks so far, by thread id (a thread that ended keeps its
 * last reading).
 */
function readThreadTicks(pid: number, into: Map<string, { name: string; ticks: number }>): void {
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return; // the process has ended: the last readings stand
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const fields = stat.slice(close + 2).split(" ");
      // utime and stime are fields 14 and 15 of proc_pid_stat(5); `fields` starts at field 3.
      const ticks = Number(fields[11]) + Number(fields[12]);
      into.set(tid, { name: stat.slice(stat.indexOf("(") + 1, close), ticks });
    } catch {
      // this thread ended between the listing and the read
    }
  }
}

/** JSC's "Optimized f using <tier> … in N ms" lines, summed by tier. */
function compileTimes(report: string): Map<string, number> {
  const byTier = new Map<string, number>();
  for (const match of report.matchAll(/ using (\w+) .* in ([0-9.]+) ms/g)) {
    const tier = match[1] ?? "";
    byTier.set(tier, (byTier.get(tier) ?? 0) + Number(match[2]));
  }
  return byTier;
}
