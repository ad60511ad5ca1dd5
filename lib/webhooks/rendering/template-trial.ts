import { buildPayload } from "../events/payload.ts";
import type { Webhook } from "../model.ts";
import type { RenderedDelivery, Templates } from "./render.ts";
import {
  hitRenderLimit,
  PEOPLE_WALL_CEILING_MS,
  previewTemplateRenderer,
  type RenderTemplates,
} from "./render-process.ts";
import { isTemplated } from "./template.ts";

/**
 * The checks of a webhook's templates at save, all in the renderer processes, never on the
 * caller's thread: at most MAX_TEMPLATED_HEADERS templated header values; then every template
 * compiled, in one job within CHECK_DEADLINE_MS of CPU (the compiler works out constants, so a
 * template can cost its compile a lot: `{% set s = "x" * 10000000 %}` builds 10 MB); then each
 * templated part (body, URL, headers) rendered once with a sample item, as at enqueue. One that
 * overruns the render deadline or the engine's memory, fuel or output size with it would do so
 * for most changes: refused when saved. (A template costly only for some data is bounded at
 * enqueue instead.)
 */

export type TemplateField = "bodyTemplate" | "url" | "headers";

const SAMPLE_ITEM = { id: 1, sku: "SAMPLE-1", name: "Sample item", quantity: 3, location: "A" };
const SAMPLE_BODY = buildPayload({
  event: "item.created",
  model: "item",
  username: "admin",
  requestId: "00000000-0000-4000-8000-000000000000",
  timestamp: new Date(Date.UTC(2025, 0, 1)),
  data: SAMPLE_ITEM,
  prechange: null,
  postchange: SAMPLE_ITEM,
});
const PLAIN: Templates = { url: "https://sample.invalid/", headers: [], bodyTemplate: null };

/**
 * All of a webhook's trials together may take this much CPU: two hundred slow header lines are
 * refused in about a second, not tried for twenty.
 */
export const TRIAL_BUDGET_MS = 1000;
/** CPU time compiling all of a webhook's templates may take (one job; a usual one takes ~1 ms). */
export const CHECK_DEADLINE_MS = 1000;
/** Header values of one webhook that may be templates (each is compiled and rendered apart). */
export const MAX_TEMPLATED_HEADERS = 20;

/**
 * Why a webhook's templates cannot be saved before any is compiled (too many templated header
 * values), or null. Preview asks it too.
 */
export function templateCountProblem(webhook: Pick<Webhook, "headers">): string | null {
  const templated = webhook.headers.filter(([, value]) => isTemplated(value)).length;
  if (templated <= MAX_TEMPLATED_HEADERS) return null;
  return `at most ${MAX_TEMPLATED_HEADERS} header values may be templates (${templated} are)`;
}

/**
 * Every template of `webhook` compiled in the renderer, within CHECK_DEADLINE_MS: the first that
 * does not compile, as the field rules word it, or why they could not all be compiled.
 */
export async function compiledProblem(
  webhook: Templates,
  render: RenderTemplates = previewTemplateRenderer().render,
): Promise<{ field: TemplateField; problem: string } | null> {
  const counted = templateCountProblem(webhook);
  if (counted !== null) return { field: "headers", problem: counted };
  const result = await render(webhook, SAMPLE_BODY, {
    check: true,
    deadlineMs: CHECK_DEADLINE_MS,
    wallMs: PEOPLE_WALL_CEILING_MS,
  });
  const found = result.problem;
  if (found) {
    const where = found.header === undefined ? "" : `header ${found.header}: `;
    return { field: found.field, problem: `${where}template error at ${found.message}` };
  }
  if (result.templateError === null) return null;
  const field: TemplateField =
    webhook.bodyTemplate !== null ? "bodyTemplate" : isTemplated(webhook.url) ? "url" : "headers";
  const reason = result.templateError.replace(/^Template error: /, "");
  const problem = result.busy
    ? `the templates could not be checked: ${reason}; try again`
    : `compiling the templates: ${reason}: a template must stay within the limits for any change`;
  return { field, problem };
}

export async function unboundedTemplate(
  webhook: Pick<Webhook, "url" | "headers" | "bodyTemplate">,
  render: RenderTemplates = previewTemplateRenderer().render,
): Promise<{ field: TemplateField; problem: string } | null> {
  const compiled = await compiledProblem(webhook, render);
  if (compiled !== null) return compiled;
  const parts: Array<[TemplateField, Templates]> = [];
  if (webhook.bodyTemplate !== null) {
    parts.push(["bodyTemplate", { ...PLAIN, bodyTemplate: webhook.bodyTemplate }]);
  }
  if (isTemplated(webhook.url)) parts.push(["url", { ...PLAIN, url: webhook.url }]);
  for (const header of webhook.headers) {
    if (isTemplated(header[1])) parts.push(["headers", { ...PLAIN, headers: [header] }]);
  }
  // Together too: each header within its limits can still make all of them too large.
  if (parts.filter(([field]) => field === "headers").length > 1) {
    parts.push(["headers", { ...PLAIN, headers: webhook.headers }]);
  }
  let spentMs = 0;
  for (const [field, part] of parts) {
    if (spentMs >= TRIAL_BUDGET_MS) {
      const problem = `with a sample item, the templates took more than ${TRIAL_BUDGET_MS} ms in all: a webhook's templates must stay within the limits for any change`;
      return { field, problem };
    }
    // Twice at most: a first render on a fresh renderer process can be slow for its own
    // reasons (the engine growing its memory, a busy machine), never a reason to refuse.
    let result = await render(part, SAMPLE_BODY);
    spentMs += result.spentMs;
    if (limitHit(result) !== null) {
      result = await render(part, SAMPLE_BODY);
      spentMs += result.spentMs;
    }
    const reason = limitHit(result);
    if (reason !== null) {
      return {
        field,
        problem: `with a sample item, ${reason}: a template must stay within the limits for any change`,
      };
    }
  }
  return null;
}

function limitHit(result: RenderedDelivery): string | null {
  const error = result.templateError;
  if (error === null || !hitRenderLimit(error)) return null;
  return error.replace(/^Template error(?: in [^:]+)?: /, "");
}
