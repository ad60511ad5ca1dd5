import { readFileSync } from "node:fs";
import type { Subprocess } from "bun";
import { errorMessage } from "../../text/error-message.ts";
import type { EvaluatedCondition } from "./conditions.ts";
import type { RenderedDelivery } from "./render.ts";
import type { CompileProblem, RenderJob, RenderReply } from "./render-child.ts";

/**
 * One renderer process (render-child.ts) and the one job it is on: the job is sent alone and
 * its deadline starts when it is sent, so an overrun is always charged to the render that ran
 * (a child handed several jobs at once starts the next as it answers one, and a kill at the
 * deadline could land on that next one). The deadline counts the child's CPU time where Linux
 * tells it (/proc), so a render that only waited for a busy machine's CPU is not cut short, and
 * wall-clock time up to WALL_CEILING_MS. A job past its deadline kills the process; the slot
 * then starts a fresh one.
 */

/**
 * However starved of CPU, a render is stopped after this long. A normal render needs a few ms
 * of CPU, so only a child starved to under 2 % of a core could lose one to this ceiling.
 */
export const WALL_CEILING_MS = 200;
/** Linux's USER_HZ, the unit of /proc/<pid>/stat's times, on every architecture it runs on. */
const CLOCK_TICKS_PER_SECOND = 100;
/** How long a fresh renderer may take to start (compiling the engine: ~0.2 s, more under load). */
const START_DEADLINE_MS = 30_000;

export const OVERRAN = "rendering took longer than";

/** What a job's sender gets: the render (null when its conditions did not match) and its cost. */
export interface SlotResult {
  rendered: RenderedDelivery | null;
  evaluation?: EvaluatedCondition[];
  matched?: boolean;
  /** A check job's answer: the first template that does not compile, or null. */
  problem?: CompileProblem | null;
  /** CPU time the child spent on it (wall time where /proc does not say), in ms. */
  spentMs: number;
}

/**
 * A job that did not end with an answer. `busy`: stopped at its wall-clock ceiling before its
 * CPU deadline, i.e. for want of CPU (a busy machine, a stopped process), not for its own cost.
 */
export interface SlotFailure {
  failed: string;
  spentMs: number;
  busy?: boolean;
}

export interface SlotJob extends Omit<RenderJob, "id"> {
  deadlineMs: number;
  /** Wall-clock time it may take at most, however starved of CPU. */
  wallMs: number;
  /** Called once: with the result, or with the reason it could not be rendered. */
  settle(result: SlotResult | SlotFailure): void;
}

export interface RenderSlot {
  /** Ready for a job: started and not on one. */
  readonly idle: boolean;
  /** Settles once its first process is ready for jobs, or could not start. */
  readonly started: Promise<void>;
  /** Started neither successfully nor yet: the pool fails its waiting jobs rather than retry. */
  readonly broken: string | null;
  run(job: SlotJob): void;
  /** Lets this process exit while the slot is idle (`false`), or keeps it alive (`true`). */
  hold(keepAlive: boolean): void;
  close(reason: string): void;
}

export function createRenderSlot(options: {
  script: string;
  /** The slot became idle (or broken): the pool may hand it the next job. */
  onFree(): void;
}): RenderSlot {
  let child: Subprocess | null = null;
  let ready = false;
  let broken: string | null = null;
  let job: (SlotJob & { id: number }) | null = null;
  let nextId = 1;
  let closed = false;
  let keepAlive = false;
  const clock = createJobClock();
  let firstStart: () => void = () => {};
  const startedOnce = new Promise<void>((resolve) => {
    firstStart = resolve;
  });

  function start(): void {
    ready = false;
    try {
      // The child dies with this process (render-parent.ts): its argument says whom to watch.
      const spawned: Subprocess = Bun.spawn(
        [process.execPath, options.script, String(process.pid)],
        {
          stdio: ["ignore", "ignore", "inherit"],
          ipc: (message) => onMessage(spawned, message as RenderReply | { ready: true }),
          onExit: (_proc, code, signal) => onExit(spawned, code, signal),
        },
      );
      child = spawned;
      if (!keepAlive) spawned.unref();
    } catch (error) {
      child = null;
      fail(`the template renderer could not start: ${errorMessage(error)}`);
      return;
    }
    clock.after(START_DEADLINE_MS, () =>
      stopChild(`the template renderer did not start within ${START_DEADLINE_MS} ms`, false),
    );
  }

  function onMessage(from: Subprocess, message: RenderReply | { ready: true }): void {
    if (from !== child) return; // a late word from a process already given up
    if ("ready" in message) {
      ready = true;
      clock.clear();
      firstStart();
      options.onFree();
      return;
    }
    const done = job;
    if (done === null || done.id !== message.id) return;
    job = null;
    clock.clear();
    const { rendered, evaluation, matched, problem } = message;
    done.settle({ rendered, evaluation, matched, problem, spentMs: clock.spent(from.pid) });
    options.onFree();
  }

  function onExit(from: Subprocess, code: number | null, signal: unknown): void {
    if (from !== child) return;
    const how = signal ? String(signal) : `exit code ${code}`;
    // Before it was ready no job was its: a child that cannot start is reported as broken rather
    // than replaced forever while the jobs wait.
    if (ready) stopChild(`the template renderer stopped (${how})`, true);
    else stopChild(`the template renderer could not start (${how})`, false);
  }

  /** Gives up on the process: its job fails with `reason`; a fresh one starts if it had run. */
  function stopChild(reason: string, restart: boolean, busy = false): void {
    clock.clear();
    const stopped = child;
    child = null;
    ready = false;
    stopped?.kill("SIGKILL");
    const current = job;
    job = null;
    current?.settle({ failed: reason, spentMs: stopped ? clock.spent(stopped.pid) : 0, busy });
    if (!restart) {
      fail(reason);
      return;
    }
    if (!closed) start();
  }

  function fail(reason: string): void {
    broken = reason;
    firstStart();
    options.onFree();
  }

  start();
  return {
    get idle() {
      return child !== null && ready && job === null;
    },
    get broken() {
      return broken;
    },
    started: startedOnce,
    run(next) {
      if (child === null || !ready || job !== null) throw new Error("The render slot is not idle");
      job = { ...next, id: nextId++ };
      clock.begin(child.pid);
      const { id, webhook, body, conditions, subject, explain, check } = job;
      child.send({ id, webhook, body, conditions, subject, explain, check } satisfies RenderJob);
      const pid = child.pid;
      const ceilingMs = Math.max(1, next.wallMs);
      watchDeadline(clock, { pid, deadlineMs: next.deadlineMs, ceilingMs, stop: stopChild });
    },
    hold(alive) {
      keepAlive = alive;
      if (alive) child?.ref();
      else child?.unref();
    },
    close(reason) {
      closed = true;
      clock.clear();
      const current = job;
      job = null;
      current?.settle({ failed: reason, spentMs: 0 });
      child?.kill("SIGKILL");
      child = null;
    },
  };
}

/** A slot's one timer, and the time its job has taken since it was sent. */
interface JobClock {
  /** Runs `fn` after `ms`, in place of whatever was due before. */
  after(ms: number, fn: () => void): void;
  clear(): void;
  /** The job was sent to process `pid` now. */
  begin(pid: number): void;
  /** CPU time `pid` spent since the job was sent (wall time where /proc does not say), in ms. */
  spent(pid: number): number;
  /** Wall-clock time since the job was sent, in ms. */
  wallMs(): number;
}

function createJobClock(): JobClock {
  let timer: ReturnType<typeof setTimeout> | null = null;
  let started = { wall: 0, cpu: null as number | null };
  const clock: JobClock = {
    after(ms, fn) {
      clock.clear();
      timer = setTimeout(fn, ms);
      timer.unref();
    },
    clear() {
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
    begin(pid) {
      started = { wall: performance.now(), cpu: cpuMsOf(pid) };
    },
    spent(pid) {
      const cpuNow = cpuMsOf(pid);
      return started.cpu === null || cpuNow === null ? clock.wallMs() : cpuNow - started.cpu;
    },
    wallMs: () => performance.now() - started.wall,
  };
  return clock;
}

/**
 * Checks the job at its deadline: past its CPU deadline or the wall-clock ceiling the process is
 * stopped (and replaced), otherwise it is checked again when the nearer of the two could be due.
 */
function watchDeadline(
  clock: JobClock,
  job: {
    pid: number;
    deadlineMs: number;
    ceilingMs: number;
    stop(reason: string, restart: boolean, busy?: boolean): void;
  },
): void {
  const { pid, deadlineMs, ceilingMs, stop } = job;
  const check = (): void => {
    const wallMs = clock.wallMs();
    const usedMs = clock.spent(pid);
    if (usedMs >= deadlineMs) {
      stop(`${OVERRAN} ${deadlineMs} ms and was stopped`, true);
    } else if (wallMs >= ceilingMs) {
      stop(`${OVERRAN} ${ceilingMs} ms (the machine was busy) and was stopped`, true, true);
    } else {
      const left = Math.min(deadlineMs - usedMs, ceilingMs - wallMs);
      clock.after(Math.max(5, left), check);
    }
  };
  clock.after(Math.min(deadlineMs, ceilingMs), check);
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
