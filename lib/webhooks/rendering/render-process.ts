import { fileURLToPath } from "node:url";
import type { ConditionSet } from "../model.ts";
import type { ConditionSubject, EvaluatedCondition } from "./conditions.ts";
import { type RenderedDelivery, renderDelivery, type Templates, usesTemplates } from "./render.ts";
import type { CompileProblem } from "./render-child.ts";
import {
  createRenderSlot,
  OVERRAN,
  type RenderSlot,
  type SlotJob,
  WALL_CEILING_MS,
} from "./render-slot.ts";

/**
 * The template renderers: a pool for changes (sharedTemplateRenderer) and one for what a person
 * types (previewTemplateRenderer). How one process runs one job within its deadline is in
 * render-slot.ts, the process's own side in render-child.ts, and a change's budget across its
 * webhooks in fan-out.ts. The engine's memory is capped inside the child (template.ts).
 */

/**
 * One webhook's CPU budget for one change (a normal render takes well under 1 ms): a render past
 * it fails that webhook's delivery, never another's.
 */
export const RENDER_DEADLINE_MS = 100;
/**
 * One change's renders, all its webhooks together, may take this long of wall-clock time (its
 * caller waits for them): the webhooks whose turn comes later are rendered by the worker
 * instead, before the send (fan-out.ts).
 */
export const CHANGE_WALL_CEILING_MS = 400;
/** Renderer processes working at once, each on one job: renders of different changes in parallel. */
export const RENDER_POOL_SIZE = 2;
export { OVERRAN, WALL_CEILING_MS };

/**
 * The template error of a webhook whose render passed its CPU deadline (RENDER_DEADLINE_MS), at
 * enqueue or at the send: the budget was its own.
 */
export const OWN_BUDGET_SPENT = `Template error: this webhook's templates took more than their ${RENDER_DEADLINE_MS} ms of CPU for this change (each webhook's own budget; other webhooks' renders do not count against it) and were stopped`;

/** Whether a render stopped at its CPU deadline (not the machine's want of CPU, not memory). */
export function overranOwnBudget(result: Pick<RenderResult, "templateError" | "busy">): boolean {
  return (
    result.busy !== true && result.templateError?.startsWith(`Template error: ${OVERRAN}`) === true
  );
}

/** Whether a template error says a render hit a bound (time, memory, fuel, size), not the data. */
export function hitRenderLimit(templateError: string): boolean {
  return /rendering took longer than|out of memory|ran out of fuel|the result is \d+ bytes|bytes in all/.test(
    templateError,
  );
}

// fileURLToPath, not URL.pathname: a folder with a space or a non-ASCII name stays its name.
const CHILD = fileURLToPath(new URL("./render-child.ts", import.meta.url));

export interface RenderOptions {
  /** This render's deadline (ms of CPU), when less than RENDER_DEADLINE_MS is left of a budget. */
  deadlineMs?: number;
  /** Its wall-clock ceiling, when less than WALL_CEILING_MS is left of a change's. */
  wallMs?: number;
  /**
   * The webhook's condition set, evaluated in the renderer (a regex never runs on the caller's
   * thread) against `subject`; no match renders nothing (`matched: false`).
   */
  conditions?: ConditionSet;
  subject?: ConditionSubject;
  /** Each condition's value and result as well (Preview): rendered whether they match or not. */
  explain?: boolean;
  /** Only compile the templates (a save's check): `problem` says the first that does not. */
  check?: boolean;
}

/** A render and what it cost: `matched` is false when conditions ruled the webhook out. */
export type RenderResult = RenderedDelivery & {
  matched: boolean;
  spentMs: number;
  evaluation?: EvaluatedCondition[];
  /** With `check`: the first template that does not compile, or null. */
  problem?: CompileProblem | null;
  /**
   * Stopped for want of CPU (its wall-clock ceiling came before its CPU deadline: a busy
   * machine, a stopped process), not for its own cost: worth rendering again later.
   */
  busy?: boolean;
};

export type RenderTemplates = (
  webhook: Templates,
  defaultBody: string,
  options?: RenderOptions,
) => Promise<RenderResult>;

export interface TemplateRenderer {
  render: RenderTemplates;
  /**
   * Starts the pool's processes now rather than for the first templated change; settles when
   * they are ready (or could not start).
   */
  prepare(): Promise<void>;
  close(): void;
}

type Job = Omit<SlotJob, "settle"> & { settle(result: RenderResult): void };

/**
 * Templates (and regex conditions) rendered off the caller's thread, each within a deadline, by a
 * small pool of child processes (render-slot.ts): a job waits for a free one. A render that fails
 * or overruns ends as a template error with the reason (the delivery is then recorded failed,
 * nothing lost). A plain webhook never leaves this process. Processes start when first needed
 * and do not keep this one alive when idle.
 */
export function createTemplateRenderer(
  options: {
    deadlineMs?: number;
    /** One job's wall-clock ceiling, however starved of CPU (default WALL_CEILING_MS). */
    wallCeilingMs?: number;
    /** Processes at most (default RENDER_POOL_SIZE). */
    size?: number;
    /** The child's script (tests name a broken one). */
    child?: string;
  } = {},
): TemplateRenderer {
  const deadlineMs = options.deadlineMs ?? RENDER_DEADLINE_MS;
  const wallCeilingMs = options.wallCeilingMs ?? WALL_CEILING_MS;
  const size = Math.max(1, options.size ?? RENDER_POOL_SIZE);
  const script = options.child ?? CHILD;
  const slots: RenderSlot[] = [];
  const waiting: Job[] = [];
  let closed = false;

  function newSlot(): RenderSlot {
    const slot = createRenderSlot({ script, onFree: dispatch });
    slots.push(slot);
    return slot;
  }

  function dispatch(): void {
    for (const slot of slots.filter((s) => s.broken !== null)) {
      // A process that cannot start fails what waits rather than being replaced forever.
      slots.splice(slots.indexOf(slot), 1);
      for (const job of waiting.splice(0)) job.settle(failure(slot.broken ?? "", job.body));
    }
    for (const slot of slots) {
      if (waiting.length === 0) break;
      if (!slot.idle) continue;
      const job = waiting.shift();
      if (job) slot.run(toSlotJob(job));
    }
    if (waiting.length > 0 && slots.length < size && !closed) newSlot();
    const busy = waiting.length > 0 || slots.some((slot) => !slot.idle);
    for (const slot of slots) slot.hold(busy);
  }

  function render(
    webhook: Templates,
    body: string,
    renderOptions: RenderOptions = {},
  ): Promise<RenderResult> {
    if (renderOptions.check && !usesTemplates(webhook)) {
      return Promise.resolve({
        ...renderDelivery(webhook, body),
        matched: true,
        spentMs: 0,
        problem: null,
      });
    }
    if (!usesTemplates(webhook) && renderOptions.conditions === undefined) {
      return Promise.resolve({ ...renderDelivery(webhook, body), matched: true, spentMs: 0 });
    }
    if (closed) return Promise.resolve(failure("the template renderer is closed", body));
    return new Promise<RenderResult>((resolve) => {
      const { url, headers, bodyTemplate } = webhook;
      waiting.push({
        webhook: { url, headers, bodyTemplate },
        body,
        conditions: renderOptions.conditions,
        subject: renderOptions.subject,
        explain: renderOptions.explain,
        check: renderOptions.check,
        deadlineMs: renderOptions.deadlineMs ?? deadlineMs,
        // A check at save (a person waiting, not a change) may ask for more than the ceiling.
        wallMs: renderOptions.check
          ? Math.max(wallCeilingMs, renderOptions.wallMs ?? 0)
          : Math.min(wallCeilingMs, renderOptions.wallMs ?? wallCeilingMs),
        settle: resolve,
      });
      dispatch();
    });
  }

  return {
    render,
    prepare() {
      while (slots.length < size && !closed) newSlot().hold(false);
      return Promise.all(slots.map((slot) => slot.started)).then(() => {});
    },
    close() {
      closed = true;
      for (const job of waiting.splice(0)) {
        job.settle(failure("the template renderer is closed", job.body));
      }
      for (const slot of slots.splice(0)) slot.close("the template renderer is closed");
    },
  };
}

function toSlotJob(job: Job): SlotJob {
  return {
    ...job,
    settle(result) {
      if ("failed" in result) {
        const { spentMs, busy } = result;
        job.settle({ ...failure(result.failed, job.body), spentMs, busy });
      } else if (job.check) {
        const { spentMs, problem } = result;
        job.settle({ ...renderDelivery(PLAIN, job.body), matched: true, spentMs, problem });
      } else if (result.rendered === null) {
        job.settle({ ...NOT_MATCHED, spentMs: result.spentMs, evaluation: result.evaluation });
      } else {
        const { spentMs, evaluation, matched = true } = result;
        job.settle({ ...result.rendered, matched, spentMs, evaluation });
      }
    },
  };
}

const PLAIN = { url: "https://checked.invalid/", headers: [], bodyTemplate: null };

const NOT_MATCHED: Omit<RenderResult, "spentMs"> = {
  payload: "",
  url: null,
  headers: null,
  context: null,
  templateError: null,
  matched: false,
};

/** A render that did not happen, recorded as a template error with the change's context. */
export function failure(reason: string, body: string): RenderResult {
  return {
    payload: "",
    url: null,
    headers: null,
    context: body,
    templateError: `Template error: ${reason}`,
    matched: true,
    spentMs: 0,
  };
}

let shared: TemplateRenderer | null = null;

/** This process's renderer for changes: one pool beside it, however many stores and apps use it. */
export function sharedTemplateRenderer(): TemplateRenderer {
  shared ??= createTemplateRenderer();
  return shared;
}

let forPeople: TemplateRenderer | null = null;

/**
 * A worker's render of a delivery left to render may wait this long for CPU: nobody waits for
 * it but the send, and a busy machine is what left it to the worker in the first place.
 */
export const WORKER_WALL_CEILING_MS = 5_000;

let forWorker: TemplateRenderer | null = null;

/** A worker's renderer (deliveries left to render, before their send): one process, on demand. */
export function workerTemplateRenderer(): TemplateRenderer {
  forWorker ??= createTemplateRenderer({ size: 1, wallCeilingMs: WORKER_WALL_CEILING_MS });
  return forWorker;
}

/**
 * A job of the renderer for people may wait this long for CPU: a person waits for it, not a
 * change's transaction, and a check at save (all of a webhook's templates compiled in one job)
 * may need most of a second on a busy machine.
 */
export const PEOPLE_WALL_CEILING_MS = 2_000;

/**
 * The renderer of what a person types (Preview, the checks at save): a process of its own, so a
 * slow Preview never delays a change's renders.
 */
export function previewTemplateRenderer(): TemplateRenderer {
  forPeople ??= createTemplateRenderer({ size: 1, wallCeilingMs: PEOPLE_WALL_CEILING_MS });
  return forPeople;
}
