/** @jsxImportSource hono/jsx */

import type { Child } from "hono/jsx";
import type { FieldErrors as Errors } from "../../../inventory/schemas.ts";
import { maskUrlPassword } from "../../../text/url-credentials.ts";
import type { WebhookFields } from "../../../webhooks/definition/field-faces.ts";
import { WEBHOOK_FIELDS } from "../../../webhooks/definition/field-table.ts";
import type { Webhook } from "../../../webhooks/model.ts";
import type { HealthSummary } from "../../../webhooks/observe/webhook-stats.ts";
import { DELIVERIES } from "../background-tasks/background-tasks-views.tsx";
import { formatTime } from "../format.ts";
import { CsrfField, Layout, type PageContext, PostButton } from "../layout.tsx";
import { UrlWarning } from "./url-warning.tsx";
import { OptionNote, WebhookFieldInputs } from "./webhook-fields-view.tsx";
import type { WebhookFormValues } from "./webhook-form.ts";
import { HealthCell } from "./webhook-health.tsx";
import type { WebhookPreview } from "./webhook-preview.ts";
import { PreviewSection } from "./webhook-preview-view.tsx";

export const WEBHOOKS = "/admin/webhooks";

export function WebhookListPage(props: {
  page: PageContext;
  webhooks: Webhook[];
  fields?: WebhookFields;
  /** Each webhook's health by id (the Health column); absent: the column is left out. */
  health?: Map<number, HealthSummary>;
}) {
  const { page, health } = props;
  const fields = props.fields ?? WEBHOOK_FIELDS;
  return (
    <Layout title="Webhooks" page={page}>
      <h1>Webhooks</h1>
      <div class="actions">
        <a class="button" href={`${WEBHOOKS}/new`}>
          New webhook
        </a>
      </div>
      {props.webhooks.length === 0 ? (
        <p class="empty">No webhook yet: item changes queue nothing until one exists.</p>
      ) : (
        <table class="list">
          <thead>
            <tr>
              <th>Name</th>
              <th>URL</th>
              <th>Events</th>
              <th>State</th>
              {health ? <th>Health</th> : null}
              <th>Secret</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {props.webhooks.map((w) => (
              <tr id={`webhook-${w.id}`}>
                <td>
                  <a href={`${WEBHOOKS}/${w.id}`}>{w.name}</a>
                </td>
                <td class="wrap" data-label="URL">
                  {w.method} {maskUrlPassword(w.url)}
                </td>
                <td data-label="Events">
                  {w.events.join(", ")}
                  <OptionNote webhook={w} fields={fields} />
                </td>
                <td data-label="State">
                  <span class={`badge ${w.enabled ? "enabled" : "disabled"}`}>
                    {w.enabled ? "enabled" : "disabled"}
                  </span>
                  <HealthNote webhook={w} />
                </td>
                {health ? (
                  <td data-label="Health">
                    {health.has(w.id) ? (
                      <HealthCell health={health.get(w.id) as HealthSummary} />
                    ) : (
                      "–"
                    )}
                  </td>
                ) : null}
                <td data-label="Secret">{w.secret ? "set" : "none"}</td>
                <td class="action">
                  <div class="actions">
                    <a href={`${DELIVERIES}?webhook=${w.id}`}>Deliveries</a>
                    <PostButton
                      action={`${WEBHOOKS}/${w.id}/test`}
                      label="Send test"
                      csrfToken={page.csrfToken}
                    />
                    <PostButton
                      action={`${WEBHOOKS}/${w.id}/${w.enabled ? "disable" : "enable"}`}
                      label={w.enabled ? "Disable" : "Enable"}
                      csrfToken={page.csrfToken}
                    />
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </Layout>
  );
}

/** Why and since when a webhook is off, or since when every attempt to it has failed. */
function HealthNote(props: { webhook: Webhook }) {
  const w = props.webhook;
  if (!w.enabled) {
    return (
      <div class="muted">
        {w.disabledReason ? `${w.disabledReason} ` : ""}({formatTime(w.disabledAt)})
      </div>
    );
  }
  if (w.failingSince == null) return null;
  return <div class="muted">Every attempt failed since {formatTime(w.failingSince)}</div>;
}

export function WebhookFormPage(props: {
  page: PageContext;
  values: WebhookFormValues;
  errors?: Errors;
  /** Absent when creating a webhook. */
  webhook?: Webhook;
  preview?: WebhookPreview;
  /** Workers will refuse the URL (the saved one, or the preview's rendered one). */
  urlWarning?: string | null;
  /** Shown between the form and Delete (the webhook's recent deliveries). */
  children?: Child;
  /** Shown first, above the form (the webhook's health). */
  head?: Child;
  fields?: WebhookFields;
}) {
  const { page, values, webhook } = props;
  const fields = props.fields ?? WEBHOOK_FIELDS;
  const errors = props.errors?.fieldErrors ?? {};
  const title = webhook ? `Webhook ${webhook.name}` : "New webhook";
  return (
    <Layout title={title} page={page}>
      <p>
        <a href={WEBHOOKS}>← Webhooks</a>
      </p>
      <h1>{title}</h1>
      {webhook && !webhook.enabled ? (
        <div class="error-box disabled-note" role="status">
          <p>
            <strong>Disabled</strong> since {formatTime(webhook.disabledAt)}
            {webhook.disabledReason ? `: ${webhook.disabledReason}` : ""}. Its queued deliveries
            wait and are sent once it is enabled again.
          </p>
          <PostButton
            action={`${WEBHOOKS}/${webhook.id}/enable`}
            label="Enable"
            csrfToken={page.csrfToken}
          />
        </div>
      ) : null}
      {props.head}
      {props.head && webhook ? <h2>Settings</h2> : null}
      {props.errors ? (
        <p class="error-box" role="alert">
          {[...props.errors.formErrors, "Please correct the fields marked below."].join(" ")}
        </p>
      ) : null}
      <form method="post" action={webhook ? `${WEBHOOKS}/${webhook.id}` : WEBHOOKS} class="stacked">
        <CsrfField token={page.csrfToken} />
        <WebhookFieldInputs
          fields={fields}
          values={values}
          errors={errors}
          webhook={webhook}
          after={{ url: props.preview ? null : <UrlWarning warning={props.urlWarning} /> }}
        />
        <div class="actions">
          <button type="submit" class="primary">
            {webhook ? "Save" : "Create webhook"}
          </button>
          <button
            type="submit"
            // The fragment scrolls the answer to its Preview section: below a long form, out of
            // sight on a phone otherwise.
            formaction={
              webhook ? `${WEBHOOKS}/${webhook.id}/preview#preview` : `${WEBHOOKS}/preview#preview`
            }
          >
            Preview with the last change
          </button>
        </div>
      </form>
      {props.preview ? (
        <PreviewSection preview={props.preview} urlWarning={props.urlWarning} />
      ) : null}
      {props.children}
      {webhook ? (
        <>
          <h2>Delete</h2>
          <p>Deleting the webhook also deletes its deliveries and their attempts.</p>
          <PostButton
            action={`${WEBHOOKS}/${webhook.id}/delete`}
            label="Delete webhook"
            csrfToken={page.csrfToken}
            danger
          />
        </>
      ) : null}
    </Layout>
  );
}

/** The only page that ever shows a generated secret. */
export function WebhookCreatedPage(props: {
  page: PageContext;
  webhook: Webhook;
  generatedSecret: string | null;
  urlWarning?: string | null;
}) {
  const { page, webhook } = props;
  return (
    <Layout title="Webhook created" page={page}>
      <h1>Webhook {webhook.name} created</h1>
      <UrlWarning warning={props.urlWarning} />
      {props.generatedSecret ? (
        <div class="secret">
          <p>
            <strong>Secret, shown only this once:</strong> copy it now into the receiver's
            configuration (e.g. <code>bun run receiver --secret …</code>).
          </p>
          <p>
            <code id="generated-secret">{props.generatedSecret}</code>
          </p>
        </div>
      ) : (
        <p>The secret you entered is saved; it will not be shown.</p>
      )}
      <div class="actions">
        <a class="button" href={WEBHOOKS}>
          Webhooks
        </a>
        <a class="button" href={`${WEBHOOKS}/${webhook.id}`}>
          Edit {webhook.name}
        </a>
      </div>
    </Layout>
  );
}
