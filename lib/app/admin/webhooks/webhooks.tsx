/** @jsxImportSource hono/jsx */

import { type Context, Hono } from "hono";
import type { FieldErrors } from "../../../inventory/schemas.ts";
import type { WebhookFields } from "../../../webhooks/definition/field-faces.ts";
import { WEBHOOK_FIELDS } from "../../../webhooks/definition/field-table.ts";
import { rotateSecret } from "../../../webhooks/definition/rotation.ts";
import { checkSave, type SaveRefusal, saveWebhook } from "../../../webhooks/definition/save.ts";
import { checkGraceSeconds } from "../../../webhooks/definition/validate.ts";
import { type BulkPace, replayDeliveries } from "../../../webhooks/delivery/replay.ts";
import { DuplicateWebhookNameError } from "../../../webhooks/errors.ts";
import type { ChangeEvent, Webhook, WebhookPatch } from "../../../webhooks/model.ts";
import type { Store } from "../../../webhooks/ports.ts";
import type { AppEnv } from "../../context.ts";
import { DELIVERIES } from "../background-tasks/background-tasks-views.tsx";
import { RecentDeliveries } from "../background-tasks/recent-deliveries.tsx";
import { positiveInt } from "../format.ts";
import { NotFoundPage } from "../not-found.tsx";
import { withNotice } from "../notices.ts";
import { pageContext, renderPage } from "../page.tsx";
import {
  EMPTY_REPLAY_FORM,
  parseReplayForm,
  ReplayForm,
  type ReplayFormValues,
  readReplayForm,
} from "./replay-form.tsx";
import { RotateSecretForm, SecretRotatedPage } from "./secret-rotation.tsx";
import {
  capitalised,
  emptyWebhookForm,
  parseWebhookForm,
  readWebhookForm,
  type WebhookFormValues,
  webhookFormValues,
} from "./webhook-form.ts";
import { lastChangeBody, previewWebhook, sampleChangeBody } from "./webhook-preview.ts";
import {
  WEBHOOKS,
  WebhookCreatedPage,
  WebhookFormPage,
  WebhookListPage,
} from "./webhooks-views.tsx";

/** Deliveries shown on a webhook's page (the link leads to all of them). */
const RECENT_DELIVERIES = 10;

export interface WebhookRouteDeps {
  /** The retry schedule a new webhook's form offers (default day; the demo's: short). */
  newWebhookRetrySchedule?: string;
  store: Store;
  now: () => Date;
  generateSecret: () => string;
  /** Whether workers will refuse a URL (lib/webhooks/sending/url-refusal.ts); null when they send. */
  urlWarning: (url: string) => Promise<string | null>;
  /** Chunks of a replay and the pause between them (default: DEFAULT_PACE). */
  bulkPace?: BulkPace;
  /** The webhook fields (default WEBHOOK_FIELDS; a test's table adds its own). */
  fields?: WebhookFields;
}

/** Webhooks: list, create (secret shown once), edit, enable/disable, delete, Send test. */
export function webhookRoutes(deps: WebhookRouteDeps): Hono<AppEnv> {
  const { store, now } = deps;
  const fields = deps.fields ?? WEBHOOK_FIELDS;
  const retrySchedule = deps.newWebhookRetrySchedule;
  const initial: Record<string, string> = retrySchedule === undefined ? {} : { retrySchedule };
  const readForm = async (c: Context<AppEnv>) =>
    readWebhookForm(await c.req.parseBody({ all: true }), fields);
  const routes = new Hono<AppEnv>();

  routes.get("/", async (c) => {
    const webhooks = await store.webhooks.list();
    return renderPage(
      c,
      <WebhookListPage page={pageContext(c)} webhooks={webhooks} fields={fields} />,
    );
  });

  routes.get("/new", (c) =>
    renderPage(
      c,
      <WebhookFormPage
        page={pageContext(c)}
        values={emptyWebhookForm(fields, initial)}
        fields={fields}
      />,
    ),
  );

  routes.post("/", async (c) => {
    const values = await readForm(c);
    const parsed = await parseWebhookForm(values, fields);
    if (!parsed.ok) return formWithErrors(c, values, parsed.errors, 400);
    try {
      const saved = await saveWebhook(store.webhooks, {
        before: null,
        fields: parsed.webhook,
        generateSecret: deps.generateSecret,
      });
      if (!saved.ok) return formWithErrors(c, values, refusedErrors(saved.refused), 400);
      const { webhook } = saved;
      // Rendered here rather than after a redirect, so the secret never travels in a URL.
      return renderPage(
        c,
        <WebhookCreatedPage
          page={pageContext(c)}
          webhook={webhook}
          generatedSecret={parsed.webhook.secret === undefined ? webhook.secret : null}
          urlWarning={await deps.urlWarning(webhook.url)}
        />,
      );
    } catch (error) {
      return duplicateNameResponse(c, error, values);
    }
  });

  // The preview button posts the form as typed: it is shown again with what its templates and
  // conditions make of the last change, or with its errors; nothing is saved.
  async function preview(c: Context<AppEnv>, webhook?: Webhook) {
    const values = await readForm(c);
    const parsed = await parseWebhookForm(values, fields);
    if (!parsed.ok) return formWithErrors(c, values, parsed.errors, 400, webhook);
    const checked = await checkSave({ before: webhook ?? null, fields: parsed.webhook });
    if (!checked.ok) return formWithErrors(c, values, refusedErrors(checked.refused), 400, webhook);
    const last = await lastChangeBody(store.queue);
    const body = last?.body ?? sampleChangeBody(now(), c.get("username"));
    const source = last
      ? `With the change of delivery ${last.delivery.id} (${last.delivery.event}, queued ${new Date(last.delivery.createdAt).toISOString()}).`
      : "No change has been queued yet: with a sample item.";
    const previewed = await previewWebhook(parsed.webhook, body, source);
    return renderPage(
      c,
      <WebhookFormPage
        page={pageContext(c)}
        values={values}
        webhook={webhook}
        preview={previewed}
        fields={fields}
        urlWarning={previewed.error === null ? await deps.urlWarning(previewed.url) : null}
      />,
    );
  }

  routes.post("/preview", (c) => preview(c));

  routes.post("/:id/preview", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    return preview(c, webhook);
  });

  routes.get("/:id", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    return webhookPage(c, webhook);
  });

  /** A webhook's page: its form, its recent deliveries and the Replay form. */
  async function webhookPage(
    c: Context<AppEnv>,
    webhook: Webhook,
    replay: { values: ReplayFormValues; errors?: Record<string, string[]> } = {
      values: EMPTY_REPLAY_FORM,
    },
    status: 200 | 400 = 200,
    rotation: { grace?: string; errors?: string[] } = {},
  ) {
    const page = pageContext(c);
    const recent = await store.queue.list({ webhookId: webhook.id, limit: RECENT_DELIVERIES });
    return renderPage(
      c,
      <WebhookFormPage
        page={page}
        values={webhookFormValues(webhook, fields)}
        fields={fields}
        webhook={webhook}
        urlWarning={await deps.urlWarning(webhook.url)}
      >
        <RecentDeliveries
          page={page}
          title="Recent deliveries"
          deliveries={recent}
          allHref={`${DELIVERIES}?webhook=${webhook.id}`}
          returnTo={`${WEBHOOKS}/${webhook.id}`}
          nowMs={now().getTime()}
        />
        <ReplayForm page={page} action={`${WEBHOOKS}/${webhook.id}/replay`} {...replay} />
        <RotateSecretForm page={page} webhook={webhook} nowMs={now().getTime()} {...rotation} />
      </WebhookFormPage>,
      status,
    );
  }

  routes.post("/:id/replay", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    const values = readReplayForm(await c.req.parseBody());
    const parsed = parseReplayForm(values, webhook.id);
    if (!parsed.ok) return webhookPage(c, webhook, { values, errors: parsed.errors }, 400);
    const done = await replayDeliveries(store.queue, parsed.filter, now().getTime(), deps.bulkPace);
    const back = `${WEBHOOKS}/${webhook.id}`;
    // Cut: the notice's one number is where the next replay starts from.
    if (done.cut && done.nextSince !== null) {
      return c.redirect(withNotice(back, "replayed-cut", done.nextSince), 303);
    }
    return c.redirect(withNotice(back, "replayed", done.count), 303);
  });

  routes.post("/:id/rotate-secret", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    const body = await c.req.parseBody();
    const grace = typeof body.graceSeconds === "string" ? body.graceSeconds : "";
    const checked = checkGraceSeconds(grace);
    if (!checked.ok) {
      const errors = [`${checked.problem.charAt(0).toUpperCase()}${checked.problem.slice(1)}`];
      return webhookPage(c, webhook, undefined, 400, { grace, errors });
    }
    const rotated = await rotateSecret(store.webhooks, webhook.id, {
      graceSeconds: checked.value,
      now: now().getTime(),
      generateSecret: deps.generateSecret,
    });
    if (!rotated) return notFound(c);
    // Rendered here rather than after a redirect, so the secret never travels in a URL.
    return renderPage(
      c,
      <SecretRotatedPage
        page={pageContext(c)}
        webhook={rotated.webhook}
        secret={rotated.secret}
        previousValidUntil={rotated.previousValidUntil}
      />,
    );
  });

  routes.post("/:id", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    const values = await readForm(c);
    const parsed = await parseWebhookForm(values, fields);
    if (!parsed.ok) return formWithErrors(c, values, parsed.errors, 400, webhook);
    const patch: WebhookPatch = { ...parsed.webhook };
    if (parsed.webhook.enabled !== webhook.enabled) {
      patch.disabledReason = parsed.webhook.enabled ? null : disabledByPerson(c);
    }
    try {
      const saved = await saveWebhook(store.webhooks, { before: webhook, fields: patch });
      if (!saved.ok) return formWithErrors(c, values, refusedErrors(saved.refused), 400, webhook);
    } catch (error) {
      return duplicateNameResponse(c, error, values, webhook);
    }
    // Saved either way; a URL workers will refuse leads back to its form, which says so.
    const refused = (await deps.urlWarning(parsed.webhook.url)) !== null;
    const next = refused ? `${WEBHOOKS}/${webhook.id}` : WEBHOOKS;
    return c.redirect(withNotice(next, "webhook-updated"), 303);
  });

  routes.post("/:id/enable", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    await store.webhooks.update(webhook.id, { enabled: true, disabledReason: null });
    return c.redirect(withNotice(WEBHOOKS, "webhook-enabled"), 303);
  });

  routes.post("/:id/disable", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    await store.webhooks.update(webhook.id, {
      enabled: false,
      disabledReason: disabledByPerson(c),
    });
    return c.redirect(withNotice(WEBHOOKS, "webhook-disabled"), 303);
  });

  routes.post("/:id/delete", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    await store.webhooks.remove(webhook.id);
    return c.redirect(withNotice(WEBHOOKS, "webhook-deleted"), 303);
  });

  routes.post("/:id/test", async (c) => {
    const webhook = await findWebhook(c);
    if (!webhook) return notFound(c);
    const ping: ChangeEvent = {
      event: "ping",
      model: "webhook",
      username: c.get("username"),
      requestId: c.get("requestId"),
      timestamp: now(),
      data: { id: webhook.id, name: webhook.name, message: "Test delivery from the admin" },
      prechange: null,
      postchange: null,
    };
    // Rendered first, holding nothing; the insert re-checks the webhook (see ChangePlan).
    const plan = await store.queue.plan(ping, { webhookId: webhook.id });
    const [deliveryId] = await store.queue.enqueue(ping, { webhookId: webhook.id, plan });
    if (deliveryId === undefined) return c.redirect(withNotice(WEBHOOKS, "test-not-queued"), 303);
    return c.redirect(withNotice(`${DELIVERIES}/${deliveryId}`, "test-queued", deliveryId), 303);
  });

  async function findWebhook(c: Context<AppEnv>): Promise<Webhook | null> {
    const id = positiveInt(c.req.param("id"));
    return id === null ? null : store.webhooks.get(id);
  }

  function notFound(c: Context<AppEnv>) {
    return renderPage(c, <NotFoundPage page={pageContext(c)} what="Webhook" />, 404);
  }

  function duplicateNameResponse(
    c: Context<AppEnv>,
    error: unknown,
    values: WebhookFormValues,
    webhook?: Webhook,
  ) {
    if (!(error instanceof DuplicateWebhookNameError)) throw error;
    const errors = { formErrors: [], fieldErrors: { name: ["Another webhook has this name"] } };
    return formWithErrors(c, values, errors, 409, webhook);
  }

  /** The form shown again as typed, with what is wrong with it. */
  function formWithErrors(
    c: Context<AppEnv>,
    values: WebhookFormValues,
    errors: FieldErrors,
    status: 400 | 409,
    webhook?: Webhook,
  ) {
    return renderPage(
      c,
      <WebhookFormPage
        page={pageContext(c)}
        values={values}
        errors={errors}
        webhook={webhook}
        fields={fields}
      />,
      status,
    );
  }

  return routes;
}

/** A save's refusal (save.ts) shown under its field. */
function refusedErrors(refusal: SaveRefusal): FieldErrors {
  return { formErrors: [], fieldErrors: { [refusal.key]: [capitalised(refusal.problem)] } };
}

function disabledByPerson(c: Context<AppEnv>): string {
  return `Disabled in the admin by ${c.get("username")}`;
}
