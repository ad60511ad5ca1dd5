/** @jsxImportSource hono/jsx */

import type { Context } from "hono";
import type { FieldErrors } from "../../../inventory/schemas.ts";
import type { WebhookFields } from "../../../webhooks/definition/field-faces.ts";
import { WEBHOOK_FIELDS } from "../../../webhooks/definition/field-table.ts";
import { checkSave, type SaveRefusal } from "../../../webhooks/definition/save.ts";
import type { BulkPace } from "../../../webhooks/delivery/replay.ts";
import { DuplicateWebhookNameError } from "../../../webhooks/errors.ts";
import type { Webhook } from "../../../webhooks/model.ts";
import type { Store } from "../../../webhooks/ports.ts";
import type { AppEnv } from "../../context.ts";
import { DELIVERIES } from "../background-tasks/background-tasks-views.tsx";
import { RecentDeliveries } from "../background-tasks/recent-deliveries.tsx";
import { positiveInt } from "../format.ts";
import { NotFoundPage } from "../not-found.tsx";
import { pageContext, renderPage } from "../page.tsx";
import { EMPTY_REPLAY_FORM, ReplayForm, type ReplayFormValues } from "./replay-form.tsx";
import { RotateSecretForm } from "./secret-rotation.tsx";
import {
  capitalised,
  parseWebhookForm,
  readWebhookForm,
  type WebhookFormValues,
  webhookFormValues,
} from "./webhook-form.ts";
import { HealthSection, loadHealth } from "./webhook-health.tsx";
import { lastChangeBody, previewWebhook, sampleChangeBody } from "./webhook-preview.ts";
import { WEBHOOKS, WebhookFormPage } from "./webhooks-views.tsx";

/** Deliveries shown on a webhook's page (the link leads to all of them). */
const RECENT_DELIVERIES = 10;

export type WebhookPages = ReturnType<typeof webhookPages>;

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

/**
 * What the webhook routes share: the table of fields, reading a post of the form, finding the
 * webhook of a URL, and the pages shown again (the form with its errors, a webhook's page, the
 * preview, not found).
 */
export function webhookPages(deps: WebhookRouteDeps) {
  const { store, now } = deps;
  const fields = deps.fields ?? WEBHOOK_FIELDS;
  const readForm = async (c: Context<AppEnv>) =>
    readWebhookForm(await c.req.parseBody({ all: true }), fields);

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
    const nowMs = now().getTime();
    return renderPage(
      c,
      <WebhookFormPage
        head={<HealthSection stats={await loadHealth(store, webhook, nowMs)} nowMs={nowMs} />}
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

  return {
    fields,
    readForm,
    preview,
    webhookPage,
    findWebhook,
    notFound,
    duplicateNameResponse,
    formWithErrors,
  };
}

/** A save's refusal (save.ts) shown under its field. */
export function refusedErrors(refusal: SaveRefusal): FieldErrors {
  return { formErrors: [], fieldErrors: { [refusal.key]: [capitalised(refusal.problem)] } };
}
