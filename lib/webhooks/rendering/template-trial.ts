import { buildPayload } from "../events/payload.ts";
import type { Webhook } from "../model.ts";
import type { RenderedDelivery, Templates } from "./render.ts";
import { hitRenderLimit, previewTemplateRenderer, type RenderTemplates } from "./render-process.ts";
import { isTemplated } from "./template.ts";

/**
 * What can be known at save of a template's cost: each templated part (body, URL, headers)
 * rendered once with a sample item, as at enqueue. One that overruns the render deadline or the
 * engine's memory, fuel or output size with it would do so for most changes: refused when saved.
 * (A template costly only for some data is bounded at enqueue instead.)
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

export async function unboundedTemplate(
  webhook: Pick<Webhook, "url" | "headers" | "bodyTemplate">,
  render: RenderTemplates = previewTemplateRenderer().render,
): Promise<{ field: TemplateField; problem: string } | null> {
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
