import type { ConditionSet } from "../model.ts";
import {
  type ConditionSubject,
  conditionsMatch,
  type EvaluatedCondition,
  explainConditions,
  UnrunnableRegexError,
} from "./conditions.ts";
import { type RenderedDelivery, renderDelivery, type Templates } from "./render.ts";
import { dieWithParent } from "./render-parent.ts";
import { compileProblem, isTemplated, prepareTemplateEngine } from "./template.ts";

/**
 * The body of a template renderer process (render-slot.ts): evaluates a job's condition set
 * when it has one (so a regex never runs on the app's thread), renders its templates with
 * MiniJinja and answers. A separate process because a render cannot be stopped from inside
 * (WebAssembly runs to the end of its fuel, a minute for some templates, and a thread's
 * terminate() does not interrupt it): the parent kills this process at its deadline, and this
 * process dies with its parent (render-parent.ts), mid-render included.
 */

export interface RenderJob {
  id: number;
  webhook: Templates;
  body: string;
  conditions?: ConditionSet;
  subject?: ConditionSubject;
  /** Also each condition's value and result (the admin's Preview), and render even on no match. */
  explain?: boolean;
  /** Only compile each template (a save's check): `problem` says the first that does not. */
  check?: boolean;
}

/** A template of a webhook that does not compile: which part, and what is wrong where. */
export interface CompileProblem {
  field: "bodyTemplate" | "url" | "headers";
  /** The header's name, for a header value. */
  header?: string;
  message: string;
}

export interface RenderReply {
  id: number;
  /** Null: the conditions did not match, nothing to send. */
  rendered: RenderedDelivery | null;
  evaluation?: EvaluatedCondition[];
  /** With `explain`: whether the set matched (`rendered` is then given either way). */
  matched?: boolean;
  /** With `check`: the first template that does not compile, or null. */
  problem?: CompileProblem | null;
}

// One change's body is the context of every webhook it reaches: parsed once, handed over once.
let lastBody: string | null = null;
let lastContext: Record<string, unknown> = {};

function contextOf(body: string): Record<string, unknown> {
  if (body !== lastBody) {
    lastContext = JSON.parse(body) as Record<string, unknown>;
    lastBody = body;
  }
  return lastContext;
}

/** Each templated part compiled, body first, then the URL and the header values in order. */
function firstCompileProblem({ bodyTemplate, url, headers }: Templates): CompileProblem | null {
  const parts: Array<[CompileProblem["field"], string, string | undefined]> = [];
  if (bodyTemplate !== null) parts.push(["bodyTemplate", bodyTemplate, undefined]);
  if (isTemplated(url)) parts.push(["url", url, undefined]);
  for (const [name, value] of headers) {
    if (isTemplated(value)) parts.push(["headers", value, name]);
  }
  for (const [field, source, header] of parts) {
    const problem = compileProblem(source);
    if (problem !== null) return { field, header, message: problem.message };
  }
  return null;
}

function answer(job: RenderJob): Omit<RenderReply, "id"> {
  if (job.check) return { rendered: null, problem: firstCompileProblem(job.webhook) };
  if (job.explain && job.conditions !== undefined) {
    const { data, prechange, postchange } = job.subject ?? {
      data: null,
      prechange: null,
      postchange: null,
    };
    const evaluation = explainConditions(job.conditions, data, { prechange, postchange });
    const rendered = renderDelivery(job.webhook, job.body, () => contextOf(job.body));
    return { rendered, evaluation, matched: matchOf(job) };
  }
  return { rendered: renderOrSkip(job) };
}

/** Whether the job's conditions match; a regex that cannot run counts as none. */
function matchOf(job: RenderJob): boolean {
  const { data, prechange, postchange } = job.subject ?? {
    data: null,
    prechange: null,
    postchange: null,
  };
  try {
    return (
      job.conditions === undefined ||
      conditionsMatch(job.conditions, data, { prechange, postchange })
    );
  } catch {
    return false;
  }
}

function renderOrSkip(job: RenderJob): RenderedDelivery | null {
  if (job.conditions !== undefined) {
    const subject = job.subject ?? { data: null, prechange: null, postchange: null };
    try {
      const { data, prechange, postchange } = subject;
      if (!conditionsMatch(job.conditions, data, { prechange, postchange })) return null;
    } catch (error) {
      if (!(error instanceof UnrunnableRegexError)) throw error;
      // Recorded as failed with the reason rather than taken for "no match".
      const templateError = `Condition error: ${error.message}`;
      return { payload: "", url: null, headers: null, context: job.body, templateError };
    }
  }
  return renderDelivery(job.webhook, job.body, () => contextOf(job.body));
}

dieWithParent(Number(process.argv[2]));
process.on("message", (job: RenderJob) => {
  process.send?.({ id: job.id, ...answer(job) } satisfies RenderReply);
});
// Ready once the engine is compiled and its code warm (a first render runs its colder tiers,
// ~20 ms here): a job's deadline then counts rendering only.
prepareTemplateEngine();
for (let i = 0; i < 3; i++) {
  renderDelivery(
    {
      url: "https://warm.invalid/{{ data.id }}",
      headers: [["X-Warm", "{{ model | upper }}"]],
      bodyTemplate: `{% for k, v in data.items() %}{{ k }}={{ v | tojson }}{% endfor %}${i}`,
    },
    '{"event":"created","model":"item","data":{"id":1,"name":"warm"}}',
  );
}
process.send?.({ ready: true });
