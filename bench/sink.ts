/**
 * The benchmarks' endpoint: a minimal Bun.serve answering 200, in a process of its own (so its
 * work costs the measured process nothing), counting requests and the arrival times of the
 * first and last (and every arrival, for a steady rate). With `--report` it prints `ARRIVED <webhook-id> <epoch ms>` for each request.
 * `startSink()` starts this file as that process; its CPU time can be read while it runs.
 */
import { readFileSync } from "node:fs";
import type { Subprocess } from "bun";
import { readLines } from "./shared.ts";

/** Wall-clock milliseconds with sub-millisecond precision, comparable across processes. */
export function preciseNow(): number {
  return performance.timeOrigin + performance.now();
}

function serve(report: boolean): void {
  let count = 0;
  let first = 0;
  let last = 0;
  /** Arrival times in arrival order (one thread: already sorted), for the steady rate. */
  let arrivals: number[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/__stats") return Response.json({ count, first, last, steady: steady() });
      if (path === "/__reset") {
        count = first = last = 0;
        arrivals = [];
        return new Response("reset");
      }
      await request.arrayBuffer();
      const at = preciseNow();
      count++;
      arrivals.push(at);
      if (first === 0) first = at;
      last = at;
      if (report) process.stdout.write(`ARRIVED ${request.headers.get("webhook-id")} ${at}\n`);
      return new Response("ok");
    },
  });
  /**
   * Requests per second between the arrivals at 20 % and 90 % of the count: the rate once
   * start-up, warm-up (the JIT compiling the hot path) and the last stragglers are left out.
   */
  function steady(): number {
    const from = arrivals[Math.floor(arrivals.length * 0.2)];
    const to = arrivals[Math.floor(arrivals.length * 0.9)];
    if (from === undefined || to === undefined || to <= from) return 0;
    return (
      ((Math.floor(arrivals.length * 0.9) - Math.floor(arrivals.length * 0.2)) / (to - from)) * 1000
    );
  }
  process.stdout.write(`PORT ${server.port}\n`);
  process.on("SIGTERM", () => {
    server.stop(true);
    process.exit(0);
  });
}

export interface Sink {
  url: string;
  process: Subprocess<"ignore", "pipe", "inherit">;
  /** Lines the sink prints after PORT (ARRIVED lines with `report`). */
  lines: AsyncIterator<string>;
  /** Requests since the last reset, and the arrival times of the first and last (epoch ms). */
  /** `steady`: requests per second between the arrivals at 20 % and 90 % of the count. */
  stats(): Promise<{ count: number; first: number; last: number; steady: number }>;
  reset(): Promise<void>;
  /** CPU time (user + system) the sink has used so far, in ms (Linux /proc). */
  cpuMs(): number;
  stop(): Promise<void>;
}

export async function startSink(options: { report?: boolean } = {}): Promise<Sink> {
  const child = Bun.spawn(
    ["bun", import.meta.path, "--serve", ...(options.report ? ["--report"] : [])],
    { stdout: "pipe", stderr: "inherit", stdin: "ignore" },
  );
  const lines = readLines(child.stdout);
  const first = await lines.next();
  const port = /^PORT (\d+)$/.exec(first.value ?? "")?.[1];
  if (!port) throw new Error(`sink did not start: ${first.value}`);
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    process: child,
    lines,
    stats: async () => (await fetch(`${url}/__stats`)).json(),
    reset: async () => {
      await (await fetch(`${url}/__reset`)).text();
    },
    cpuMs: () => cpuMsOf(child.pid),
    async stop() {
      child.kill("SIGTERM");
      await child.exited;
    },
  };
}

/** utime + stime of a running process, in ms, from /proc/<pid>/stat (USER_HZ = 100). */
export function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

if (import.meta.main && process.argv.includes("--serve")) {
  serve(process.argv.includes("--report"));
}
