import { type RenderedDelivery, renderDelivery, type Templates } from "./render.ts";
import { prepareTemplateEngine } from "./template.ts";

/**
 * The body of the template renderer process (render-process.ts): renders each job's templates
 * with MiniJinja and answers in order. A separate process because a render cannot be stopped
 * from inside (WebAssembly runs to the end of its fuel, a minute for some templates, and a
 * thread's terminate() does not interrupt it): the parent kills this process at its deadline.
 */

export interface RenderJob {
  id: number;
  webhook: Templates;
  body: string;
}

export interface RenderReply {
  id: number;
  rendered: RenderedDelivery;
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

process.on("message", (job: RenderJob) => {
  const rendered = renderDelivery(job.webhook, job.body, () => contextOf(job.body));
  process.send?.({ id: job.id, rendered } satisfies RenderReply);
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
