import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Subprocess } from "bun";
import { errorMessage } from "../text/error-message.ts";
import { type RenderedDelivery, renderDelivery, type Templates, usesTemplates } from "./render.ts";
import type { RenderJob, RenderReply } from "./render-child.ts";

/**
 * Templates rendered off the caller's thread, each within a deadline: a child process
 * (render-child.ts) renders the jobs in order; one that runs longer than `deadlineMs` is stopped
 * by killing the process, and ends as a template error with the reason (the delivery is then
 * recorded as a `template_error`, nothing lost); the jobs behind it go to a fresh process.
 * The deadline counts the child's CPU time where Linux tells it (/proc), so a render that only
 * waited for a busy machine's CPU is not cut short, and wall-clock time up to WALL_CEILING_MS.
 * The engine's memory is capped inside it (template.ts). A plain webhook never leaves this
 * process. The process is started when first needed and does not keep the parent alive when idle.
 */

/** How long one webhook's templates may take for one change (a normal one takes well under 1 ms). */
export const RENDER_DEADLINE_MS = 100;
/**
 * However starved of CPU, a render is stopped after this long: the SQLite write lock is held
 * meanwhile. A normal render needs a few ms of CPU, so only a child starved to under 2 % of a
 * core could lose one to this ceiling.
 */
export const WALL_CEILING_MS = 200;
/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times, on every architecture it runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
/** How long a fresh renderer may take to start (compiling the engine: ~0.2 s, more under load). */
const START_DEADLINE_MS = 30_000;

const OVERRAN = "rendering took longer than";

/** Whether a template error says a render hit a bound (time, memory, fuel, size), not the data. */
export function hitRenderLimit(templateError: string): boolean {
  return /rendering took longer than|out of memory|ran out of fuel|the result is \d+ bytes/.test(
    templateError,
  );
}

// fileURLToPath, not URL.pathname: a folder with a space or a non-ASCII name stays its name.
const CHILD = fileURLToPath(new URL("./render-child.ts", import.meta.url));

export type RenderTemplates = (
  webhook: Templates,
  defaultBody: string,
) => Promise<RenderedDelivery>;

export interface TemplateRenderer {
  render: RenderTemplates;
  /** Starts the renderer process now rather than for the first templated change. */
  prepare(): void;
  close(): void;
}

interface Job extends RenderJob {
  settle(rendered: RenderedDelivery): void;
}

export function createTemplateRenderer(
  options: {
    deadlineMs?: number;
    /** The child's script (tests name a broken one). */
    child?: string;
  } = {},
): TemplateRenderer {
  const deadlineMs = options.deadlineMs ?? RENDER_DEADLINE_MS;
  const script = options.child ?? CHILD;
  let child: Subprocess | null = null;
  let ready = false;
  let nextId = 1;
  const waiting: Job[] = [];
  /** Sent to the current child, answered in this order. */
  const sent: Job[] = [];
  let closed = false;
  const timer = createJobTimer(deadlineMs, (reason) => stop(reason, true));

  function start(): Subprocess | null {
    ready = false;
    try {
      const spawned: Subprocess = Bun.spawn([process.execPath, script], {
        stdio: ["ignore", "ignore", "inherit"],
        ipc: (message) => onMessage(spawned, message as RenderReply | { ready: true }),
        onExit: (_proc, code, signal) => onExit(spawned, code, signal),
      });
      child = spawned;
    } catch (error) {
      child = null;
      failAll(`the template renderer could not start: ${errorMessage(error)}`);
      return null;
    }
    timer.after(START_DEADLINE_MS, () =>
      stop(`the template renderer did not start within ${START_DEADLINE_MS} ms`, false),
    );
    return child;
  }

  function onMessage(from: Subprocess, message: RenderReply | { ready: true }): void {
    if (from !== child) return; // a late word from a process already given up
    if ("ready" in message) {
      ready = true;
      timer.clear();
      send();
      return;
    }
    const job = sent.shift();
    job?.settle(message.rendered);
    // The child starts the next job as it answers this one: its deadline starts now.
    if (sent.length > 0 && child !== null) timer.jobStarted(child.pid);
    else idle();
  }

  function onExit(from: Subprocess, code: number | null, signal: unknown): void {
    if (from !== child) return;
    const how = signal ? String(signal) : `exit code ${code}`;
    // Before it was ready no job was its: failing them all stops a restart loop (a child that
    // cannot start would otherwise be replaced forever while the jobs wait).
    if (ready) stop(`the template renderer stopped (${how})`, true);
    else stop(`the template renderer could not start (${how})`, false);
  }

  /** Gives up on the current process: the job it was on fails, the ones behind it go to a new one. */
  function stop(reason: string, onlyCurrent: boolean): void {
    timer.clear();
    const stopped = child;
    child = null;
    ready = false;
    stopped?.kill("SIGKILL");
    if (!onlyCurrent) {
      failAll(reason);
      return;
    }
    const current = sent.shift();
    current?.settle(failure(reason, current.body));
    waiting.unshift(...sent.splice(0));
    if (closed) return;
    // A fresh process at once, so the next templated change finds it ready.
    const next = start();
    if (waiting.length > 0) next?.ref();
    else next?.unref();
  }

  function send(): void {
    if (child === null || !ready) return;
    const wasIdle = sent.length === 0;
    for (const job of waiting.splice(0)) {
      sent.push(job);
      child.send({ id: job.id, webhook: job.webhook, body: job.body } satisfies RenderJob);
    }
    if (wasIdle && sent.length > 0) timer.jobStarted(child.pid);
  }

  function failAll(reason: string): void {
    for (const job of [...sent.splice(0), ...waiting.splice(0)]) {
      job.settle(failure(reason, job.body));
    }
  }

  /** Nothing in flight: the process may end without waiting for this one. */
  function idle(): void {
    timer.clear();
    child?.unref();
  }

  function render(webhook: Templates, body: string): Promise<RenderedDelivery> {
    if (!usesTemplates(webhook)) return Promise.resolve(renderDelivery(webhook, body));
    if (closed) return Promise.resolve(failure("the template renderer is closed", body));
    return new Promise<RenderedDelivery>((resolve) => {
      const { url, headers, bodyTemplate } = webhook;
      waiting.push({
        id: nextId++,
        webhook: { url, headers, bodyTemplate },
        body,
        settle: resolve,
      });
      if (child === null) start();
      else send();
      child?.ref();
    });
  }

  return {
    render,
    prepare() {
      if (child !== null || closed) return;
      start()?.unref();
    },
    close() {
      closed = true;
      timer.clear();
      failAll("the template renderer is closed");
      child?.kill("SIGKILL");
      child = null;
    },
  };
}

/**
 * The deadline of the job a child is on: `deadlineMs` of the child's CPU time (where /proc tells
 * it; wall time elsewhere), WALL_CEILING_MS of wall time at most; `overrun` is told why. Its
 * timers never keep the process alive (a child with jobs in flight does, ref'd in render).
 */
function createJobTimer(deadlineMs: number, overrun: (reason: string) => void) {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let pid = 0;
  let startedAt = 0;
  let cpuAtStart: number | null = null;

  function after(ms: number, fn: () => void): void {
    clear();
    timer = setTimeout(fn, ms);
    timer.unref();
  }

  function clear(): void {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  }

  function check(): void {
    const wallMs = performance.now() - startedAt;
    const cpuNow = cpuMsOf(pid);
    const usedMs = cpuAtStart === null || cpuNow === null ? wallMs : cpuNow - cpuAtStart;
    if (usedMs >= deadlineMs) {
      overrun(`${OVERRAN} ${deadlineMs} ms and was stopped`);
    } else if (wallMs >= WALL_CEILING_MS) {
      overrun(`${OVERRAN} ${WALL_CEILING_MS} ms (the machine was busy) and was stopped`);
    } else {
      after(Math.max(10, Math.min(deadlineMs - usedMs, WALL_CEILING_MS - wallMs)), check);
    }
  }

  return {
    after,
    clear,
    /** The child `childPid` started a job now: its CPU and wall clocks run from here. */
    jobStarted(childPid: number): void {
      pid = childPid;
      startedAt = performance.now();
      cpuAtStart = cpuMsOf(pid);
      after(deadlineMs, check);
    },
  };
}

/** A process's CPU time (user + system) in ms, or null where /proc does not say. */
function cpuMsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
    // After the command name (in parentheses, which may hold spaces): utime and stime are the
    // 12th and 13th fields.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const ticks = Number(fields[11]) + Number(fields[12]);
    return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS_PER_SECOND : null;
  } catch {
    return null;
  }
}

/** A render that did not happen, recorded as a template error with the change's context. */
function failure(reason: string, body: string): RenderedDelivery {
  return {
    payload: "",
    url: null,
    headers: null,
    context: body,
    templateError: `Template error: ${reason}`,
  };
}

let shared: TemplateRenderer | null = null;

/** This process's renderer: one process beside it, however many stores and apps use it. */
export function sharedTemplateRenderer(): TemplateRenderer {
  shared ??= createTemplateRenderer();
  return shared;
}
